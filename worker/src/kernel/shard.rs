//! Shards: contiguous ranges of the index space and the arrays a worker keeps for each.
//!
//! Per state, while a layer is being solved:
//! - one *cell* byte: undecided (successors not counted yet, or a counter of successors not yet
//!   known to be bad for the mover, 1..=252), or W, L, or illegal (see the `CELL_*` constants);
//! - two frontier bits (the states decided in the previous wave, and those decided in this one);
//! - the depth, a `u16` written once, in index order, when the wave that decided it closes.
//!
//! Every array is a memory map, either of a file in the worker's data directory (so the operating
//! system may page it out: the kernel never assumes it fits in RAM) or anonymous for small tables.

use super::KernelError;
use memmap2::MmapMut;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU16, AtomicU64, AtomicU8};

/// Cell values. Anything at or below `CELL_MAX_COUNTER` is an undecided state: either
/// `CELL_UNCOUNTED` (no child decided yet, successors not counted) or the number of successors
/// not yet known to be bad for the mover.
pub const CELL_UNCOUNTED: u8 = 0;
pub const CELL_MAX_COUNTER: u8 = 252;
pub const CELL_WIN: u8 = 0xFD;
pub const CELL_LOSS: u8 = 0xFE;
pub const CELL_ILLEGAL: u8 = 0xFF;

/// How the index space `[0, size)` is cut into shards of `shard_size` states (the last may be
/// shorter).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShardPlan {
    pub size: u64,
    pub shard_size: u64,
}

impl ShardPlan {
    /// Shard sizes are rounded up to a multiple of 64 so frontier words never straddle shards.
    pub fn new(size: u64, shard_size: u64) -> ShardPlan {
        let shard_size = shard_size.max(64).div_ceil(64) * 64;
        ShardPlan { size, shard_size }
    }
    pub fn shards(&self) -> usize {
        self.size.div_ceil(self.shard_size).max(1) as usize
    }
    pub fn shard_of(&self, index: u64) -> usize {
        (index / self.shard_size) as usize
    }
    pub fn range(&self, shard: usize) -> std::ops::Range<u64> {
        let start = shard as u64 * self.shard_size;
        start..(start + self.shard_size).min(self.size)
    }
}

/// A memory map of `len` bytes: backed by `path` when given, anonymous otherwise.
fn map(path: Option<&Path>, len: usize) -> Result<MmapMut, KernelError> {
    let len = len.max(8);
    let io = |p: &Path, source| KernelError::Io { path: p.display().to_string(), source };
    match path {
        None => MmapMut::map_anon(len).map_err(|e| io(Path::new("<anonymous>"), e)),
        Some(p) => {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(p)
                .map_err(|e| io(p, e))?;
            file.set_len(len as u64).map_err(|e| io(p, e))?;
            reserve(&file, len).map_err(|e| io(p, e))?;
            // SAFETY: the file is private to this worker's data directory for the run.
            unsafe { MmapMut::map_mut(&file) }.map_err(|e| io(p, e))
        }
    }
}

/// One of a shard's arrays (the frontier of a given wave).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Array {
    Cells,
    Depth,
    Frontier(u32),
}

impl Array {
    pub fn name(self) -> &'static str {
        match self {
            Array::Cells => "cells",
            Array::Depth => "depth",
            Array::Frontier(_) => "frontier",
        }
    }
}

/// Reserve the file's blocks now, so a full disk is an error here and not a SIGBUS later, when a
/// page of the mapping is first written.
fn reserve(file: &std::fs::File, len: usize) -> std::io::Result<()> {
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
    pub id: usize,
    pub start: u64,
    pub len: u64,
    cells: MmapMut,
    frontiers: [MmapMut; 2],
    depth: MmapMut,
}

impl ShardArrays {
    /// Create (or reopen) the arrays of shard `id`; `dir` = None keeps them in anonymous memory.
    pub fn open(plan: &ShardPlan, id: usize, dir: Option<&Path>) -> Result<Self, KernelError> {
        let range = plan.range(id);
        let len = range.end - range.start;
        let words = len.div_ceil(64) as usize;
        let file = |kind: &str| -> Option<PathBuf> {
            dir.map(|d| d.join(format!("shard-{id:05}.{kind}")))
        };
        Ok(ShardArrays {
            id,
            start: range.start,
            len,
            cells: map(file("cells").as_deref(), len as usize)?,
            frontiers: [
                map(file("frontier0").as_deref(), words * 8)?,
                map(file("frontier1").as_deref(), words * 8)?,
            ],
            depth: map(file("depth").as_deref(), len as usize * 2)?,
        })
    }

    pub fn cells(&self) -> &[AtomicU8] {
        // SAFETY: AtomicU8 has the layout of u8; the map lives as long as `self`.
        unsafe { std::slice::from_raw_parts(self.cells.as_ptr() as *const AtomicU8, self.len as usize) }
    }

    /// The frontier bitmap of wave `wave` (the states decided in that wave).
    pub fn frontier(&self, wave: u32) -> &[AtomicU64] {
        let m = &self.frontiers[(wave % 2) as usize];
        // SAFETY: maps are page aligned, so aligned for u64; length is a multiple of 8.
        unsafe { std::slice::from_raw_parts(m.as_ptr() as *const AtomicU64, self.words()) }
    }

    pub fn depth(&self) -> &[AtomicU16] {
        // SAFETY: page aligned, 2 bytes per state.
        unsafe { std::slice::from_raw_parts(self.depth.as_ptr() as *const AtomicU16, self.len as usize) }
    }

    pub fn words(&self) -> usize {
        self.len.div_ceil(64) as usize
    }

    /// The raw bytes of one array.
    ///
    /// # Safety
    /// Only at a barrier: no thread may be updating the array while the slice is alive.
    pub unsafe fn raw(&self, array: Array) -> &[u8] {
        let m = self.map_of(array);
        std::slice::from_raw_parts(m.as_ptr(), self.byte_len(array))
    }

    /// The raw bytes of one array, for restoring a checkpoint.
    ///
    /// # Safety
    /// Only at a barrier, and callers must write disjoint ranges.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn raw_mut(&self, array: Array) -> &mut [u8] {
        let m = self.map_of(array);
        std::slice::from_raw_parts_mut(m.as_ptr() as *mut u8, self.byte_len(array))
    }

    fn map_of(&self, array: Array) -> &MmapMut {
        match array {
            Array::Cells => &self.cells,
            Array::Depth => &self.depth,
            Array::Frontier(wave) => &self.frontiers[(wave % 2) as usize],
        }
    }

    fn byte_len(&self, array: Array) -> usize {
        match array {
            Array::Cells => self.len as usize,
            Array::Depth => 2 * self.len as usize,
            Array::Frontier(_) => self.words() * 8,
        }
    }

    /// Write dirty pages of file-backed arrays to disk.
    pub fn flush(&self) -> std::io::Result<()> {
        self.cells.flush()?;
        self.frontiers[0].flush()?;
        self.frontiers[1].flush()?;
        self.depth.flush()
    }
}
