//! The cells of a shard: six bits per state while a layer is solved, as packed words
//! ([`super::cell_code`]; docs/kernel.md, cells.rs). The frontier is a generation of the cells;
//! depths are appended per wave to the shard's [`WaveLog`]. Cells in files are only walked in order
//! ([`super::update_buckets`]); cells that fit are anonymous memory with huge pages ([`CellStorage`]).

use super::cell_code::{
    cell_bytes, words_for, Cell, CELLS_PER_WORD, CELL_LOSS_CUR, CELL_LOSS_NEW, CELL_MAX_COUNTER,
    CELL_UNCOUNTED, CELL_WIN_CUR, CELL_WIN_NEW,
};
use super::memory::CellStorage;
use super::shard::ShardPlan;
use super::wave_log::WaveLog;
use super::KernelError;
use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering::Relaxed};

/// Ask the processor to fetch `cell`'s word into the cache (a hint; no effect elsewhere).
#[inline]
pub fn prefetch(cell: Cell) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(cell.word_ptr() as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = cell;
}

/// How far ahead of the update being applied its cell is prefetched: enough cache misses in
/// flight to cover the memory's latency, few enough that the processor keeps every one of them.
/// Prefetching a whole batch of 256 first was slower (docs/benchmarks/kernel.md, cell updates).
pub const PREFETCH_AHEAD: usize = 32;

/// Call `apply` on every item with its cell, in order, each cell located and prefetched
/// [`PREFETCH_AHEAD`] items before its turn.
#[inline(always)]
pub fn each_prefetched<'a, T: Copy, E>(
    items: &[T],
    locate: impl Fn(T) -> Cell<'a>,
    mut apply: impl FnMut(Cell<'a>, T) -> Result<(), E>,
) -> Result<(), E> {
    let located = |item: T| {
        let cell = locate(item);
        prefetch(cell);
        Some(cell)
    };
    // A ring of the cells located ahead.
    let mut ahead = [None; PREFETCH_AHEAD];
    for (slot, &item) in ahead.iter_mut().zip(items) {
        *slot = located(item);
    }
    for (i, &item) in items.iter().enumerate() {
        let slot = &mut ahead[i % PREFETCH_AHEAD];
        let cell = slot.take().expect("located ahead");
        if let Some(&later) = items.get(i + PREFETCH_AHEAD) {
            *slot = located(later);
        }
        apply(cell, item)?;
    }
    Ok(())
}

/// States per block: the unit of parallel work and of the frontier flags. A whole number of
/// words and of bitmap words, so that blocks are closed in parallel without sharing either.
pub const BLOCK_STATES: usize = CELLS_PER_WORD << 16;
const _: () =
    assert!(BLOCK_STATES.is_multiple_of(64) && BLOCK_STATES.is_multiple_of(CELLS_PER_WORD));
/// Words per block.
const BLOCK_WORDS: usize = BLOCK_STATES / CELLS_PER_WORD;
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
            let file = kingmaker_tablefmt::fsio::open_regular_with(
                p,
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false),
            )
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
            cells: map(cells_file.as_deref(), cell_bytes(len) as usize)?,
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
        for b in 0..self.blocks() {
            let mut flags = 0;
            for i in self.block_range(b) {
                flags |= match self.cell(i).load() {
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
            let _ = self
                .cell(i as usize)
                .compare_exchange(CELL_UNCOUNTED, count as u8);
        }
    }

    /// The address of the shard's first word, for the kernel's hot path ([`Cell::at`]).
    pub fn words_ptr(&self) -> *const AtomicU32 {
        self.cells.as_ptr() as *const AtomicU32
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

    /// The shard's words of packed cells, for concurrent updates.
    pub fn words(&self) -> &[AtomicU32] {
        // SAFETY: AtomicU32 has the layout of u32, the map is page-aligned and holds the words,
        // and it lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.words_ptr(), words_for(self.len) as usize) }
    }

    /// Cell `i` (shard-local).
    #[inline]
    pub fn cell(&self, i: usize) -> Cell<'_> {
        Cell::of(self.words(), i)
    }

    /// The raw bytes of the cells (little-endian words).
    ///
    /// # Safety
    /// Only at a barrier: no thread may be updating the cells while the slice is alive.
    pub unsafe fn raw(&self) -> &[u8] {
        // SAFETY: the mapping holds the words; the caller keeps writers away (above).
        unsafe { std::slice::from_raw_parts(self.cells.as_ptr(), cell_bytes(self.len) as usize) }
    }

    /// The words of block `b`, for closing a wave.
    ///
    /// # Safety
    /// Only at a barrier, and no two live slices of the same block.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn block_mut(&self, b: usize) -> &mut [u32] {
        let range = self.block_range(b);
        let words = range.start / CELLS_PER_WORD..range.end.div_ceil(CELLS_PER_WORD);
        debug_assert_eq!(range.start % CELLS_PER_WORD, 0);
        debug_assert!(words.len() <= BLOCK_WORDS);
        // SAFETY: the block's words lie inside the mapping; the caller keeps them unshared.
        unsafe {
            std::slice::from_raw_parts_mut(
                (self.cells.as_ptr() as *mut u32).add(words.start),
                words.len(),
            )
        }
    }

    /// The raw bytes of the cells, for restoring a checkpoint.
    ///
    /// # Safety
    /// Only at a barrier, and callers must write disjoint ranges.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn raw_mut(&self) -> &mut [u8] {
        // SAFETY: the mapping holds the words; the caller writes disjoint ranges (above).
        unsafe {
            std::slice::from_raw_parts_mut(
                self.cells.as_ptr() as *mut u8,
                cell_bytes(self.len) as usize,
            )
        }
    }

    /// Every cell's code, in order (for gathering and tests).
    pub fn codes(&self) -> impl Iterator<Item = u8> + '_ {
        let words = self.words();
        (0..self.len as usize).map(move |i| Cell::of(words, i).load())
    }
}
