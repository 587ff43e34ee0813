//! Reading a layer file: the header, identity and index checked on opening, every block checked
//! against its crc32 before it is decompressed, recently used blocks kept in an LRU cache.

use super::block::max_payload;
use super::index::{parse_index, FileLen};
use super::{
    Block, BlockEntry, LayerHeader, LayerIdentity, ValuesPlane, ENCODING_PACKED, HEADER_LEN,
};
use crate::fsio::crc32;
use crate::{FormatError, Lookup};
use lru::LruCache;
use rayon::prelude::*;
use std::fs::File;
use std::num::NonZeroUsize;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Blocks a reader keeps decompressed. A cc3p position with all its moves reads each layer file
/// about three times per state (the state and its two rotations), some 70 blocks for 22 moves at
/// level 2: 256 keep a few positions warm for `serve` (at most 256 blocks' payloads, under 50 MB
/// per file).
pub const DEFAULT_CACHE_BLOCKS: usize = 256;

/// Where a layer file's bytes are read from: a file here, or a copy elsewhere (a part kept on
/// the worker that wrote it, read over the network).
pub trait ReadAt: Send + Sync {
    /// Fill `buf` with the bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl ReadAt for File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }
}

/// Random access to one layer file. Opening checks the header and the block index; every block
/// read is checked against its crc32 before it is decompressed.
pub struct LayerFile {
    path: PathBuf,
    name: String,
    file: Box<dyn ReadAt>,
    header: LayerHeader,
    /// What the file says it holds (`None` in a version-1 file, which does not say).
    identity: Option<LayerIdentity>,
    index: Vec<BlockEntry>,
    /// Recently used blocks, by block number.
    cache: Mutex<LruCache<u64, Arc<Block>>>,
}

impl LayerFile {
    /// Open a layer file and check its header, identity record and block index.
    pub fn open(path: &Path) -> Result<LayerFile, FormatError> {
        let name = path.display().to_string();
        // A regular file only: a FIFO in its place would block the first read forever.
        let file = crate::fsio::open_regular(path).map_err(|e| match e {
            FormatError::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound => {
                FormatError::Corrupt(format!("{name}: missing"))
            }
            e => e,
        })?;
        let file_len = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
        LayerFile::read_from(path, Box::new(file), FileLen::Actual(file_len))
    }

    /// Open the layer file that `file` reads elsewhere (`path` names it in messages), whose size
    /// is recorded as `file_len` bytes, checked as [`LayerFile::open`] checks a file here.
    pub fn from_source(
        path: &Path,
        file: Box<dyn ReadAt>,
        file_len: u64,
    ) -> Result<LayerFile, FormatError> {
        LayerFile::read_from(path, file, FileLen::Recorded(file_len))
    }

    fn read_from(
        path: &Path,
        file: Box<dyn ReadAt>,
        len: FileLen,
    ) -> Result<LayerFile, FormatError> {
        let name = path.display().to_string();
        let file_len = len.bytes();
        let mut h = vec![0u8; HEADER_LEN.min(file_len) as usize];
        file.read_exact_at(&mut h, 0)
            .map_err(|e| FormatError::io(path, e))?;
        let header = LayerHeader::parse(&h, &name)?;
        if file_len < header.data_offset() {
            let size = match len {
                FileLen::Actual(_) => "truncated: the file has",
                FileLen::Recorded(_) => "its recorded size is",
            };
            return Err(FormatError::Corrupt(format!(
                "{name}: {size} {file_len} bytes, shorter than its header and block index ({} bytes)",
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
        let index = parse_index(&idx, &header, len, &name)?;
        Ok(LayerFile {
            path: path.to_path_buf(),
            name,
            file,
            header,
            identity,
            index,
            cache: Mutex::new(LruCache::new(
                NonZeroUsize::new(DEFAULT_CACHE_BLOCKS).expect("a positive constant"),
            )),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's path as its messages name it.
    pub(super) fn name(&self) -> &str {
        &self.name
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
        c.resize(NonZeroUsize::new(blocks).unwrap_or(NonZeroUsize::MIN));
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
        let cached = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&b)
            .cloned();
        if let Some(block) = cached {
            return Ok(block);
        }
        // Read outside the lock: other threads' hits need not wait for this read.
        let block = Arc::new(self.read_block(b)?);
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .put(b, block.clone());
        Ok(block)
    }

    /// Whether the file holds depths ([`ENCODING_PACKED`]) or values alone.
    pub fn has_depths(&self) -> bool {
        self.header.encoding == ENCODING_PACKED
    }

    /// The block of `index` and the state's place in it.
    fn locate(&self, index: u64) -> Result<(Arc<Block>, usize), FormatError> {
        check_index(&self.name, index, self.header.states)?;
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
        let end = states_asked(&self.name, first, values, depth, self.header.states)?;
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

    /// Every state's value and depth in index order, handed to `f` a group of 2²² states at a
    /// time (the blocks of a group decoded in parallel): a pass over the whole layer in bounded
    /// memory.
    pub fn for_each_group<E: From<FormatError>>(
        &self,
        f: impl FnMut(&[u8], &[u16]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.for_each_group_of(1 << 22, f)
    }

    /// [`LayerFile::for_each_group`] in groups of at most `group` states (3 bytes each in
    /// memory): for a reader with a small memory budget.
    pub fn for_each_group_of<E: From<FormatError>>(
        &self,
        group: u64,
        mut f: impl FnMut(&[u8], &[u16]) -> Result<(), E>,
    ) -> Result<(), E> {
        let group = group.max(1);
        let (mut values, mut depth) = (Vec::new(), Vec::new());
        let mut first = 0;
        while first < self.states() {
            let n = group.min(self.states() - first) as usize;
            values.resize(n, 0);
            depth.resize(n, 0);
            self.read_states(first, &mut values, &mut depth)?;
            f(&values, &depth)?;
            first += n as u64;
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
        Ok(ValuesPlane::from_packed(states, bytes))
    }
}

/// Refuse `index` past the end of a layer of `states` states, the file or table `name`.
pub(super) fn check_index(name: &str, index: u64, states: u64) -> Result<(), FormatError> {
    if index >= states {
        return Err(FormatError::Corrupt(format!(
            "{name}: index {index} out of range (the layer has {states} states)"
        )));
    }
    Ok(())
}

/// The end of the states `first .. first + values.len()` asked of a layer of `states` states
/// (the file or table `name`), or why they cannot be read: past the layer's end, or depths asked
/// for but not one for each value. The check of every `read_states`, a file's or a table's.
pub(super) fn states_asked(
    name: &str,
    first: u64,
    values: &[u8],
    depth: &[u16],
    states: u64,
) -> Result<u64, FormatError> {
    let end = first.saturating_add(values.len() as u64);
    if end > states || (!depth.is_empty() && depth.len() != values.len()) {
        return Err(FormatError::Corrupt(format!(
            "{name}: states {first}..{end} asked of a layer of {states} states"
        )));
    }
    Ok(end)
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
