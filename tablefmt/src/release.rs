//! Packed releases: what the project publishes (docs/format.md describes every byte).
//!
//! A release is a directory:
//! ```text
//! manifest.json     game, layers, counts, digests, size and sha256 of every file, provenance
//! manifest.sha256   "<sha256 of manifest.json>  manifest.json\n" (covers the manifest)
//! <layer>.kmt       one file per layer: header, block index, zstd-compressed blocks
//! ```
//! A layer file holds the values (2 bits per state) and depths of one layer, cut into blocks of
//! `block_states` states; each block is one zstd frame whose crc32 sits in the block index, so a
//! lookup reads and decompresses one block. The header and the index carry their own crc32, and
//! the blocks are contiguous up to the end of the file, so every byte of a layer file is covered
//! by a checksum even before the manifest's sha256 is consulted.
//!
//! - [`manifest`]: the manifest, its checksum file and file-name rules.
//! - [`verify`]: the byte-level check of a whole release (`kingmaker verify`).

pub mod depth;
pub mod manifest;
pub mod verify;

use crate::table::ValueCounts;
use crate::{FormatError, Lookup};
use depth::{DepthCode, DepthCodeFinder, DEPTH_CODE_LEN};
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// First eight bytes of a layer file.
pub const LAYER_MAGIC: [u8; 8] = *b"KMLAYER\0";
/// Version of the layer file layout (and of the release format as a whole).
pub const FORMAT_VERSION: u32 = 1;
/// Size of the fixed header.
pub const HEADER_LEN: u64 = 96;
/// Offset of the header's crc32 (it covers bytes `0..CRC_AT`).
const CRC_AT: usize = 92;
/// Size of one block index entry: offset u64, length u32, crc32 u32.
pub const INDEX_ENTRY_LEN: u64 = 16;
/// Value encoding 1: a width byte, then one byte per state (value | depth code << 2) when every
/// depth code of the block is below 64, else a value plane and two depth-code planes (see
/// docs/format.md). The only encoding so far.
pub const ENCODING_PACKED: u32 = 1;
/// Default states per block: 64 Ki states, 16 KiB of packed values.
pub const DEFAULT_BLOCK_STATES: u32 = 1 << 16;
/// Largest block a reader accepts (bounds the memory one lookup may need).
pub const MAX_BLOCK_STATES: u32 = 1 << 24;
/// Largest state count a reader accepts (keeps offsets far from overflow).
pub const MAX_STATES: u64 = 1 << 56;
/// Default zstd level of `pack`.
pub const DEFAULT_ZSTD_LEVEL: i32 = 15;
/// File extension of layer files.
pub const LAYER_EXT: &str = "kmt";

/// crc32 (IEEE, as zlib and crc32fast compute it).
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// The file name of a layer in a release.
pub fn layer_file_name(layer: &str) -> String {
    format!("{layer}.{LAYER_EXT}")
}

/// The fixed 96-byte header of a layer file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayerHeader {
    pub version: u32,
    pub states: u64,
    pub block_states: u32,
    pub encoding: u32,
    pub blocks: u64,
    pub index_offset: u64,
    pub index_len: u64,
    pub max_depth: u16,
    /// How depths are stored (see [`depth`]).
    pub depth_code: DepthCode,
}

impl LayerHeader {
    /// The header of a layer of `states` states cut into blocks of `block_states`.
    pub fn new(
        states: u64,
        block_states: u32,
        max_depth: u16,
        depth_code: DepthCode,
    ) -> LayerHeader {
        let blocks = states.div_ceil(block_states as u64);
        LayerHeader {
            version: FORMAT_VERSION,
            states,
            block_states,
            encoding: ENCODING_PACKED,
            blocks,
            index_offset: HEADER_LEN,
            index_len: blocks * INDEX_ENTRY_LEN + 4,
            max_depth,
            depth_code,
        }
    }

    /// Where the first block starts.
    pub fn data_offset(&self) -> u64 {
        self.index_offset + self.index_len
    }

    /// The states `[first, end)` of block `b`.
    pub fn block_range(&self, b: u64) -> (u64, u64) {
        let first = b * self.block_states as u64;
        (first, (first + self.block_states as u64).min(self.states))
    }

    pub fn to_bytes(&self) -> [u8; HEADER_LEN as usize] {
        let mut h = [0u8; HEADER_LEN as usize];
        h[0..8].copy_from_slice(&LAYER_MAGIC);
        h[8..12].copy_from_slice(&self.version.to_le_bytes());
        h[12..16].copy_from_slice(&(HEADER_LEN as u32).to_le_bytes());
        h[16..24].copy_from_slice(&self.states.to_le_bytes());
        h[24..28].copy_from_slice(&self.block_states.to_le_bytes());
        h[28..32].copy_from_slice(&self.encoding.to_le_bytes());
        h[32..40].copy_from_slice(&self.blocks.to_le_bytes());
        h[40..48].copy_from_slice(&self.index_offset.to_le_bytes());
        h[48..56].copy_from_slice(&self.index_len.to_le_bytes());
        h[56..58].copy_from_slice(&self.max_depth.to_le_bytes());
        h[58..58 + DEPTH_CODE_LEN].copy_from_slice(&self.depth_code.to_bytes());
        // Bytes 58..92 hold the depth code; the crc32 at 92 covers everything before it.
        let crc = crc32(&h[0..CRC_AT]);
        h[CRC_AT..CRC_AT + 4].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Parse and check a header; `name` (the file) goes into every error message.
    pub fn parse(h: &[u8], name: &str) -> Result<LayerHeader, FormatError> {
        let bad = |what: String| FormatError::Corrupt(format!("{name}: {what}"));
        if h.len() < HEADER_LEN as usize {
            return Err(bad(format!(
                "{} bytes, shorter than the {HEADER_LEN}-byte header (truncated file)",
                h.len()
            )));
        }
        if h[0..8] != LAYER_MAGIC {
            return Err(bad(
                "not a Kingmaker layer file (bad magic in the header)".into()
            ));
        }
        let u32_at = |o: usize| u32::from_le_bytes(h[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        let stored_crc = u32_at(CRC_AT);
        if crc32(&h[0..CRC_AT]) != stored_crc {
            return Err(bad(
                "header crc32 mismatch (the header was altered or damaged)".into(),
            ));
        }
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(bad(format!(
                "format version {version}; this kingmaker reads version {FORMAT_VERSION} (upgrade kingmaker)"
            )));
        }
        let header = LayerHeader {
            version,
            states: u64_at(16),
            block_states: u32_at(24),
            encoding: u32_at(28),
            blocks: u64_at(32),
            index_offset: u64_at(40),
            index_len: u64_at(48),
            max_depth: u16::from_le_bytes([h[56], h[57]]),
            depth_code: DepthCode::parse(&h[58..58 + DEPTH_CODE_LEN], name)?,
        };
        if u32_at(12) as u64 != HEADER_LEN {
            return Err(bad("unexpected header length".into()));
        }
        if header.encoding != ENCODING_PACKED {
            return Err(bad(format!("unknown value encoding {}", header.encoding)));
        }
        if header.block_states == 0
            || !header.block_states.is_multiple_of(4)
            || header.block_states > MAX_BLOCK_STATES
        {
            return Err(bad(format!(
                "block size {} states (must be a multiple of 4, at most {MAX_BLOCK_STATES})",
                header.block_states
            )));
        }
        if header.states > MAX_STATES {
            return Err(bad(format!(
                "implausible state count {} (more than 2^56)",
                header.states
            )));
        }
        let want = LayerHeader::new(
            header.states,
            header.block_states,
            header.max_depth,
            header.depth_code,
        );
        if header != want {
            return Err(bad(format!(
                "inconsistent header: {} states in blocks of {} need {} blocks and a {}-byte index at \
                 offset {HEADER_LEN}, the header says {} blocks, {} bytes at {}",
                header.states,
                header.block_states,
                want.blocks,
                want.index_len,
                header.blocks,
                header.index_len,
                header.index_offset
            )));
        }
        Ok(header)
    }
}

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

/// Largest uncompressed payload of a block of `n` states.
fn max_payload(n: usize) -> usize {
    1 + 3 * n
}

/// Width byte: one byte per state, `value | code << 2`.
const WIDTH_BYTE: u8 = 1;
/// Width byte: three planes of `n` bytes: values, depth codes' low bytes, their high bytes.
const WIDTH_PLANES: u8 = 3;

/// Encode one block's payload (before compression). `first` is the index of its first state.
fn encode_payload(first: u64, values: &[u8], depth: &[u16], code: &DepthCode) -> Vec<u8> {
    let n = values.len();
    let codes: Vec<u16> = (0..n)
        .map(|j| code.encode(first + j as u64, values[j], depth[j]))
        .collect();
    let mut out = Vec::with_capacity(max_payload(n));
    if codes.iter().all(|&c| c < 64) {
        out.push(WIDTH_BYTE);
        out.extend(
            values
                .iter()
                .zip(&codes)
                .map(|(&v, &c)| (v & 3) | (c as u8) << 2),
        );
    } else {
        out.push(WIDTH_PLANES);
        out.extend_from_slice(values);
        out.extend(codes.iter().map(|&c| c as u8));
        out.extend(codes.iter().map(|&c| (c >> 8) as u8));
    }
    out
}

/// One decompressed block: random access to its states' values and depths.
pub struct Block {
    /// Index of the block's first state.
    pub first: u64,
    n: usize,
    width: u8,
    code: DepthCode,
    payload: Vec<u8>,
}

impl Block {
    fn decode(first: u64, n: usize, code: DepthCode, payload: Vec<u8>) -> Result<Block, String> {
        let width = *payload.first().ok_or("empty payload")?;
        let want = match width {
            WIDTH_BYTE => 1 + n,
            WIDTH_PLANES => 1 + 3 * n,
            w => {
                return Err(format!(
                    "width byte {w} (must be {WIDTH_BYTE} or {WIDTH_PLANES})"
                ))
            }
        };
        if payload.len() != want {
            return Err(format!(
                "payload of {} bytes, {want} expected",
                payload.len()
            ));
        }
        if width == WIDTH_PLANES && payload[1..1 + n].iter().any(|&v| v > 3) {
            return Err("a value byte above 3".into());
        }
        Ok(Block {
            first,
            n,
            width,
            code,
            payload,
        })
    }

    /// Number of states in the block.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Value of the block's `j`-th state (0 illegal, 1 W, 2 L, 3 D).
    #[inline]
    pub fn value(&self, j: usize) -> u8 {
        self.payload[1 + j] & 3
    }

    /// Depth of the block's `j`-th state.
    #[inline]
    pub fn depth(&self, j: usize) -> u16 {
        let (v, c) = if self.width == WIDTH_BYTE {
            let b = self.payload[1 + j];
            (b & 3, (b >> 2) as u16)
        } else {
            let n = self.n;
            (
                self.payload[1 + j],
                self.payload[1 + n + j] as u16 | (self.payload[1 + 2 * n + j] as u16) << 8,
            )
        };
        self.code.decode(self.first + j as u64, v, c)
    }

    #[inline]
    pub fn get(&self, j: usize) -> (u8, u16) {
        (self.value(j), self.depth(j))
    }
}

/// How `pack` compresses.
#[derive(Clone, Copy, Debug)]
pub struct PackOptions {
    pub block_states: u32,
    pub zstd_level: i32,
}

impl Default for PackOptions {
    fn default() -> PackOptions {
        PackOptions {
            block_states: DEFAULT_BLOCK_STATES,
            zstd_level: DEFAULT_ZSTD_LEVEL,
        }
    }
}

/// What writing a layer file produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenLayer {
    pub size: u64,
    /// sha256 (hex) of the whole file.
    pub sha256: String,
    pub counts: ValueCounts,
    /// sha256 (hex) of the values, one byte per state, in index order: the run's layer digest.
    pub digest: String,
    pub max_depth: u16,
    pub blocks: u64,
    /// The depth code's modulus (1: depths stored as they are).
    pub depth_modulus: u8,
}

/// Write one layer file at `path` (which must not exist). `fill(first, values, depth)` supplies
/// the states `first .. first + values.len()` in index order (values 0..=3).
pub fn write_layer(
    path: &Path,
    states: u64,
    opts: &PackOptions,
    mut fill: impl FnMut(u64, &mut [u8], &mut [u16]) -> Result<(), FormatError>,
) -> Result<WrittenLayer, FormatError> {
    let bs = opts.block_states;
    if bs == 0 || !bs.is_multiple_of(4) || bs > MAX_BLOCK_STATES {
        return Err(FormatError::Corrupt(format!(
            "block size {bs} states: must be a positive multiple of 4, at most {MAX_BLOCK_STATES}"
        )));
    }
    let io = |e| FormatError::io(path, e);
    // States are read a group of blocks at a time (the blocks of a group compress in parallel).
    let group_states = (4 * rayon::current_num_threads()).max(4) as u64 * bs as u64;
    let mut values = Vec::new();
    let mut depth = Vec::new();
    let mut read =
        |first: u64, values: &mut Vec<u8>, depth: &mut Vec<u16>| -> Result<(), FormatError> {
            let n = (group_states.min(states - first)) as usize;
            values.resize(n, 0);
            depth.resize(n, 0);
            fill(first, values, depth)?;
            if let Some(v) = values.iter().find(|&&v| v > 3) {
                return Err(FormatError::Corrupt(format!(
                    "value byte {v} in the source table (values are 0..=3)"
                )));
            }
            Ok(())
        };
    // Pass 1: counts, digest, max depth, and the depth code.
    let mut hasher = Sha256::new();
    let mut counts = ValueCounts::default();
    let mut max_depth = 0u16;
    let mut finder = DepthCodeFinder::default();
    let mut first = 0;
    while first < states {
        read(first, &mut values, &mut depth)?;
        hasher.update(&values);
        counts.add(&values);
        max_depth = depth.iter().copied().fold(max_depth, u16::max);
        finder.add(first, &values, &depth);
        first += values.len() as u64;
    }
    let code = finder.finish();
    let header = LayerHeader::new(states, bs, max_depth, code);
    // Pass 2: the blocks.
    let mut file = File::options()
        .write(true)
        .read(true)
        .create_new(true)
        .open(path)
        .map_err(io)?;
    // Header and index are written last; reserve their space.
    file.write_all(&vec![0u8; header.data_offset() as usize])
        .map_err(io)?;
    let mut entries = Vec::with_capacity(header.blocks as usize);
    let mut offset = header.data_offset();
    let mut first = 0;
    while first < states {
        read(first, &mut values, &mut depth)?;
        let changed = (0..values.len()).find(|&j| {
            let i = first + j as u64;
            !code.fits(i, values[j], depth[j]) || depth[j] > max_depth
        });
        if let Some(j) = changed {
            return Err(FormatError::Corrupt(format!(
                "state {} of the source changed while it was being packed",
                first + j as u64
            )));
        }
        let frames: Vec<Result<Vec<u8>, std::io::Error>> = values
            .par_chunks(bs as usize)
            .zip(depth.par_chunks(bs as usize))
            .enumerate()
            .map(|(k, (v, d))| {
                let block_first = first + k as u64 * bs as u64;
                zstd::bulk::compress(&encode_payload(block_first, v, d, &code), opts.zstd_level)
            })
            .collect();
        for frame in frames {
            let frame = frame.map_err(io)?;
            file.write_all(&frame).map_err(io)?;
            entries.push(BlockEntry {
                offset,
                len: frame.len() as u32,
                crc: crc32(&frame),
            });
            offset += frame.len() as u64;
        }
        first += values.len() as u64;
    }
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.write_all(&header.to_bytes()).map_err(io)?;
    file.write_all(&index_bytes(&entries)).map_err(io)?;
    file.sync_all().map_err(io)?;
    drop(file);
    let (size, sha256) = file_sha256(path)?;
    Ok(WrittenLayer {
        size,
        sha256,
        counts,
        digest: hex::encode(hasher.finalize()),
        max_depth,
        blocks: header.blocks,
        depth_modulus: code.modulus,
    })
}

/// Size and sha256 (hex) of a file, read in 1 MiB pieces.
pub fn file_sha256(path: &Path) -> Result<(u64, String), FormatError> {
    let mut f = File::open(path).map_err(|e| FormatError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| FormatError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, hex::encode(hasher.finalize())))
}

/// Recently used blocks of one layer file, most recent last.
struct BlockCache {
    capacity: usize,
    blocks: Vec<(u64, Arc<Block>)>,
}

/// Blocks a reader keeps decompressed.
pub const DEFAULT_CACHE_BLOCKS: usize = 32;

/// Random access to one layer file. Opening checks the header and the block index; every block
/// read is checked against its crc32 before it is decompressed.
pub struct LayerFile {
    path: PathBuf,
    name: String,
    file: File,
    header: LayerHeader,
    index: Vec<BlockEntry>,
    cache: Mutex<BlockCache>,
}

impl LayerFile {
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
        let mut idx = vec![0u8; header.index_len as usize];
        file.read_exact_at(&mut idx, header.index_offset)
            .map_err(|e| FormatError::io(path, e))?;
        let index = parse_index(&idx, &header, file_len, &name)?;
        Ok(LayerFile {
            path: path.to_path_buf(),
            name,
            file,
            header,
            index,
            cache: Mutex::new(BlockCache {
                capacity: DEFAULT_CACHE_BLOCKS,
                blocks: Vec::new(),
            }),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn header(&self) -> &LayerHeader {
        &self.header
    }

    pub fn index(&self) -> &[BlockEntry] {
        &self.index
    }

    pub fn states(&self) -> u64 {
        self.header.states
    }

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
        let payload = zstd::bulk::decompress(&frame, max_payload(n))
            .map_err(|e| bad(format!("zstd: {e}")))?;
        Block::decode(first, n, self.header.depth_code, payload).map_err(bad)
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

    /// (value, depth) of one state.
    pub fn get(&self, index: u64) -> Result<(u8, u16), FormatError> {
        if index >= self.header.states {
            return Err(FormatError::Corrupt(format!(
                "{}: index {index} out of range (the layer has {} states)",
                self.name, self.header.states
            )));
        }
        let bs = self.header.block_states as u64;
        let block = self.block(index / bs)?;
        Ok(block.get((index % bs) as usize))
    }
}

impl Lookup for LayerFile {
    fn states(&self) -> u64 {
        self.header.states
    }
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        self.get(index)
    }
}

#[cfg(test)]
mod tests;
