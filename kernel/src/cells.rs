//! The cells of a shard: one byte per state while a layer is solved (docs/kernel.md, cells.rs).
//! 1. The frontier is a generation of the cells, so a checkpoint of the cells holds it; depths are
//!    not kept per state but appended per wave to the shard's [`WaveLog`].
//! 2. Cells in files are only walked in order (see [`super::update_buckets`]): mapped files updated
//!    at random thrash. Cells that fit are anonymous memory with huge pages ([`CellStorage`]).

use super::memory::CellStorage;
use super::shard::ShardPlan;
use super::wave_log::WaveLog;
use super::KernelError;
use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::Relaxed};

/// Cell values. Anything at or below `CELL_MAX_COUNTER` is an undecided state: either
/// `CELL_UNCOUNTED` (no child decided yet, successors not counted) or the number of successors
/// not yet known to be bad for the mover.
pub const CELL_UNCOUNTED: u8 = 0;
/// The largest successor count a cell holds.
pub const CELL_MAX_COUNTER: u8 = 248;
/// Decided before the previous wave.
pub const CELL_WIN_OLD: u8 = 249;
/// L, decided before the previous wave.
pub const CELL_LOSS_OLD: u8 = 250;
/// Decided in the previous wave: the frontier the running wave expands.
pub const CELL_WIN_CUR: u8 = 251;
/// L, decided in the previous wave.
pub const CELL_LOSS_CUR: u8 = 252;
/// Decided in the running wave.
pub const CELL_WIN_NEW: u8 = 253;
/// L, decided in the running wave.
pub const CELL_LOSS_NEW: u8 = 254;
/// A state that cannot arise in play.
pub const CELL_ILLEGAL: u8 = 255;

// Aging a cell at the close of a wave subtracts 2: the generations are two apart.
const _: () = assert!(CELL_WIN_CUR == CELL_WIN_OLD + 2 && CELL_WIN_NEW == CELL_WIN_CUR + 2);
const _: () = assert!(CELL_LOSS_CUR == CELL_LOSS_OLD + 2 && CELL_LOSS_NEW == CELL_LOSS_CUR + 2);
const _: () = assert!(CELL_LOSS_OLD == CELL_WIN_OLD + 1 && CELL_LOSS_NEW + 1 == CELL_ILLEGAL);

/// Close a wave on a run of cells: the frontier becomes old and the cells decided in the wave
/// become the next frontier, whose bits are set in `words` (bit `j` of word `w`: cell `64 w + j`).
/// Returns whether any bit is set. Every cell of a flagged block is visited (in the big waves a
/// sixth of them change), so whole words of 64 cells are done with vector instructions.
pub fn age_cells(cells: &mut [u8], words: &mut [u64]) -> bool {
    debug_assert_eq!(words.len(), cells.len().div_ceil(64));
    let mut any = 0;
    let mut chunks = cells.chunks_exact_mut(64);
    for (chunk, word) in (&mut chunks).zip(words.iter_mut()) {
        *word = age_64(chunk.try_into().expect("64 cells"));
        any |= *word;
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let word = words.last_mut().expect("a word for the last cells");
        *word = tail
            .iter_mut()
            .enumerate()
            .fold(0, |bits, (j, cell)| bits | (age_cell(cell) as u64) << j);
        any |= *word;
    }
    any != 0
}

/// Age one cell (subtract 2 from a frontier or new cell); returns whether it was new.
#[inline]
fn age_cell(cell: &mut u8) -> bool {
    let c = *cell;
    let active = c.wrapping_sub(CELL_WIN_CUR) < 4;
    *cell = c - 2 * active as u8;
    c.wrapping_sub(CELL_WIN_NEW) < 2
}

/// [`age_cell`] on 64 cells, returning the bits of the new ones.
#[cfg(not(target_arch = "x86_64"))]
fn age_64(cells: &mut [u8; 64]) -> u64 {
    cells
        .iter_mut()
        .enumerate()
        .fold(0, |bits, (j, cell)| bits | (age_cell(cell) as u64) << j)
}

/// [`age_cell`] on 64 cells, 16 at a time with SSE2 (part of every x86-64 processor): the
/// compiler does not vectorize the per-cell version well.
#[cfg(target_arch = "x86_64")]
fn age_64(cells: &mut [u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    // Unsigned `x <= limit` per byte: min(x, limit) == x.
    // SAFETY: SSE2 is always present on x86-64; the loads and stores stay inside `cells`.
    unsafe {
        let le =
            |x: __m128i, limit: u8| _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(limit as i8)), x);
        let mut bits = 0u64;
        for k in 0..4 {
            let at = cells.as_mut_ptr().add(16 * k) as *mut __m128i;
            let v = _mm_loadu_si128(at);
            let active = le(_mm_sub_epi8(v, _mm_set1_epi8(CELL_WIN_CUR as i8)), 3);
            let new = le(_mm_sub_epi8(v, _mm_set1_epi8(CELL_WIN_NEW as i8)), 1);
            let two = _mm_and_si128(active, _mm_set1_epi8(2));
            _mm_storeu_si128(at, _mm_sub_epi8(v, two));
            bits |= (_mm_movemask_epi8(new) as u32 as u64 & 0xFFFF) << (16 * k);
        }
        bits
    }
}

/// Ask the processor to fetch `cell` into the cache (a hint; no effect elsewhere).
#[inline]
pub fn prefetch(cell: &AtomicU8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(cell.as_ptr() as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cell;
}

/// Is this cell a decided W (any generation)?
pub const fn cell_is_win(cell: u8) -> bool {
    matches!(cell, CELL_WIN_OLD | CELL_WIN_CUR | CELL_WIN_NEW)
}

/// States per block: the unit of parallel work and of the frontier flags.
pub const BLOCK_STATES: usize = 1 << 18;
/// Block flag: the block holds cells decided in the previous wave (the frontier).
pub const BLOCK_FRONTIER: u8 = 1;
/// Block flag: the block holds cells decided in the running wave.
pub const BLOCK_FRESH: u8 = 2;

/// A memory map of `len` bytes: of the file `path` when given, anonymous otherwise.
fn map(path: Option<&Path>, len: usize) -> Result<MmapMut, KernelError> {
    let len = len.max(8);
    match path {
        None => {
            let map =
                MmapMut::map_anon(len).map_err(|e| KernelError::io(Path::new("<anonymous>"), e))?;
            // Random updates over gigabytes: huge pages cut the TLB misses. Only advice.
            #[cfg(target_os = "linux")]
            let _ = map.advise(memmap2::Advice::HugePage);
            Ok(map)
        }
        Some(p) => {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(p)
                .map_err(|e| KernelError::io(p, e))?;
            file.set_len(len as u64)
                .map_err(|e| KernelError::io(p, e))?;
            reserve(&file, len).map_err(|e| KernelError::io(p, e))?;
            // SAFETY: the file is private to this worker's data directory for the run.
            unsafe { MmapMut::map_mut(&file) }.map_err(|e| KernelError::io(p, e))
        }
    }
}

/// Reserve the file's blocks now, so a full disk is an error here and not a SIGBUS later, when a
/// page of the mapping is first written.
fn reserve(file: &File, len: usize) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: a plain system call on an open descriptor.
    match unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) } {
        0 => Ok(()),
        // Filesystems without fallocate: fall back to the sparse file.
        libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        err => Err(std::io::Error::from_raw_os_error(err)),
    }
}

/// The arrays of one shard.
pub struct ShardArrays {
    /// The shard's index.
    pub id: usize,
    /// Its first state.
    pub start: u64,
    /// Its number of states.
    pub len: u64,
    cells: MmapMut,
    /// Whether the cells map a file (else anonymous memory).
    in_file: bool,
    /// Whether [`ShardArrays::release`] gave the cells' memory back: they read as zeros since.
    released: AtomicBool,
    /// [`BLOCK_FRONTIER`] / [`BLOCK_FRESH`] per block of [`BLOCK_STATES`] cells.
    blocks: Vec<AtomicU8>,
    /// The shard's wave log: the states each closed wave decided.
    pub waves: WaveLog,
}

impl ShardArrays {
    /// Create (or reopen) the arrays of shard `id`. Without a directory everything is in memory;
    /// with one, the wave log is a file there and so are the cells if `storage` says so.
    pub fn open(
        plan: &ShardPlan,
        id: usize,
        dir: Option<&Path>,
        storage: CellStorage,
    ) -> Result<Self, KernelError> {
        let range = plan.range(id);
        let len = range.end - range.start;
        let file = |kind: &str| -> Option<PathBuf> {
            dir.map(|d| d.join(format!("shard-{id:05}.{kind}")))
        };
        let cells_file = match storage {
            CellStorage::File { .. } => file("cells"),
            CellStorage::Memory => None,
        };
        Ok(ShardArrays {
            id,
            start: range.start,
            len,
            cells: map(cells_file.as_deref(), len as usize)?,
            in_file: cells_file.is_some(),
            released: AtomicBool::new(false),
            blocks: (0..(len as usize).div_ceil(BLOCK_STATES))
                .map(|_| AtomicU8::new(0))
                .collect(),
            waves: WaveLog::open(
                dir.map(|d| d.join(kingmaker_tablefmt::wave_log::file_name(id)))
                    .as_deref(),
            )?,
        })
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.blocks.len()
    }

    /// The cell range (shard-local) of block `b`.
    pub fn block_range(&self, b: usize) -> std::ops::Range<usize> {
        b * BLOCK_STATES..((b + 1) * BLOCK_STATES).min(self.len as usize)
    }

    /// The flags of block `b`.
    pub fn block_flags(&self, b: usize) -> u8 {
        self.blocks[b].load(Relaxed)
    }

    /// The blocks whose flags share a bit with `wanted`, in order.
    pub fn flagged_blocks(&self, wanted: u8) -> Vec<usize> {
        (0..self.blocks())
            .filter(|&b| self.block_flags(b) & wanted != 0)
            .collect()
    }

    /// Set the flags of block `b`.
    pub fn set_block_flags(&self, b: usize, flags: u8) {
        self.blocks[b].store(flags, Relaxed);
    }

    /// Cell `i` (shard-local) was just decided in the running wave.
    #[inline]
    pub fn mark_fresh(&self, i: usize) {
        let flags = &self.blocks[i / BLOCK_STATES];
        // Read first: the flag is set once per block and wave, not once per decision.
        if flags.load(Relaxed) & BLOCK_FRESH == 0 {
            flags.fetch_or(BLOCK_FRESH, Relaxed);
        }
    }

    /// Recompute every block's flags from the cells (after a checkpoint was loaded into them).
    pub fn rebuild_block_flags(&self) {
        let cells = self.cells();
        for b in 0..self.blocks() {
            let mut flags = 0;
            for cell in &cells[self.block_range(b)] {
                flags |= match cell.load(Relaxed) {
                    CELL_WIN_CUR | CELL_LOSS_CUR => BLOCK_FRONTIER,
                    CELL_WIN_NEW | CELL_LOSS_NEW => BLOCK_FRESH,
                    _ => 0,
                };
            }
            self.set_block_flags(b, flags);
        }
    }

    /// Keep the successor count of `state` that the game learned while expanding another state
    /// (`Game::predecessors_and_count`), if the state is in this shard and not counted yet: an
    /// unfavourable update reaching it later then need not count. A count the cell cannot hold is left for
    /// the update to report.
    pub fn keep_count(&self, state: u64, count: usize) {
        let Some(i) = state.checked_sub(self.start).filter(|&i| i < self.len) else {
            return;
        };
        if (1..=CELL_MAX_COUNTER as usize).contains(&count) {
            let _ = self.cells()[i as usize].compare_exchange(
                CELL_UNCOUNTED,
                count as u8,
                Relaxed,
                Relaxed,
            );
        }
    }

    /// The address cell 0 of the index space would have if this shard's map began there (the
    /// map's address minus the shard's start, wrapping): the address of state `index`'s cell is
    /// then `origin + index`, for the kernel's hot path.
    pub fn origin(&self) -> usize {
        (self.cells.as_ptr() as usize).wrapping_sub(self.start as usize)
    }

    /// About to update all of the shard's cells: map a file's pages in, writable, with one
    /// system call and a sequential read, rather than fault them in one page at a time at random
    /// (Linux 5.14 and later; elsewhere the faults come as before).
    pub fn populate(&self) {
        #[cfg(target_os = "linux")]
        let _ = self.cells.advise(memmap2::Advice::PopulateWrite);
    }

    /// Done with the shard's cells for now: write a file's dirty pages back and wait, so that
    /// under a memory limit that counts the page cache (a cgroup) they can be reclaimed at once
    /// for the next shard instead of stalling it.
    pub fn write_back(&self) -> Result<(), KernelError> {
        if self.in_file {
            let name = format!("<cells of shard {}>", self.id);
            self.cells
                .flush()
                .map_err(|e| KernelError::io(Path::new(&name), e))?;
        }
        Ok(())
    }

    /// The layer is solved and its values gathered: give the memory of anonymous cells back to the
    /// system now rather than when the worker goes, so that a gathered shard's cells and the table
    /// they were gathered into are never held together. Cells in files are left to the page cache.
    pub fn release(&self) -> Result<(), KernelError> {
        self.released.store(true, Relaxed);
        if !self.in_file {
            // SAFETY: nothing reads the cells after the release (`ensure_held` refuses), and a
            // stray write would only fault in a fresh zero page of the still-valid mapping.
            unsafe {
                self.cells
                    .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
            }
            .map_err(|e| KernelError::io(Path::new("<anonymous>"), e))?;
        }
        Ok(())
    }

    /// An error once the cells were released: they no longer hold the shard's values.
    pub fn ensure_held(&self) -> Result<(), KernelError> {
        if self.released.load(Relaxed) {
            return Err(KernelError::Released { shard: self.id });
        }
        Ok(())
    }

    /// The cells, one per state of the shard, for concurrent updates.
    pub fn cells(&self) -> &[AtomicU8] {
        // SAFETY: AtomicU8 has the layout of u8; the map lives as long as `self`.
        unsafe {
            std::slice::from_raw_parts(self.cells.as_ptr() as *const AtomicU8, self.len as usize)
        }
    }

    /// The raw bytes of the cells.
    ///
    /// # Safety
    /// Only at a barrier: no thread may be updating the cells while the slice is alive.
    pub unsafe fn raw(&self) -> &[u8] {
        // SAFETY: the mapping holds `len` bytes; the caller keeps writers away (above).
        unsafe { std::slice::from_raw_parts(self.cells.as_ptr(), self.len as usize) }
    }

    /// The cells of block `b` as plain bytes, for closing a wave.
    ///
    /// # Safety
    /// Only at a barrier, and no two live slices of the same block.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn block_mut(&self, b: usize) -> &mut [u8] {
        let range = self.block_range(b);
        // SAFETY: the block lies inside the mapping; the caller keeps it unshared (above).
        unsafe {
            std::slice::from_raw_parts_mut(
                (self.cells.as_ptr() as *mut u8).add(range.start),
                range.len(),
            )
        }
    }

    /// The raw bytes of the cells, for restoring a checkpoint.
    ///
    /// # Safety
    /// Only at a barrier, and callers must write disjoint ranges.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn raw_mut(&self) -> &mut [u8] {
        // SAFETY: the mapping holds `len` bytes; the caller writes disjoint ranges (above).
        unsafe { std::slice::from_raw_parts_mut(self.cells.as_ptr() as *mut u8, self.len as usize) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The close of a wave, one cell at a time: what `age_cells` must do.
    fn age_one(cell: u8) -> (u8, bool) {
        match cell {
            CELL_WIN_CUR => (CELL_WIN_OLD, false),
            CELL_LOSS_CUR => (CELL_LOSS_OLD, false),
            CELL_WIN_NEW => (CELL_WIN_CUR, true),
            CELL_LOSS_NEW => (CELL_LOSS_CUR, true),
            other => (other, false),
        }
    }

    proptest! {
        /// Every cell value, in runs that do and do not fill whole words.
        #[test]
        fn aging_cells_matches_the_rule_cell_by_cell(cells in prop::collection::vec(any::<u8>(), 0..300)) {
            let mut aged = cells.clone();
            let mut words = vec![u64::MAX; cells.len().div_ceil(64)];
            let any = age_cells(&mut aged, &mut words);
            for (i, &cell) in cells.iter().enumerate() {
                let (want, frontier) = age_one(cell);
                prop_assert_eq!(aged[i], want, "cell {} was {}", i, cell);
                prop_assert_eq!(words[i / 64] >> (i % 64) & 1 == 1, frontier, "bit {}", i);
            }
            let tail = cells.len() % 64;
            if tail != 0 {
                prop_assert_eq!(words[words.len() - 1] >> tail, 0, "bits past the last cell");
            }
            prop_assert_eq!(any, cells.iter().any(|&c| age_one(c).1));
        }
    }
}
