//! `parts.json`: which of a release's files a partial copy holds (`kingmaker fetch --layers …`,
//! `--parts …`: a layer's files or some of its parts' files).
//! 1. So that `verify` checks those and does not call the others missing. The file is the
//!    consumer's, not in the manifest; a copy without it is a whole release (docs/format.md).

use super::manifest::{Manifest, ManifestLayer, Piece};
use crate::FormatError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name of the parts list.
pub const PARTS: &str = "parts.json";
/// The `format` field of a parts list.
pub const PARTS_FORMAT: &str = "kingmaker-release-parts";
/// Version of the parts list.
pub const PARTS_VERSION: u32 = 1;

/// The contents of `parts.json`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// Always [`PARTS_FORMAT`].
    pub format: String,
    /// [`PARTS_VERSION`].
    pub format_version: u32,
    /// The files of the manifest this copy holds, in the manifest's order.
    pub files: Vec<String>,
}

/// Which parts of a release to take: some layers and some parts of layers in parts (every
/// layer when both are empty), with or without depths.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartChoice {
    /// The layers wanted, by name, each with every piece.
    pub layers: Vec<String>,
    /// Parts of layers in parts wanted, by name (`solo.part-0001`), besides those layers.
    pub parts: Vec<String>,
    /// The values-only file of each piece instead of its values-and-depths file.
    pub values_only: bool,
}

impl PartChoice {
    /// Whether this takes the whole release.
    pub fn is_whole(&self) -> bool {
        self.layers.is_empty() && self.parts.is_empty() && !self.values_only
    }

    /// The files of `manifest` this choice takes: per piece of a chosen layer its values-and-depths
    /// file, per chosen part both its files; with `values_only` the values-only file of each. An unknown layer
    /// or part, one named twice, or values alone from a release without values-only files
    /// (format 1), is an error naming what there is.
    pub fn files(&self, manifest: &Manifest) -> Result<Vec<String>, FormatError> {
        if self.is_whole() {
            return Ok(manifest.files.iter().map(|f| f.path.clone()).collect());
        }
        for (i, name) in self.layers.iter().enumerate() {
            // As `build --layers` does: a repeat is a slip, and would be taken once anyway.
            if self.layers[..i].contains(name) {
                return Err(FormatError::Corrupt(format!(
                    "--layers names {name:?} twice; list each layer once"
                )));
            }
            if manifest.layer(name).is_none() {
                let there: Vec<&str> = manifest.layers.iter().map(|l| l.name.as_str()).collect();
                return Err(FormatError::Corrupt(format!(
                    "the release {} has no layer {name} (its layers: {})",
                    manifest.name,
                    there.join(", ")
                )));
            }
        }
        for (i, name) in self.parts.iter().enumerate() {
            if self.parts[..i].contains(name) {
                return Err(FormatError::Corrupt(format!(
                    "--parts names {name:?} twice; list each part once"
                )));
            }
            if manifest.layer(name).is_some() {
                return Err(FormatError::Corrupt(format!(
                    "{name} is a layer of the release {}, not a part: take it with --layers {name}",
                    manifest.name
                )));
            }
            if find_part(manifest, name).is_none() {
                return Err(FormatError::Corrupt(format!(
                    "the release {} has no part {name} ({})",
                    manifest.name,
                    parts_in_words(manifest)
                )));
            }
        }
        let wanted = |l: &ManifestLayer| {
            (self.layers.is_empty() && self.parts.is_empty()) || self.layers.contains(&l.name)
        };
        // Each piece, and whether it was named by --parts (then both its files are taken).
        let mut pieces: Vec<(Piece, bool)> = Vec::new();
        for l in &manifest.layers {
            if wanted(l) {
                pieces.extend(l.pieces().into_iter().map(|p| (p, false)));
            } else {
                let chosen = l.pieces().into_iter();
                let chosen = chosen.filter(|p| self.parts.iter().any(|n| n == p.name));
                pieces.extend(chosen.map(|p| (p, true)));
            }
        }
        let mut files = Vec::new();
        for (p, named) in pieces {
            match (p.values_file, self.values_only) {
                (Some(v), false) if named => files.extend([p.file.to_string(), v.to_string()]),
                (_, false) => files.push(p.file.to_string()),
                (Some(v), true) => files.push(v.to_string()),
                (None, true) => {
                    return Err(FormatError::Corrupt(format!(
                        "the release {} (format {}) has no values-only files: fetch without \
                         --values-only",
                        manifest.name, manifest.format_version
                    )))
                }
            }
        }
        Ok(order_as_listed(manifest, files))
    }
}

/// The part `name` of a layer in parts of `manifest`: its layer and its piece.
pub fn find_part<'a>(manifest: &'a Manifest, name: &str) -> Option<(&'a ManifestLayer, Piece<'a>)> {
    manifest.layers.iter().find_map(|l| {
        let part = l.parts.iter().position(|p| p.name == name)?;
        Some((l, l.pieces()[part]))
    })
}

/// The parts a release has, for a message: the first and last of each layer in parts.
fn parts_in_words(manifest: &Manifest) -> String {
    let layers: Vec<String> = (manifest.layers.iter())
        .filter(|l| !l.parts.is_empty())
        .map(|l| match l.parts.as_slice() {
            [one] => one.name.clone(),
            [first, .., last] => format!("{} .. {}", first.name, last.name),
            [] => String::new(),
        })
        .collect();
    if layers.is_empty() {
        "no layer of it is in parts: take layers with --layers".into()
    } else {
        format!("its parts: {}", layers.join(", "))
    }
}

/// `files`, without repeats, in the order the manifest lists them.
pub fn order_as_listed(manifest: &Manifest, files: Vec<String>) -> Vec<String> {
    manifest
        .files
        .iter()
        .map(|f| &f.path)
        .filter(|p| files.contains(p))
        .cloned()
        .collect()
}

impl Parts {
    /// A parts list of `files`.
    pub fn new(files: Vec<String>) -> Parts {
        Parts {
            format: PARTS_FORMAT.into(),
            format_version: PARTS_VERSION,
            files,
        }
    }

    /// Check the list against its release: the right format, at least one file, each once and
    /// each one the manifest lists.
    pub fn check(&self, manifest: &Manifest) -> Result<(), FormatError> {
        if self.format != PARTS_FORMAT || self.format_version != PARTS_VERSION {
            return Err(FormatError::Corrupt(format!(
                "{PARTS}: format {:?} version {}, not {PARTS_FORMAT} version {PARTS_VERSION}",
                self.format, self.format_version
            )));
        }
        // An empty list would let a copy verify while checking nothing its readers open.
        if self.files.is_empty() {
            return Err(FormatError::Corrupt(format!(
                "{PARTS}: lists no file: a partial copy holds at least one file of the release \
                 (fetch it again)"
            )));
        }
        if let Some(f) = self
            .files
            .iter()
            .enumerate()
            .find_map(|(i, f)| self.files[..i].contains(f).then_some(f))
        {
            return Err(FormatError::Corrupt(format!(
                "{PARTS}: lists {f} twice (fetch it again)"
            )));
        }
        if let Some(f) = self.files.iter().find(|f| manifest.file(f).is_none()) {
            return Err(FormatError::Corrupt(format!(
                "{PARTS}: lists {f}, which the release {} does not have",
                manifest.name
            )));
        }
        Ok(())
    }
}

/// The parts list of the copy in `dir`, checked against its manifest; None for a whole release.
pub fn read_parts(dir: &Path, manifest: &Manifest) -> Result<Option<Parts>, FormatError> {
    let path = dir.join(PARTS);
    let cap = crate::fsio::METADATA_CAP;
    let Some(bytes) = crate::fsio::read_bounded_if_any(&path, cap, "a parts list")? else {
        return Ok(None);
    };
    let parts: Parts = serde_json::from_slice(&bytes)
        .map_err(|e| FormatError::Corrupt(format!("{}: {e}", path.display())))?;
    parts.check(manifest)?;
    Ok(Some(parts))
}

/// Write `dir/parts.json` durably.
pub fn write_parts(dir: &Path, parts: &Parts) -> Result<(), FormatError> {
    let mut bytes = serde_json::to_vec_pretty(parts).expect("a parts list is JSON");
    bytes.push(b'\n');
    super::manifest::write_file_atomically(dir, PARTS, &bytes)
}
