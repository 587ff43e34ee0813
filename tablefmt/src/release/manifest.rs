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
    /// The layer's values-and-depths file (listed in `files`); empty (left out) for a layer in
    /// `parts`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
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
    /// The layer cut in row ranges, each in files of its own (format version 3 on; empty for a
    /// layer in one file). Together they hold every row once, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<ManifestPart>,
}

/// One row range of a layer in parts: rows `first .. first + states` of the layer, in a
/// values-and-depths file and a values-only file of its own, each a layer file whose identity
/// record names the part (`<layer>.part-KKKK`, as the build's workers kept it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestPart {
    /// The name its files' identity records give it: `<layer>.part-KKKK`.
    pub name: String,
    /// The first row.
    pub first: u64,
    /// Rows in the part.
    pub states: u64,
    /// Its values-and-depths file (listed in `files`).
    pub file: String,
    /// Its values-only file (listed in `files`).
    pub values_file: String,
    /// How many of its states have each value.
    pub counts: ValueCounts,
    /// Its largest depth.
    pub max_depth: u16,
}

/// Where one layer's rows are: the layer's own files, or one part's. What every reader walks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The name its files' identity records give it: the layer's, or the part's.
    pub name: &'a str,
    /// The first row.
    pub first: u64,
    /// Rows in it.
    pub states: u64,
    /// Its values-and-depths file.
    pub file: &'a str,
    /// Its values-only file (none in format version 1).
    pub values_file: Option<&'a str>,
    /// Its counts.
    pub counts: ValueCounts,
    /// Its largest depth.
    pub max_depth: u16,
}

impl ManifestLayer {
    /// The layer's pieces in row order: the layer itself when it is in one file, else its parts.
    pub fn pieces(&self) -> Vec<Piece<'_>> {
        if self.parts.is_empty() {
            return vec![Piece {
                name: &self.name,
                first: 0,
                states: self.states,
                file: &self.file,
                values_file: self.values_file.as_deref(),
                counts: self.counts,
                max_depth: self.max_depth,
            }];
        }
        self.parts
            .iter()
            .map(|p| Piece {
                name: &p.name,
                first: p.first,
                states: p.states,
                file: &p.file,
                values_file: Some(&p.values_file),
                counts: p.counts,
                max_depth: p.max_depth,
            })
            .collect()
    }

    /// Every file of the layer: each piece's values-and-depths file, then its values file.
    pub fn files(&self) -> Vec<&str> {
        let mut files = Vec::new();
        for p in self.pieces() {
            files.push(p.file);
            files.extend(p.values_file);
        }
        files
    }

    /// The layer's values-and-depths files (one per piece).
    pub fn depth_files(&self) -> Vec<&str> {
        self.pieces().iter().map(|p| p.file).collect()
    }

    /// The layer's values-only files (one per piece; none in format version 1).
    pub fn values_files(&self) -> Vec<&str> {
        self.pieces().iter().filter_map(|p| p.values_file).collect()
    }
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
    /// Where the file lies when it is not beside the manifest: an `http://` or `https://` URL
    /// (format version 3 on). A copy beside the manifest, when there is one, is read instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The longest URL a manifest may give a file.
pub const MAX_URL_LEN: usize = 2048;

/// A file's URL: `http://` or `https://`, a host, and no space or control character, at most
/// [`MAX_URL_LEN`] bytes.
pub fn check_url(path: &str, url: &str) -> Result<(), FormatError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    let ok = url.len() <= MAX_URL_LEN
        && rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
        && url.bytes().all(|b| b.is_ascii_graphic());
    if ok {
        Ok(())
    } else {
        Err(FormatError::Corrupt(format!(
            "{MANIFEST}: {path}: url {url:?} is not an http:// or https:// URL of at most \
             {MAX_URL_LEN} printable characters"
        )))
    }
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
        for f in &self.files {
            if let Some(url) = &f.url {
                if self.format_version < 3 {
                    return bad(format!(
                        "{}: a url in format version {} (urls are version 3 on)",
                        f.path, self.format_version
                    ));
                }
                check_url(&f.path, url)?;
            }
        }
        let mut names = std::collections::HashSet::new();
        let mut used = std::collections::HashSet::new();
        for l in &self.layers {
            if !names.insert(l.name.as_str()) {
                return bad(format!("layer {} is listed twice", l.name));
            }
            if l.states != self.states {
                return bad(format!(
                    "layer {} has {} states, the game {}",
                    l.name, l.states, self.states
                ));
            }
            if !l.parts.is_empty() {
                self.check_parts(l)?;
            } else if l.file.is_empty() {
                return bad(format!("layer {} has neither a file nor parts", l.name));
            } else if l.values_file.is_none() && self.format_version >= 2 {
                return bad(format!(
                    "layer {} has no values file (format version {} lists one per layer)",
                    l.name, self.format_version
                ));
            }
            for file in l.files() {
                if !seen.contains(file) {
                    return bad(format!(
                        "layer {}'s file {file} is not among the files",
                        l.name
                    ));
                }
                if !used.insert(file) {
                    return bad(format!("{file} is named twice by the layers"));
                }
            }
        }
        Ok(())
    }

    /// A layer in parts: version 3, no file of its own, and parts named after it that hold
    /// every row once, in order, their counts and depths adding up to the layer's.
    fn check_parts(&self, l: &ManifestLayer) -> Result<(), FormatError> {
        let bad = |what: String| {
            Err(FormatError::Corrupt(format!(
                "{MANIFEST}: layer {}: {what}",
                l.name
            )))
        };
        if self.format_version < 3 {
            return bad(format!(
                "parts in format version {} (parts are version 3 on)",
                self.format_version
            ));
        }
        if !l.file.is_empty() || l.values_file.is_some() {
            return bad("both parts and a file of its own".into());
        }
        let mut next = 0u64;
        let mut counts = ValueCounts::default();
        let mut max_depth = 0;
        for p in &l.parts {
            let number = p.name.strip_prefix(&format!("{}.part-", l.name));
            if !number.is_some_and(|n| n.len() == 4 && n.bytes().all(|b| b.is_ascii_digit())) {
                return bad(format!(
                    "part {:?} is not named {}.part-KKKK",
                    p.name, l.name
                ));
            }
            if p.first != next || p.states == 0 {
                return bad(format!(
                    "part {} holds rows {} .. {}, where rows {next} .. on were due",
                    p.name,
                    p.first,
                    p.first.saturating_add(p.states)
                ));
            }
            next = p.first.saturating_add(p.states);
            counts.win = counts.win.saturating_add(p.counts.win);
            counts.loss = counts.loss.saturating_add(p.counts.loss);
            counts.draw = counts.draw.saturating_add(p.counts.draw);
            counts.illegal = counts.illegal.saturating_add(p.counts.illegal);
            if counts_total(&p.counts) != p.states {
                return bad(format!(
                    "part {}'s counts add up to {}, not its {} states",
                    p.name,
                    counts_total(&p.counts),
                    p.states
                ));
            }
            max_depth = max_depth.max(p.max_depth);
        }
        if next != l.states {
            return bad(format!(
                "the parts hold rows 0 .. {next}, the layer {}",
                l.states
            ));
        }
        if counts != l.counts || max_depth != l.max_depth {
            return bad(format!(
                "the parts' counts ({}) and largest depth ({max_depth}) are not the layer's ({}, {})",
                counts_in_words(&counts),
                counts_in_words(&l.counts),
                l.max_depth
            ));
        }
        Ok(())
    }

    /// The lowest format version that holds this manifest: 3 with parts or urls, else 2 (what
    /// `pack` writes, so that a whole release stays readable by the readers of version 2).
    pub fn needed_version(&self) -> u32 {
        let v3 = self.layers.iter().any(|l| !l.parts.is_empty())
            || self.files.iter().any(|f| f.url.is_some());
        if v3 {
            3
        } else {
            2
        }
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

fn counts_total(c: &ValueCounts) -> u64 {
    [c.win, c.loss, c.draw, c.illegal]
        .iter()
        .fold(0u64, |a, &n| a.saturating_add(n))
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
