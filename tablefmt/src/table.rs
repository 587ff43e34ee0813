//! Finished layers in a run directory: `layers/NAME.kmt`, written as the shards are gathered.
//! 1. It is the layer-file format a release ships, so every reader reads one format; `pack`
//!    recompresses it harder and adds the values-only file.
//! 2. The digest is the sha256 of the value codes in index order, whatever the file's encoding
//!    (docs/format.md, "Finished layers in a run directory").

use crate::layer::depth::DepthCode;
use crate::layer::{
    LayerFile, LayerIdentity, LayerWriter, DEFAULT_BLOCK_STATES, ENCODING_PACKED, LAYER_EXT,
};
use crate::value::{DRAW, ILLEGAL, LOSS, MAX_CODE, WIN};
use crate::FormatError;
use std::path::{Path, PathBuf};

/// zstd level of a run's finished layers: fast to write while the workers wait (level 3 took
/// a fifth of gathering a level-2 layer); `pack` recompresses at its own level.
pub const RUN_ZSTD_LEVEL: i32 = 1;

/// Win/loss/draw/illegal counts of one layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ValueCounts {
    /// States valued W (the coalition forces its objective).
    pub win: u64,
    /// States valued L.
    pub loss: u64,
    /// States valued D.
    pub draw: u64,
    /// Indices that are not legal states (code 0).
    pub illegal: u64,
}

impl ValueCounts {
    /// Count `values`, one value code per state.
    pub fn add(&mut self, values: &[u8]) {
        // Four compare-and-add counters rather than a histogram: they vectorize, while
        // incrementing `by[v]` waits on the previous increment of the same slot (runs of one
        // value are the rule in a table).
        let mut by = [0u64; 4];
        for chunk in values.chunks(1 << 12) {
            let mut small = [0u32; 4];
            for &v in chunk {
                for (code, count) in small.iter_mut().enumerate() {
                    *count += (v & MAX_CODE == code as u8) as u32;
                }
            }
            for (total, count) in by.iter_mut().zip(small) {
                *total += count as u64;
            }
        }
        self.illegal += by[ILLEGAL as usize];
        self.win += by[WIN as usize];
        self.loss += by[LOSS as usize];
        self.draw += by[DRAW as usize];
    }
}

/// What a finished table holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TableSummary {
    /// Number of states (the layer's index space).
    pub states: u64,
    /// How many states have each value.
    pub counts: ValueCounts,
    /// sha256 (hex) of the values in index order, one byte per state.
    pub digest: String,
    /// The largest depth in the table.
    pub max_depth: u16,
}

/// The file of a finished layer in a run's `layers/` directory.
pub fn table_path(dir: &Path, layer: &str) -> PathBuf {
    dir.join(format!("{layer}.{LAYER_EXT}"))
}

/// Streams one layer's values and depths, in index order, into `dir/NAME.kmt`.
pub struct TableWriter {
    writer: LayerWriter,
    states: u64,
}

impl TableWriter {
    /// Start `dir/NAME.kmt` for the layer `identity` (its name gives the file's).
    pub fn create(
        dir: &Path,
        identity: &LayerIdentity,
        states: u64,
    ) -> Result<TableWriter, FormatError> {
        // Plain depths: the writer sees the layer once, so it cannot look for a depth code first.
        let writer = LayerWriter::create(
            &table_path(dir, &identity.layer),
            identity,
            states,
            DEFAULT_BLOCK_STATES,
            ENCODING_PACKED,
            DepthCode::plain(),
            RUN_ZSTD_LEVEL,
        )?;
        Ok(TableWriter { writer, states })
    }

    /// Append the next run of states.
    pub fn append(&mut self, values: &[u8], depth: &[u16]) -> Result<(), FormatError> {
        self.writer.append(values, depth)
    }

    /// As [`TableWriter::finish`], with the file's size and sha256.
    pub fn finish_written(self) -> Result<crate::layer::WrittenLayer, FormatError> {
        self.writer.finish()
    }

    /// Write the last blocks, fsync, move the file into place; return the counts and digest.
    pub fn finish(self) -> Result<TableSummary, FormatError> {
        let written = self.writer.finish()?;
        Ok(TableSummary {
            states: self.states,
            counts: written.counts,
            digest: written.digest,
            max_depth: written.max_depth,
        })
    }
}

/// Open the finished layer `identity` of a run's `layers/` directory, refusing a file that does
/// not say it holds that layer of that game.
pub fn open_table(dir: &Path, identity: &LayerIdentity) -> Result<LayerFile, FormatError> {
    let layer = &identity.layer;
    let path = table_path(dir, layer);
    if !path.exists() && dir.join(format!("{layer}.values")).exists() {
        return Err(FormatError::Corrupt(format!(
            "{}: {layer}.values and {layer}.depth are the one-byte tables of an older kingmaker \
             (before layer files in run directories); rebuild the run, or pack it with that version",
            dir.display()
        )));
    }
    LayerFile::open_as(&path, identity)
}

/// Counts, digest and max depth of a finished layer, read back from its file or parts (every
/// block checked): what `checkpoint.json` records for it, for a run whose `checkpoint.json` was
/// lost.
pub fn read_summary(file: &crate::layer::LayerTable) -> Result<TableSummary, FormatError> {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    let mut counts = ValueCounts::default();
    let mut max_depth = 0u16;
    file.for_each_group(|values, depth| -> Result<(), FormatError> {
        hasher.update(values);
        counts.add(values);
        max_depth = depth.iter().copied().fold(max_depth, u16::max);
        Ok(())
    })?;
    Ok(TableSummary {
        states: file.states(),
        counts,
        digest: hex::encode(hasher.finalize()),
        max_depth,
    })
}
