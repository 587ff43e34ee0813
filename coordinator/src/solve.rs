//! Solve a game's layers into a run directory: checkpointing as it goes, resuming from the last
//! good checkpoint, stopping cleanly on a signal. The workers may be in-process (the embedded
//! default) or remote; this module only sees them through `WorkerHandle`.

use crate::cluster::Cluster;
use crate::expansion::{expand_out_of_core, is_out_of_core};
use crate::progress::LayerProgress;
use crate::rundir::{Progress, RunDir, RunInfo, RunState, ShardPlacement};
use crate::table_progress::TableProgress;
use anyhow::{Context, Result};
use kingmaker_games::reduction::SolvedTable;
use kingmaker_games::AnyGame;
use kingmaker_games::Notation;
use kingmaker_kernel::Game;
use kingmaker_kernel::{
    drive_layer, gather, named_local_workers, CellStorage, KernelError, Layer, LayerObserver,
    Placement, ResumePoint, ShardPlan, WaveSummary, WorkerHandle,
};
use kingmaker_tablefmt::table::{TableSummary, TableWriter};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// How to run the kernel.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    pub shard_size: u64,
    /// In-process workers (more than one exercises the transport path inside one process).
    pub local_workers: usize,
    /// Checkpoint after every N waves (0: never by count).
    pub checkpoint_every_waves: u32,
    /// Checkpoint when this many seconds have passed since the last one (0: never by time).
    pub checkpoint_every_secs: u64,
    /// Bytes the embedded workers may use: their cells stay in memory if they fit.
    pub memory_budget: u64,
}

/// Opens the workers of one layer (in-process or remote).
pub type WorkerFactory<'a> = dyn Fn(&Layer, &ShardPlan) -> Result<Vec<Arc<dyn WorkerHandle>>> + 'a;

/// Asked when every scheduled layer is solved: the next layer of an adaptive schedule, if any.
pub type NextLayer<'a> = dyn Fn(&RunState) -> Result<Option<Layer>> + 'a;

/// The layers a game adds as their answers at the start come in ([`kingmaker_games::GameSpec::next_layer`]: Go's
/// search for the optimal score), each appended to `run.json` before it is solved so that
/// `resume` solves it too. `game` is the run's game (its start, its tables).
pub fn adaptive_schedule<'a>(
    run: &'a RunDir,
    info: &RunInfo,
    game: &'a AnyGame,
) -> impl Fn(&RunState) -> Result<Option<Layer>> + 'a {
    let info = RefCell::new(info.clone());
    move |state| {
        let Some(start) = game.start_index() else {
            return Ok(None);
        };
        let mut answers = Vec::new();
        for layer in &info.borrow().layers {
            // A layer kept on its workers is not read here (such a run has a fixed schedule).
            if state.finished(&layer.name).is_some() && !run.is_kept(&layer.name) {
                answers.push((layer.name.clone(), run.table(&layer.name)?.get(start)?.0));
            }
        }
        let next = info.borrow().spec.next_layer(&answers);
        if let Some(layer) = &next {
            let mut info = info.borrow_mut();
            info.layers.push(layer.clone());
            run.write_info(&info)?;
            tracing::info!(
                "next layer: {}, chosen from the start's values so far",
                layer.name
            );
        }
        Ok(next)
    }
}

/// Keeps a solved layer where its workers are, instead of gathering it (`--keep-layers-on-workers`).
pub type KeepLayer<'a> = dyn Fn(&Layer) -> Result<TableSummary> + 'a;

/// Who solves a run's layers, where their tables go, and which layers come after the scheduled
/// ones.
pub struct Solvers<'a> {
    pub make_workers: &'a WorkerFactory<'a>,
    /// None: every layer is gathered into the run directory.
    pub keep_layer: Option<&'a KeepLayer<'a>>,
    pub next_layer: &'a NextLayer<'a>,
}

/// How a call to [`solve_layers`] ended.
pub enum Ending {
    /// Every layer is solved; their tables are in the run directory.
    Finished(Vec<(Layer, TableSummary)>),
    /// A stop was requested; the run is checkpointed and can be resumed.
    Stopped,
}

/// Set while the process sets up (checking finished layers, building the game, allocating cells,
/// restoring a checkpoint); cleared when the first wave closes; set again once every layer is
/// written ([`signals_end_at_once`]).
static SETUP: std::sync::LazyLock<Arc<AtomicBool>> =
    std::sync::LazyLock::new(|| Arc::new(AtomicBool::new(true)));
/// Set by the first SIGINT/SIGTERM once waves run.
static STOP: std::sync::LazyLock<Arc<AtomicBool>> =
    std::sync::LazyLock::new(|| Arc::new(AtomicBool::new(false)));
static SIGNALS: std::sync::OnceLock<()> = std::sync::OnceLock::new();

/// Set by SIGINT/SIGTERM once waves run: finish the current wave, checkpoint, stop. A second
/// signal exits at once (the last checkpoint still stands, so the run can be resumed), and so
/// does the first one during setup (nothing there is worth waiting for). `build` and `resume`
/// call it first thing, so no signal finds the default action; later calls return the same flag.
pub fn stop_on_signals() -> Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    if SIGNALS.get().is_none() {
        for sig in [SIGINT, SIGTERM] {
            let (setup, stop) = (SETUP.clone(), STOP.clone());
            // One swap decides which signal is the first, even when two threads handle the two
            // signals at the same moment: with a check and then a set, both could see no stop yet.
            let handler = move || {
                if setup.load(Ordering::SeqCst) || stop.swap(true, Ordering::SeqCst) {
                    signal_hook::low_level::exit(130);
                }
            };
            // SAFETY: the handler only touches atomics and calls _exit, both async-signal-safe.
            unsafe { signal_hook::low_level::register(sig, handler) }?;
        }
        let _ = SIGNALS.set(());
    }
    Ok(STOP.clone())
}

/// From now on a signal ends the process at once, as during setup: called once every layer is
/// written, when what is left (the summary, with its census at level 2 the longest part of the
/// build's end) is computed again by `resume` from the layers, so nothing is worth waiting for.
pub fn signals_end_at_once() {
    SETUP.store(true, Ordering::SeqCst);
}

/// Watches the waves of one layer: progress, checkpoints, the run manifest, stopping.
struct Observer<'a> {
    run: &'a RunDir,
    state: &'a mut RunState,
    layer: &'a Layer,
    states: u64,
    opts: &'a SolveOptions,
    stop: &'a AtomicBool,
    bar: LayerProgress,
    last_checkpoint: Instant,
    started: Instant,
    workers: Vec<String>,
}

impl LayerObserver for Observer<'_> {
    fn wave(&mut self, w: &WaveSummary) {
        SETUP.store(false, Ordering::Relaxed);
        self.bar.wave(w);
        let elapsed = self.started.elapsed().as_secs_f64();
        let progress = Progress::new(
            self.layer,
            w,
            self.states,
            elapsed,
            self.state,
            &self.workers,
        );
        if let Err(e) = self.run.write_progress(&progress) {
            tracing::warn!("could not write progress.json: {e:#}");
        }
        let record = kingmaker_tablefmt::run::WaveRecord {
            layer: w.layer.clone(),
            wave: w.wave,
            decided: w.decided,
            decided_total: w.decided_total,
            expanded: w.stats.expanded,
            applied: w.stats.applied,
            seconds: w.seconds,
            wire_bytes: w.wire_bytes,
            at_unix: kingmaker_tablefmt::run::unix_now(),
        };
        if let Err(e) = kingmaker_tablefmt::run::append_wave(&self.run.path, &record) {
            tracing::warn!("could not record the wave in waves.jsonl: {e:#}");
        }
    }
    fn want_checkpoint(&mut self, w: &WaveSummary) -> bool {
        let by_waves = self.opts.checkpoint_every_waves > 0
            && w.wave.is_multiple_of(self.opts.checkpoint_every_waves);
        let by_time = self.opts.checkpoint_every_secs > 0
            && self.last_checkpoint.elapsed().as_secs() >= self.opts.checkpoint_every_secs;
        by_waves || by_time
    }
    fn checkpointed(&mut self, wave: u32, decided_total: u64) -> Result<(), KernelError> {
        self.record(ResumePoint {
            wave,
            decided_total,
            settled: false,
        })
    }
    fn should_stop(&mut self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    fn checkpoint_when_settled(&mut self) -> bool {
        self.opts.checkpoint_every_waves > 0 || self.opts.checkpoint_every_secs > 0
    }
    fn settled(&mut self, point: ResumePoint) -> Result<(), KernelError> {
        self.record(point)
    }
}

impl Observer<'_> {
    /// Record the workers' checkpoint `point` in the run manifest.
    fn record(&mut self, point: ResumePoint) -> Result<(), KernelError> {
        self.state.checkpointed(&self.layer.name, point);
        self.run
            .write_state(self.state)
            .map_err(|e| KernelError::Checkpoint(format!("{e:#}")))?;
        self.last_checkpoint = Instant::now();
        let wave = point.wave;
        if point.settled {
            tracing::info!(
                "layer {} solved and checkpointed after wave {wave}, before its table is written",
                self.layer.name
            );
        } else {
            tracing::info!("layer {} checkpointed after wave {wave}", self.layer.name);
        }
        Ok(())
    }
}

/// Solve every layer not yet finished in `state`, with workers from `make_workers`.
/// Where the run manifest has a checkpoint of the current layer the workers restore it; if that
/// checkpoint is damaged, the one before, and failing that the layer starts again.
/// `game` is the game the kernel solves ([`RunInfo::kernel_spec`]); when it is a reduced game its
/// tables are expanded to the full game's as they are written.
pub fn solve_layers(
    run: &RunDir,
    game: &Arc<AnyGame>,
    layers: &[Layer],
    opts: &SolveOptions,
    state: &mut RunState,
    stop: &AtomicBool,
    solvers: &Solvers,
) -> Result<Ending> {
    let Solvers {
        make_workers,
        keep_layer,
        next_layer,
    } = solvers;
    let plan = ShardPlan::new(game.size(), opts.shard_size);
    let scheduled = layers.to_vec();
    let mut layers = layers.to_vec();
    // The layer with a checkpoint first: the work directory is cleared after every layer, so
    // solving another one first (a finished layer that failed its check) would lose it.
    if let Some(at) = state
        .current
        .as_ref()
        .and_then(|c| layers.iter().position(|l| l.name == c.layer))
    {
        let current = layers.remove(at);
        layers.insert(0, current);
    }
    let mut k = 0;
    loop {
        if k == layers.len() {
            // Every scheduled layer is solved: the game may want another (an adaptive schedule).
            match next_layer(state)? {
                Some(layer) => layers.push(layer),
                None => break,
            }
        }
        let layer = &layers[k].clone();
        k += 1;
        if state.finished(&layer.name).is_some() {
            continue;
        }
        let workers = make_workers(layer, &plan)?;
        let names: Vec<String> = workers.iter().map(|w| w.name()).collect();
        let mut starts: Vec<Option<ResumePoint>> = state.resume_points(&layer.name);
        starts.push(None);
        let mut outcome = None;
        for start in starts {
            let mut observer = Observer {
                run,
                state,
                layer,
                states: game.size(),
                opts,
                stop,
                bar: LayerProgress::new(&layer.name, game.size()),
                last_checkpoint: Instant::now(),
                started: Instant::now(),
                workers: names.clone(),
            };
            if let Some(p) = start {
                tracing::info!("layer {}: resuming after wave {}", layer.name, p.wave);
            }
            match drive_layer(layer, &workers, start, &mut observer) {
                Ok(o) => {
                    observer.bar.finish();
                    outcome = Some(o);
                    break;
                }
                // A checkpoint of another game or layer is refused, not fallen back from (said
                // once: a restore error carries its cause as its source too).
                Err(KernelError::Restore { wave, source }) if source.is_refused() => {
                    let why = match *source {
                        KernelError::CheckpointRefused(why) => why,
                        other => other.to_string(),
                    };
                    return Err(KernelError::CheckpointRefused(format!(
                        "the checkpoint after wave {wave}: {why}"
                    ))
                    .into());
                }
                Err(e @ (KernelError::Format(_) | KernelError::Restore { .. }))
                    if start.is_some() =>
                {
                    observer.bar.finish();
                    tracing::error!(
                        "layer {}: checkpoint after wave {} cannot be restored: {e}",
                        layer.name,
                        start.unwrap().wave
                    );
                    tracing::warn!(
                        "falling back to the checkpoint before it (or the start of the layer)"
                    );
                }
                Err(e) => return Err(e.into()),
            }
        }
        let outcome =
            outcome.expect("the last attempt starts from scratch and either ends or fails");
        if outcome.stopped {
            tracing::info!(
                "stopped after wave {} of layer {}; resume with `{}`",
                outcome.waves,
                layer.name,
                crate::rundir::resume_hint(&run.path, "")
            );
            return Ok(Ending::Stopped);
        }
        let table = match keep_layer {
            Some(keep) => {
                let table = keep(layer)?;
                drop(workers);
                table
            }
            None => write_table(run, game, &plan, layer, workers, opts.memory_budget)
                .with_context(|| {
                    let kept = if opts.checkpoint_every_waves > 0 || opts.checkpoint_every_secs > 0
                    {
                        "its solved cells are checkpointed, so `kingmaker resume` writes the table \
                     without solving it again"
                    } else {
                        "no checkpoint was asked for, so `kingmaker resume` solves it again"
                    };
                    format!(
                    "layer {} is solved but writing its table failed ({kept}; where the disk is \
                     full, free space first)",
                    layer.name
                )
                })?,
        };
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
        state.finish(layer.clone(), table);
        run.write_state(state)?;
        let work = run.work_dir();
        if work.exists() {
            std::fs::remove_dir_all(&work)
                .with_context(|| format!("removing {}", work.display()))?;
        }
    }
    // In the run's order, then the layers an adaptive schedule added.
    Ok(Ending::Finished(
        scheduled
            .iter()
            .chain(&layers[scheduled.len()..])
            .map(|l| (l.clone(), state.finished(&l.name).cloned().expect("solved")))
            .collect(),
    ))
}

/// Gather a solved layer from the workers into its table file (and let the workers go).
///
/// A reduced game's table (a symmetry quotient: [`kingmaker_games::reduction`]) is expanded to the
/// full game's table, byte-identical to the table of a full solve: in memory when the reduced
/// table fits in half of `budget` (2 bytes per reduced state), else out of core
/// ([`crate::expansion`]).
fn write_table(
    run: &RunDir,
    game: &AnyGame,
    plan: &ShardPlan,
    layer: &Layer,
    workers: Vec<Arc<dyn WorkerHandle>>,
    budget: u64,
) -> Result<TableSummary> {
    let dir = run.layers_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let reduction = game.reduction();
    let full = reduction.map_or(game.size(), |r| r.full_size());
    warn_if_short_of_disk(
        run,
        layer,
        full,
        reduction.is_some() && is_out_of_core(game.size(), budget),
    );
    let mut writer = TableWriter::create(&dir, &run.identity(&layer.name), full)?;
    let mut progress = TableProgress::new(run, &layer.name);
    let shards = plan.shards() as u64;
    let Some(reduction) = reduction else {
        progress.report("gathering", 0, shards);
        gather(plan, &workers, |shard, values, depth| -> Result<()> {
            writer.append(&values, &depth)?;
            progress.report("gathering", shard as u64 + 1, shards);
            Ok(())
        })?;
        return Ok(writer.finish()?);
    };
    let started = Instant::now();
    if is_out_of_core(game.size(), budget) {
        expand_out_of_core(
            run,
            reduction,
            game.size(),
            plan,
            layer,
            workers,
            &mut writer,
            budget,
            &mut progress,
        )?;
    } else {
        let mut table = SolvedTable::with_capacity(game.size());
        progress.report("gathering", 0, shards);
        gather(plan, &workers, |shard, values, depth| -> Result<()> {
            table.append(&values, &depth);
            progress.report("gathering", shard as u64 + 1, shards);
            Ok(())
        })?;
        drop(workers);
        // Rows expanded at a time: enough for every thread, little beside the solved table.
        const ROWS: u64 = 1 << 20;
        let mut values = vec![0u8; ROWS.min(full) as usize];
        let mut depth = vec![0u16; values.len()];
        for first in (0..full).step_by(ROWS as usize) {
            let n = ROWS.min(full - first) as usize;
            reduction.expand_rows(first, &table, &mut values[..n], &mut depth[..n]);
            writer.append(&values[..n], &depth[..n])?;
            progress.report("expanding", first + n as u64, full);
        }
    }
    tracing::info!(
        "layer {}: the {} states of {} expanded to the {full} of {} in {:.1}s",
        layer.name,
        game.size(),
        game.name(),
        reduction.full_name(),
        started.elapsed().as_secs_f64()
    );
    Ok(writer.finish()?)
}

/// Warn before a layer's table is written where the disk may not hold it (and, `routed`, the
/// out-of-core expansion's routed file): a failure comes later, with the layer checkpointed.
fn warn_if_short_of_disk(run: &RunDir, layer: &Layer, full: u64, routed: bool) {
    let need = crate::preflight::table_bytes(full) * if routed { 2 } else { 1 };
    if let Some(free) = crate::preflight::free_disk(&run.path).filter(|&free| free < need) {
        tracing::warn!(
            "layer {}: its table may need up to {} of disk, and {} has {} free",
            layer.name,
            crate::digits::human_bytes(need),
            run.path.display(),
            crate::digits::human_bytes(free)
        );
    }
}

/// In-process workers whose arrays and checkpoints live in `run/work/`; their checkpoints name
/// the JSON of `game` ([`RunInfo::kernel_spec`]), and their shards are placed as `info` says.
pub fn embedded_workers(
    run: &RunDir,
    game: &Arc<AnyGame>,
    info: &RunInfo,
    opts: &SolveOptions,
) -> Result<Box<WorkerFactory<'static>>> {
    let name = serde_json::to_value(info.kernel_spec())?;
    let workers = (opts.local_workers, placement_of(info));
    let (work, game) = (run.work_dir(), game.clone());
    let budget = opts.memory_budget;
    Ok(Box::new(move |layer: &Layer, plan: &ShardPlan| {
        // The in-process workers share this process's memory.
        let storage = CellStorage::for_budget(plan.size, budget);
        tracing::info!(
            "cells of layer {}: {}",
            layer.name,
            match storage {
                CellStorage::Memory => "in memory",
                CellStorage::File { .. } =>
                    "in files under work/, out of core (larger than the memory budget)",
            }
        );
        // Out of core, each thread closes a whole shard at a time, in memory.
        let threads = rayon::current_num_threads() as u64;
        if storage != CellStorage::Memory && threads * plan.range(0).end > budget / 2 {
            tracing::warn!(
                "{threads} threads × shards of {} states take more than half the memory budget \
                 of {budget} bytes: out of core, a smaller --shard-size keeps the page cache \
                 from thrashing",
                plan.range(0).end
            );
        }
        Ok(named_local_workers(
            &name,
            game.clone(),
            layer,
            *plan,
            workers,
            Some(&work),
            storage,
        )?)
    }))
}

/// Solve every layer not yet finished on remote workers (`build --workers`, `resume --workers`,
/// connected and checked by [`Cluster::connect`]): open each layer on all of them, drive it and
/// gather its table as the embedded build does. The workers checkpoint into their data
/// directories as in-process workers do into `run/work/`; a resumed run restores the last
/// checkpoint there (or the one before, if a chunk of it is damaged). On a stop request the wave is
/// finished, checkpointed and the workers are told to end the run (their files stay); on a failure
/// they are told the same and the error names the worker at fault.
// The run, its game, the options, the cluster, the state and the schedule are all distinct.
#[allow(clippy::too_many_arguments)]
pub fn solve_distributed(
    run: &RunDir,
    info: &RunInfo,
    game: &Arc<AnyGame>,
    opts: &SolveOptions,
    cluster: Cluster,
    state: &mut RunState,
    stop: &AtomicBool,
    next_layer: &NextLayer,
) -> Result<Ending> {
    let keeps = info.distributed.as_ref().is_some_and(|d| d.keep_layers);
    // A kept layer's parts, and the rows routed for its expansion, follow the workers' order.
    let placement = if keeps {
        Placement::Runs
    } else {
        placement_of(info)
    };
    let make = |layer: &Layer, plan: &ShardPlan| {
        cluster.layer_workers(info.kernel_spec(), layer, plan, placement)
    };
    let keep = |layer: &Layer| crate::kept::keep_on_workers(run, game, &cluster, layer);
    let solvers = Solvers {
        make_workers: &make,
        keep_layer: keeps.then_some(&keep as &KeepLayer),
        next_layer,
    };
    match solve_layers(run, game, &info.layers, opts, state, stop, &solvers) {
        Ok(ending) => {
            cluster.shutdown(matches!(ending, Ending::Finished(_)));
            Ok(ending)
        }
        Err(err)
            if err
                .downcast_ref::<KernelError>()
                .is_some_and(KernelError::is_refused) =>
        {
            // Not a worker's failure: the run's files are not this run's, as the error says.
            cluster.shutdown(false);
            Err(err)
        }
        Err(err) => {
            let culprit = cluster.failure().or_else(|| cluster.unreachable());
            cluster.shutdown(false);
            // A worker that went away is restarted; one that failed at its work (a full disk)
            // needs its cause removed, which the error below names.
            let (why, fix) = match culprit {
                Some((addr, reason)) => (format!("worker {addr} {reason}"), "restart what is down"),
                None => (
                    "a worker failed".to_string(),
                    "remove the cause named below (on the worker it names)",
                ),
            };
            let resume = match &state.current {
                Some(c) => format!(
                    "its last checkpoint is after wave {} of layer {}",
                    c.last.wave, c.layer
                ),
                None => "it has no checkpoint of the current layer".to_string(),
            };
            let workers = info.distributed.as_ref().map(|d| d.workers.join(","));
            Err(err.context(format!(
                "the distributed build stopped: {why}; {} keeps its finished layers and {resume}, the workers \
                 keep their shard files: {fix}, then `{}`",
                run.path.display(),
                crate::rundir::resume_hint(
                    &run.path,
                    &format!(" --workers {} --token ...", workers.unwrap_or_default())
                )
            )))
        }
    }
}

/// The kernel's placement of a gathered layer's shards, as the run recorded it.
fn placement_of(info: &RunInfo) -> Placement {
    match info.shard_placement {
        ShardPlacement::Runs => Placement::Runs,
        ShardPlacement::Interleaved => Placement::Interleaved,
    }
}
