//! `kingmaker resume RUN_DIR`: continue a stopped or crashed build from its last checkpoint, or
//! give a run layers it does not have yet (`--layers`).

use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_coordinator::cluster::RemoteOptions;
use kingmaker_coordinator::lock::lock_run;
use kingmaker_coordinator::rundir::{RunDir, RunInfo};
use kingmaker_coordinator::runner::{check_options, select_layers, solve_run_with};
use kingmaker_coordinator::solve::SolveOptions;
use kingmaker_kernel::memory::{choose_memory_budget, parse_size};
use kingmaker_kernel::Game;
use kingmaker_rpc::auth::TOKEN_ENV;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// The run directory of the build to continue.
    pub dir: PathBuf,
    /// Compute threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// In-process workers (default: the build's number, from run.json; each owns its shards'
    /// checkpoints, so another number cannot reuse them).
    #[arg(long)]
    pub local_workers: Option<usize>,
    /// Checkpoint after every N waves (0: not by count).
    #[arg(long, default_value_t = 0)]
    pub checkpoint_every_waves: u32,
    /// Checkpoint when S seconds have passed since the last checkpoint (0: not by time).
    #[arg(long, default_value_t = 600)]
    pub checkpoint_every_secs: u64,
    /// Memory the embedded workers may use (e.g. 16G; default: three quarters of physical
    /// memory, or of this process's memory cgroup's limit where that is lower). Cells that fit stay in memory and are saved by checkpoints; larger ones are files
    /// under the run directory, worked through a shard at a time (keep threads × shard size well
    /// inside the budget).
    #[arg(long, value_parser = parse_size)]
    pub memory_budget: Option<u64>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// A distributed run's workers (HOST:PORT,...). Default: the ones in run.json. As many as
    /// the run started with, in the same order (worker N keeps the shards it had), restarted on
    /// their data directories if they went down.
    #[arg(long, value_delimiter = ',', conflicts_with = "local_workers")]
    pub workers: Vec<String>,
    /// The token the workers were started with (prefer the environment variable).
    #[arg(long, env = TOKEN_ENV, hide_env_values = true)]
    pub token: Option<String>,
    /// Stop the run when a worker has not answered heartbeats for this many seconds.
    #[arg(long, default_value_t = 5.0)]
    pub worker_timeout: f64,
    /// Layers to add to the run, comma-separated: those it does not have yet are solved after
    /// the ones it has (which are not solved again), and the summary then covers them all. A
    /// finished run can be given more layers this way.
    #[arg(long, value_delimiter = ',')]
    pub layers: Vec<String>,
}

pub fn run(args: ResumeArgs) -> Result<()> {
    // From here on a signal is ours (setup: exit at once; waves: checkpoint, then stop).
    kingmaker_coordinator::solve::stop_on_signals()?;
    let (run, mut info) = RunDir::open(&args.dir)?;
    let local_workers = match (args.local_workers, info.local_workers) {
        (Some(given), Some(built)) if given != built => bail!(
            "{} was built with --local-workers {built}: its checkpoints belong to {built} in-process \
             workers, so resume it with --local-workers {built} (or without the option)",
            args.dir.display()
        ),
        (given, built) => given.or(built).unwrap_or(1),
    };
    check_options(
        args.threads,
        local_workers,
        args.checkpoint_every_secs,
        args.memory_budget,
        args.worker_timeout,
    )?;
    // Locked for the whole resume: refused while a build or another resume works on the run.
    let _lock = lock_run(&args.dir, "kingmaker resume")?;
    if let Err(e) = run.state() {
        tracing::error!("{e:#}");
        let state = run.recover_state(&info)?;
        let names: Vec<_> = state
            .finished
            .iter()
            .map(|f| f.layer.name.as_str())
            .collect();
        tracing::warn!(
            "rebuilt checkpoint.json from the finished layer files ({}); the layer being solved \
             starts again from its first wave (the damaged file is kept as checkpoint.json.damaged)",
            if names.is_empty() { "none".to_string() } else { names.join(", ") }
        );
    }
    // A run.json edited since the run manifest was written is refused before anything is read.
    run.check_state(&run.state()?, &info)?;
    let added: Vec<_> = select_layers(&info.spec, &args.layers)?
        .into_iter()
        .filter(|l| !info.layers.iter().any(|have| have.name == l.name))
        .collect();
    if added.is_empty() && run.summary_path().exists() {
        bail!(
            "{} is already complete (summary.json exists); nothing to resume (give it more layers \
             with --layers)",
            args.dir.display()
        );
    }
    // The workers are checked, and held for the run, before anything in the run directory
    // changes.
    let (cluster, moved) = connect_workers(&args, &info)?;
    if !added.is_empty() {
        let names: Vec<_> = added.iter().map(|l| l.name.as_str()).collect();
        tracing::info!(
            "adding layer(s) {} to {}; its {} finished layer(s) are kept",
            names.join(", "),
            args.dir.display(),
            run.state()?.finished.len()
        );
        // The game's own order, so that a run given its layers one by one ends up like one
        // built with all of them.
        let wanted: Vec<_> = info
            .layers
            .iter()
            .chain(&added)
            .map(|l| l.name.clone())
            .collect();
        info.layers = info
            .spec
            .layers()
            .into_iter()
            .filter(|l| wanted.contains(&l.name))
            .collect();
        run.write_info(&info)?;
        // The summary is written again when the new layers are solved.
        match std::fs::remove_file(run.summary_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).context("removing the old summary.json");
            }
            _ => {}
        }
    }
    let game = Arc::new(info.spec.build()?);
    let state = run.state()?;
    match &state.current {
        Some(c) => {
            tracing::info!(
                "resuming {}: layer {} from its checkpoint after wave {}",
                game.name(),
                c.layer,
                c.last.wave
            )
        }
        None => tracing::info!(
            "resuming {}: {} layer(s) finished, no checkpoint of the next one",
            game.name(),
            state.finished.len()
        ),
    }
    let (budget, said) = choose_memory_budget(args.memory_budget).map_err(anyhow::Error::msg)?;
    kingmaker_kernel::memory::fit_allocator_to(budget);
    tracing::info!("{said}");
    let opts = SolveOptions {
        shard_size: info.shard_size,
        local_workers,
        checkpoint_every_waves: args.checkpoint_every_waves,
        checkpoint_every_secs: args.checkpoint_every_secs,
        memory_budget: budget,
    };
    let reach = kingmaker_coordinator::summary::default_reach(game.size());
    if let (Some(workers), Some(d)) = (moved, &info.distributed) {
        // Moved workers: remember where they are now.
        let mut moved = info.clone();
        moved.distributed = Some(kingmaker_coordinator::rundir::Distributed {
            workers,
            ..d.clone()
        });
        run.write_info(&moved)?;
    }
    solve_run_with(&run, &info, &game, &opts, cluster, reach, args.json)
}

/// The workers of a distributed run, connected and checked (and held for it), with their
/// addresses when they moved (`--workers` gives others than `run.json`); none for a run built in
/// process.
fn connect_workers(
    args: &ResumeArgs,
    info: &RunInfo,
) -> Result<(
    Option<kingmaker_coordinator::cluster::Cluster>,
    Option<Vec<String>>,
)> {
    match &info.distributed {
        None if !args.workers.is_empty() => bail!(
            "{} was built in process, not on workers: resume it without --workers (its checkpoints are in \
             its work/ directory)",
            args.dir.display()
        ),
        None => Ok((None, None)),
        Some(d) => {
            let addrs = if args.workers.is_empty() { d.workers.clone() } else { args.workers.clone() };
            if addrs.len() != d.workers.len() {
                bail!(
                    "{} was built on {} workers ({}), --workers gives {}: a resumed run needs as many workers \
                     as it started with (each keeps the shards and checkpoints it had)",
                    args.dir.display(),
                    d.workers.len(),
                    d.workers.join(","),
                    addrs.len()
                );
            }
            // The same workers in another order: put them back in the run's order.
            let mut same = addrs.clone();
            same.sort();
            let mut original = d.workers.clone();
            original.sort();
            let addrs = if same == original && addrs != d.workers {
                tracing::warn!("--workers lists the run's workers in another order; using the run's order");
                d.workers.clone()
            } else {
                addrs
            };
            let Some(token) = args.token.clone().filter(|t| !t.is_empty()) else {
                bail!("resuming a distributed run needs the workers' token: pass --token or set {TOKEN_ENV}");
            };
            let remote = RemoteOptions {
                addrs: addrs.clone(),
                token,
                timeout: std::time::Duration::from_secs_f64(args.worker_timeout),
                started_by: kingmaker_coordinator::cluster::started_by("kingmaker resume", &args.dir),
            };
            tracing::info!("resuming run {} on workers {}", d.run_id, addrs.join(","));
            let cluster = kingmaker_coordinator::cluster::connect(&remote, &info.spec, Some(&d.run_id))?;
            let moved = (addrs != d.workers).then_some(addrs);
            Ok((Some(cluster), moved))
        }
    }
}
