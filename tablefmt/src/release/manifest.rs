//! `manifest.json` and `manifest.sha256`: what a release holds and how to check it.
//! 1. `manifest.sha256` holds the manifest's own sha256, so every byte is covered; it is written
//!    last, so its presence means the release is complete (docs/format.md).

use crate::table::ValueCounts;
use crate::FormatError;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;

/// File name of the manifest.
pub const MANIFEST: &str = "manifest.json";
/// File name of the manifest's own sha256, written last.
pub const MANIFEST_SHA256: &str = "manifest.sha256";
/// The `format` field of every manifest.
pub const FORMAT_NAME: &str = "kingmaker-release";

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT_NAME`].
    pub format: String,
    /// [`super::FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// The game and its parameters, exactly as in the run's `run.json` (`{"game": "cc3p", "level": 1}`).
    pub game: serde_json::Value,
    /// Short name of the game instance (`cc3p-1`).
    pub name: String,
    /// Size of the index space (every layer has this many states).
    pub states: u64,
    /// The layers the release ships.
    pub layers: Vec<ManifestLayer>,
    /// Every file of the release except `manifest.json` and `manifest.sha256`.
    pub files: Vec<ManifestFile>,
    /// Who built the release, when, and from what.
    pub provenance: Provenance,
}

/// One layer of a release.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestLayer {
    /// The layer's name in the game.
    pub name: String,
    /// Bit p set: player p plays for the coalition.
    pub coalition: u8,
    /// Bit o set: outcome o (a win by player o; Go: a final score) counts as W.
    pub objective: u64,
    /// The layer's values-and-depths file (listed in `files`).
    pub file: String,
    /// The layer's values-only file (listed in `files`; format version 2 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values_file: Option<String>,
    /// Number of states (the game's index space).
    pub states: u64,
    /// States per block of the values-and-depths file.
    pub block_states: u32,
    /// Number of blocks of the values-and-depths file.
    pub blocks: u64,
    /// How many states have each value.
    pub counts: ValueCounts,
    /// sha256 (hex) of the values, one byte per state in index order: the digest of the run's
    /// `summary.json`.
    pub digest: String,
    /// The largest depth in the layer.
    pub max_depth: u16,
}

/// One file of a release.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// A plain file name inside the release directory (see [`check_file_name`]).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// sha256 (hex, lower case) of the file's bytes.
    pub sha256: String,
}

/// Who built the release, when, and from what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Version of the kingmaker that packed the release.
    pub kingmaker_version: String,
    /// When `pack` ran (RFC 3339, UTC).
    pub packed_at: String,
    /// Host name of the machine `pack` ran on.
    pub host: String,
    /// The run's `run.json`.
    pub run: serde_json::Value,
    /// The run's `summary.json`.
    pub summary: serde_json::Value,
}

/// File names in a release are plain names: 1 to 128 characters of `A-Z a-z 0-9 . _ -`, not
/// starting with a dot. No separators, so no path can leave the release directory.
pub fn check_file_name(name: &str) -> Result<(), FormatError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(FormatError::Corrupt(format!(
            "{MANIFEST}: file name {name:?} is not a plain file name (letters, digits, '.', '_', '-')"
        )))
    }
}

/// The line of `manifest.sha256` for manifest bytes `bytes`.
pub fn manifest_sha256_line(bytes: &[u8]) -> String {
    format!("{}  {MANIFEST}\n", hex::encode(Sha256::digest(bytes)))
}

impl Manifest {
    /// The manifest as written: pretty JSON with a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_string_pretty(self).expect("a manifest serialises");
        text.push('\n');
        text.into_bytes()
    }

    /// Parse manifest bytes after checking them against the contents of `manifest.sha256`.
    pub fn parse_checked(bytes: &[u8], sha256_file: &[u8]) -> Result<Manifest, FormatError> {
        let want = manifest_sha256_line(bytes);
        if sha256_file != want.as_bytes() {
            let found = String::from_utf8_lossy(sha256_file);
            let found = found.split_whitespace().next().unwrap_or("");
            return Err(FormatError::Corrupt(format!(
                "{MANIFEST} does not match {MANIFEST_SHA256} (its sha256 is {}, {MANIFEST_SHA256} says {found:?}): \
                 one of them was altered or damaged; fetch the release again",
                &want[..64]
            )));
        }
        let manifest: Manifest = serde_json::from_slice(bytes)
            .map_err(|e| FormatError::Corrupt(format!("{MANIFEST} is malformed: {e}")))?;
        manifest.check()?;
        Ok(manifest)
    }

    /// Structural rules: format name and version, plain unique file names, one listed file per
    /// layer, consistent state counts.
    pub fn check(&self) -> Result<(), FormatError> {
        let bad = |what: String| Err(FormatError::Corrupt(format!("{MANIFEST}: {what}")));
        if self.format != FORMAT_NAME {
            return bad(format!("format is {:?}, not {FORMAT_NAME:?}", self.format));
        }
        if !(1..=super::FORMAT_VERSION).contains(&self.format_version) {
            return bad(format!(
                "format version {}; this kingmaker reads versions 1 to {} (upgrade kingmaker)",
                self.format_version,
                super::FORMAT_VERSION
            ));
        }
        let mut seen = std::collections::HashSet::new();
        for f in &self.files {
            check_file_name(&f.path)?;
            if let Some(why) = super::reserved::reserved_use(&f.path) {
                return bad(format!(
                    "lists {}, which no file of a release may be named ({why}): refusing a \
                     manifest that would have the tool replace, delete or misread a file of its own",
                    f.path
                ));
            }
            if !seen.insert(f.path.as_str()) {
                return bad(format!("{} is listed twice", f.path));
            }
            if f.sha256.len() != 64 || !f.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return bad(format!(
                    "{}: sha256 {:?} is not 64 hex digits",
                    f.path, f.sha256
                ));
            }
        }
        let mut names = std::collections::HashSet::new();
        for l in &self.layers {
            if !names.insert(l.name.as_str()) {
                return bad(format!("layer {} is listed twice", l.name));
            }
            if !seen.contains(l.file.as_str()) {
                return bad(format!(
                    "layer {}'s file {} is not among the files",
                    l.name, l.file
                ));
            }
            match &l.values_file {
                Some(v) if !seen.contains(v.as_str()) => {
                    return bad(format!(
                        "layer {}'s values file {v} is not among the files",
                        l.name
                    ));
                }
                None if self.format_version >= 2 => {
                    return bad(format!(
                        "layer {} has no values file (format version {} lists one per layer)",
                        l.name, self.format_version
                    ));
                }
                _ => {}
            }
            if l.states != self.states {
                return bad(format!(
                    "layer {} has {} states, the game {}",
                    l.name, l.states, self.states
                ));
            }
        }
        Ok(())
    }

    /// The entry of file `path`.
    pub fn file(&self, path: &str) -> Option<&ManifestFile> {
        self.files.iter().find(|f| f.path == path)
    }

    /// The entry of layer `name`.
    pub fn layer(&self, name: &str) -> Option<&ManifestLayer> {
        self.layers.iter().find(|l| l.name == name)
    }
}

/// The size of the release in `dir` in bytes: every file the manifest lists (at its listed size)
/// plus `manifest.json` and `manifest.sha256` themselves (as they are on disk). What `pack`,
/// `verify` and `status` report as the release's bytes.
pub fn release_bytes(dir: &Path, manifest: &Manifest) -> u64 {
    let own: u64 = [MANIFEST, MANIFEST_SHA256]
        .iter()
        .map(|name| std::fs::metadata(dir.join(name)).map_or(0, |m| m.len()))
        .sum();
    own + manifest.files.iter().map(|f| f.size).sum::<u64>()
}

/// Counts as people read them: `W 1,234 L 5 D 6 illegal 7`.
pub fn counts_in_words(c: &ValueCounts) -> String {
    format!(
        "W {} L {} D {} illegal {}",
        thousands(c.win),
        thousands(c.loss),
        thousands(c.draw),
        thousands(c.illegal)
    )
}

/// 4947100130 -> "4,947,100,130": every count the house prints (this crate's messages, the
/// games' views, the CLI through `kingmaker_coordinator::digits`, the end-to-end tests). The
/// grouping itself is `num-format`'s.
pub fn thousands(n: u64) -> String {
    use num_format::{Locale, ToFormattedString};
    n.to_formatted_string(&Locale::en)
}

/// Read `dir/manifest.json`, checked against `dir/manifest.sha256`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, FormatError> {
    let read = |name: &str| {
        let path = dir.join(name);
        let cap = crate::fsio::METADATA_CAP;
        match crate::fsio::read_bounded_if_any(&path, cap, &format!("a {name}"))? {
            Some(bytes) => Ok(bytes),
            None => Err(FormatError::Corrupt(format!(
                "{}: missing {name}: not a Kingmaker release, or an incomplete one",
                dir.display()
            ))),
        }
    };
    let sha = read(MANIFEST_SHA256)?;
    let bytes = read(MANIFEST)?;
    Manifest::parse_checked(&bytes, &sha)
}

/// Write `bytes` to `dir/name` durably: a temporary file, fsync, rename, fsync of the directory.
pub fn write_file_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), FormatError> {
    crate::fsio::write_atomically(&dir.join(name), bytes)
}

/// Write `manifest.json`, then `manifest.sha256` (last: it marks the release complete).
pub fn write_manifest(dir: &Path, manifest: &Manifest) -> Result<(), FormatError> {
    manifest.check()?;
    let bytes = manifest.to_bytes();
    write_file_atomically(dir, MANIFEST, &bytes)?;
    write_file_atomically(
        dir,
        MANIFEST_SHA256,
        manifest_sha256_line(&bytes).as_bytes(),
    )
}
