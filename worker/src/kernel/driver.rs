//! The barrier: run the waves of one layer over a set of workers, in-process or remote.

use super::checkpoint::CheckpointStore;
use super::engine::{Router, WaveStats, WorkerEngine};
use super::memory::CellStorage;
use super::shard::ShardPlan;
use super::{KernelError, Layer};
use crate::game::Game;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// What the driver needs of one worker. In-process workers implement it directly; the gRPC
/// client implements it for remote ones. Each call returns when the worker has done the step.
pub trait WorkerHandle: Send + Sync {
    /// How to name this worker in messages (an address for remote workers).
    fn name(&self) -> String;
    fn init_pass(&self) -> Result<(), KernelError>;
    fn run_wave(&self, wave: u32) -> Result<(), KernelError>;
    fn close_wave(&self, wave: u32) -> Result<(u64, WaveStats), KernelError>;
    fn shard_values(&self, shard: usize) -> Result<Vec<u8>, KernelError>;
    fn shard_depth(&self, shard: usize) -> Result<Vec<u16>, KernelError>;
    /// Save this worker's arrays after wave `wave` closed (see [`super::checkpoint`]).
    fn checkpoint(&self, _wave: u32) -> Result<(), KernelError> {
        Err(KernelError::Checkpoint(format!(
            "worker {} cannot write checkpoints",
            self.name()
        )))
    }
    /// Load this worker's arrays as they were after wave `wave` closed.
    fn restore(&self, _wave: u32) -> Result<(), KernelError> {
        Err(KernelError::Checkpoint(format!(
            "worker {} cannot restore checkpoints",
            self.name()
        )))
    }
}

/// What the caller of [`drive_layer`] sees and decides between waves.
pub trait LayerObserver {
    /// A wave has closed (wave 0 is the initial pass).
    fn wave(&mut self, summary: &WaveSummary);
    /// Should every worker checkpoint now?
    fn want_checkpoint(&mut self, _summary: &WaveSummary) -> bool {
        false
    }
    /// Every worker has checkpointed `wave`: record it as the run's restart point.
    fn checkpointed(&mut self, _wave: u32, _decided_total: u64) -> Result<(), KernelError> {
        Ok(())
    }
    /// Stop after this wave? (A checkpoint is taken first, so the run can be resumed.)
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// Any closure is an observer that only watches.
impl<F: FnMut(&WaveSummary)> LayerObserver for F {
    fn wave(&mut self, summary: &WaveSummary) {
        self(summary)
    }
}

/// Where a resumed layer starts: the workers hold the state after `wave` closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ResumePoint {
    pub wave: u32,
    pub decided_total: u64,
}

/// One line of progress: what a wave did, summed over the workers.
#[derive(Clone, Debug, serde::Serialize)]
pub struct WaveSummary {
    pub layer: String,
    pub wave: u32,
    pub decided: u64,
    pub decided_total: u64,
    pub stats: WaveStats,
    pub seconds: f64,
}

/// How a layer's waves went.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LayerOutcome {
    pub waves: u32,
    pub decided: u64,
    pub seconds: f64,
    /// The observer asked to stop: the layer is not finished, its last wave is checkpointed.
    pub stopped: bool,
}

/// Call `f` on every worker at once and collect the results in worker order.
fn on_all<T: Send>(
    workers: &[Arc<dyn WorkerHandle>],
    f: impl Fn(&dyn WorkerHandle) -> Result<T, KernelError> + Sync,
) -> Result<Vec<T>, KernelError> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .iter()
            .map(|w| scope.spawn(|| f(w.as_ref())))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker call panicked"))
            .collect()
    })
}

/// Run one layer to its fixpoint: the initial pass (or the restored state of `resume`), then
/// waves until one decides nothing. The observer sees every wave and decides about checkpoints
/// and stopping; a stopped layer returns with `stopped` set.
pub fn drive_layer(
    layer: &Layer,
    workers: &[Arc<dyn WorkerHandle>],
    resume: Option<ResumePoint>,
    observer: &mut dyn LayerObserver,
) -> Result<LayerOutcome, KernelError> {
    let started = Instant::now();
    let (mut wave, mut total) = match resume {
        Some(r) => {
            on_all(workers, |w| w.restore(r.wave)).map_err(|e| KernelError::Restore {
                wave: r.wave,
                source: Box::new(e),
            })?;
            (r.wave + 1, r.decided_total)
        }
        None => (0, 0),
    };
    loop {
        let t = Instant::now();
        if wave == 0 {
            on_all(workers, |w| w.init_pass())?;
        } else {
            on_all(workers, |w| w.run_wave(wave))?;
        }
        let closed = on_all(workers, |w| w.close_wave(wave))?;
        let decided: u64 = closed.iter().map(|c| c.0).sum();
        let stats = closed.iter().fold(WaveStats::default(), |a, c| WaveStats {
            expanded: a.expanded + c.1.expanded,
            applied: a.applied + c.1.applied,
            sent: a.sent + c.1.sent,
        });
        total += decided;
        let summary = WaveSummary {
            layer: layer.name.clone(),
            wave,
            decided,
            decided_total: total,
            stats,
            seconds: t.elapsed().as_secs_f64(),
        };
        observer.wave(&summary);
        let outcome = |stopped| LayerOutcome {
            // The last wave decided nothing: the layer settled in the wave before it.
            waves: if stopped {
                wave
            } else {
                wave.saturating_sub(1)
            },
            decided: total,
            seconds: started.elapsed().as_secs_f64(),
            stopped,
        };
        if decided == 0 {
            return Ok(outcome(false));
        }
        let stop = observer.should_stop();
        if stop || observer.want_checkpoint(&summary) {
            on_all(workers, |w| w.checkpoint(wave))?;
            observer.checkpointed(wave, total)?;
        }
        if stop {
            return Ok(outcome(true));
        }
        wave += 1;
    }
}

/// An in-process worker: a [`WorkerEngine`] behind the [`WorkerHandle`] interface.
pub struct LocalWorker<G: Game> {
    pub engine: WorkerEngine<G>,
    name: String,
    /// Where checkpoints go (None: in-memory worker, no checkpoints).
    checkpoints: Option<CheckpointStore>,
}

impl<G: Game> WorkerHandle for LocalWorker<G> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn init_pass(&self) -> Result<(), KernelError> {
        self.engine.init_pass()
    }
    fn run_wave(&self, wave: u32) -> Result<(), KernelError> {
        self.engine.run_wave(wave)
    }
    fn close_wave(&self, wave: u32) -> Result<(u64, WaveStats), KernelError> {
        self.engine.close_wave(wave)
    }
    fn shard_values(&self, shard: usize) -> Result<Vec<u8>, KernelError> {
        self.engine
            .shard_values(shard)
            .ok_or_else(|| self.not_mine(shard))
    }
    fn shard_depth(&self, shard: usize) -> Result<Vec<u16>, KernelError> {
        self.engine
            .shard_depth(shard)?
            .ok_or_else(|| self.not_mine(shard))
    }
    fn checkpoint(&self, wave: u32) -> Result<(), KernelError> {
        self.store()?.save(&self.engine, wave)
    }
    fn restore(&self, wave: u32) -> Result<(), KernelError> {
        self.store()?.load(&self.engine, wave)
    }
}

impl<G: Game> LocalWorker<G> {
    fn store(&self) -> Result<&CheckpointStore, KernelError> {
        self.checkpoints.as_ref().ok_or_else(|| {
            KernelError::Checkpoint(format!("{} keeps its arrays in memory", self.name))
        })
    }

    fn not_mine(&self, shard: usize) -> KernelError {
        KernelError::Worker {
            worker: self.name.clone(),
            message: format!("does not own shard {shard}"),
        }
    }
}

/// The in-process transport: a batch for worker `w` is applied by calling its engine directly.
pub struct InProcessRouter<G: Game> {
    peers: OnceLock<Vec<Arc<LocalWorker<G>>>>,
}

impl<G: Game> Default for InProcessRouter<G> {
    fn default() -> Self {
        InProcessRouter {
            peers: OnceLock::new(),
        }
    }
}

impl<G: Game> Router for InProcessRouter<G> {
    fn send(&self, worker: usize, updates: &[u64]) -> Result<(), KernelError> {
        let peers = self
            .peers
            .get()
            .expect("in-process router used before its peers were set");
        peers[worker].engine.receive(updates)
    }
}

/// Spread shards over `workers` in contiguous runs (shard `s` goes to `s * workers / shards`).
pub fn assign_shards(plan: &ShardPlan, workers: usize) -> Vec<usize> {
    let shards = plan.shards();
    (0..shards).map(|s| s * workers / shards).collect()
}

/// `count` in-process workers over one layer, wired to each other with the in-process router.
/// Wave logs and checkpoints live in `dir/worker-N/` when a directory is given, and the cells too
/// if `storage` says so; without a directory everything is in memory.
pub fn local_workers<G: Game + 'static>(
    game: Arc<G>,
    layer: &Layer,
    plan: ShardPlan,
    count: usize,
    dir: Option<&std::path::Path>,
    storage: CellStorage,
) -> Result<Vec<Arc<dyn WorkerHandle>>, KernelError> {
    let owners = assign_shards(&plan, count);
    let router = Arc::new(InProcessRouter::<G>::default());
    let mut locals = Vec::new();
    for me in 0..count {
        let sub = dir.map(|d| d.join(format!("worker-{me}")));
        if let Some(sub) = &sub {
            std::fs::create_dir_all(sub).map_err(|source| KernelError::Io {
                path: sub.display().to_string(),
                source,
            })?;
        }
        let engine = WorkerEngine::new(
            game.clone(),
            layer.clone(),
            plan,
            owners.clone(),
            me,
            sub.as_deref(),
            storage,
            router.clone() as Arc<dyn Router>,
        )?;
        locals.push(Arc::new(LocalWorker {
            engine,
            name: format!("in-process worker {me}"),
            checkpoints: sub
                .as_ref()
                .map(|d| CheckpointStore::new(d.join("checkpoint"))),
        }));
    }
    let _ = router.peers.set(locals.clone());
    Ok(locals.into_iter().map(|w| w as _).collect())
}

/// A solved layer held in memory.
pub struct Solved {
    pub values: Vec<u8>,
    pub depth: Vec<u16>,
    pub waves: u32,
}

/// Gather every shard's values and depths from the workers, in index order.
pub fn gather<E: From<KernelError>>(
    plan: &ShardPlan,
    workers: &[Arc<dyn WorkerHandle>],
    mut sink: impl FnMut(usize, Vec<u8>, Vec<u16>) -> Result<(), E>,
) -> Result<(), E> {
    let owners = assign_shards(plan, workers.len());
    for (shard, &owner) in owners.iter().enumerate() {
        let w = &workers[owner];
        sink(shard, w.shard_values(shard)?, w.shard_depth(shard)?)?;
    }
    Ok(())
}

/// Solve one layer entirely in memory with one in-process worker (tests, small tables).
pub fn solve_in_memory<G: Game + 'static>(game: &Arc<G>, layer: &Layer, threads: usize) -> Solved {
    let run = || -> Result<Solved, KernelError> {
        let plan = ShardPlan::new(game.size(), 1 << 22);
        let workers = local_workers(game.clone(), layer, plan, 1, None, CellStorage::Memory)?;
        let outcome = drive_layer(layer, &workers, None, &mut |_: &WaveSummary| {})?;
        let mut solved = Solved {
            values: Vec::new(),
            depth: Vec::new(),
            waves: outcome.waves,
        };
        gather(&plan, &workers, |_, v, d| {
            solved.values.extend(v);
            solved.depth.extend(d);
            Ok::<(), KernelError>(())
        })?;
        Ok(solved)
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .expect("thread pool");
    pool.install(run).expect("in-memory solve failed")
}
