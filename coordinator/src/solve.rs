//! Solve a game's layers into a run directory on the embedded default (in-process workers).

use crate::progress::LayerProgress;
use crate::rundir::RunDir;
use anyhow::{Context, Result};
use kingmaker_tablefmt::table::{TableSummary, TableWriter};
use kingmaker_worker::kernel::driver::{gather, local_workers};
use kingmaker_worker::kernel::{drive_layer, Layer, ShardPlan, WorkerHandle};
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::Game;
use std::sync::Arc;

/// How to run the kernel.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    pub shard_size: u64,
    /// In-process workers (more than one exercises the transport path inside one process).
    pub local_workers: usize,
}

/// Solve one layer with the given workers and write its table into the run directory.
pub fn solve_layer(
    run: &RunDir,
    layer: &Layer,
    plan: &ShardPlan,
    workers: &[Arc<dyn WorkerHandle>],
) -> Result<TableSummary> {
    let progress = LayerProgress::new(&layer.name, plan.size);
    let outcome = drive_layer(layer, workers, None, &mut |w: &kingmaker_worker::kernel::WaveSummary| progress.wave(w))?;
    progress.finish();
    let mut writer = TableWriter::create(&run.layers_dir(), &layer.name)?;
    let mut max_depth = 0;
    gather(plan, workers, |_, values, depth| -> Result<()> {
        writer.append(&values, &depth, &mut max_depth)?;
        Ok(())
    })?;
    let table = writer.finish(max_depth)?;
    tracing::info!(
        "layer {} solved in {} waves, {:.2}s: W {} L {} D {} illegal {}",
        layer.name,
        outcome.waves,
        outcome.seconds,
        table.counts.win,
        table.counts.loss,
        table.counts.draw,
        table.counts.illegal
    );
    Ok(table)
}

/// Solve every layer on in-process workers whose arrays live in `run/work/`.
pub fn solve_embedded(
    run: &RunDir,
    game: &Arc<AnyGame>,
    layers: &[Layer],
    opts: &SolveOptions,
) -> Result<Vec<(Layer, TableSummary)>> {
    let plan = ShardPlan::new(game.size(), opts.shard_size);
    let mut done = Vec::new();
    for layer in layers {
        let work = run.work_dir();
        let workers = local_workers(game.clone(), layer, plan, opts.local_workers, Some(&work))?;
        let table = solve_layer(run, layer, &plan, &workers)?;
        drop(workers);
        std::fs::remove_dir_all(&work).with_context(|| format!("removing {}", work.display()))?;
        done.push((layer.clone(), table));
    }
    Ok(done)
}
