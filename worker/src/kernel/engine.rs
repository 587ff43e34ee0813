//! The worker side of the kernel: expand a frontier, apply predecessor updates, close a wave.

use super::shard::{ShardArrays, ShardPlan, CELL_ILLEGAL, CELL_LOSS, CELL_MAX_COUNTER, CELL_UNCOUNTED, CELL_WIN};
use super::{KernelError, Layer, DRAW, ILLEGAL, LOSS, WIN};
use crate::game::{Game, Node};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// An update for a predecessor in another worker's shard: `index << 1 | child_is_win`.
pub fn encode_update(pred: u64, child_is_win: bool) -> u64 {
    pred << 1 | child_is_win as u64
}

/// Carries predecessor updates to the worker that owns them. `send` returns once the receiver has
/// applied the batch, so when every worker's `run_wave` has returned, the wave is complete.
pub trait Router: Send + Sync {
    fn send(&self, worker: usize, updates: &[u64]) -> Result<(), KernelError>;
}

/// Updates buffered per destination before they are sent (bounds memory per thread).
const BATCH: usize = 1 << 16;
/// Frontier words per parallel task: 4096 words = 262,144 states.
const TASK_WORDS: usize = 4096;

/// What one worker did in one wave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WaveStats {
    /// Frontier states whose predecessors were generated.
    pub expanded: u64,
    /// Predecessor updates applied to this worker's own shards (generated here or received).
    pub applied: u64,
    /// Updates sent to other workers.
    pub sent: u64,
}

#[derive(Default)]
struct Counters {
    expanded: AtomicU64,
    applied: AtomicU64,
    sent: AtomicU64,
}

/// One worker's share of a layer: the shards it owns and how to reach the others.
pub struct WorkerEngine<G: Game> {
    game: Arc<G>,
    layer: Layer,
    plan: ShardPlan,
    /// Owner (worker number) of every shard.
    owners: Vec<usize>,
    me: usize,
    shards: HashMap<usize, ShardArrays>,
    router: Arc<dyn Router>,
    counters: Counters,
}

impl<G: Game> WorkerEngine<G> {
    /// Open the arrays of every shard `owners` gives to worker `me` (in `dir`, or in memory).
    pub fn new(
        game: Arc<G>,
        layer: Layer,
        plan: ShardPlan,
        owners: Vec<usize>,
        me: usize,
        dir: Option<&Path>,
        router: Arc<dyn Router>,
    ) -> Result<Self, KernelError> {
        let mut shards = HashMap::new();
        for (id, &owner) in owners.iter().enumerate() {
            if owner == me {
                shards.insert(id, ShardArrays::open(&plan, id, dir)?);
            }
        }
        Ok(WorkerEngine { game, layer, plan, owners, me, shards, router, counters: Counters::default() })
    }

    pub fn layer(&self) -> &Layer {
        &self.layer
    }

    /// This worker's number.
    pub fn me(&self) -> usize {
        self.me
    }

    /// The arrays of an owned shard.
    pub(super) fn shard(&self, id: usize) -> &ShardArrays {
        &self.shards[&id]
    }

    pub fn owned_shards(&self) -> Vec<usize> {
        let mut ids: Vec<usize> = self.shards.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Parallel work items: (shard, first word, end word) over every owned shard.
    fn tasks(&self) -> Vec<(&ShardArrays, usize, usize)> {
        let mut tasks = Vec::new();
        for id in self.owned_shards() {
            let shard = &self.shards[&id];
            let words = shard.words();
            for first in (0..words).step_by(TASK_WORDS) {
                tasks.push((shard, first, (first + TASK_WORDS).min(words)));
            }
        }
        tasks
    }

    /// Wave 0: classify every owned state. Terminal states are decided (frontier of wave 0); live
    /// states start with an unknown counter (see [`CELL_UNCOUNTED`]); both frontiers and all
    /// depths are cleared.
    pub fn init_pass(&self) -> Result<(), KernelError> {
        self.tasks().into_par_iter().for_each(|(shard, w0, w1)| {
            let cells = shard.cells();
            let (f0, f1) = (shard.frontier(0), shard.frontier(1));
            for w in w0..w1 {
                let mut bits = 0u64;
                let lo = w * 64;
                let hi = (lo + 64).min(shard.len as usize);
                for i in lo..hi {
                    let index = shard.start + i as u64;
                    shard.depth()[i].store(0, Relaxed);
                    let cell = match self.game.node(index) {
                        Node::Illegal => CELL_ILLEGAL,
                        Node::Terminal { winner } => {
                            bits |= 1 << (i - lo);
                            if self.layer.wins(winner) {
                                CELL_WIN
                            } else {
                                CELL_LOSS
                            }
                        }
                        Node::Live { .. } => CELL_UNCOUNTED,
                    };
                    cells[i].store(cell, Relaxed);
                }
                f0[w].store(bits, Relaxed);
                f1[w].store(0, Relaxed);
            }
        });
        Ok(())
    }

    /// Wave `wave` (≥ 1): expand the states decided in wave `wave - 1`, route every predecessor
    /// update to its owner, and return once all of them have been applied.
    pub fn run_wave(&self, wave: u32) -> Result<(), KernelError> {
        let workers = self.owners.iter().max().map_or(1, |m| m + 1);
        self.tasks().into_par_iter().try_for_each(|(shard, w0, w1)| {
            let mut preds = Vec::new();
            let mut outbox: Vec<Vec<u64>> = vec![Vec::new(); workers];
            let (cells, frontier) = (shard.cells(), shard.frontier(wave - 1));
            let (mut expanded, mut applied) = (0u64, 0u64);
            for (w, word) in frontier.iter().enumerate().take(w1).skip(w0) {
                let mut bits = word.load(Relaxed);
                while bits != 0 {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let child_is_win = cells[i].load(Relaxed) == CELL_WIN;
                    preds.clear();
                    self.game.predecessors(shard.start + i as u64, &mut preds);
                    expanded += 1;
                    for &p in &preds {
                        let owner = self.owners[self.plan.shard_of(p)];
                        if owner == self.me {
                            self.apply(p, child_is_win, wave)?;
                            applied += 1;
                        } else {
                            outbox[owner].push(encode_update(p, child_is_win));
                            if outbox[owner].len() >= BATCH {
                                self.flush(owner, &mut outbox[owner])?;
                            }
                        }
                    }
                }
            }
            for (owner, batch) in outbox.iter_mut().enumerate() {
                if !batch.is_empty() {
                    self.flush(owner, batch)?;
                }
            }
            self.counters.expanded.fetch_add(expanded, Relaxed);
            self.counters.applied.fetch_add(applied, Relaxed);
            Ok(())
        })
    }

    fn flush(&self, owner: usize, batch: &mut Vec<u64>) -> Result<(), KernelError> {
        // Sorted batches touch the receiver's pages in order and delta-encode well.
        batch.sort_unstable();
        self.router.send(owner, batch)?;
        self.counters.sent.fetch_add(batch.len() as u64, Relaxed);
        batch.clear();
        Ok(())
    }

    /// Apply a batch of updates from another worker during wave `wave`.
    pub fn receive(&self, updates: &[u64], wave: u32) -> Result<(), KernelError> {
        let apply = |&u: &u64| self.apply(u >> 1, u & 1 == 1, wave);
        if updates.len() >= 4096 {
            updates.par_iter().try_for_each(apply)?;
        } else {
            updates.iter().try_for_each(apply)?;
        }
        self.counters.applied.fetch_add(updates.len() as u64, Relaxed);
        Ok(())
    }

    /// One predecessor update: `pred` has a child just decided (W if `child_is_win`, else L).
    ///
    /// Counters are initialised lazily: a live state's successors are counted the first time an
    /// unfavourable child reaches it, so states that no update ever reaches cost nothing, and the
    /// initial pass needs no move generation.
    fn apply(&self, pred: u64, child_is_win: bool, wave: u32) -> Result<(), KernelError> {
        let shard = &self.shards[&self.plan.shard_of(pred)];
        let i = (pred - shard.start) as usize;
        let cell = &shard.cells()[i];
        let mover_in_coalition = self.layer.in_coalition(self.game.mover(pred));
        let favourable = child_is_win == mover_in_coalition;
        let child = if child_is_win { CELL_WIN } else { CELL_LOSS };
        let bad_for_mover = if mover_in_coalition { CELL_LOSS } else { CELL_WIN };
        let mut current = cell.load(Relaxed);
        loop {
            if current > CELL_MAX_COUNTER {
                return Ok(()); // already decided (or illegal, which has no successors)
            }
            let remaining = if current == CELL_UNCOUNTED { self.count_successors(pred)? } else { current };
            let new = if favourable {
                child
            } else if remaining == 1 {
                bad_for_mover
            } else {
                remaining - 1
            };
            match cell.compare_exchange_weak(current, new, Relaxed, Relaxed) {
                Ok(_) => {
                    if new > CELL_MAX_COUNTER {
                        shard.frontier(wave)[i / 64].fetch_or(1 << (i % 64), Relaxed);
                    }
                    return Ok(());
                }
                Err(seen) => current = seen,
            }
        }
    }

    /// The number of successors of a live state (a pass counts as one).
    fn count_successors(&self, index: u64) -> Result<u8, KernelError> {
        thread_local!(static SCRATCH: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) });
        let count = SCRATCH.with(|scratch| {
            let mut out = scratch.borrow_mut();
            out.clear();
            self.game.successors(index, &mut out);
            out.len()
        });
        if count == 0 || count > CELL_MAX_COUNTER as usize {
            return Err(KernelError::CounterOverflow { index, count, max: CELL_MAX_COUNTER });
        }
        Ok(count as u8)
    }

    /// Close wave `wave`: record its depth for every state it decided, clear the frontier it
    /// expanded, and return how many states it decided, with the wave's statistics.
    pub fn close_wave(&self, wave: u32) -> Result<(u64, WaveStats), KernelError> {
        let max = u16::MAX as u32 - 1;
        if wave > max {
            return Err(KernelError::TooManyWaves { layer: self.layer.name.clone(), waves: wave, max });
        }
        let decided: u64 = self
            .tasks()
            .into_par_iter()
            .map(|(shard, w0, w1)| {
                let (now, depth) = (shard.frontier(wave), shard.depth());
                let mut count = 0;
                for w in w0..w1 {
                    let mut bits = now[w].load(Relaxed);
                    count += bits.count_ones() as u64;
                    while bits != 0 {
                        depth[w * 64 + bits.trailing_zeros() as usize].store(wave as u16, Relaxed);
                        bits &= bits - 1;
                    }
                    if wave > 0 {
                        shard.frontier(wave - 1)[w].store(0, Relaxed);
                    }
                }
                count
            })
            .sum();
        let stats = WaveStats {
            expanded: self.counters.expanded.swap(0, Relaxed),
            applied: self.counters.applied.swap(0, Relaxed),
            sent: self.counters.sent.swap(0, Relaxed),
        };
        Ok((decided, stats))
    }

    /// Final values of one owned shard (ILLEGAL / WIN / LOSS / DRAW per state, index order).
    pub fn shard_values(&self, shard: usize) -> Option<Vec<u8>> {
        let arrays = self.shards.get(&shard)?;
        Some(
            arrays
                .cells()
                .par_iter()
                .map(|c| match c.load(Relaxed) {
                    CELL_ILLEGAL => ILLEGAL,
                    CELL_WIN => WIN,
                    CELL_LOSS => LOSS,
                    _ => DRAW,
                })
                .collect(),
        )
    }

    /// Depth of every state of one owned shard (0 for illegal and drawn states).
    pub fn shard_depth(&self, shard: usize) -> Option<Vec<u16>> {
        let arrays = self.shards.get(&shard)?;
        Some(arrays.depth().iter().map(|d| d.load(Relaxed)).collect())
    }

    /// Flush file-backed arrays to disk.
    pub fn flush_all(&self) -> Result<(), KernelError> {
        for shard in self.shards.values() {
            shard.flush().map_err(|source| KernelError::Io { path: format!("shard {}", shard.id), source })?;
        }
        Ok(())
    }
}
