//! The worker side of the kernel: expand a frontier, apply predecessor updates, close a wave.

use super::cell_code::{
    age_words, cell_is_undecided, cell_is_win, set_code, Cell, CELL_ILLEGAL, CELL_LOSS_CUR,
    CELL_LOSS_NEW, CELL_MAX_COUNTER, CELL_OVERFLOW, CELL_UNCOUNTED, CELL_WIN_CUR, CELL_WIN_NEW,
};
use super::cells::{each_prefetched, ShardArrays, BLOCK_FRESH, BLOCK_FRONTIER, BLOCK_STATES};
use super::frontier_store::FrontierStore;
use super::memory::CellStorage;
use super::overflow::{Counted, OverflowCounts};
use super::shard::ShardPlan;
use super::update_buckets::{spill_threshold, UpdateBuckets};
use super::{KernelError, Layer, DRAW, ILLEGAL, LOSS, WIN};
use crate::game::{Game, Node};
use rayon::prelude::*;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

mod routing;
pub use routing::{encode_update, Batch, Router, SEND_BATCH, STATES_BATCH};

/// Updates a task collects before it applies them (their cells prefetched a few ahead:
/// [`each_prefetched`]).
const APPLY_BATCH: usize = 1024;
/// Updates handed to the buckets together when they are held back to the close (fewer locks).
const HOLD_BATCH: usize = 1 << 13;

/// What one worker did in one wave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WaveStats {
    /// Frontier states whose predecessors were generated.
    pub expanded: u64,
    /// Predecessor updates applied to this worker's own shards (generated here or received).
    pub applied: u64,
    /// Updates sent to other workers.
    pub sent: u64,
    /// Decided states sent to other workers in place of their updates ([`Batch::States`]).
    #[serde(default)]
    pub sent_states: u64,
}

/// A shard's frontier as a bitmap of the states the last wave decided, with which of them are W
/// when the cells are not to be read for it (out of core).
struct KnownFrontier {
    decided: Vec<u64>,
    won: Option<Vec<u64>>,
}

#[derive(Default)]
struct Counters {
    expanded: AtomicU64,
    applied: AtomicU64,
    sent: AtomicU64,
    sent_states: AtomicU64,
}

/// The final value of every cell code (a table: gathering maps every cell of a layer).
const VALUE_OF_CELL: [u8; CELL_ILLEGAL as usize + 1] = {
    let mut table = [DRAW; CELL_ILLEGAL as usize + 1];
    let mut c = CELL_OVERFLOW as usize + 1;
    while c < table.len() {
        table[c] = match c as u8 {
            CELL_ILLEGAL => ILLEGAL,
            c if cell_is_win(c) => WIN,
            _ => LOSS,
        };
        c += 1;
    }
    table
};

/// What a worker keeps besides its cells when they live in files: the wave's updates, held back
/// to its close, and the frontier of the last closed wave.
struct OutOfCore {
    buckets: UpdateBuckets,
    frontiers: FrontierStore,
}

/// The bits of `decided` whose cells are W (just aged: [`CELL_WIN_CUR`]).
fn won_bits(shard: &ShardArrays, decided: &[u64]) -> Vec<u64> {
    decided
        .iter()
        .enumerate()
        .map(|(w, &word)| {
            let mut bits = word;
            let mut won = 0;
            while bits != 0 {
                let j = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                won |= ((shard.cell(w * 64 + j).load() == CELL_WIN_CUR) as u64) << j;
            }
            won
        })
        .collect()
}

/// One parallel task of a wave: expands frontier states one by one, applies the updates this
/// worker owns in prefetched batches and buffers the others per owner.
struct Expander<'a, G: Game> {
    engine: &'a WorkerEngine<G>,
    shard: &'a ShardArrays,
    /// Seen from the side to move: a child won for its mover is lost for the parent's.
    flip: bool,
    preds: Vec<u64>,
    mine: Vec<u64>,
    outbox: Vec<Vec<u64>>,
    /// Decided states for other workers, who list their predecessors ([`Batch::States`]).
    states_out: Vec<Vec<u64>>,
    /// Updates of this worker's own collected before they are applied or held back.
    batch: usize,
    expanded: u64,
    applied: u64,
}

impl<'a, G: Game> Expander<'a, G> {
    fn new(engine: &'a WorkerEngine<G>, shard: &'a ShardArrays) -> Self {
        let workers = engine.owners.iter().max().map_or(1, |m| m + 1);
        Expander {
            engine,
            shard,
            flip: engine.alternates,
            preds: Vec::new(),
            mine: Vec::with_capacity(2 * APPLY_BATCH),
            outbox: vec![Vec::new(); workers],
            states_out: vec![Vec::new(); workers],
            batch: if engine.out_of_core.is_some() {
                HOLD_BATCH
            } else {
                APPLY_BATCH
            },
            expanded: 0,
            applied: 0,
        }
    }

    /// Expand the frontier state in cell `i` (shard-local) of the task's shard.
    fn expand(&mut self, i: usize) -> Result<(), KernelError> {
        match self.shard.cell(i).load() {
            CELL_WIN_CUR => self.expand_decided(i, true),
            CELL_LOSS_CUR => self.expand_decided(i, false),
            other => {
                debug_assert!(false, "cell {i} is {other}, not in the frontier");
                Ok(())
            }
        }
    }

    /// Expand state `i` (shard-local) of the task's shard, decided in the previous wave: W for
    /// the coalition (or for its mover, in a game that alternates sides) if `won`.
    fn expand_decided(&mut self, i: usize, won: bool) -> Result<(), KernelError> {
        let engine = self.engine;
        let child_is_win = won != self.flip;
        self.preds.clear();
        let index = self.shard.start + i as u64;
        if !engine.owns_all && self.send_state(index, child_is_win)? {
            self.expanded += 1;
            return Ok(());
        }
        let learned = engine.game.predecessors_and_count(index, &mut self.preds);
        // Out of core a wave writes no cell before it closes: a learned count is not kept.
        if let (Some((state, count)), None) = (learned, &engine.out_of_core) {
            self.shard.keep_count(state, count);
        }
        self.expanded += 1;
        if engine.owns_all {
            let updates = self.preds.iter().map(|&p| encode_update(p, child_is_win));
            self.mine.extend(updates);
        } else {
            self.route(child_is_win)?;
        }
        if self.mine.len() >= self.batch {
            self.apply_mine()?;
        }
        Ok(())
    }

    fn apply_mine(&mut self) -> Result<(), KernelError> {
        match &self.engine.out_of_core {
            Some(ooc) => ooc.buckets.add(&self.engine.plan, &mut self.mine)?,
            None => {
                self.engine.apply_all(&self.mine)?;
                self.applied += self.mine.len() as u64;
            }
        }
        self.mine.clear();
        Ok(())
    }

    /// Expand every frontier state of block `b`, found in the cells.
    fn expand_block(&mut self, b: usize) -> Result<(), KernelError> {
        for i in self.shard.block_range(b) {
            if matches!(self.shard.cell(i).load(), CELL_WIN_CUR | CELL_LOSS_CUR) {
                self.expand(i)?;
            }
        }
        Ok(())
    }

    /// Apply and send what is left, and add the task's counts to the wave's.
    fn finish(mut self) -> Result<(), KernelError> {
        self.apply_mine()?;
        self.flush_all()?;
        let counters = &self.engine.counters;
        counters.expanded.fetch_add(self.expanded, Relaxed);
        counters.applied.fetch_add(self.applied, Relaxed);
        Ok(())
    }
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
    /// Indexed by shard id: the address of the words ([`ShardArrays::words_ptr`]) and the first
    /// state of the shards this worker owns. An update finds its cell with one lookup in this
    /// small table (a few kilobytes, always in cache) instead of reaching into the shard's arrays.
    origins: Vec<Option<(usize, u64)>>,
    /// The successor counts too large for a cell, of the states of owned shards.
    overflow: OverflowCounts,
    /// Whether this worker owns every shard (no update is routed).
    owns_all: bool,
    /// [`Game::alternates_sides`]: a child's value is flipped as it reaches its parent.
    alternates: bool,
    /// How an update finds the mover of the state it reaches: `Some(n)`, the index modulo n (0 in
    /// a game that alternates sides; [`Game::mover_period`]), without a call into the game.
    mover_period: Option<u8>,
    /// With cells in files: the wave's updates held back to its close, and the frontier kept
    /// beside the cells. Without: updates are applied as they come.
    out_of_core: Option<OutOfCore>,
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
        let shards: Vec<Option<ShardArrays>> = owners
            .iter()
            .enumerate()
            .map(|(id, &owner)| {
                (owner == me)
                    .then(|| ShardArrays::open(&plan, id, dir, storage))
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        let origins = shards
            .iter()
            .map(|s| s.as_ref().map(|s| (s.words_ptr() as usize, s.start)))
            .collect();
        let owns_all = owners.iter().all(|&o| o == me);
        let alternates = game.alternates_sides();
        let mover_period = if alternates {
            Some(1)
        } else {
            game.mover_period().filter(|&n| n > 0)
        };
        let out_of_core = match storage {
            CellStorage::File { held_bytes } => {
                let owned: Vec<bool> = owners.iter().map(|&o| o == me).collect();
                let count = owned.iter().filter(|&&o| o).count();
                let spill_at = spill_threshold(held_bytes, count);
                let frontiers = FrontierStore::new(owners.len(), dir);
                frontiers.clear()?;
                Some(OutOfCore {
                    buckets: UpdateBuckets::new(&plan, &owned, dir, spill_at)?,
                    frontiers,
                })
            }
            CellStorage::Memory => None,
        };
        Ok(WorkerEngine {
            game,
            layer,
            plan,
            owners,
            me,
            shards,
            origins,
            overflow: OverflowCounts::default(),
            owns_all,
            alternates,
            mover_period,
            out_of_core,
            router,
            counters: Counters::default(),
        })
    }

    /// The layer being solved.
    pub fn layer(&self) -> &Layer {
        &self.layer
    }

    /// This worker's number.
    pub fn me(&self) -> usize {
        self.me
    }

    /// How the layer's index space is cut into shards.
    pub fn plan(&self) -> &ShardPlan {
        &self.plan
    }

    /// The arrays of an owned shard.
    pub(super) fn shard(&self, id: usize) -> &ShardArrays {
        self.shards[id].as_ref().expect("a shard this worker owns")
    }

    /// The arrays of every owned shard, in shard order.
    fn owned(&self) -> impl Iterator<Item = &ShardArrays> {
        self.shards.iter().flatten()
    }

    /// The ids of the shards this worker owns, in order.
    pub fn owned_shards(&self) -> Vec<usize> {
        self.owned().map(|s| s.id).collect()
    }

    /// Wave 0: classify every owned state. Terminal states are decided in wave 0; live states
    /// start with an unknown counter (see [`CELL_UNCOUNTED`]). The wave logs are cleared.
    pub fn init_pass(&self) -> Result<(), KernelError> {
        self.forget_frontier()?;
        for shard in self.owned() {
            shard.waves.clear()?;
            self.overflow
                .clear_range(shard.start..shard.start + shard.len);
        }
        let blocks: Vec<_> = self
            .owned()
            .flat_map(|s| (0..s.blocks()).map(move |b| (s, b)))
            .collect();
        // Every cell live (uncounted), then the game's list of the others, if it has one.
        blocks.par_iter().for_each(|&(shard, b)| {
            // Every cell CELL_UNCOUNTED: a word of zeros.
            const _: () = assert!(CELL_UNCOUNTED == 0);
            // SAFETY: the initial pass is at a barrier, and each block is one work item.
            unsafe { shard.block_mut(b) }.fill(0);
            shard.set_block_flags(b, 0);
        });
        let listed = self.game.each_non_live(&mut |index, node| {
            if let Some(Some(shard)) = self.shards.get(self.plan.shard_of(index)) {
                let i = (index - shard.start) as usize;
                shard.cell(i).store(self.initial_cell(node));
                if node != Node::Illegal {
                    shard.mark_fresh(i);
                }
            }
        });
        if listed {
            return Ok(());
        }
        blocks
            .into_par_iter()
            .for_each_init(Vec::new, |nodes, (shard, b)| {
                let range = shard.block_range(b);
                nodes.resize(range.len(), Node::Illegal);
                self.game.nodes(shard.start + range.start as u64, nodes);
                let mut fresh = false;
                // SAFETY: the initial pass is at a barrier, and each block is one work item.
                let words = unsafe { shard.block_mut(b) };
                for (i, &node) in nodes.iter().enumerate() {
                    let value = self.initial_cell(node);
                    fresh |= matches!(value, CELL_WIN_NEW | CELL_LOSS_NEW);
                    set_code(words, i, value);
                }
                shard.set_block_flags(b, if fresh { BLOCK_FRESH } else { 0 });
            });
        Ok(())
    }

    /// A cell before the first wave: terminal states are decided in wave 0.
    fn initial_cell(&self, node: Node) -> u8 {
        match node {
            Node::Illegal => CELL_ILLEGAL,
            Node::Terminal { outcome: winner } if self.layer.wins(winner) => CELL_WIN_NEW,
            Node::Terminal { .. } => CELL_LOSS_NEW,
            Node::Live { .. } => CELL_UNCOUNTED,
        }
    }

    /// Recompute the block flags from the cells (after a checkpoint was loaded).
    pub(super) fn rebuild_block_flags(&self) -> Result<(), KernelError> {
        self.forget_frontier()?;
        self.owned()
            .collect::<Vec<_>>()
            .into_par_iter()
            .for_each(|s| s.rebuild_block_flags());
        Ok(())
    }

    /// Wave `wave` (≥ 1): expand the states decided in wave `wave - 1`, route every predecessor
    /// update to its owner, and return once all of them have been applied.
    ///
    /// A shard at a time, its frontier blocks in parallel, each shard's frontier read as a bitmap
    /// (out of core from the frontier store, in memory from the shard's last wave-log frame) or,
    /// after a restore, found in its cells.
    pub fn run_wave(&self, wave: u32) -> Result<(), KernelError> {
        let shards: Vec<&ShardArrays> = self
            .owned()
            .filter(|s| !s.flagged_blocks(BLOCK_FRONTIER).is_empty())
            .collect();
        shards.into_par_iter().try_for_each(|shard| {
            let frontier = self.shard_frontier(shard, wave)?;
            let blocks = shard.flagged_blocks(BLOCK_FRONTIER);
            blocks.into_par_iter().try_for_each(|b| {
                let mut expander = Expander::new(self, shard);
                let Some(f) = &frontier else {
                    expander.expand_block(b)?;
                    return expander.finish();
                };
                let range = shard.block_range(b);
                for w in range.start / 64..range.end.div_ceil(64) {
                    let mut bits = f.decided[w];
                    while bits != 0 {
                        let j = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        match &f.won {
                            Some(won) => {
                                expander.expand_decided(w * 64 + j, won[w] >> j & 1 == 1)?
                            }
                            None => expander.expand(w * 64 + j)?,
                        }
                    }
                }
                expander.finish()
            })
        })
    }

    /// The frontier of wave `wave` in one shard, as a bitmap: out of core from the frontier
    /// store, with the won bits (so that no cell is read); in memory the shard's last wave-log
    /// frame (so that no bitmap of the whole frontier is kept between waves). None after a
    /// restore: the frontier is then found in the cells.
    fn shard_frontier(
        &self,
        shard: &ShardArrays,
        wave: u32,
    ) -> Result<Option<KnownFrontier>, KernelError> {
        let words = shard.len.div_ceil(64) as usize;
        if let Some(ooc) = &self.out_of_core {
            let kept = ooc.frontiers.read(shard.id, wave - 1, words)?;
            return Ok(kept.map(|f| KnownFrontier {
                decided: f.decided,
                won: Some(f.won),
            }));
        }
        let last = shard.waves.last_frame(words)?;
        Ok(last
            .filter(|(last, decided)| last + 1 == wave && !decided.is_empty())
            .map(|(_, decided)| KnownFrontier { decided, won: None }))
    }

    /// The cells changed behind the close's back (initial pass, restore): out of core, drop the
    /// kept frontier and any updates held back by a wave that did not close.
    fn forget_frontier(&self) -> Result<(), KernelError> {
        if let Some(ooc) = &self.out_of_core {
            ooc.buckets.clear()?;
            ooc.frontiers.clear()?;
        }
        Ok(())
    }

    /// Apply encoded updates (see [`encode_update`]) to cells this worker owns.
    fn apply_all(&self, updates: &[u64]) -> Result<(), KernelError> {
        // One thread that owns every cell needs no compare-and-swap (a locked instruction).
        let exclusive = self.owns_all && rayon::current_num_threads() == 1;
        each_prefetched(
            updates,
            |u| self.cell(u >> 1),
            |cell, u| self.apply_at(cell, u >> 1, u & 1 == 1, exclusive),
        )
    }

    /// The mover of the live state `pred`. The periods games have are spelled out, so that each
    /// is a multiplication or a mask and never a division.
    #[inline(always)]
    fn mover_of(&self, pred: u64) -> u8 {
        match self.mover_period {
            Some(1) => 0,
            Some(2) => (pred & 1) as u8,
            Some(3) => (pred % 3) as u8,
            Some(n) => (pred % u64::from(n)) as u8,
            None => self.game.mover(pred),
        }
    }

    /// One predecessor update: `pred` has a child just decided (W if `child_is_win`, else L).
    ///
    /// Counters are initialised lazily: a live state's successors are counted the first time an
    /// unfavourable child reaches it, so states that no update ever reaches cost nothing, states
    /// that a favourable child reaches first are never counted (it decides them whatever the
    /// count), and the initial pass needs no move generation.
    /// `cell` is the cell of `pred`, already located (and prefetched).
    /// `exclusive`: no other thread writes cells meanwhile, so a plain store does.
    #[inline(always)]
    fn apply_at(
        &self,
        cell: Cell,
        pred: u64,
        child_is_win: bool,
        exclusive: bool,
    ) -> Result<(), KernelError> {
        let mover = self.mover_of(pred);
        let mover_in_coalition = self.layer.in_coalition(mover);
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
        let mut current = cell.load();
        let mut counted = None; // kept if the compare-and-swap below has to retry
        loop {
            if !cell_is_undecided(current) {
                return Ok(()); // already decided (or illegal, which has no successors)
            }
            let new = if favourable {
                child
            } else {
                let remaining = match (current, counted) {
                    (CELL_OVERFLOW, _) => {
                        return self.count_down_overflow(pred, cell, 0, bad_for_mover)
                    }
                    (CELL_UNCOUNTED, Some(n)) => n,
                    (CELL_UNCOUNTED, None) => *counted.insert(self.count_successors(pred)?),
                    (n, _) => n as u32,
                };
                if remaining > CELL_MAX_COUNTER as u32 {
                    return self.count_down_overflow(pred, cell, remaining, bad_for_mover);
                }
                if remaining == 1 {
                    bad_for_mover
                } else {
                    remaining as u8 - 1
                }
            };
            let stored = if exclusive {
                cell.store_exclusive(new);
                Ok(())
            } else {
                cell.compare_exchange(current, new)
            };
            match stored {
                Ok(()) => {
                    if !cell_is_undecided(new) {
                        self.mark_fresh(pred);
                    }
                    return Ok(());
                }
                Err(seen) => current = seen,
            }
        }
    }

    /// An unfavourable update of a state with more successors than a cell counts (`count`, or
    /// 0 when the cell already overflows): counted down in [`OverflowCounts`].
    #[cold]
    fn count_down_overflow(
        &self,
        pred: u64,
        cell: Cell,
        count: u32,
        bad_for_mover: u8,
    ) -> Result<(), KernelError> {
        if self.overflow.decrement(pred, cell, || count, bad_for_mover) == Counted::Decided {
            self.mark_fresh(pred);
        }
        Ok(())
    }

    /// The counts of the overflowing cells of the states in `range` (an owned shard), for a
    /// checkpoint: `(index − range.start, count)`. At a barrier.
    pub(super) fn overflow_counts(&self, range: std::ops::Range<u64>) -> Vec<(u64, u32)> {
        self.overflow
            .in_range(range, |i| self.cell(i).load() == CELL_OVERFLOW)
    }

    /// Forget the overflowing counts of the states in `range` (its cells are being restored).
    pub(super) fn forget_overflow(&self, range: std::ops::Range<u64>) {
        self.overflow.clear_range(range);
    }

    /// Keep the count `n` of the overflowing cell of state `index` (restoring a checkpoint).
    pub(super) fn keep_overflow(&self, index: u64, n: u32) {
        self.overflow.insert(index, n);
    }

    /// State `index`, in an owned shard, was just decided.
    #[inline]
    fn mark_fresh(&self, index: u64) {
        let shard = self.shard(self.plan.shard_of(index));
        shard.mark_fresh((index - shard.start) as usize);
    }

    /// The cell of state `index`, which must be in a shard this worker owns.
    #[inline]
    fn cell(&self, index: u64) -> Cell<'_> {
        let (words, start) = match self.origins[self.plan.shard_of(index)] {
            Some(origin) if index < self.plan.size => origin,
            _ => panic!("state {index} is not in a shard worker {} owns", self.me),
        };
        // SAFETY: the state is in an owned shard, whose words live as long as `self`.
        unsafe { Cell::at(words as *const AtomicU32, (index - start) as usize) }
    }

    /// The number of successors of a live state (a pass counts as one).
    fn count_successors(&self, index: u64) -> Result<u32, KernelError> {
        let count = self.game.successor_count(index);
        match u32::try_from(count) {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(KernelError::SuccessorCount { index, count }),
        }
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
        if let Some(ooc) = &self.out_of_core {
            let decided = self.close_out_of_core(wave, ooc)?;
            return Ok((decided, self.take_stats()));
        }
        // A shard at a time (its blocks in parallel): age the blocks that hold frontier or fresh
        // cells, the fresh ones forming the next frontier, whose bitmap becomes the shard's
        // wave-log frame (empty where the wave decided nothing) and is then dropped.
        let active = BLOCK_FRONTIER | BLOCK_FRESH;
        let decided = self
            .owned()
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|shard| {
                if shard.flagged_blocks(active).is_empty() {
                    shard.waves.append(wave, &[])?;
                    return Ok(0);
                }
                let mut bitmap = vec![0u64; (shard.len as usize).div_ceil(64)];
                // Whole words per block: blocks and shards are multiples of 64 states.
                bitmap
                    .par_chunks_mut(BLOCK_STATES / 64)
                    .enumerate()
                    .filter(|(b, _)| shard.block_flags(*b) & active != 0)
                    .for_each(|(b, words)| {
                        let cells = shard.block_range(b).len();
                        // SAFETY: closing is at a barrier, and each block is one work item.
                        let frontier = age_words(unsafe { shard.block_mut(b) }, cells, words);
                        shard.set_block_flags(b, if frontier { BLOCK_FRONTIER } else { 0 });
                    });
                shard.waves.append(wave, &bitmap)?;
                Ok(bitmap.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            })
            .sum::<Result<u64, KernelError>>()?;
        Ok((decided, self.take_stats()))
    }

    /// The statistics of the wave being closed; the counters start again from zero.
    fn take_stats(&self) -> WaveStats {
        WaveStats {
            expanded: self.counters.expanded.swap(0, Relaxed),
            applied: self.counters.applied.swap(0, Relaxed),
            sent: self.counters.sent.swap(0, Relaxed),
            sent_states: self.counters.sent_states.swap(0, Relaxed),
        }
    }

    /// [`WorkerEngine::close_wave`] with cells in files, one shard after another (as many at
    /// once as there are threads): apply the shard's held-back updates, age its blocks, append
    /// its wave-log frame and keep its frontier for the next wave, so that each wave reads and
    /// writes a shard's cells once, in order. The bitmaps live only while their shard closes.
    fn close_out_of_core(&self, wave: u32, ooc: &OutOfCore) -> Result<u64, KernelError> {
        let active = BLOCK_FRONTIER | BLOCK_FRESH;
        self.owned()
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|shard| {
                // Dense updates touch every page: map them all in with one sequential read.
                if ooc.buckets.held(shard.id) >= shard.len / 16 {
                    shard.populate();
                }
                let applied = ooc.buckets.drain(shard.id, |codes| {
                    // This task alone writes the shard's cells while it closes.
                    each_prefetched(
                        codes,
                        |c| shard.cell((c >> 1) as usize),
                        |cell, c| {
                            self.apply_at(cell, shard.start + u64::from(c >> 1), c & 1 == 1, true)
                        },
                    )
                })?;
                self.counters.applied.fetch_add(applied, Relaxed);
                let flagged = (0..shard.blocks()).any(|b| shard.block_flags(b) & active != 0);
                let mut bitmap = vec![
                    0u64;
                    if flagged {
                        shard.len.div_ceil(64) as usize
                    } else {
                        0
                    }
                ];
                for (b, words) in bitmap.chunks_mut(BLOCK_STATES / 64).enumerate() {
                    if shard.block_flags(b) & active != 0 {
                        let cells = shard.block_range(b).len();
                        // SAFETY: closing is at a barrier, and this task alone holds the shard.
                        let frontier = age_words(unsafe { shard.block_mut(b) }, cells, words);
                        shard.set_block_flags(b, if frontier { BLOCK_FRONTIER } else { 0 });
                    }
                }
                shard.waves.append(wave, &bitmap)?;
                if bitmap.iter().any(|&w| w != 0) {
                    let won = won_bits(shard, &bitmap);
                    ooc.frontiers.write(shard.id, wave, &bitmap, &won)?;
                }
                shard.write_back()?;
                Ok(bitmap.iter().map(|w| w.count_ones() as u64).sum::<u64>())
            })
            .sum()
    }

    /// Final values of one owned shard (ILLEGAL / WIN / LOSS / DRAW per state, index order); None
    /// if this worker does not own it.
    pub fn shard_values(&self, shard: usize) -> Result<Option<Vec<u8>>, KernelError> {
        self.shard_values_in(shard, 0..u64::MAX)
    }

    /// The values of the states `rows` (shard-local, cut at the shard's end) of one owned shard:
    /// a slice at a time, for a reader whose memory is smaller than the shard.
    pub fn shard_values_in(
        &self,
        shard: usize,
        rows: Range<u64>,
    ) -> Result<Option<Vec<u8>>, KernelError> {
        let Some(arrays) = self.shards.get(shard).and_then(Option::as_ref) else {
            return Ok(None);
        };
        arrays.ensure_held()?;
        let words = arrays.words();
        let (start, end) = (rows.start.min(arrays.len), rows.end.min(arrays.len));
        Ok(Some(
            (start as usize..end as usize)
                .into_par_iter()
                .map(|i| VALUE_OF_CELL[Cell::of(words, i).load() as usize])
                .collect(),
        ))
    }

    /// The shard's values and depths are gathered: free its cells (see [`ShardArrays::release`]).
    /// Returns whether this worker owns the shard.
    pub fn release_shard(&self, shard: usize) -> Result<bool, KernelError> {
        match self.shards.get(shard).and_then(Option::as_ref) {
            Some(arrays) => arrays.release().map(|()| true),
            None => Ok(false),
        }
    }

    /// Depth of every state of one owned shard (0 for illegal and drawn states), rebuilt from the
    /// shard's wave log.
    pub fn shard_depth(&self, shard: usize) -> Result<Option<Vec<u16>>, KernelError> {
        self.shard_depth_in(shard, 0..u64::MAX)
    }

    /// The depths of the states `rows` (shard-local, cut at the shard's end; a start that is a
    /// multiple of 64) of one owned shard. Each call reads the whole wave log.
    pub fn shard_depth_in(
        &self,
        shard: usize,
        rows: Range<u64>,
    ) -> Result<Option<Vec<u16>>, KernelError> {
        let Some(arrays) = self.shards.get(shard).and_then(Option::as_ref) else {
            return Ok(None);
        };
        let (start, end) = (rows.start.min(arrays.len), rows.end.min(arrays.len));
        assert!(start.is_multiple_of(64), "depth rows start at a word");
        let mut depth = vec![0u16; (end - start) as usize];
        let words = arrays.len.div_ceil(64) as usize;
        let (first_word, last_word) = ((start / 64) as usize, end.div_ceil(64) as usize);
        arrays.waves.each_frame(words, |wave, bitmap| {
            // A wave that decided nothing in the shard has an empty bitmap.
            let words = bitmap
                .get(first_word..last_word.min(bitmap.len()))
                .unwrap_or(&[]);
            for (w, &word) in words.iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let at = w * 64 + bits.trailing_zeros() as usize;
                    if at < depth.len() {
                        depth[at] = wave as u16;
                    }
                    bits &= bits - 1;
                }
            }
        })?;
        Ok(Some(depth))
    }
}
