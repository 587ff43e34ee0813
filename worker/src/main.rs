//! `kingmaker-worker`: serves shards of a build to a coordinator over gRPC.
//!
//! ```text
//! KINGMAKER_TOKEN=... kingmaker-worker --listen 10.0.0.5:7070 --data-dir /var/lib/kingmaker
//! ```
//! Listen on a private network only: the token keeps strangers out, but the traffic is not
//! encrypted.

use anyhow::{Context, Result};
use clap::Parser;
use kingmaker_kernel::memory::{default_memory_budget, parse_size};
use kingmaker_kernel::options;
use kingmaker_rpc::auth::{AddToken, CheckToken, TOKEN_ENV};
use kingmaker_rpc::metrics::Registry;
use kingmaker_rpc::server::WorkerOptions;
use kingmaker_rpc::{resolve, serve};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A Kingmaker worker: owns shards of a build's layers (as files in its data directory) and runs
/// the wave kernel on them for a coordinator (`kingmaker build ... --workers`).
#[derive(Parser)]
// The about line is the one the worker's package description gave before the crates split (the
// process still runs the games, the wave kernel and the gRPC worker service): `--help` unchanged.
#[command(
    name = "kingmaker-worker",
    version,
    about = "Kingmaker compute: games, the wave kernel, and the gRPC worker service"
)]
struct Args {
    /// Address to listen on (HOST:PORT; port 0 picks a free one, printed on stdout).
    /// Use a private network: calls are authenticated by the token but not encrypted.
    #[arg(long)]
    listen: String,
    /// Directory for shard arrays (a subdirectory per run).
    #[arg(long)]
    data_dir: PathBuf,
    /// The run's shared secret; every call must carry it. Prefer the environment variable, which
    /// does not show up in the process list.
    #[arg(long, env = TOKEN_ENV, hide_env_values = true)]
    token: String,
    /// Compute threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Serve Prometheus metrics at http://ADDR/metrics.
    #[arg(long)]
    metrics: Option<String>,
    /// Memory this worker may use (e.g. 100G; default: three quarters of physical memory). Its
    /// cells stay in memory when they fit, else they are files mapped from the data directory.
    #[arg(long, value_parser = parse_size)]
    memory_budget: Option<u64>,
    /// Test only: sleep this many milliseconds before every wave (lets a test kill a worker
    /// mid-run on a small table).
    #[arg(long, default_value_t = 0, hide = true)]
    wave_delay_ms: u64,
    /// Test only: claim this protocol version (tests the coordinator's version check).
    #[arg(long, hide = true)]
    protocol_version: Option<u32>,
}

fn main() {
    kingmaker_rpc::logging::init_logging();
    if let Err(err) = run(Args::parse()) {
        eprintln!("kingmaker-worker: error: {err:#}");
        std::process::exit(1);
    }
}

fn run(args: Args) -> Result<()> {
    let threads = match args.threads {
        Some(t) => options::check_threads(t).map_err(anyhow::Error::msg)?,
        None => options::cores(),
    };
    if let Some(bytes) = args.memory_budget {
        options::check_memory_budget(bytes).map_err(anyhow::Error::msg)?;
        if let Some(warning) = options::memory_budget_warning(bytes) {
            tracing::warn!("{warning}");
        }
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("kernel-{i}"))
        .build_global()
        .context("setting up compute threads")?;
    let check = CheckToken::new(&args.token).map_err(anyhow::Error::msg)?;
    let token = AddToken::new(&args.token).map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(&args.data_dir)
        .with_context(|| format!("creating {}", args.data_dir.display()))?;
    let listen = resolve(&args.listen)?;
    let metrics_addr = args.metrics.as_deref().map(resolve).transpose()?;
    let opts = WorkerOptions {
        data_dir: args.data_dir.clone(),
        token,
        threads,
        memory_budget: args.memory_budget.unwrap_or_else(default_memory_budget),
        wave_delay: Duration::from_millis(args.wave_delay_ms),
        protocol_version: args
            .protocol_version
            .unwrap_or(kingmaker_proto::PROTOCOL_VERSION),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.clamp(2, 8))
        .thread_name("net")
        .enable_all()
        .build()
        .context("starting the network runtime")?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("cannot listen on {listen}"))?;
        let bound = listener.local_addr()?;
        let registry = Arc::new(Registry::default());
        if let Some(addr) = metrics_addr {
            let at = kingmaker_rpc::metrics::serve(addr, registry.clone())
                .await
                .with_context(|| format!("cannot serve metrics on {addr}"))?;
            println!("metrics at http://{at}/metrics");
        }
        // Scripts and tests read the bound addresses from stdout (when port 0 was asked).
        println!("kingmaker-worker listening on {bound}");
        std::io::stdout().flush()?;
        tracing::info!(
            "kingmaker-worker {} listening on {bound}, {threads} threads, data in {}",
            env!("CARGO_PKG_VERSION"),
            args.data_dir.display()
        );
        serve(listener, opts, check, registry).await
    })
}
