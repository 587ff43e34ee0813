//! The in-process transport: workers that are [`WorkerEngine`]s in this process, handed to the
//! barrier ([`super::driver`]) as [`WorkerHandle`]s, with predecessor updates for another worker's
//! shards applied by calling its engine directly ([`InProcessRouter`]). The embedded build and the
//! in-memory solve of small tables run on it.

use super::checkpoint::CheckpointStore;
use super::driver::{drive_layer, ClosedWave, WaveSummary, WorkerHandle};
use super::engine::{Batch, Router, WorkerEngine};
use super::memory::CellStorage;
use super::owners::{assign_shards, gather, Placement};
use super::shard::ShardPlan;
use super::{KernelError, Layer};
use crate::game::Game;
use std::sync::{Arc, OnceLock, Weak};

/// An in-process worker: a [`WorkerEngine`] behind the [`WorkerHandle`] interface.
pub struct LocalWorker<G: Game> {
    /// The worker's engine, which owns its shards.
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
    fn close_wave(&self, wave: u32) -> Result<ClosedWave, KernelError> {
        let (decided, stats) = self.engine.close_wave(wave)?;
        Ok(ClosedWave {
            decided,
            stats,
            wire_bytes: None,
        })
    }
    fn shard_values(&self, shard: usize) -> Result<Vec<u8>, KernelError> {
        self.engine
            .shard_values(shard)?
            .ok_or_else(|| self.not_mine(shard))
    }
    fn release_shard(&self, shard: usize) -> Result<(), KernelError> {
        match self.engine.release_shard(shard)? {
            true => Ok(()),
            false => Err(self.not_mine(shard)),
        }
    }
    fn shard_depth(&self, shard: usize) -> Result<Vec<u16>, KernelError> {
        self.engine
            .shard_depth(shard)?
            .ok_or_else(|| self.not_mine(shard))
    }
    fn checkpoint(&self, wave: u32) -> Result<(), KernelError> {
        self.store()?.save(&self.engine, wave).map(|_| ())
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
/// It holds its peers weakly: each engine holds the router, so strong references would make a
/// cycle that keeps a finished layer's cells alive into the next layer.
pub struct InProcessRouter<G: Game> {
    peers: OnceLock<Vec<Weak<LocalWorker<G>>>>,
}

impl<G: Game> Default for InProcessRouter<G> {
    fn default() -> Self {
        InProcessRouter {
            peers: OnceLock::new(),
        }
    }
}

impl<G: Game> Router for InProcessRouter<G> {
    fn send(&self, worker: usize, batch: Batch<'_>) -> Result<(), KernelError> {
        let peers = self
            .peers
            .get()
            .expect("in-process router used before its peers were set");
        let peer = peers[worker].upgrade().ok_or_else(|| KernelError::Worker {
            worker: format!("in-process worker {worker}"),
            message: "was released while its peers still sent it updates".to_string(),
        })?;
        peer.engine.receive(batch)
    }
}

/// `count` in-process workers over one layer, wired to each other with the in-process router.
/// Wave logs and checkpoints live in `dir/worker-N/` when a directory is given, and the cells too
/// if `storage` says so; without a directory everything is in memory. Their checkpoints name no
/// game ([`named_local_workers`] for a run's).
pub fn local_workers<G: Game + 'static>(
    game: Arc<G>,
    layer: &Layer,
    plan: ShardPlan,
    count: usize,
    dir: Option<&std::path::Path>,
    storage: CellStorage,
) -> Result<Vec<Arc<dyn WorkerHandle>>, KernelError> {
    let unnamed = serde_json::Value::Null;
    let workers = (count, Placement::Interleaved);
    named_local_workers(&unnamed, game, layer, plan, workers, dir, storage)
}

/// [`local_workers`] whose checkpoints name `name`, the game's JSON (a run's game), and restore
/// only checkpoints that name it; `workers` is their number and how the shards are placed on
/// them (as the run that made the checkpoints placed them).
pub fn named_local_workers<G: Game + 'static>(
    name: &serde_json::Value,
    game: Arc<G>,
    layer: &Layer,
    plan: ShardPlan,
    workers: (usize, Placement),
    dir: Option<&std::path::Path>,
    storage: CellStorage,
) -> Result<Vec<Arc<dyn WorkerHandle>>, KernelError> {
    let (count, placement) = workers;
    let owners = assign_shards(&plan, count, placement);
    let router = Arc::new(InProcessRouter::<G>::default());
    let mut locals = Vec::new();
    for me in 0..count {
        let sub = dir.map(|d| d.join(format!("worker-{me}")));
        if let Some(sub) = &sub {
            std::fs::create_dir_all(sub).map_err(|error| KernelError::Io {
                path: sub.display().to_string(),
                error,
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
                .map(|d| CheckpointStore::new(d.join("checkpoint"), name.clone())),
        }));
    }
    let _ = router
        .peers
        .set(locals.iter().map(Arc::downgrade).collect());
    Ok(locals.into_iter().map(|w| w as _).collect())
}

/// A solved layer held in memory.
pub struct Solved {
    /// Value code of every state, in index order.
    pub values: Vec<u8>,
    /// Depth of every state, in index order.
    pub depth: Vec<u16>,
    /// The last wave that decided a state.
    pub waves: u32,
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
