//! Solved layer tables in a run directory: `<name>.values` (one byte per state: 0 illegal, 1 W,
//! 2 L, 3 D) and `<name>.depth` (a little-endian u16 per state: the wave that decided it, 0 for
//! terminal, illegal and drawn states). Both are plain arrays so a reader can map them and look up
//! any index directly; the layer's digest is the sha256 of the values file.

use crate::FormatError;
use memmap2::Mmap;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Win/loss/draw/illegal counts of one layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ValueCounts {
    pub win: u64,
    pub loss: u64,
    pub draw: u64,
    pub illegal: u64,
}

impl ValueCounts {
    pub fn add(&mut self, values: &[u8]) {
        let mut by = [0u64; 4];
        for &v in values {
            by[(v & 3) as usize] += 1;
        }
        self.illegal += by[0];
        self.win += by[1];
        self.loss += by[2];
        self.draw += by[3];
    }
}

pub fn values_path(dir: &Path, layer: &str) -> PathBuf {
    dir.join(format!("{layer}.values"))
}

pub fn depth_path(dir: &Path, layer: &str) -> PathBuf {
    dir.join(format!("{layer}.depth"))
}

/// Streams one layer's values and depths, in index order, into `dir`.
pub struct TableWriter {
    values: BufWriter<File>,
    depth: BufWriter<File>,
    hasher: Sha256,
    counts: ValueCounts,
    written: u64,
    paths: [PathBuf; 2],
}

/// What a finished table holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TableSummary {
    pub states: u64,
    pub counts: ValueCounts,
    /// sha256 (hex) of the values in index order, one byte per state.
    pub digest: String,
    pub max_depth: u16,
}

impl TableWriter {
    pub fn create(dir: &Path, layer: &str) -> Result<TableWriter, FormatError> {
        let paths = [values_path(dir, layer), depth_path(dir, layer)];
        let open = |p: &PathBuf| {
            File::create(p)
                .map(BufWriter::new)
                .map_err(|e| FormatError::io(p, e))
        };
        Ok(TableWriter {
            values: open(&paths[0])?,
            depth: open(&paths[1])?,
            hasher: Sha256::new(),
            counts: ValueCounts::default(),
            written: 0,
            paths,
        })
    }

    /// Append the next run of states.
    pub fn append(
        &mut self,
        values: &[u8],
        depth: &[u16],
        max_depth: &mut u16,
    ) -> Result<(), FormatError> {
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        self.values
            .write_all(values)
            .map_err(|e| FormatError::io(&self.paths[0], e))?;
        let bytes: Vec<u8> = depth.iter().flat_map(|d| d.to_le_bytes()).collect();
        self.depth
            .write_all(&bytes)
            .map_err(|e| FormatError::io(&self.paths[1], e))?;
        *max_depth = depth.iter().copied().fold(*max_depth, u16::max);
        self.hasher.update(values);
        self.counts.add(values);
        self.written += values.len() as u64;
        Ok(())
    }

    /// Flush and fsync both files; return the counts and digest.
    pub fn finish(mut self, max_depth: u16) -> Result<TableSummary, FormatError> {
        for (w, p) in [
            (&mut self.values, &self.paths[0]),
            (&mut self.depth, &self.paths[1]),
        ] {
            w.flush().map_err(|e| FormatError::io(p, e))?;
            w.get_ref().sync_all().map_err(|e| FormatError::io(p, e))?;
        }
        Ok(TableSummary {
            states: self.written,
            counts: self.counts,
            digest: hex::encode(self.hasher.finalize()),
            max_depth,
        })
    }
}

/// Random access to one finished layer (both files mapped read-only).
pub struct TableReader {
    values: Mmap,
    depth: Mmap,
}

impl TableReader {
    pub fn open(dir: &Path, layer: &str) -> Result<TableReader, FormatError> {
        let map = |p: PathBuf| -> Result<Mmap, FormatError> {
            let f = File::open(&p).map_err(|e| FormatError::io(&p, e))?;
            // SAFETY: tables are written once and never modified afterwards.
            unsafe { Mmap::map(&f) }.map_err(|e| FormatError::io(&p, e))
        };
        let reader = TableReader {
            values: map(values_path(dir, layer))?,
            depth: map(depth_path(dir, layer))?,
        };
        if reader.depth.len() != 2 * reader.values.len() {
            return Err(FormatError::Corrupt(format!(
                "layer {layer} in {}: {} values but {} depth bytes",
                dir.display(),
                reader.values.len(),
                reader.depth.len()
            )));
        }
        Ok(reader)
    }

    pub fn states(&self) -> u64 {
        self.values.len() as u64
    }

    /// (value, depth) of one state.
    pub fn get(&self, index: u64) -> (u8, u16) {
        let i = index as usize;
        (
            self.values[i],
            u16::from_le_bytes([self.depth[2 * i], self.depth[2 * i + 1]]),
        )
    }

    pub fn values(&self) -> &[u8] {
        &self.values
    }
}
