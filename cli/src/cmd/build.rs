//! `kingmaker build GAME ...`: solve every layer of a game into a new run directory.

use anyhow::{bail, Result};
use clap::Args;
use kingmaker_coordinator::cluster::RemoteOptions;
use kingmaker_coordinator::rundir::{Distributed, RunDir, RunInfo, ShardPlacement};
use kingmaker_coordinator::runner::{check_options, select_layers, solve_run_with};
use kingmaker_coordinator::solve::SolveOptions;
use kingmaker_games::GameChoice;
use kingmaker_kernel::memory::{
    choose_memory_budget, default_shard_size, default_table_shard_size, parse_size,
    DEFAULT_SHARD_SIZE,
};
use kingmaker_kernel::options;
use kingmaker_kernel::Game;
use kingmaker_rpc::auth::TOKEN_ENV;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct BuildArgs {
    #[command(subcommand)]
    pub game: GameChoice,
    /// The new run directory (must not exist or be empty). Default: `runs/<game name>`.
    #[arg(long, global = true)]
    pub out: Option<PathBuf>,
    /// Layers to solve, comma-separated (default: all of the game's layers).
    #[arg(long, global = true, value_delimiter = ',')]
    pub layers: Vec<String>,
    /// Compute threads (default: all cores).
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    /// States per shard (default: 16,777,216, or fewer where the memory budget asks: about 16
    /// bytes per state of a shard and thread; on workers, also each worker's memory and cores).
    #[arg(long, global = true)]
    pub shard_size: Option<u64>,
    /// In-process workers (more than one routes updates between them, as remote workers do).
    #[arg(long, global = true, default_value_t = 1)]
    pub local_workers: usize,
    /// Checkpoint after every N waves (0: not by count).
    #[arg(long, global = true, default_value_t = 0)]
    pub checkpoint_every_waves: u32,
    /// Checkpoint when S seconds have passed since the last checkpoint (0: not by time).
    #[arg(long, global = true, default_value_t = 600)]
    pub checkpoint_every_secs: u64,
    /// Memory the embedded workers may use (e.g. 16G; default: three quarters of physical
    /// memory, or of this process's memory cgroup's limit where that is lower). Cells that fit stay in memory and are saved by checkpoints; larger ones are files
    /// under the run directory, worked through a shard at a time (keep threads × shard size well
    /// inside the budget).
    #[arg(long, global = true, value_parser = parse_size)]
    pub memory_budget: Option<u64>,
    /// Count control classes over the states reachable from the start (default: level 1 only).
    #[arg(long, global = true)]
    pub reachable: Option<bool>,
    /// Print the summary as JSON on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Build on remote `kingmaker-worker` processes (HOST:PORT,HOST:PORT,...) instead of in
    /// process. The tables are byte-identical to an embedded build's.
    #[arg(
        long,
        global = true,
        value_delimiter = ',',
        conflicts_with = "local_workers"
    )]
    pub workers: Vec<String>,
    /// The token the workers were started with (prefer the environment variable).
    #[arg(long, global = true, env = TOKEN_ENV, hide_env_values = true)]
    pub token: Option<String>,
    /// Stop the run when a worker has not answered heartbeats for this many seconds.
    #[arg(long, global = true, default_value_t = 5.0)]
    pub worker_timeout: f64,
    /// Serve Prometheus metrics at http://ADDR/metrics while building.
    #[arg(long, global = true)]
    pub metrics: Option<String>,
    /// Solve the whole index space even where a symmetry lets the kernel solve a part of it
    /// (a symmetry quotient such as a colour swap). The tables are the same; for comparison and tests.
    #[arg(long, global = true)]
    pub no_symmetry: bool,
    /// Build even where the disk bound (what the build may need at most, counted before it
    /// starts) exceeds the free disk. A build that then runs out of disk stops with its solved
    /// cells checkpointed: free space and resume.
    #[arg(long, global = true)]
    pub ignore_disk_estimate: bool,
    /// With --workers: keep each finished layer on the workers that computed it, a part per
    /// worker in its data directory, instead of gathering it into the run directory (which then
    /// holds only `layers/NAME.kept.json`, the list of the parts with the layer's counts and
    /// digest). A reduced game's layer is expanded on the workers.
    #[arg(long, global = true, requires = "workers")]
    pub keep_layers_on_workers: bool,
}

pub fn run(args: BuildArgs) -> Result<()> {
    // From here on a signal is ours (setup: exit at once; waves: checkpoint, then stop).
    kingmaker_coordinator::solve::stop_on_signals()?;
    let spec = args.game.spec();
    if let Some(size) = args.shard_size {
        options::check_shard_size(size).map_err(anyhow::Error::msg)?;
    }
    check_options(
        args.threads,
        args.local_workers,
        args.checkpoint_every_secs,
        args.memory_budget,
        args.worker_timeout,
    )?;
    let layers = if args.layers.is_empty() {
        spec.layers()
    } else {
        select_layers(&spec, &args.layers)?
    };
    let game = Arc::new(spec.build()?);
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("runs").join(game.name()));
    // A file or a device there (`--out /dev/null`) is refused before anything else is done.
    kingmaker_coordinator::rundir::check_new_dir_kind(&out)?;
    // Remote workers are checked (reachable, token, protocol version, each listed once, none busy
    // with another run) before the run directory is created, so a mistake there leaves nothing
    // behind.
    let cluster = if args.workers.is_empty() {
        None
    } else {
        let Some(token) = args.token.clone().filter(|t| !t.is_empty()) else {
            bail!("--workers needs the workers' token: pass --token or set {TOKEN_ENV}");
        };
        let remote = RemoteOptions {
            addrs: args.workers.clone(),
            token,
            timeout: std::time::Duration::from_secs_f64(args.worker_timeout),
            started_by: kingmaker_coordinator::cluster::started_by("kingmaker build", &out),
        };
        Some(kingmaker_coordinator::cluster::connect(
            &remote, &spec, None,
        )?)
    };
    // Before anything is allocated or written: does it fit?
    let (budget, said) = choose_memory_budget(args.memory_budget).map_err(anyhow::Error::msg)?;
    kingmaker_kernel::memory::fit_allocator_to(budget);
    tracing::info!("{said}");
    let solved_as = if args.no_symmetry {
        None
    } else {
        spec.reduced()
    };
    let solved = match &solved_as {
        Some(reduced) => reduced.build()?.size(),
        None => game.size(),
    };
    let shard_size = args
        .shard_size
        .unwrap_or_else(|| budget_shard_size(budget, solved, cluster.as_ref()));
    let shard_size = match (&solved_as, args.keep_layers_on_workers) {
        (Some(reduced), true) => {
            kingmaker_coordinator::kept::whole_block_shards(&reduced.build()?, shard_size)
        }
        _ => shard_size,
    };
    if args.keep_layers_on_workers && spec.next_layer(&[]).is_some() {
        bail!(
            "--keep-layers-on-workers needs a fixed list of layers: {} chooses its next layer from \
             the start's values, which the coordinator does not hold (give the layers explicitly)",
            game.name()
        );
    }
    let needs = kingmaker_coordinator::preflight::needs(&kingmaker_coordinator::preflight::Job {
        solved,
        full: game.size(),
        // A game that chooses further layers from the answers (Go) may solve more.
        layers: if args.layers.is_empty() {
            spec.most_layers()
        } else {
            layers.len()
        },
        shard_size,
        budget,
        remote: cluster.is_some(),
    });
    kingmaker_coordinator::preflight::check(&needs, budget, &out, args.ignore_disk_estimate)?;
    // Locked for the whole build: a second build or a resume of it is refused.
    let (run, _lock) = RunDir::create(&out, "kingmaker build", &spec)?;
    let info = RunInfo {
        format: 1,
        spec: spec.clone(),
        layers: layers.clone(),
        states: game.size(),
        shard_size,
        kingmaker_version: env!("CARGO_PKG_VERSION").to_string(),
        solved_as,
        distributed: cluster.as_ref().map(|c| Distributed {
            run_id: c.run_id().to_string(),
            workers: c.addrs(),
            keep_layers: args.keep_layers_on_workers,
        }),
        local_workers: cluster.is_none().then_some(args.local_workers),
        shard_placement: ShardPlacement::Interleaved,
    };
    run.write_info(&info)?;
    tracing::info!(
        "building {} ({} states) into {}",
        game.name(),
        game.size(),
        out.display()
    );
    let opts = SolveOptions {
        shard_size,
        local_workers: args.local_workers,
        checkpoint_every_waves: args.checkpoint_every_waves,
        checkpoint_every_secs: args.checkpoint_every_secs,
        memory_budget: budget,
    };
    let reach = args
        .reachable
        .unwrap_or(kingmaker_coordinator::summary::default_reach(game.size()));
    if let Some(addr) = &args.metrics {
        let at = kingmaker_coordinator::progress::serve_metrics(addr)?;
        tracing::info!("metrics at http://{at}/metrics");
    }
    solve_run_with(&run, &info, &game, &opts, cluster, reach, args.json)
}

/// The shard size when `--shard-size` is not given: what this process's `budget` allows its
/// threads for a table of `states` (in process it closes the shards; on workers it gathers them),
/// and on workers what each worker's memory (three quarters of it, as its default budget) allows
/// its cores.
fn budget_shard_size(
    budget: u64,
    states: u64,
    cluster: Option<&kingmaker_coordinator::cluster::Cluster>,
) -> u64 {
    let mut size = default_table_shard_size(budget, rayon::current_num_threads(), states);
    for (memory, cores) in cluster.map(|c| c.worker_resources()).unwrap_or_default() {
        if memory > 0 {
            size = size.min(default_shard_size(memory / 4 * 3, cores as usize));
        }
    }
    if size < DEFAULT_SHARD_SIZE {
        tracing::info!(
            "shards of {size} states, fewer than the default {DEFAULT_SHARD_SIZE}: what the memory \
             and the table's size allow (--shard-size sets it)"
        );
    }
    size
}
