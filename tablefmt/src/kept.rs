//! A finished layer kept in parts where it was computed: each worker holds the layer file of its
//! rows, and the run directory holds only `layers/NAME.kept.json`, the list of the parts (which
//! worker, which rows, the file's size and sha256, the counts) with the layer's counts and digest.
//! docs/format.md, "A layer kept on its workers".

use crate::fsio::{read_bounded_if_any, write_atomically, METADATA_CAP};
use crate::layer::{LayerFile, LayerIdentity, LayerTable, ReadAt};
use crate::table::{TableSummary, ValueCounts};
use crate::FormatError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The version of `NAME.kept.json` this build writes and reads.
pub const KEPT_FORMAT: u32 = 1;

/// One part of a kept layer: rows `first .. first + states` of the full table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptPart {
    /// The worker that holds it (`HOST:PORT`, as the run names its workers).
    pub worker: String,
    /// The first row.
    pub first: u64,
    /// Rows in the part.
    pub states: u64,
    /// The part's layer file, relative to the worker's data directory.
    pub file: String,
    /// The file's size in bytes.
    pub size: u64,
    /// sha256 (hex) of the file.
    pub sha256: String,
    /// The part's counts.
    pub counts: ValueCounts,
    /// The part's largest depth.
    pub max_depth: u16,
}

/// A finished layer kept in parts: `layers/NAME.kept.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptLayer {
    /// [`KEPT_FORMAT`].
    pub format: u32,
    /// The game the layer is of, as JSON (`run.json`'s `spec`; each part's identity record names
    /// it too). Null (left out) in lists from before 2026-12-07.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub game: serde_json::Value,
    /// The layer's name.
    pub layer: String,
    /// The parts in row order: together they hold every row once.
    pub parts: Vec<KeptPart>,
    /// The layer's counts, digest and largest depth, as a gathered table's.
    pub summary: TableSummary,
}

/// The layer name of part `k` of `layer` in its file's identity record: a part file is never
/// mistaken for the whole layer, nor for another part.
pub fn part_layer_name(layer: &str, k: usize) -> String {
    format!("{layer}.part-{k:04}")
}

/// Where the list of a kept layer's parts lives in a run's `layers/` directory.
pub fn kept_path(dir: &Path, layer: &str) -> PathBuf {
    dir.join(format!("{layer}.kept.json"))
}

impl KeptLayer {
    /// Check that the parts hold every row once, in order, and that their counts and depths add
    /// up to the layer's.
    pub fn check(&self) -> Result<(), FormatError> {
        let bad = |what: String| FormatError::Corrupt(format!("layer {}: {what}", self.layer));
        if self.format != KEPT_FORMAT {
            return Err(bad(format!(
                "kept-layer format {} (this build reads {KEPT_FORMAT})",
                self.format
            )));
        }
        let mut next = 0u64;
        let mut counts = ValueCounts::default();
        let mut max_depth = 0u16;
        for (k, part) in self.parts.iter().enumerate() {
            if part.first != next {
                return Err(bad(format!(
                    "part {k} starts at row {}, the parts before it end at {next}",
                    part.first
                )));
            }
            let sum = part.counts.win + part.counts.loss + part.counts.draw + part.counts.illegal;
            if sum != part.states {
                return Err(bad(format!(
                    "part {k} counts {sum} values for {} rows",
                    part.states
                )));
            }
            next += part.states;
            counts.win += part.counts.win;
            counts.loss += part.counts.loss;
            counts.draw += part.counts.draw;
            counts.illegal += part.counts.illegal;
            max_depth = max_depth.max(part.max_depth);
        }
        if next != self.summary.states {
            return Err(bad(format!(
                "the parts hold {next} rows of {}",
                self.summary.states
            )));
        }
        if counts != self.summary.counts || max_depth != self.summary.max_depth {
            return Err(bad(
                "the parts' counts or largest depth differ from the layer's".into(),
            ));
        }
        Ok(())
    }
}

/// Write `layers/NAME.kept.json` (checked first; atomically).
pub fn write_kept(dir: &Path, kept: &KeptLayer) -> Result<(), FormatError> {
    kept.check()?;
    let json = serde_json::to_vec_pretty(kept).expect("a kept layer serializes");
    write_atomically(&kept_path(dir, &kept.layer), &json)
}

/// Read and check `layers/NAME.kept.json`; `None` when the layer is not kept in parts.
pub fn read_kept(dir: &Path, layer: &str) -> Result<Option<KeptLayer>, FormatError> {
    let path = kept_path(dir, layer);
    let Some(bytes) = read_bounded_if_any(&path, METADATA_CAP, "a kept layer's record")? else {
        return Ok(None);
    };
    let kept: KeptLayer = serde_json::from_slice(&bytes)
        .map_err(|e| FormatError::Corrupt(format!("{}: not a kept layer ({e})", path.display())))?;
    if kept.layer != layer {
        return Err(FormatError::Corrupt(format!(
            "{} lists layer {}",
            path.display(),
            kept.layer
        )));
    }
    kept.check()?;
    Ok(Some(kept))
}

/// Where a copy of `part` goes in a run's `layers/` directory: its file name on the worker
/// (`NAME.part-KKKK.kmt`).
pub fn local_part_path(dir: &Path, part: &KeptPart) -> PathBuf {
    dir.join(Path::new(&part.file).file_name().unwrap_or_default())
}

/// The number of the worker that wrote `part` of `layer` (in its file's name), if it is one of
/// `workers`: the part's worker is where that worker is now (run.json's address, which a resume
/// on moved workers may have changed since the part was written).
pub fn part_worker(part: &KeptPart, layer: &str, workers: usize) -> Result<usize, FormatError> {
    (0..workers)
        .find(|&k| {
            part.file
                .ends_with(&format!("/{}.kmt", part_layer_name(layer, k)))
        })
        .ok_or_else(|| {
            FormatError::Corrupt(format!(
                "layer {layer}: part {} is not one of the run's {workers} workers'",
                part.file
            ))
        })
}

/// Opens a part where it is not copied here: the bytes of the part's file, read elsewhere.
pub type OpenRemotePart<'a> = &'a dyn Fn(&KeptPart) -> Result<Box<dyn ReadAt>, FormatError>;

/// The kept layer read from its parts: each from its copy in `dir` (`kingmaker collect
/// --in-parts`) if it is there, else with `remote` if given (read on its worker). Each part is
/// checked on opening (size as recorded, identity, rows; every block's crc32 as it is read).
/// `None` when a part is neither here nor to be read remotely.
pub fn open_parts(
    dir: &Path,
    kept: &KeptLayer,
    game: &serde_json::Value,
    remote: Option<OpenRemotePart>,
) -> Result<Option<LayerTable>, FormatError> {
    if !kept.game.is_null() && kept.game != *game {
        return Err(FormatError::Corrupt(format!(
            "the parts of layer {} are listed as {}, not {}: the list is another run's (or \
             run.json was edited); restore it, or build anew",
            kept.layer,
            LayerIdentity::new(kept.game.clone(), &kept.layer).describe(),
            LayerIdentity::new(game.clone(), &kept.layer).describe()
        )));
    }
    let mut files = Vec::new();
    for part in &kept.parts {
        let path = local_part_path(dir, part);
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = match std::fs::metadata(&path) {
            Ok(m) if m.len() != part.size => {
                return Err(FormatError::Corrupt(format!(
                    "{}: {} bytes, its record says {}",
                    path.display(),
                    m.len(),
                    part.size
                )))
            }
            Ok(_) => LayerFile::open(&path)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match remote {
                Some(open) => LayerFile::from_source(
                    Path::new(&format!("{}:{}", part.worker, part.file)),
                    open(part)?,
                    part.size,
                )?,
                None => return Ok(None),
            },
            Err(e) => return Err(FormatError::io(&path, e)),
        };
        file.check_identity(&LayerIdentity::new(game.clone(), &name))?;
        if !name.starts_with(&format!("{}.part-", kept.layer)) || file.states() != part.states {
            return Err(FormatError::Corrupt(format!(
                "{}: {} rows of {name}, its record says {} rows of layer {}",
                file.path().display(),
                file.states(),
                part.states,
                kept.layer
            )));
        }
        files.push(file);
    }
    let identity = LayerIdentity::new(game.clone(), &kept.layer);
    LayerTable::in_parts(identity, files).map(Some)
}

/// Whether every part of `kept` is copied into `dir`.
pub fn parts_here(dir: &Path, kept: &KeptLayer) -> bool {
    kept.parts.iter().all(|p| local_part_path(dir, p).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(worker: &str, first: u64, counts: ValueCounts, max_depth: u16) -> KeptPart {
        let states = counts.win + counts.loss + counts.draw + counts.illegal;
        KeptPart {
            worker: worker.into(),
            first,
            states,
            file: format!("run/layers/solo.part-{first}.kmt"),
            size: 100,
            sha256: "00".repeat(32),
            counts,
            max_depth,
        }
    }

    fn layer() -> KeptLayer {
        let a = ValueCounts {
            win: 3,
            loss: 2,
            draw: 1,
            illegal: 4,
        };
        let b = ValueCounts {
            win: 1,
            loss: 1,
            draw: 0,
            illegal: 0,
        };
        KeptLayer {
            format: KEPT_FORMAT,
            game: serde_json::json!({"game": "toppen"}),
            layer: "solo".into(),
            parts: vec![part("h0:1", 0, a, 5), part("h1:1", 10, b, 7)],
            summary: TableSummary {
                states: 12,
                counts: ValueCounts {
                    win: 4,
                    loss: 3,
                    draw: 1,
                    illegal: 4,
                },
                digest: "ab".repeat(32),
                max_depth: 7,
            },
        }
    }

    #[test]
    fn a_kept_layer_round_trips_and_every_inconsistency_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let kept = layer();
        write_kept(dir.path(), &kept).unwrap();
        assert_eq!(read_kept(dir.path(), "solo").unwrap(), Some(kept.clone()));
        assert_eq!(read_kept(dir.path(), "other").unwrap(), None);
        let mut gap = kept.clone();
        gap.parts[1].first = 11;
        let mut short = kept.clone();
        short.summary.states = 13;
        let mut counts = kept.clone();
        counts.summary.counts.win = 5;
        let mut depth = kept.clone();
        depth.summary.max_depth = 6;
        let mut version = kept.clone();
        version.format = 2;
        for (bad, why) in [
            (gap, "starts at row 11"),
            (short, "hold 12 rows of 13"),
            (counts, "counts"),
            (depth, "largest depth"),
            (version, "format 2"),
        ] {
            let err = write_kept(dir.path(), &bad).unwrap_err().to_string();
            assert!(err.contains(why), "{err}");
        }
        std::fs::write(kept_path(dir.path(), "solo"), b"{").unwrap();
        assert!(read_kept(dir.path(), "solo").is_err());
    }

    /// The list names the game of its layer: opened for another game it is refused, naming
    /// both, before any part is opened; a list from before (no game) still reads.
    #[test]
    fn a_list_of_another_games_parts_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let kept = layer();
        write_kept(dir.path(), &kept).unwrap();
        let text = std::fs::read_to_string(kept_path(dir.path(), "solo")).unwrap();
        assert!(text.contains(r#""game": "toppen""#), "{text}");
        let back = read_kept(dir.path(), "solo").unwrap().unwrap();
        let other = serde_json::json!({"game": "connect4", "board": "5x4"});
        let err = match open_parts(dir.path(), &back, &other, None) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("a list of toppen opened as connect4"),
        };
        assert!(
            err.contains("toppen") && err.contains("connect4") && err.contains("another run"),
            "{err}"
        );
        // The parts are not here: the list of the run's own game gets as far as that.
        let own = serde_json::json!({"game": "toppen"});
        assert!(matches!(
            open_parts(dir.path(), &back, &own, None),
            Ok(None)
        ));
        let mut old: serde_json::Value = serde_json::from_str(&text).unwrap();
        old.as_object_mut().unwrap().remove("game");
        let old: KeptLayer = serde_json::from_value(old).unwrap();
        assert!(old.game.is_null());
    }
}
