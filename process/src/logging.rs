//! Logging set-up shared by both binaries (`kingmaker` and `kingmaker-worker`).

/// Log to stderr; `RUST_LOG` overrides the default level (info). Colours only on a terminal: a
/// service's log file (and `deploy status`, which shows its last lines) gets plain text.
pub fn init_logging() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}
