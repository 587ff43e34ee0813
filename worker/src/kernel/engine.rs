//! The worker side of the kernel: expand a frontier, apply predecessor updates, close a wave.

use super::cells::{
    cell_is_win, ShardArrays, BLOCK_FRESH, BLOCK_FRONTIER, CELL_ILLEGAL, CELL_LOSS_CUR,
    CELL_LOSS_NEW, CELL_LOSS_OLD, CELL_MAX_COUNTER, CELL_UNCOUNTED, CELL_WIN_CUR, CELL_WIN_NEW,
    CELL_WIN_OLD,
};
use super::memory::CellStorage;
use super::shard::ShardPlan;
use super::{KernelError, Layer, DRAW, ILLEGAL, LOSS, WIN};
use crate::game::{Game, Node};
use rayon::prelude::*;
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

/// Updates buffered per destination before they are sent (512 KiB). Each parallel task that
/// expands a block has its own buffers, so a worker holds at most threads × (workers − 1) of them
/// at once; the memory budget does not change this (see [`super::memory`]).
pub const SEND_BATCH: usize = 1 << 16;
/// Updates applied together: their cells are prefetched first, so the cache misses of a batch
/// overlap instead of each waiting behind the previous compare-and-swap.
const APPLY_BATCH: usize = 256;

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
    /// Indexed by shard id: the arrays of the shards this worker owns.
    shards: Vec<Option<ShardArrays>>,
    router: Arc<dyn Router>,
    counters: Counters,
}

impl<G: Game> WorkerEngine<G> {
    /// Open the arrays of every shard `owners` gives to worker `me`: in `dir` (cells as
    /// `storage` says), or all in memory without a directory.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        game: Arc<G>,
        layer: Layer,
        plan: ShardPlan,
        owners: Vec<usize>,
        me: usize,
        dir: Option<&Path>,
        storage: CellStorage,
        router: Arc<dyn Router>,
    ) -> Result<Self, KernelError> {
        let shards = owners
            .iter()
            .enumerate()
            .map(|(id, &owner)| {
                (owner == me)
                    .then(|| ShardArrays::open(&plan, id, dir, storage))
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        Ok(WorkerEngine {
            game,
            layer,
            plan,
            owners,
            me,
            shards,
            router,
            counters: Counters::default(),
        })
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
        self.shards[id].as_ref().expect("a shard this worker owns")
    }

    /// The arrays of every owned shard, in shard order.
    fn owned(&self) -> impl Iterator<Item = &ShardArrays> {
        self.shards.iter().flatten()
    }

    pub fn owned_shards(&self) -> Vec<usize> {
        self.owned().map(|s| s.id).collect()
    }

    /// Parallel work items: (shard, block) for every block of every owned shard whose flags
    /// share a bit with `wanted`.
    fn blocks(&self, wanted: u8) -> Vec<(&ShardArrays, usize)> {
        self.owned()
            .flat_map(|s| (0..s.blocks()).map(move |b| (s, b)))
            .filter(|&(s, b)| s.block_flags(b) & wanted != 0)
            .collect()
    }

    /// Wave 0: classify every owned state. Terminal states are decided in wave 0; live states
    /// start with an unknown counter (see [`CELL_UNCOUNTED`]). The wave logs are cleared.
    pub fn init_pass(&self) -> Result<(), KernelError> {
        for shard in self.owned() {
            shard.waves.clear()?;
        }
        let blocks: Vec<_> = self
            .owned()
            .flat_map(|s| (0..s.blocks()).map(move |b| (s, b)))
            .collect();
        // Every cell live (uncounted), then the game's list of the others, if it has one.
        blocks.par_iter().for_each(|&(shard, b)| {
            for cell in &shard.cells()[shard.block_range(b)] {
                cell.store(CELL_UNCOUNTED, Relaxed);
            }
            shard.set_block_flags(b, 0);
        });
        let listed = self.game.each_non_live(&mut |index, node| {
            if let Some(Some(shard)) = self.shards.get(self.plan.shard_of(index)) {
                let i = (index - shard.start) as usize;
                shard.cells()[i].store(self.initial_cell(node), Relaxed);
                if node != Node::Illegal {
                    shard.mark_fresh(i);
                }
            }
        });
        if listed {
            return Ok(());
        }
        blocks.into_par_iter().for_each(|(shard, b)| {
            let range = shard.block_range(b);
            let mut fresh = false;
            for (i, cell) in shard.cells()[range.clone()].iter().enumerate() {
                let index = shard.start + (range.start + i) as u64;
                let value = self.initial_cell(self.game.node(index));
                fresh |= matches!(value, CELL_WIN_NEW | CELL_LOSS_NEW);
                cell.store(value, Relaxed);
            }
            shard.set_block_flags(b, if fresh { BLOCK_FRESH } else { 0 });
        });
        Ok(())
    }

    /// A cell before the first wave: terminal states are decided in wave 0.
    fn initial_cell(&self, node: Node) -> u8 {
        match node {
            Node::Illegal => CELL_ILLEGAL,
            Node::Terminal { winner } if self.layer.wins(winner) => CELL_WIN_NEW,
            Node::Terminal { .. } => CELL_LOSS_NEW,
            Node::Live { .. } => CELL_UNCOUNTED,
        }
    }

    /// Recompute the block flags from the cells (after a checkpoint was loaded).
    pub(super) fn rebuild_block_flags(&self) {
        self.owned()
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(|s| s.rebuild_block_flags());
    }

    /// Wave `wave` (≥ 1): expand the states decided in wave `wave - 1`, route every predecessor
    /// update to its owner, and return once all of them have been applied.
    pub fn run_wave(&self, _wave: u32) -> Result<(), KernelError> {
        let workers = self.owners.iter().max().map_or(1, |m| m + 1);
        self.blocks(BLOCK_FRONTIER)
            .into_par_iter()
            .try_for_each(|(shard, b)| {
                let mut preds = Vec::new();
                let mut mine = Vec::with_capacity(2 * APPLY_BATCH);
                let mut outbox: Vec<Vec<u64>> = vec![Vec::new(); workers];
                let range = shard.block_range(b);
                let (mut expanded, mut applied) = (0u64, 0u64);
                // Seen from the side to move: a child won for its mover is lost for the parent's.
                let flip = self.game.alternates_sides();
                for (i, cell) in shard.cells()[range.clone()].iter().enumerate() {
                    let i = range.start + i;
                    let child_is_win = match cell.load(Relaxed) {
                        CELL_WIN_CUR => !flip,
                        CELL_LOSS_CUR => flip,
                        _ => continue,
                    };
                    preds.clear();
                    let learned = self
                        .game
                        .predecessors_and_count(shard.start + i as u64, &mut preds);
                    if let Some((state, count)) = learned {
                        shard.keep_count(state, count);
                    }
                    expanded += 1;
                    for &p in &preds {
                        let owner = self.owners[self.plan.shard_of(p)];
                        if owner == self.me {
                            mine.push(encode_update(p, child_is_win));
                        } else {
                            outbox[owner].push(encode_update(p, child_is_win));
                            if outbox[owner].len() >= SEND_BATCH {
                                self.flush(owner, &mut outbox[owner])?;
                            }
                        }
                    }
                    if mine.len() >= APPLY_BATCH {
                        self.apply_all(&mine)?;
                        applied += mine.len() as u64;
                        mine.clear();
                    }
                }
                self.apply_all(&mine)?;
                applied += mine.len() as u64;
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

    /// Apply a batch of updates from another worker during the running wave.
    pub fn receive(&self, updates: &[u64]) -> Result<(), KernelError> {
        if updates.len() >= 4096 {
            updates
                .par_chunks(APPLY_BATCH)
                .try_for_each(|batch| self.apply_all(batch))?;
        } else {
            updates
                .chunks(APPLY_BATCH)
                .try_for_each(|batch| self.apply_all(batch))?;
        }
        self.counters
            .applied
            .fetch_add(updates.len() as u64, Relaxed);
        Ok(())
    }

    /// Apply encoded updates (see [`encode_update`]) to cells this worker owns.
    fn apply_all(&self, updates: &[u64]) -> Result<(), KernelError> {
        for &u in updates {
            let pred = u >> 1;
            let shard = self.shard(self.plan.shard_of(pred));
            shard.prefetch((pred - shard.start) as usize);
        }
        updates
            .iter()
            .try_for_each(|&u| self.apply(u >> 1, u & 1 == 1))
    }

    /// One predecessor update: `pred` has a child just decided (W if `child_is_win`, else L).
    ///
    /// Counters are initialised lazily: a live state's successors are counted the first time an
    /// unfavourable child reaches it, so states that no update ever reaches cost nothing, states
    /// that a favourable child reaches first are never counted (it decides them whatever the
    /// count), and the initial pass needs no move generation.
    fn apply(&self, pred: u64, child_is_win: bool) -> Result<(), KernelError> {
        let shard = self.shard(self.plan.shard_of(pred));
        let i = (pred - shard.start) as usize;
        let cell = &shard.cells()[i];
        let mover_in_coalition = self.layer.in_coalition(self.game.mover(pred));
        let favourable = child_is_win == mover_in_coalition;
        let child = if child_is_win {
            CELL_WIN_NEW
        } else {
            CELL_LOSS_NEW
        };
        let bad_for_mover = if mover_in_coalition {
            CELL_LOSS_NEW
        } else {
            CELL_WIN_NEW
        };
        let mut current = cell.load(Relaxed);
        let mut counted = None; // kept if the compare-and-swap below has to retry
        loop {
            if current > CELL_MAX_COUNTER {
                return Ok(()); // already decided (or illegal, which has no successors)
            }
            let new = if favourable {
                child
            } else {
                let remaining = match (current, counted) {
                    (CELL_UNCOUNTED, Some(n)) => n,
                    (CELL_UNCOUNTED, None) => *counted.insert(self.count_successors(pred)?),
                    (n, _) => n,
                };
                if remaining == 1 {
                    bad_for_mover
                } else {
                    remaining - 1
                }
            };
            match cell.compare_exchange_weak(current, new, Relaxed, Relaxed) {
                Ok(_) => {
                    if new > CELL_MAX_COUNTER {
                        shard.mark_fresh(i);
                    }
                    return Ok(());
                }
                Err(seen) => current = seen,
            }
        }
    }

    /// The number of successors of a live state (a pass counts as one).
    fn count_successors(&self, index: u64) -> Result<u8, KernelError> {
        let count = self.game.successor_count(index);
        if count == 0 || count > CELL_MAX_COUNTER as usize {
            return Err(KernelError::CounterOverflow {
                index,
                count,
                max: CELL_MAX_COUNTER,
            });
        }
        Ok(count as u8)
    }

    /// Close wave `wave`: the frontier just expanded becomes old, the states decided in this wave
    /// become the frontier of the next one and are appended to the wave logs. Returns how many
    /// states this wave decided, with the wave's statistics.
    pub fn close_wave(&self, wave: u32) -> Result<(u64, WaveStats), KernelError> {
        let max = u16::MAX as u32 - 1;
        if wave > max {
            return Err(KernelError::TooManyWaves {
                layer: self.layer.name.clone(),
                waves: wave,
                max,
            });
        }
        // Age the blocks that hold frontier or fresh cells; the fresh ones form the next frontier
        // and this wave's bitmap (blocks of whole 64-bit words: shards are multiples of 64).
        let parts: Vec<(usize, usize, Vec<u64>)> = self
            .blocks(BLOCK_FRONTIER | BLOCK_FRESH)
            .into_par_iter()
            .map(|(shard, b)| {
                let range = shard.block_range(b);
                let mut words = vec![0u64; range.len().div_ceil(64)];
                for (i, cell) in shard.cells()[range].iter().enumerate() {
                    let aged = match cell.load(Relaxed) {
                        CELL_WIN_CUR => CELL_WIN_OLD,
                        CELL_LOSS_CUR => CELL_LOSS_OLD,
                        CELL_WIN_NEW => CELL_WIN_CUR,
                        CELL_LOSS_NEW => CELL_LOSS_CUR,
                        _ => continue,
                    };
                    cell.store(aged, Relaxed);
                    if aged == CELL_WIN_CUR || aged == CELL_LOSS_CUR {
                        words[i / 64] |= 1 << (i % 64);
                    }
                }
                let frontier = words.iter().any(|&w| w != 0);
                shard.set_block_flags(b, if frontier { BLOCK_FRONTIER } else { 0 });
                (shard.id, b, words)
            })
            .collect();
        // One wave-log frame per shard, the shards in parallel (`parts` is in shard order).
        let shards: Vec<&ShardArrays> = self.owned().collect();
        let decided = shards
            .into_par_iter()
            .map(|shard| {
                let first = parts.partition_point(|p| p.0 < shard.id);
                let last = parts.partition_point(|p| p.0 <= shard.id);
                let mut bitmap = vec![0u64; (shard.len as usize).div_ceil(64)];
                for (_, b, words) in &parts[first..last] {
                    let at = shard.block_range(*b).start / 64;
                    bitmap[at..at + words.len()].copy_from_slice(words);
                }
                shard.waves.append(wave, &bitmap)?;
                Ok(bitmap.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            })
            .sum::<Result<u64, KernelError>>()?;
        let stats = WaveStats {
            expanded: self.counters.expanded.swap(0, Relaxed),
            applied: self.counters.applied.swap(0, Relaxed),
            sent: self.counters.sent.swap(0, Relaxed),
        };
        Ok((decided, stats))
    }

    /// Final values of one owned shard (ILLEGAL / WIN / LOSS / DRAW per state, index order).
    pub fn shard_values(&self, shard: usize) -> Option<Vec<u8>> {
        let arrays = self.shards.get(shard)?.as_ref()?;
        Some(
            arrays
                .cells()
                .par_iter()
                .map(|c| match c.load(Relaxed) {
                    CELL_ILLEGAL => ILLEGAL,
                    c if cell_is_win(c) => WIN,
                    c if c > CELL_MAX_COUNTER => LOSS,
                    _ => DRAW,
                })
                .collect(),
        )
    }

    /// Depth of every state of one owned shard (0 for illegal and drawn states), rebuilt from the
    /// shard's wave log.
    pub fn shard_depth(&self, shard: usize) -> Result<Option<Vec<u16>>, KernelError> {
        let Some(arrays) = self.shards.get(shard).and_then(Option::as_ref) else {
            return Ok(None);
        };
        let mut depth = vec![0u16; arrays.len as usize];
        for (wave, bitmap) in arrays.waves.frames(arrays.len.div_ceil(64) as usize)? {
            for (w, &word) in bitmap.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    depth[w * 64 + bits.trailing_zeros() as usize] = wave as u16;
                    bits &= bits - 1;
                }
            }
        }
        Ok(Some(depth))
    }
}
