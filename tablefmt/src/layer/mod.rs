//! Layer files (`.kmt`): one finished layer, cut into blocks that are zstd-compressed one by one,
//! so that a lookup reads and decompresses a single block. Run directories keep their finished
//! layers in this form (`layers/NAME.kmt`) and releases ship it, so every reader — query, serve,
//! line, census, summary, pack, verify — reads one format. docs/format.md describes every byte.
//!
//! Three encodings share the header, the block index and the checksums:
//! - [`ENCODING_PACKED`]: values and depths (one byte per state `value | depth code << 2`, or three
//!   planes when a block holds a depth code of 64 or more);
//! - [`ENCODING_VALUES`]: values alone, 2 bits per state (four states per byte, the first state in
//!   the low bits), for users who want W/L/D without depths (as Syzygy ships WDL apart from DTZ);
//! - [`ENCODING_GROUPED`]: values alone as in encoding 2, each block's states grouped by their
//!   position modulo the header's modulus first ([`grouping`]).
//!
//! The header and the index carry their own crc32, every block's crc32 sits in the index, and the
//! blocks are contiguous up to the end of the file, so every byte is covered by a checksum.
//!
//! - [`depth`]: depth codes (depths stored as `depth / M` where the data allows).
//! - [`block`]: a block's payload and random access to a decompressed block.
//! - [`grouping`]: the grouped order of encoding 3, and the choice of its period.
//! - [`LayerWriter`]: streams a layer in index order (blocks compressed in parallel).
//! - [`LayerFile`]: random access with a block cache; [`LayerFile::values_plane`] unpacks all values.

pub mod block;
pub mod depth;
pub mod grouping;
pub mod header;
pub mod identity;
#[cfg(test)]
pub(crate) mod tests;

use crate::table::ValueCounts;
use crate::value::MAX_CODE;
use crate::{FormatError, Lookup};
use block::{encode_payload, max_payload};
pub use block::{pack_values, unpack_values, Block};
use depth::DepthCode;
pub use header::{LayerHeader, HEADER_LEN, LAYER_MAGIC, LAYER_VERSION};
pub use identity::LayerIdentity;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Size of one block index entry: offset u64, length u32, crc32 u32.
pub const INDEX_ENTRY_LEN: u64 = 16;
/// Encoding 1, values and depths: a width byte, then one byte per state (value | depth code << 2)
/// when every depth code of the block is below 64, else a value plane and two depth-code planes
/// (see docs/format.md).
pub const ENCODING_PACKED: u32 = 1;
/// Encoding 2, values alone: 2 bits per state, four states per byte, the first in the low bits.
pub const ENCODING_VALUES: u32 = 2;
/// Encoding 3, values alone as in encoding 2, after grouping each block's states by their position
/// modulo the header's modulus M (2 to 8; the depth-code residues are unused, all `0xff`): the
/// index's period, as cc3p's `index mod 3` names the mover.
pub const ENCODING_GROUPED: u32 = 3;
/// Default states per block: 64 Ki states, 16 KiB of packed values.
pub const DEFAULT_BLOCK_STATES: u32 = 1 << 16;
/// Largest block a reader accepts (bounds the memory one lookup may need).
pub const MAX_BLOCK_STATES: u32 = 1 << 24;
/// Largest state count a reader accepts (keeps offsets far from overflow).
pub const MAX_STATES: u64 = 1 << 56;
/// File extension of layer files.
pub const LAYER_EXT: &str = "kmt";

pub use crate::fsio::{crc32, file_sha256};

/// One entry of the block index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockEntry {
    /// Absolute file offset of the compressed block.
    pub offset: u64,
    /// Length of the compressed block.
    pub len: u32,
    /// crc32 of the compressed block's bytes.
    pub crc: u32,
}

fn index_bytes(entries: &[BlockEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(entries.len() * INDEX_ENTRY_LEN as usize + 4);
    for e in entries {
        out.extend_from_slice(&e.offset.to_le_bytes());
        out.extend_from_slice(&e.len.to_le_bytes());
        out.extend_from_slice(&e.crc.to_le_bytes());
    }
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Parse and check a block index against its header and the file length.
fn parse_index(
    bytes: &[u8],
    header: &LayerHeader,
    file_len: u64,
    name: &str,
) -> Result<Vec<BlockEntry>, FormatError> {
    let bad = |what: String| FormatError::Corrupt(format!("{name}: {what}"));
    let (entries, crc) = bytes.split_at(bytes.len() - 4);
    if crc32(entries) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err(bad(
            "block index crc32 mismatch (the index was altered or damaged)".into(),
        ));
    }
    let mut out = Vec::with_capacity(header.blocks as usize);
    let mut at = header.data_offset();
    for (b, e) in entries.chunks_exact(INDEX_ENTRY_LEN as usize).enumerate() {
        let entry = BlockEntry {
            offset: u64::from_le_bytes(e[0..8].try_into().expect("8 bytes")),
            len: u32::from_le_bytes(e[8..12].try_into().expect("4 bytes")),
            crc: u32::from_le_bytes(e[12..16].try_into().expect("4 bytes")),
        };
        if entry.offset != at || entry.len == 0 {
            return Err(bad(format!(
                "block {b} is not where the index says (offset {}, expected {at})",
                entry.offset
            )));
        }
        at += entry.len as u64;
        out.push(entry);
    }
    if at > file_len {
        return Err(bad(format!(
            "truncated: the blocks end at byte {at} but the file has {file_len} bytes"
        )));
    }
    if at < file_len {
        return Err(bad(format!(
            "{} unexpected bytes after the last block",
            file_len - at
        )));
    }
    Ok(out)
}

/// What writing a layer file produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenLayer {
    /// Size of the file in bytes.
    pub size: u64,
    /// sha256 (hex) of the whole file.
    pub sha256: String,
    /// How many states have each value.
    pub counts: ValueCounts,
    /// sha256 (hex) of the values, one byte per state, in index order: the run's layer digest.
    pub digest: String,
    /// The largest depth written (0 in a values-only file).
    pub max_depth: u16,
    /// Number of blocks in the file.
    pub blocks: u64,
    /// The depth code's modulus (1: depths stored as they are).
    pub depth_modulus: u8,
}

/// Streams one layer file: states are appended in index order, any number at a time; full blocks
/// are compressed in parallel groups and written at once, so memory stays at a few blocks per
/// thread. The file is written under a temporary name and renamed into place by
/// [`LayerWriter::finish`], after an fsync: a layer file that exists is complete.
pub struct LayerWriter {
    path: PathBuf,
    tmp: PathBuf,
    file: File,
    header: LayerHeader,
    /// The identity record, written after the header.
    identity: Vec<u8>,
    level: i32,
    entries: Vec<BlockEntry>,
    offset: u64,
    /// States received but not yet compressed (less than a group of blocks).
    values: Vec<u8>,
    depth: Vec<u16>,
    /// Index of `values[0]`.
    first: u64,
    hasher: Sha256,
    counts: ValueCounts,
    max_depth: u16,
}

impl LayerWriter {
    /// Start the layer file `path` (replaced if it exists) of `identity` with `states` states in
    /// blocks of `block_states`, with `encoding` and, for [`ENCODING_PACKED`], the depth code
    /// `code` (every appended depth must fit it: [`DepthCode::plain`] always does).
    // The file's shape is these seven numbers; a struct for them would only be unpacked here.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        path: &Path,
        identity: &LayerIdentity,
        states: u64,
        block_states: u32,
        encoding: u32,
        code: DepthCode,
        zstd_level: i32,
    ) -> Result<LayerWriter, FormatError> {
        let bs = block_states;
        if bs == 0 || !bs.is_multiple_of(4) || bs > MAX_BLOCK_STATES {
            return Err(FormatError::Corrupt(format!(
                "block size {bs} states: must be a positive multiple of 4, at most {MAX_BLOCK_STATES}"
            )));
        }
        if states > MAX_STATES {
            return Err(FormatError::Corrupt(format!(
                "{states} states: a layer file holds at most 2^56"
            )));
        }
        let identity = identity.to_record()?;
        let header = LayerHeader::new(states, bs, encoding, 0, code, identity.len() as u64);
        let tmp = path.with_extension("kmt.tmp");
        let mut file = File::create(&tmp).map_err(|e| FormatError::io(&tmp, e))?;
        // Header and index are written last; reserve their space.
        file.write_all(&vec![0u8; header.data_offset() as usize])
            .map_err(|e| FormatError::io(&tmp, e))?;
        Ok(LayerWriter {
            path: path.to_path_buf(),
            tmp,
            file,
            header,
            identity,
            level: zstd_level,
            entries: Vec::with_capacity(header.blocks as usize),
            offset: header.data_offset(),
            values: Vec::new(),
            depth: Vec::new(),
            first: 0,
            hasher: Sha256::new(),
            counts: ValueCounts::default(),
            max_depth: 0,
        })
    }

    /// States compressed together (a few blocks per thread).
    fn group_states(&self) -> usize {
        (4 * rayon::current_num_threads()).max(4) * self.header.block_states as usize
    }

    /// Append the next states: values 0..=3 and their depths (ignored, and may be empty, for
    /// [`ENCODING_VALUES`]).
    pub fn append(&mut self, values: &[u8], depth: &[u16]) -> Result<(), FormatError> {
        let with_depths = self.header.encoding == ENCODING_PACKED;
        if with_depths && depth.len() != values.len() {
            return Err(FormatError::Corrupt(format!(
                "{}: {} values but {} depths appended",
                self.path.display(),
                values.len(),
                depth.len()
            )));
        }
        let end = self.first + (self.values.len() + values.len()) as u64;
        if end > self.header.states {
            return Err(FormatError::Corrupt(format!(
                "{}: more than the {} states of the layer appended",
                self.path.display(),
                self.header.states
            )));
        }
        if let Some(v) = values.iter().find(|&&v| v > MAX_CODE) {
            return Err(FormatError::Corrupt(format!(
                "{}: value byte {v} (values are 0..={MAX_CODE})",
                self.path.display()
            )));
        }
        self.hasher.update(values);
        self.counts.add(values);
        self.values.extend_from_slice(values);
        if with_depths {
            self.max_depth = depth.iter().copied().fold(self.max_depth, u16::max);
            self.depth.extend_from_slice(depth);
        }
        let group = self.group_states();
        if self.values.len() >= group {
            let whole = self.values.len() / group * group;
            self.write_blocks(whole)?;
        }
        Ok(())
    }

    /// Compress and write the first `n` pending states (whole blocks, or the tail at the end).
    fn write_blocks(&mut self, n: usize) -> Result<(), FormatError> {
        let bs = self.header.block_states as usize;
        let code = self.header.depth_code;
        let encoding = self.header.encoding;
        let (first, level) = (self.first, self.level);
        let values = &self.values[..n];
        let depth = if encoding == ENCODING_PACKED {
            let d = &self.depth[..n];
            let misfit = || (0..n).find(|&j| !code.fits(first + j as u64, values[j], d[j]));
            if let Some(j) = (!code.is_plain()).then(misfit).flatten() {
                return Err(FormatError::Corrupt(format!(
                    "{}: the depth {} of state {} does not fit the layer's depth code",
                    self.path.display(),
                    d[j],
                    first + j as u64
                )));
            }
            d
        } else {
            &[][..]
        };
        // One compression context per task, not per block.
        let frames: Vec<Result<Vec<u8>, std::io::Error>> = values
            .par_chunks(bs)
            .enumerate()
            .map_init(
                || zstd::bulk::Compressor::new(level),
                |zstd, (k, v)| {
                    let block_first = first + (k * bs) as u64;
                    let d = if depth.is_empty() {
                        &[][..]
                    } else {
                        &depth[k * bs..k * bs + v.len()]
                    };
                    let payload = encode_payload(encoding, block_first, v, d, &code);
                    match zstd {
                        Ok(zstd) => zstd.compress(&payload),
                        Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
                    }
                },
            )
            .collect();
        for frame in frames {
            let frame = frame.map_err(|e| FormatError::io(&self.tmp, e))?;
            self.file
                .write_all(&frame)
                .map_err(|e| FormatError::io(&self.tmp, e))?;
            self.entries.push(BlockEntry {
                offset: self.offset,
                len: frame.len() as u32,
                crc: crc32(&frame),
            });
            self.offset += frame.len() as u64;
        }
        self.values.drain(..n);
        if encoding == ENCODING_PACKED {
            self.depth.drain(..n);
        }
        self.first += n as u64;
        Ok(())
    }

    /// Write the last blocks, the header and the index; fsync and move the file into place.
    pub fn finish(mut self) -> Result<WrittenLayer, FormatError> {
        let pending = self.values.len();
        if self.first + pending as u64 != self.header.states {
            return Err(FormatError::Corrupt(format!(
                "{}: {} of the layer's {} states were appended",
                self.path.display(),
                self.first + pending as u64,
                self.header.states
            )));
        }
        self.write_blocks(pending)?;
        let header = LayerHeader {
            max_depth: self.max_depth,
            ..self.header
        };
        let io = |e| FormatError::io(&self.tmp, e);
        self.file.seek(SeekFrom::Start(0)).map_err(io)?;
        self.file.write_all(&header.to_bytes()).map_err(io)?;
        self.file.write_all(&self.identity).map_err(io)?;
        self.file
            .write_all(&index_bytes(&self.entries))
            .map_err(io)?;
        self.file.sync_all().map_err(io)?;
        drop(self.file);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| FormatError::io(&self.path, e))?;
        if let Some(dir) = self.path.parent() {
            // The rename is durable once the directory is.
            if let Ok(d) = File::open(dir) {
                let _ = d.sync_all();
            }
        }
        let (size, sha256) = file_sha256(&self.path)?;
        Ok(WrittenLayer {
            size,
            sha256,
            counts: self.counts,
            digest: hex::encode(self.hasher.finalize()),
            max_depth: self.max_depth,
            blocks: header.blocks,
            depth_modulus: header.depth_code.modulus,
        })
    }
}

/// Recently used blocks of one layer file, most recent last.
struct BlockCache {
    capacity: usize,
    blocks: Vec<(u64, Arc<Block>)>,
}

/// Blocks a reader keeps decompressed. A cc3p position with all its moves reads each layer file
/// about three times per state (the state and its two rotations), some 70 blocks for 22 moves at
/// level 2: 256 keep a few positions warm for `serve` (at most 256 blocks' payloads, under 50 MB
/// per file; a cache hit is a scan of the list, well under a microsecond).
pub const DEFAULT_CACHE_BLOCKS: usize = 256;

/// Random access to one layer file. Opening checks the header and the block index; every block
/// read is checked against its crc32 before it is decompressed.
pub struct LayerFile {
    path: PathBuf,
    name: String,
    file: File,
    header: LayerHeader,
    /// What the file says it holds (`None` in a version-1 file, which does not say).
    identity: Option<LayerIdentity>,
    index: Vec<BlockEntry>,
    cache: Mutex<BlockCache>,
}

impl LayerFile {
    /// Open a layer file and check its header, identity record and block index.
    pub fn open(path: &Path) -> Result<LayerFile, FormatError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => FormatError::Corrupt(format!("{name}: missing")),
            _ => FormatError::io(path, e),
        })?;
        let file_len = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
        let mut h = vec![0u8; HEADER_LEN.min(file_len) as usize];
        file.read_exact_at(&mut h, 0)
            .map_err(|e| FormatError::io(path, e))?;
        let header = LayerHeader::parse(&h, &name)?;
        if file_len < header.data_offset() {
            return Err(FormatError::Corrupt(format!(
                "{name}: truncated: {file_len} bytes, shorter than its header and block index ({} bytes)",
                header.data_offset()
            )));
        }
        let identity = if header.identity_len == 0 {
            None
        } else {
            let mut record = vec![0u8; header.identity_len as usize];
            file.read_exact_at(&mut record, HEADER_LEN)
                .map_err(|e| FormatError::io(path, e))?;
            Some(LayerIdentity::parse_record(&record, &name)?)
        };
        let mut idx = vec![0u8; header.index_len as usize];
        file.read_exact_at(&mut idx, header.index_offset)
            .map_err(|e| FormatError::io(path, e))?;
        let index = parse_index(&idx, &header, file_len, &name)?;
        Ok(LayerFile {
            path: path.to_path_buf(),
            name,
            file,
            header,
            identity,
            index,
            cache: Mutex::new(BlockCache {
                capacity: DEFAULT_CACHE_BLOCKS,
                blocks: Vec::new(),
            }),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's parsed header.
    pub fn header(&self) -> &LayerHeader {
        &self.header
    }

    /// Which game and layer the file holds; `None` for a version-1 file, which does not say (a
    /// reader that must know checks such a file against a manifest's sha256 instead).
    pub fn identity(&self) -> Option<&LayerIdentity> {
        self.identity.as_ref()
    }

    /// Refuse a file that does not say it holds `expected`: a misplaced, swapped or older file.
    pub fn check_identity(&self, expected: &LayerIdentity) -> Result<(), FormatError> {
        match &self.identity {
            Some(id) if id == expected => Ok(()),
            Some(id) => Err(FormatError::Corrupt(format!(
                "{}: holds {}, not the {} asked for (the file was misplaced, swapped or renamed)",
                self.name,
                id.describe(),
                expected.describe()
            ))),
            None => Err(FormatError::Corrupt(format!(
                "{}: written by an older kingmaker (layer file version 1), which does not record \
                 which layer a file holds, so it cannot be checked to be {}",
                self.name,
                expected.describe()
            ))),
        }
    }

    /// Open `path` and refuse it unless it says it holds `expected` ([`Self::check_identity`]).
    pub fn open_as(path: &Path, expected: &LayerIdentity) -> Result<LayerFile, FormatError> {
        let file = LayerFile::open(path)?;
        file.check_identity(expected)?;
        Ok(file)
    }

    /// The block index, one entry per block.
    pub fn index(&self) -> &[BlockEntry] {
        &self.index
    }

    /// Number of states in the layer.
    pub fn states(&self) -> u64 {
        self.header.states
    }

    /// Number of blocks in the file.
    pub fn blocks(&self) -> u64 {
        self.header.blocks
    }

    /// Keep up to `blocks` decompressed blocks (at least one).
    pub fn set_cache_blocks(&self, blocks: usize) {
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        c.capacity = blocks.max(1);
        let excess = c.blocks.len().saturating_sub(c.capacity);
        c.blocks.drain(..excess);
    }

    /// Read, check and decompress block `b` (no caching).
    pub fn read_block(&self, b: u64) -> Result<Block, FormatError> {
        let bad = |what: String| FormatError::Corrupt(format!("{}: block {b}: {what}", self.name));
        let entry = *self
            .index
            .get(b as usize)
            .ok_or_else(|| bad("no such block".into()))?;
        let mut frame = vec![0u8; entry.len as usize];
        self.file
            .read_exact_at(&mut frame, entry.offset)
            .map_err(|e| FormatError::io(&self.path, e))?;
        if crc32(&frame) != entry.crc {
            return Err(bad(
                "crc32 mismatch (the block was altered or damaged)".into()
            ));
        }
        let (first, end) = self.header.block_range(b);
        let n = (end - first) as usize;
        let encoding = self.header.encoding;
        let payload = zstd::bulk::decompress(&frame, max_payload(n, encoding))
            .map_err(|e| bad(format!("zstd: {e}")))?;
        Block::decode(encoding, first, n, self.header.depth_code, payload).map_err(bad)
    }

    /// Block `b`, from the cache or read.
    pub fn block(&self, b: u64) -> Result<Arc<Block>, FormatError> {
        {
            let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(pos) = c.blocks.iter().position(|(id, _)| *id == b) {
                let hit = c.blocks.remove(pos);
                let block = hit.1.clone();
                c.blocks.push(hit);
                return Ok(block);
            }
        }
        let block = Arc::new(self.read_block(b)?);
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if c.blocks.len() >= c.capacity {
            c.blocks.remove(0);
        }
        c.blocks.push((b, block.clone()));
        Ok(block)
    }

    /// Whether the file holds depths ([`ENCODING_PACKED`]) or values alone.
    pub fn has_depths(&self) -> bool {
        self.header.encoding == ENCODING_PACKED
    }

    /// The block of `index` and the state's place in it.
    fn locate(&self, index: u64) -> Result<(Arc<Block>, usize), FormatError> {
        if index >= self.header.states {
            return Err(FormatError::Corrupt(format!(
                "{}: index {index} out of range (the layer has {} states)",
                self.name, self.header.states
            )));
        }
        let bs = self.header.block_states as u64;
        Ok((self.block(index / bs)?, (index % bs) as usize))
    }

    /// (value, depth) of one state. A values-only file has no depths: asking it for one is an
    /// error, never a made-up depth.
    pub fn get(&self, index: u64) -> Result<(u8, u16), FormatError> {
        if !self.has_depths() {
            return Err(FormatError::Corrupt(format!(
                "{}: holds values only, no depths (read the layer's .kmt file for depths)",
                self.name
            )));
        }
        let (block, j) = self.locate(index)?;
        Ok(block.get(j))
    }

    /// The value code of one state ([`crate::Value`]: 0 illegal, 1 W, 2 L, 3 D).
    pub fn value(&self, index: u64) -> Result<u8, FormatError> {
        let (block, j) = self.locate(index)?;
        Ok(block.value(j))
    }

    /// Values (and, unless `depth` is empty, depths) of the states `first .. first +
    /// values.len()`, the blocks they touch decoded in parallel.
    pub fn read_states(
        &self,
        first: u64,
        values: &mut [u8],
        depth: &mut [u16],
    ) -> Result<(), FormatError> {
        let end = first + values.len() as u64;
        if end > self.header.states || (!depth.is_empty() && depth.len() != values.len()) {
            return Err(FormatError::Corrupt(format!(
                "{}: states {first}..{end} asked of a layer of {} states",
                self.name, self.header.states
            )));
        }
        if values.is_empty() {
            return Ok(());
        }
        if !depth.is_empty() && !self.has_depths() {
            return Err(FormatError::Corrupt(format!(
                "{}: holds values only, no depths",
                self.name
            )));
        }
        let bs = self.header.block_states as u64;
        let blocks: Vec<Result<Block, FormatError>> = (first / bs..end.div_ceil(bs))
            .into_par_iter()
            .map(|b| self.read_block(b))
            .collect();
        for block in blocks {
            let block = block?;
            let from = block.first.max(first);
            let to = (block.first + block.len() as u64).min(end);
            for i in from..to {
                let (j, k) = ((i - block.first) as usize, (i - first) as usize);
                values[k] = block.value(j);
                if !depth.is_empty() {
                    depth[k] = block.depth(j);
                }
            }
        }
        Ok(())
    }

    /// The first state (in index order) whose (value, depth) satisfies `want`, reading blocks
    /// in parallel groups; e.g. a witness of the layer's longest forced result.
    pub fn find_first(
        &self,
        want: impl Fn(u8, u16) -> bool + Sync,
    ) -> Result<Option<u64>, FormatError> {
        let group = (8 * rayon::current_num_threads()) as u64;
        let mut b = 0;
        while b < self.header.blocks {
            let end = (b + group).min(self.header.blocks);
            let found: Vec<Result<Option<u64>, FormatError>> = (b..end)
                .into_par_iter()
                .map(|k| {
                    let block = self.read_block(k)?;
                    Ok((0..block.len())
                        .find(|&j| want(block.value(j), block.depth(j)))
                        .map(|j| block.first + j as u64))
                })
                .collect();
            for f in found {
                if let Some(i) = f? {
                    return Ok(Some(i));
                }
            }
            b = end;
        }
        Ok(None)
    }

    /// Every value of the layer in memory, 2 bits per state (blocks decoded in parallel): what a
    /// pass over all states with random lookups needs (the classes of cc3p read three rotations
    /// of every state).
    pub fn values_plane(&self) -> Result<ValuesPlane, FormatError> {
        let states = self.header.states;
        let bs = self.header.block_states as usize;
        let mut bytes = vec![0u8; states.div_ceil(4) as usize];
        bytes.par_chunks_mut(bs / 4).enumerate().try_for_each(
            |(b, out)| -> Result<(), FormatError> {
                let block = self.read_block(b as u64)?;
                let mut packed = Vec::with_capacity(out.len());
                block.packed_values(&mut packed);
                out.copy_from_slice(&packed);
                Ok(())
            },
        )?;
        Ok(ValuesPlane { states, bytes })
    }
}

/// All values of a layer in memory, 2 bits per state (3.7 GB for the 14.8 billion states of
/// level 2 of cc3p).
pub struct ValuesPlane {
    states: u64,
    bytes: Vec<u8>,
}

impl ValuesPlane {
    /// A plane from values (0..=3) in index order.
    pub fn from_values(values: &[u8]) -> ValuesPlane {
        let mut bytes = Vec::with_capacity(values.len().div_ceil(4));
        pack_values(values, &mut bytes);
        ValuesPlane {
            states: values.len() as u64,
            bytes,
        }
    }

    /// Number of states in the plane.
    pub fn states(&self) -> u64 {
        self.states
    }

    /// The value of state `index` (< states).
    #[inline]
    pub fn get(&self, index: u64) -> u8 {
        (self.bytes[(index / 4) as usize] >> (2 * (index % 4))) & 3
    }
}

impl Lookup for LayerFile {
    fn states(&self) -> u64 {
        self.header.states
    }
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        self.get(index)
    }
    fn value(&self, index: u64) -> Result<u8, FormatError> {
        LayerFile::value(self, index)
    }
}
