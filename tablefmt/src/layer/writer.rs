//! Writing a layer file: states streamed in index order, blocks compressed in parallel, the
//! header and the block index written last.

use super::block::encode_payload;
use super::depth::DepthCode;
use super::index::index_bytes;
use super::*;
use crate::table::ValueCounts;
use crate::value::MAX_CODE;
use crate::FormatError;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

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
