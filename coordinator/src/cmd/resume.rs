//! `kingmaker resume RUN_DIR`: continue a stopped or crashed build from its last checkpoint.

use super::build::solve_run;
use crate::rundir::RunDir;
use crate::solve::SolveOptions;
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_worker::Game;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// The run directory of the build to continue.
    pub dir: PathBuf,
    /// Compute threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// In-process workers (must match the build's number to reuse its checkpoints).
    #[arg(long, default_value_t = 1)]
    pub local_workers: usize,
    /// Checkpoint after every N waves (0: not by count).
    #[arg(long, default_value_t = 0)]
    pub checkpoint_every_waves: u32,
    /// Checkpoint when S seconds have passed since the last checkpoint (0: not by time).
    #[arg(long, default_value_t = 600)]
    pub checkpoint_every_secs: u64,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ResumeArgs) -> Result<()> {
    let (run, info) = RunDir::open(&args.dir)?;
    if run.summary_path().exists() {
        bail!("{} is already complete (summary.json exists); nothing to resume", args.dir.display());
    }
    if let Some(t) = args.threads {
        rayon::ThreadPoolBuilder::new().num_threads(t.max(1)).build_global().context("setting up threads")?;
    }
    let game = Arc::new(info.spec.build()?);
    let state = run.state()?;
    match &state.current {
        Some(c) => tracing::info!("resuming {}: layer {} from its checkpoint after wave {}", game.name(), c.layer, c.last.wave),
        None => tracing::info!("resuming {}: {} layer(s) finished, no checkpoint of the next one", game.name(), state.finished.len()),
    }
    let opts = SolveOptions {
        shard_size: info.shard_size,
        local_workers: args.local_workers,
        checkpoint_every_waves: args.checkpoint_every_waves,
        checkpoint_every_secs: args.checkpoint_every_secs,
    };
    let reach = game.size() < 1 << 24;
    solve_run(&run, &info, &game, &opts, reach, args.json)
}
