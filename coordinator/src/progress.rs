//! Logging and progress: a bar on a terminal, one structured line per wave otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use kingmaker_worker::kernel::WaveSummary;
use std::io::IsTerminal;

/// Log to stderr; `RUST_LOG` overrides the default level (info).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}

/// Progress of one layer: a bar of decided states (on a terminal) plus a log line per wave.
pub struct LayerProgress {
    bar: Option<ProgressBar>,
}

impl LayerProgress {
    pub fn new(layer: &str, states: u64) -> LayerProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(states);
            bar.set_style(
                ProgressStyle::with_template("{prefix:>10} [{bar:40}] {pos}/{len} decided, wave {msg} ({elapsed})")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(layer.to_string());
            bar
        });
        LayerProgress { bar }
    }

    pub fn wave(&self, w: &WaveSummary) {
        let line = format!(
            "layer {} wave {}: decided {} (total {}), expanded {}, updates applied {}, sent {}, {:.2}s",
            w.layer, w.wave, w.decided, w.decided_total, w.stats.expanded, w.stats.applied, w.stats.sent, w.seconds
        );
        match &self.bar {
            Some(bar) => {
                bar.set_position(w.decided_total);
                bar.set_message(w.wave.to_string());
                bar.suspend(|| tracing::debug!("{line}"));
            }
            None => tracing::info!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
