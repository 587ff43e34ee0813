//! Shards: contiguous ranges of the index space and what a worker keeps for each.
//!
//! While a layer is being solved a state costs **one byte**, its *cell*: undecided (successors
//! not counted yet, or a counter of successors not yet known to be bad for the mover), or decided
//! W or L in one of three generations — decided in an earlier wave (*old*), in the previous wave
//! (*current*: the frontier being expanded) or in this wave (*new*) — or illegal. The frontier is
//! thus part of the cells and needs no bitmap.
//!
//! The depth of a state is the wave that decided it. It is not kept per state while solving:
//! when a wave closes, the set of states it decided is appended to the shard's *wave log* (one
//! zstd-compressed bitmap per wave, see [`WaveLog`]), and depths are rebuilt from the log when
//! the finished table is gathered.
//!
//! Cells are a memory map, either of a file in the worker's data directory (so the operating
//! system may page it out: the kernel never assumes the arrays fit in RAM) or anonymous memory
//! with transparent huge pages when they fit the worker's memory budget ([`CellStorage`]). An
//! anonymous map is never written back behind the kernel's back (a shared file map is, page by
//! page, all the time) and huge pages spare the TLB the misses of random updates; nothing is lost
//! by it, since a checkpoint holds every cell.
//!
//! Each block of [`BLOCK_STATES`] cells has a flag byte saying whether it holds frontier cells
//! (decided in the previous wave) or fresh ones (decided in this wave), so that expanding a
//! frontier and closing a wave only visit the blocks that have something to do.

use super::memory::CellStorage;
use super::KernelError;
use memmap2::MmapMut;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;

/// Cell values. Anything at or below `CELL_MAX_COUNTER` is an undecided state: either
/// `CELL_UNCOUNTED` (no child decided yet, successors not counted) or the number of successors
/// not yet known to be bad for the mover.
pub const CELL_UNCOUNTED: u8 = 0;
pub const CELL_MAX_COUNTER: u8 = 248;
/// Decided before the previous wave.
pub const CELL_WIN_OLD: u8 = 249;
pub const CELL_LOSS_OLD: u8 = 250;
/// Decided in the previous wave: the frontier the running wave expands.
pub const CELL_WIN_CUR: u8 = 251;
pub const CELL_LOSS_CUR: u8 = 252;
/// Decided in the running wave.
pub const CELL_WIN_NEW: u8 = 253;
pub const CELL_LOSS_NEW: u8 = 254;
pub const CELL_ILLEGAL: u8 = 255;

/// Is this cell a decided W (any generation)?
pub fn cell_is_win(cell: u8) -> bool {
    matches!(cell, CELL_WIN_OLD | CELL_WIN_CUR | CELL_WIN_NEW)
}

/// How the index space `[0, size)` is cut into shards of `shard_size` states (the last may be
/// shorter).
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShardPlan {
    pub size: u64,
    pub shard_size: u64,
}

impl ShardPlan {
    /// Largest shard size kept: larger ones give the same plan (one shard holds any index space
    /// this code can solve) and would overflow the rounding and the range ends.
    const MAX_SHARD_SIZE: u64 = 1 << 62;

    /// Shard sizes are rounded up to a multiple of 64 so wave-log bitmap words never straddle
    /// shards, and kept within `64..=2^62` so that no value can overflow.
    pub fn new(size: u64, shard_size: u64) -> ShardPlan {
        let shard_size = shard_size.clamp(64, Self::MAX_SHARD_SIZE).div_ceil(64) * 64;
        ShardPlan { size, shard_size }
    }
    pub fn shards(&self) -> usize {
        self.size.div_ceil(self.shard_size.max(1)).max(1) as usize
    }
    #[inline]
    pub fn shard_of(&self, index: u64) -> usize {
        // On the hot path (twice per update): a shift for the usual power-of-two sizes.
        if self.shard_size.is_power_of_two() {
            (index >> self.shard_size.trailing_zeros()) as usize
        } else {
            (index / self.shard_size) as usize
        }
    }
    pub fn range(&self, shard: usize) -> std::ops::Range<u64> {
        let start = (shard as u64)
            .saturating_mul(self.shard_size)
            .min(self.size);
        start..start.saturating_add(self.shard_size).min(self.size)
    }
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
            let map = MmapMut::map_anon(len).map_err(|e| io(Path::new("<anonymous>"), e))?;
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
                .map_err(|e| io(p, e))?;
            file.set_len(len as u64).map_err(|e| io(p, e))?;
            reserve(&file, len).map_err(|e| io(p, e))?;
            // SAFETY: the file is private to this worker's data directory for the run.
            unsafe { MmapMut::map_mut(&file) }.map_err(|e| io(p, e))
        }
    }
}

fn io(path: &Path, source: std::io::Error) -> KernelError {
    KernelError::Io {
        path: path.display().to_string(),
        source,
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
    pub id: usize,
    pub start: u64,
    pub len: u64,
    cells: MmapMut,
    /// [`BLOCK_FRONTIER`] / [`BLOCK_FRESH`] per block of [`BLOCK_STATES`] cells.
    blocks: Vec<AtomicU8>,
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
            CellStorage::File => file("cells"),
            CellStorage::Memory => None,
        };
        Ok(ShardArrays {
            id,
            start: range.start,
            len,
            cells: map(cells_file.as_deref(), len as usize)?,
            blocks: (0..(len as usize).div_ceil(BLOCK_STATES))
                .map(|_| AtomicU8::new(0))
                .collect(),
            waves: WaveLog::open(file("waves").as_deref())?,
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

    pub fn cells(&self) -> &[AtomicU8] {
        // SAFETY: AtomicU8 has the layout of u8; the map lives as long as `self`.
        unsafe {
            std::slice::from_raw_parts(self.cells.as_ptr() as *const AtomicU8, self.len as usize)
        }
    }

    /// Ask the processor to fetch cell `i` into the cache (a hint; no effect elsewhere).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch never faults; `i` is within the map anyway.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(self.cells.as_ptr().add(i) as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// The raw bytes of the cells.
    ///
    /// # Safety
    /// Only at a barrier: no thread may be updating the cells while the slice is alive.
    pub unsafe fn raw(&self) -> &[u8] {
        std::slice::from_raw_parts(self.cells.as_ptr(), self.len as usize)
    }

    /// The raw bytes of the cells, for restoring a checkpoint.
    ///
    /// # Safety
    /// Only at a barrier, and callers must write disjoint ranges.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn raw_mut(&self) -> &mut [u8] {
        std::slice::from_raw_parts_mut(self.cells.as_ptr() as *mut u8, self.len as usize)
    }

    /// Write the cells' dirty pages and the wave log to disk.
    pub fn flush(&self) -> Result<(), KernelError> {
        self.cells
            .flush()
            .map_err(|e| io(Path::new(&format!("shard {} cells", self.id)), e))?;
        self.waves.sync()
    }
}

/// The states each closed wave decided in one shard: an append-only sequence of frames
/// `[wave: u32 LE][length: u32 LE][crc32 of the payload: u32 LE][payload]`, the payload being the
/// zstd-compressed bitmap of the shard's states decided in that wave, or empty when that wave
/// decided none of them (most shards in the last waves of a large layer). A frame is never changed
/// once written; resuming from a checkpoint cuts the log back to the checkpoint's length.
pub struct WaveLog {
    path: Option<PathBuf>,
    store: Mutex<LogStore>,
}

enum LogStore {
    File(File),
    Memory(Vec<u8>),
}

const FRAME_HEADER: usize = 12;

impl WaveLog {
    fn open(path: Option<&Path>) -> Result<WaveLog, KernelError> {
        let store = match path {
            None => LogStore::Memory(Vec::new()),
            Some(p) => LogStore::File(
                OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(p)
                    .map_err(|e| io(p, e))?,
            ),
        };
        Ok(WaveLog {
            path: path.map(Path::to_path_buf),
            store: Mutex::new(store),
        })
    }

    fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or("<in-memory wave log>".into(), |p| p.display().to_string())
    }

    fn err(&self, source: std::io::Error) -> KernelError {
        KernelError::Io {
            path: self.name(),
            source,
        }
    }

    /// Append the bitmap of the states decided in `wave`; returns the log's new length.
    pub fn append(&self, wave: u32, bitmap: &[u64]) -> Result<u64, KernelError> {
        let payload = if bitmap.iter().all(|&w| w == 0) {
            Vec::new()
        } else {
            let bytes: Vec<u8> = bitmap.iter().flat_map(|w| w.to_le_bytes()).collect();
            zstd::bulk::compress(&bytes, 1).map_err(|e| self.err(e))?
        };
        let mut frame = Vec::with_capacity(FRAME_HEADER + payload.len());
        frame.extend_from_slice(&wave.to_le_bytes());
        frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        frame.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        frame.extend_from_slice(&payload);
        let mut store = self.store.lock().expect("wave log");
        match &mut *store {
            LogStore::Memory(v) => {
                v.extend_from_slice(&frame);
                Ok(v.len() as u64)
            }
            LogStore::File(f) => {
                let end = f.seek(SeekFrom::End(0)).map_err(|e| self.err(e))?;
                f.write_all(&frame).map_err(|e| self.err(e))?;
                Ok(end + frame.len() as u64)
            }
        }
    }

    /// The whole log as bytes.
    fn bytes(&self) -> Result<Vec<u8>, KernelError> {
        let mut store = self.store.lock().expect("wave log");
        match &mut *store {
            LogStore::Memory(v) => Ok(v.clone()),
            LogStore::File(f) => {
                let mut out = Vec::new();
                f.seek(SeekFrom::Start(0)).map_err(|e| self.err(e))?;
                f.read_to_end(&mut out).map_err(|e| self.err(e))?;
                Ok(out)
            }
        }
    }

    /// Length and crc32 of the log as it stands (recorded by checkpoints).
    pub fn fingerprint(&self) -> Result<(u64, u32), KernelError> {
        let bytes = self.bytes()?;
        Ok((bytes.len() as u64, crc32fast::hash(&bytes)))
    }

    /// Cut the log back to `len` bytes after checking that its first `len` bytes have `crc`.
    pub fn rewind(&self, len: u64, crc: u32) -> Result<(), KernelError> {
        let bytes = self.bytes()?;
        if (bytes.len() as u64) < len || crc32fast::hash(&bytes[..len as usize]) != crc {
            return Err(KernelError::Checkpoint(format!(
                "wave log {} does not match the checkpoint ({} bytes on disk, {len} expected, or altered)",
                self.name(),
                bytes.len()
            )));
        }
        let mut store = self.store.lock().expect("wave log");
        match &mut *store {
            LogStore::Memory(v) => v.truncate(len as usize),
            LogStore::File(f) => f.set_len(len).map_err(|e| self.err(e))?,
        }
        Ok(())
    }

    /// Start afresh (a new layer on these arrays).
    pub fn clear(&self) -> Result<(), KernelError> {
        let mut store = self.store.lock().expect("wave log");
        match &mut *store {
            LogStore::Memory(v) => v.clear(),
            LogStore::File(f) => f.set_len(0).map_err(|e| self.err(e))?,
        }
        Ok(())
    }

    /// Every frame: (wave, bitmap words), checking each frame's crc.
    pub fn frames(&self, words: usize) -> Result<Vec<(u32, Vec<u64>)>, KernelError> {
        let bytes = self.bytes()?;
        let mut out = Vec::new();
        let mut at = 0;
        let corrupt =
            |what: &str| KernelError::Checkpoint(format!("wave log {}: {what}", self.name()));
        while at < bytes.len() {
            if bytes.len() - at < FRAME_HEADER {
                return Err(corrupt("truncated frame header"));
            }
            let word = |i: usize| {
                u32::from_le_bytes(bytes[at + i..at + i + 4].try_into().expect("4 bytes"))
            };
            let (wave, len, crc) = (word(0), word(4) as usize, word(8));
            let payload = bytes
                .get(at + FRAME_HEADER..at + FRAME_HEADER + len)
                .ok_or_else(|| corrupt("truncated frame"))?;
            if crc32fast::hash(payload) != crc {
                return Err(corrupt(&format!("frame of wave {wave} fails its crc32")));
            }
            let raw = if payload.is_empty() {
                vec![0u8; words * 8]
            } else {
                zstd::bulk::decompress(payload, words * 8)
                    .map_err(|e| corrupt(&format!("zstd: {e}")))?
            };
            let bitmap = raw
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            out.push((wave, bitmap));
            at += FRAME_HEADER + len;
        }
        Ok(out)
    }

    pub fn sync(&self) -> Result<(), KernelError> {
        match &*self.store.lock().expect("wave log") {
            LogStore::Memory(_) => Ok(()),
            LogStore::File(f) => f.sync_data().map_err(|e| self.err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ShardPlan;

    /// Any shard size and any index space give a plan whose shards cover `[0, size)` in order,
    /// without overflow or a division by zero (`--shard-size 18446744073709551615` once did).
    #[test]
    fn shard_plans_never_overflow() {
        for size in [0, 1, 64, 1662, 1 << 40, u64::MAX - 1, u64::MAX] {
            for shard_size in [
                0,
                1,
                63,
                64,
                65,
                1 << 24,
                (1 << 62) + 1,
                u64::MAX - 63,
                u64::MAX,
            ] {
                let plan = ShardPlan::new(size, shard_size);
                assert!(plan.shard_size >= 64 && plan.shard_size.is_multiple_of(64));
                let shards = plan.shards();
                assert!(shards >= 1);
                // Consecutive ranges, the first from 0 and the last to `size` (the first and the
                // last few shards: there may be 2^58 of them).
                assert_eq!(plan.range(0).start, 0);
                assert_eq!(plan.range(shards - 1).end, size, "{size} {shard_size}");
                let ends = (0..shards.min(4)).chain(shards.saturating_sub(4)..shards);
                for s in ends.filter(|&s| s > 0) {
                    let (a, b) = (plan.range(s - 1), plan.range(s));
                    assert_eq!(a.end, b.start, "{size} {shard_size} shard {s}");
                    assert!(b.end > b.start, "{size} {shard_size} shard {s} is empty");
                }
                if size > 0 {
                    assert_eq!(plan.shard_of(size - 1), shards - 1, "{size} {shard_size}");
                    assert_eq!(plan.shard_of(0), 0);
                }
            }
        }
    }
}
