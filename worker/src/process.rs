//! A whole `kingmaker-worker` process, from its parsed command line to the end of serving: the
//! option checks, the compute threads, the network runtime, the listener and the metrics
//! endpoint around [`serve`].

use super::{serve, WorkerOptions};
use anyhow::{Context, Result};
use kingmaker_kernel::memory::choose_memory_budget;
use kingmaker_kernel::options;
use kingmaker_process::metrics::Registry;
use kingmaker_rpc::auth::{AddToken, CheckToken};
use kingmaker_rpc::resolve;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The `kingmaker-worker` command line, parsed (the binary's `--help` says what each means).
pub struct ProcessOptions {
    /// Address to listen on (HOST:PORT; port 0 picks a free one, printed on stdout).
    pub listen: String,
    /// Directory for shard arrays (a subdirectory per run).
    pub data_dir: PathBuf,
    /// The run's shared secret.
    pub token: String,
    /// Compute threads (default: all cores).
    pub threads: Option<usize>,
    /// Serve Prometheus metrics at http://ADDR/metrics.
    pub metrics: Option<String>,
    /// Memory this worker may use (default: three quarters of physical memory, or of its memory
    /// cgroup's limit where that is lower).
    pub memory_budget: Option<u64>,
    /// Test only: sleep this long before every wave.
    pub wave_delay: Duration,
    /// Test only: claim this protocol version.
    pub protocol_version: Option<u32>,
}

/// Check the options, set up the compute threads and the network runtime, and serve the worker
/// protocol until ctrl-c or a Shutdown call that asks to exit. The bound addresses are printed
/// on stdout (scripts and tests read them when port 0 was asked).
pub fn run(args: ProcessOptions) -> Result<()> {
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
    // One worker per data directory, for its whole life: two would share shard files, which
    // StartLayer's per-run lock found only when the first layer began.
    let _data_lock = kingmaker_process::lock::DirLock::acquire(&args.data_dir, "kingmaker-worker")
        .map_err(|e| {
            anyhow::anyhow!("{e}: give each worker a data directory of its own (--data-dir)")
        })?;
    let listen = resolve(&args.listen)?;
    let metrics_addr = args.metrics.as_deref().map(resolve).transpose()?;
    let (budget, said) = choose_memory_budget(args.memory_budget).map_err(anyhow::Error::msg)?;
    tracing::info!("{said}");
    kingmaker_kernel::memory::fit_allocator_to(budget);
    let opts = WorkerOptions {
        data_dir: args.data_dir.clone(),
        token,
        threads,
        memory_budget: budget,
        wave_delay: args.wave_delay,
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
            let at = kingmaker_process::metrics::serve(addr, registry.clone())
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
