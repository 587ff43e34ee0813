//! `kingmaker build GAME ...`: solve every layer of a game into a new run directory.

use crate::games::GameChoice;
use crate::remote::{Cluster, RemoteOptions};
use crate::rundir::{write_json_atomically, Distributed, Progress, RunDir, RunInfo};
use crate::solve::{
    adaptive_schedule, embedded_workers, solve_distributed, solve_layers, stop_on_signals, Ending,
    SolveOptions, Solvers,
};
use crate::summary::summarize;
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_tablefmt::Value;
use kingmaker_worker::kernel::memory::{default_memory_budget, parse_size};
use kingmaker_worker::kernel::Layer;
use kingmaker_worker::options;
use kingmaker_worker::service::auth::TOKEN_ENV;
use kingmaker_worker::spec::{AnyGame, GameSpec};
use kingmaker_worker::Game;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct BuildArgs {
    #[command(subcommand)]
    pub game: GameChoice,
    /// The new run directory (must not exist or be empty). Default: runs/<game name>.
    #[arg(long, global = true)]
    pub out: Option<PathBuf>,
    /// Layers to solve, comma-separated (default: all of the game's layers).
    #[arg(long, global = true, value_delimiter = ',')]
    pub layers: Vec<String>,
    /// Compute threads (default: all cores).
    #[arg(long, global = true)]
    pub threads: Option<usize>,
    /// States per shard.
    #[arg(long, global = true, default_value_t = 1 << 24)]
    pub shard_size: u64,
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
    /// memory). Cells that fit stay in memory and are saved by checkpoints; larger ones are files
    /// under the run directory that the system pages in and out.
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
}

/// Check the size and count options shared by `build` and `resume` (before anything is written)
/// and set up the compute threads.
pub fn check_options(
    threads: Option<usize>,
    local_workers: usize,
    checkpoint_every_secs: u64,
    memory_budget: Option<u64>,
    worker_timeout: f64,
) -> Result<()> {
    let threads = threads.map(options::check_threads).transpose();
    let threads = threads.map_err(anyhow::Error::msg)?;
    options::check_local_workers(local_workers).map_err(anyhow::Error::msg)?;
    options::check_checkpoint_secs(checkpoint_every_secs).map_err(anyhow::Error::msg)?;
    options::check_worker_timeout(worker_timeout).map_err(anyhow::Error::msg)?;
    if let Some(bytes) = memory_budget {
        options::check_memory_budget(bytes).map_err(anyhow::Error::msg)?;
        if let Some(warning) = options::memory_budget_warning(bytes) {
            tracing::warn!("{warning}");
        }
    }
    if let Some(t) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("setting up threads")?;
    }
    Ok(())
}

pub fn run(args: BuildArgs) -> Result<()> {
    let spec = args.game.spec();
    options::check_shard_size(args.shard_size).map_err(anyhow::Error::msg)?;
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
    // Remote workers are checked (reachable, token, protocol version) before the run directory
    // is created, so a mistake there leaves nothing behind.
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
        };
        Some(crate::remote::connect(&remote, &spec, None)?)
    };
    let game = Arc::new(spec.build()?);
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("runs").join(game.name()));
    // Locked for the whole build: a second build or a resume of it is refused.
    let (run, _lock) = RunDir::create(&out, "kingmaker build")?;
    let info = RunInfo {
        format: 1,
        spec: spec.clone(),
        layers: layers.clone(),
        states: game.size(),
        shard_size: args.shard_size,
        kingmaker_version: env!("CARGO_PKG_VERSION").to_string(),
        solved_as: if args.no_symmetry {
            None
        } else {
            spec.reduced()
        },
        distributed: cluster.as_ref().map(|c| Distributed {
            run_id: c.run_id().to_string(),
            workers: c.addrs(),
        }),
        local_workers: cluster.is_none().then_some(args.local_workers),
    };
    run.write_info(&info)?;
    tracing::info!(
        "building {} ({} states) into {}",
        game.name(),
        game.size(),
        out.display()
    );
    let opts = SolveOptions {
        shard_size: args.shard_size,
        local_workers: args.local_workers,
        checkpoint_every_waves: args.checkpoint_every_waves,
        checkpoint_every_secs: args.checkpoint_every_secs,
        memory_budget: args.memory_budget.unwrap_or_else(default_memory_budget),
    };
    let reach = args.reachable.unwrap_or(game.size() < 1 << 24);
    if let Some(addr) = &args.metrics {
        let at = crate::progress::serve_metrics(addr)?;
        tracing::info!("metrics at http://{at}/metrics");
    }
    solve_run_with(&run, &info, &game, &opts, cluster, reach, args.json)
}

/// The layers of `spec` named in `names`, in the order given; an unknown name is an error that
/// lists the game's layers.
pub fn select_layers(spec: &GameSpec, names: &[String]) -> Result<Vec<Layer>> {
    let all_layers = spec.layers();
    names
        .iter()
        .map(|name| {
            all_layers
                .iter()
                .find(|l| &l.name == name)
                .cloned()
                .with_context(|| {
                    let names: Vec<_> = all_layers.iter().map(|l| l.name.as_str()).collect();
                    format!(
                        "{} has no layer {name:?}; its layers are {}",
                        spec.family(),
                        names.join(", ")
                    )
                })
        })
        .collect()
}

/// Solve what is left of a run, on the remote workers of `cluster` when it is given (else in
/// process), then write and print its summary. Shared by `build` and `resume`.
pub fn solve_run_with(
    run: &RunDir,
    info: &RunInfo,
    game: &Arc<AnyGame>,
    opts: &SolveOptions,
    cluster: Option<Cluster>,
    reach: bool,
    json: bool,
) -> Result<()> {
    let stop = stop_on_signals()?;
    let mut state = run.state()?;
    // The game the kernel solves: `game` itself, or its symmetry-reduced form.
    let kernel = match &info.solved_as {
        Some(spec) => {
            let kernel = Arc::new(spec.build()?);
            tracing::info!(
                "solving {} ({} states, a symmetry-reduced {}) and expanding its tables",
                kernel.name(),
                kernel.size(),
                game.name()
            );
            kernel
        }
        None => game.clone(),
    };
    // Announce this process at once (`kingmaker status`: restoring or starting, then running).
    let workers = cluster.as_ref().map(|c| c.addrs()).unwrap_or_default();
    let starting = Progress::starting(&info.layers, kernel.size(), &state, &workers);
    if let Err(e) = run.write_progress(&starting) {
        tracing::warn!("could not write progress.json: {e:#}");
    }
    let next_layer = adaptive_schedule(run, info, game);
    let ending = match cluster {
        None => solve_layers(
            run,
            &kernel,
            &info.layers,
            opts,
            &mut state,
            &stop,
            &Solvers {
                make_workers: &embedded_workers(run, &kernel, opts),
                next_layer: &next_layer,
            },
        )?,
        Some(cluster) => solve_distributed(
            run,
            info,
            &kernel,
            opts,
            cluster,
            &mut state,
            &stop,
            &next_layer,
        )?,
    };
    let tables = match ending {
        Ending::Finished(tables) => tables,
        Ending::Stopped => {
            println!(
                "stopped; the run is checkpointed: `kingmaker resume {}` continues it",
                run.path.display()
            );
            return Ok(());
        }
    };
    let summary = summarize(run, info, game, &tables, reach)?;
    write_json_atomically(&run.summary_path(), &summary)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_summary(&summary);
        println!("tables and summary.json written to {}", run.path.display());
    }
    Ok(())
}

/// A short human-readable account of a summary.
pub fn print_summary(s: &serde_json::Value) {
    println!(
        "{}: {} states, {} illegal",
        s["game"].as_str().unwrap_or("?"),
        s["states"],
        s["illegal"]
    );
    if let Some(layers) = s["layers"].as_object() {
        for (name, l) in layers {
            println!(
                "  layer {name:<10} W {:>12}  L {:>12}  D {:>10}  digest {}",
                l["win"],
                l["loss"],
                l["draw"],
                l["digest"].as_str().unwrap_or("")
            );
        }
    }
    for (title, block) in [
        ("all states", &s["classes"]),
        ("reachable", &s["reachable"]["classes"]),
    ] {
        if let Some(c) = block.as_object() {
            let parts: Vec<String> = c.iter().map(|(k, v)| format!("{k} {v}")).collect();
            println!("  classes over {title}: {}", parts.join(", "));
        }
    }
    if let Some(v) = s["start"]["value"].as_str() {
        let meaning = match v.parse().ok().and_then(Value::from_letter) {
            Some(Value::Win) => "a first-player win",
            Some(Value::Loss) => "a second-player win",
            _ => "a draw",
        };
        println!(
            "  start position: {v} ({meaning}) in {} plies",
            s["start"]["depth"]
        );
    }
    if let Some(n) = s["reachable"]["states"].as_u64() {
        println!("  reachable from the start: {n} states");
    }
}
