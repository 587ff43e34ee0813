//! The byte-level check of a release: the manifest against `manifest.sha256`, every listed file's
//! presence (a partial copy's: those `parts.json` names and any other here; a file at a url only
//! when a copy is here), size and sha256, every piece's header, block index and blocks, and the
//! decoded values against each piece's counts and the layer's digest, carried piece to piece.
//! Game rules are not consulted here (that is `verify --deep`, in the coordinator).

use super::manifest::{
    counts_in_words, read_manifest, Manifest, ManifestLayer, Piece, MANIFEST, MANIFEST_SHA256,
};
use super::parts::{read_parts, Parts, PARTS};
use super::{file_sha256, LayerFile, LayerIdentity};
use crate::layer::{ENCODING_GROUPED, ENCODING_PACKED, ENCODING_VALUES};
use crate::table::ValueCounts;
use crate::value::{DRAW, ILLEGAL};
use crate::FormatError;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::path::Path;

/// The lock file `kingmaker fetch` keeps in the directory it downloads into (the directory lock's
/// file, `kingmaker_process::lock::LOCK_FILE`): not a stray file of the release, so not warned of.
pub const DIR_LOCK_FILE: &str = super::reserved::LOCK_FILE;

/// What `verify` found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// The manifest, when it could be read and matched its checksum.
    pub manifest: Option<Manifest>,
    /// The parts list of a partial copy (`parts.json`): its files were checked, and any other
    /// file of the release that is here ([`held_files`]).
    pub parts: Option<Parts>,
    /// Everything wrong, one message per problem, each naming the file.
    pub problems: Vec<String>,
    /// Things worth knowing that do not make the release wrong (unlisted files).
    pub warnings: Vec<String>,
    /// Files checked and their bytes (the manifest and its checksum file included).
    pub files: usize,
    /// Bytes of those files.
    pub bytes: u64,
    /// States decoded from layer files.
    pub states: u64,
    /// Layers with a file checked (every layer, but in a partial copy).
    pub layers: usize,
    /// Files that lie at a url and have no copy here: not checked (`fetch` brings them).
    pub at_urls: usize,
    /// Layers in parts of which this copy holds some pieces only: each piece was checked, the
    /// layer's digest (over every piece) was not.
    pub digests_unchecked: Vec<String>,
}

impl VerifyReport {
    /// Whether no problem was found.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// At most this many problems are listed per layer file (the rest are counted).
const MAX_BLOCK_PROBLEMS: usize = 8;

/// Check a release directory. Never stops at the first problem of a file it can still read.
pub fn verify_release(dir: &Path) -> VerifyReport {
    let mut report = VerifyReport::default();
    let manifest = match read_manifest(dir) {
        Ok(m) => m,
        Err(e) => {
            report.problems.push(e.to_string());
            return report;
        }
    };
    // A partial copy holds the files of its parts list; a whole release every listed file.
    let parts = match read_parts(dir, &manifest) {
        Ok(p) => p,
        Err(e) => {
            report.problems.push(e.to_string());
            return report;
        }
    };
    let held_names = held_files(dir, &manifest, parts.as_ref());
    let held = |name: &str| held_names.iter().any(|f| f == name);
    // Readers open whatever layer file is here, listed or not: such a file is checked too.
    if let Some(p) = &parts {
        for f in held_names.iter().filter(|f| !p.files.contains(f)) {
            report.warnings.push(format!(
                "{f}: here although {PARTS} does not list it; checked, since readers open it"
            ));
        }
    }
    for name in [MANIFEST, MANIFEST_SHA256] {
        report.files += 1;
        report.bytes += std::fs::metadata(dir.join(name))
            .map(|m| m.len())
            .unwrap_or(0);
    }
    // Every file held: present, the right size, the right sha256.
    let file_results: Vec<Result<u64, String>> = manifest
        .files
        .par_iter()
        .filter(|f| held(&f.path))
        .map(|f| {
            let path = dir.join(&f.path);
            let meta = std::fs::metadata(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => format!("{}: missing (listed in {MANIFEST})", f.path),
                _ => format!("{}: {e}", f.path),
            })?;
            if meta.len() != f.size {
                let how = if meta.len() < f.size { "truncated" } else { "longer than listed" };
                return Err(format!(
                    "{}: {how}: {} bytes on disk, {MANIFEST} says {}",
                    f.path,
                    meta.len(),
                    f.size
                ));
            }
            let (_, sha) = file_sha256(&path).map_err(|e| e.to_string())?;
            if sha != f.sha256.to_ascii_lowercase() {
                return Err(format!(
                    "{}: sha256 mismatch: the file is {sha}, {MANIFEST} says {} (altered or damaged; \
                     fetch it again)",
                    f.path, f.sha256
                ));
            }
            Ok(meta.len())
        })
        .collect();
    for r in file_results {
        report.files += 1;
        match r {
            Ok(n) => report.bytes += n,
            Err(e) => report.problems.push(e),
        }
    }
    // Every layer file: structure and contents (independently of the sha256 above, so a damaged
    // file is also located: header, index or which block).
    for layer in &manifest.layers {
        report.layers += usize::from(layer.files().into_iter().any(&held));
        match check_layer_files(dir, &manifest.game, layer, &held) {
            Ok(checked) => {
                report.states += checked.states;
                if !checked.digest_checked {
                    report.digests_unchecked.push(layer.name.clone());
                }
            }
            Err(problems) => report.problems.extend(problems),
        }
    }
    report.at_urls = manifest
        .files
        .iter()
        .filter(|f| f.url.is_some() && !held(&f.path))
        .count();
    // A copy of the manifest alone, its files at urls, checks nothing yet, and says so.
    if report.layers == 0 && report.problems.is_empty() && report.at_urls == 0 {
        report.problems.push(format!(
            "no layer file to check: the copy holds none of the files {MANIFEST} lists"
        ));
    }
    // Every file is checked where its link leads; one that leads out of the release is not
    // carried by a copy of the directory, or may not be served with it.
    let own = [MANIFEST, MANIFEST_SHA256, PARTS].map(String::from);
    for name in own.iter().chain(&held_names) {
        if let Some(w) = link_outside(dir, name) {
            report.warnings.push(w);
        }
    }
    // Files nobody listed.
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut extra: Vec<String> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| {
                n != MANIFEST
                    && n != MANIFEST_SHA256
                    && n != DIR_LOCK_FILE
                    && (n != PARTS || parts.is_none())
                    && manifest.file(n).is_none()
            })
            .collect();
        extra.sort();
        for n in extra {
            report.warnings.push(format!(
                "{n}: not part of the release (not listed in {MANIFEST})"
            ));
        }
    }
    report.manifest = Some(manifest);
    report.parts = parts;
    report
}

/// A warning when `dir/name` is a symbolic link that leads outside `dir` (or nowhere).
fn link_outside(dir: &Path, name: &str) -> Option<String> {
    let path = dir.join(name);
    let target = std::fs::read_link(&path).ok()?;
    let inside = match (path.canonicalize(), dir.canonicalize()) {
        (Ok(to), Ok(root)) => to.starts_with(&root),
        // A dangling link: the checks above call the file missing; this says why.
        _ => {
            return Some(format!(
                "{name}: a symbolic link to {}, which leads nowhere",
                target.display()
            ))
        }
    };
    (!inside).then(|| {
        format!(
            "{name}: a symbolic link to {}, outside the release: checked where it leads, but a \
             copy of the directory, or a server of it, may not carry it; put the file itself here",
            target.display()
        )
    })
}

/// The files of `manifest` a copy in `dir` holds, in the manifest's order: for a whole release
/// every one but those at a url with no copy here (they are read, or fetched, where they lie);
/// for a partial copy those its parts list names and any other here, since readers open a
/// layer's file wherever it is present.
pub fn held_files(dir: &Path, manifest: &Manifest, parts: Option<&Parts>) -> Vec<String> {
    manifest
        .files
        .iter()
        .filter(|f| match parts {
            None => f.url.is_none() || dir.join(&f.path).exists(),
            Some(p) => p.files.contains(&f.path) || dir.join(&f.path).exists(),
        })
        .map(|f| f.path.clone())
        .collect()
}

/// What the check of one layer's files found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerChecked {
    /// States decoded: each piece held counted once.
    pub states: u64,
    /// Whether the layer's digest was checked: every piece of one of its two files is here.
    pub digest_checked: bool,
}

/// Check a layer's files completely (values and depths, and values alone, of every piece); the
/// number of states decoded, or the problems found.
/// `game` is the manifest's: every file that names its piece (layer file version 2) must name
/// this piece of this game.
pub fn check_layer(
    dir: &Path,
    game: &serde_json::Value,
    layer: &ManifestLayer,
) -> Result<u64, Vec<String>> {
    check_layer_files(dir, game, layer, &|_| true).map(|c| c.states)
}

/// [`check_layer`] on the files of the layer that `held` says the copy holds (a partial copy:
/// `parts.json`; files at urls). Each piece is checked against its own entry; the layer's digest
/// is one sha256 carried over the pieces in row order, for the values-and-depths files and for the
/// values-only files each, checked when every piece of that file kind is here.
pub fn check_layer_files(
    dir: &Path,
    game: &serde_json::Value,
    layer: &ManifestLayer,
    held: &dyn Fn(&str) -> bool,
) -> Result<LayerChecked, Vec<String>> {
    let pieces = layer.pieces();
    let mut problems = Vec::new();
    let mut decoded = vec![false; pieces.len()];
    let mut checked = LayerChecked::default();
    let depths = pieces.iter().map(|p| Some(p.file)).collect::<Vec<_>>();
    let values = pieces.iter().map(|p| p.values_file).collect::<Vec<_>>();
    let kinds: [(&[Option<&str>], &[u32]); 2] = [
        (&depths, &[ENCODING_PACKED]),
        (&values, &[ENCODING_VALUES, ENCODING_GROUPED]),
    ];
    for (files, encodings) in kinds {
        let mut hasher = Sha256::new();
        let mut whole = true;
        for (k, (piece, name)) in pieces.iter().zip(files).enumerate() {
            let Some(name) = name.filter(|n| held(n)) else {
                whole = false;
                continue;
            };
            let identity = LayerIdentity::new(game.clone(), piece.name);
            match check_layer_file(dir, &identity, layer, piece, name, encodings, &mut hasher) {
                Ok(counts) => {
                    decoded[k] = true;
                    problems.extend(counts);
                }
                Err(p) => {
                    problems.extend(p);
                    whole = false;
                }
            }
        }
        // A piece that could not be decoded is named above; a digest without it says nothing.
        if !whole {
            continue;
        }
        checked.digest_checked = true;
        let digest = hex::encode(hasher.finalize());
        if digest != layer.digest {
            let named: Vec<&str> = files.iter().flatten().copied().collect();
            let what = match named.as_slice() {
                [one] => one.to_string(),
                [first, .., last] => format!(
                    "layer {} ({} .. {}, {} parts in row order)",
                    layer.name,
                    first,
                    last,
                    named.len()
                ),
                [] => layer.name.clone(),
            };
            problems.push(format!(
                "{what}: the values' digest is {digest}, {MANIFEST} says {}",
                layer.digest
            ));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    checked.states = pieces
        .iter()
        .zip(&decoded)
        .filter(|(_, &d)| d)
        .map(|(p, _)| p.states)
        .sum();
    // No file of the layer here: nothing to check, and nothing unchecked to report.
    checked.digest_checked |= !decoded.contains(&true);
    Ok(checked)
}

/// Check one file `name` of `piece` of `layer` against the manifest; its encoding must be one of
/// `encodings`. Its values go on into `hasher`. Decoded, it may still count other values than
/// the manifest says: that problem is `Ok(Some(..))`, the layer's digest is still checked.
fn check_layer_file(
    dir: &Path,
    identity: &LayerIdentity,
    layer: &ManifestLayer,
    piece: &Piece,
    name: &str,
    encodings: &[u32],
    hasher: &mut Sha256,
) -> Result<Option<String>, Vec<String>> {
    let path = dir.join(name);
    let file = LayerFile::open(&path).map_err(|e| vec![relative(e, dir)])?;
    let h = *file.header();
    let mut problems = Vec::new();
    // A version-1 file does not say; the sha256 check above covers it.
    if file.identity().is_some() {
        if let Err(e) = file.check_identity(identity) {
            return Err(vec![relative(e, dir)]);
        }
    }
    if !encodings.contains(&h.encoding) {
        let listed: Vec<String> = encodings.iter().map(u32::to_string).collect();
        problems.push(format!(
            "{name}: encoding {} where {MANIFEST} lists a file of encoding {}",
            h.encoding,
            listed.join(" or ")
        ));
        return Err(problems);
    }
    let mismatch = |what: &str, file_says: String, manifest_says: String| {
        format!("{name}: the header says {what} {file_says}, {MANIFEST} says {manifest_says}")
    };
    if h.states != piece.states {
        problems.push(mismatch(
            "states",
            h.states.to_string(),
            piece.states.to_string(),
        ));
    }
    if h.block_states != layer.block_states {
        problems.push(mismatch(
            "block size",
            h.block_states.to_string(),
            layer.block_states.to_string(),
        ));
    }
    if h.encoding == ENCODING_PACKED && h.max_depth != piece.max_depth {
        problems.push(mismatch(
            "max depth",
            h.max_depth.to_string(),
            piece.max_depth.to_string(),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut counts = ValueCounts::default();
    let mut block_problems = Vec::new();
    let group = (4 * rayon::current_num_threads()).max(4) as u64;
    let mut b = 0;
    while b < h.blocks {
        let last = (b + group).min(h.blocks);
        let decoded: Vec<Result<Vec<u8>, String>> = (b..last)
            .into_par_iter()
            .map(|i| {
                let block = file.read_block(i).map_err(|e| relative(e, dir))?;
                let mut values = Vec::with_capacity(block.len());
                for j in 0..block.len() {
                    let (v, d) = block.get(j);
                    if d > h.max_depth {
                        return Err(format!("{name}: block {i}: depth {d} above the header's max depth {}", h.max_depth));
                    }
                    if d != 0 && (v == ILLEGAL || v == DRAW) {
                        return Err(format!(
                            "{name}: block {i}: state {} is {} with depth {d} (only W and L have depths)",
                            block.first + j as u64,
                            if v == ILLEGAL { "illegal" } else { "a draw" }
                        ));
                    }
                    values.push(v);
                }
                Ok(values)
            })
            .collect();
        for r in decoded {
            match r {
                Ok(values) => {
                    hasher.update(&values);
                    counts.add(&values);
                }
                Err(e) => block_problems.push(e),
            }
        }
        b = last;
    }
    if !block_problems.is_empty() {
        let n = block_problems.len();
        problems.extend(block_problems.into_iter().take(MAX_BLOCK_PROBLEMS));
        if n > MAX_BLOCK_PROBLEMS {
            problems.push(format!(
                "{name}: {} more damaged blocks",
                n - MAX_BLOCK_PROBLEMS
            ));
        }
        return Err(problems);
    }
    Ok((counts != piece.counts).then(|| {
        format!(
            "{name}: the decoded values count {}, {MANIFEST} says {}",
            counts_in_words(&counts),
            counts_in_words(&piece.counts)
        )
    }))
}

/// Error messages name files relative to the release directory.
fn relative(e: FormatError, dir: &Path) -> String {
    let prefix = format!("{}/", dir.display());
    e.to_string().replace(&prefix, "")
}
