//! The byte-level check of a whole release: the manifest against `manifest.sha256`, every listed
//! file's presence (a partial copy's: those `parts.json` names and any other here), size and
//! sha256, every layer file's header, block index and blocks (crc32, decompression, payload
//! layout), and the decoded values against the manifest's counts and digest.
//! Game rules are not consulted here (that is `verify --deep`, in the coordinator).

use super::manifest::{
    counts_in_words, read_manifest, Manifest, ManifestLayer, MANIFEST, MANIFEST_SHA256,
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
        let files = [Some(&layer.file), layer.values_file.as_ref()];
        report.layers += usize::from(files.into_iter().flatten().any(|f| held(f)));
        match check_layer_files(dir, &manifest.game, layer, &held) {
            Ok(n) => report.states += n,
            Err(problems) => report.problems.extend(problems),
        }
    }
    if report.layers == 0 && report.problems.is_empty() {
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

/// The files of `manifest` a copy in `dir` holds, in the manifest's order: every one for a whole
/// release; for a partial copy those its parts list names and any other here, since readers
/// open a layer's file wherever it is present.
pub fn held_files(dir: &Path, manifest: &Manifest, parts: Option<&Parts>) -> Vec<String> {
    manifest
        .files
        .iter()
        .map(|f| &f.path)
        .filter(|f| parts.is_none_or(|p| p.files.contains(f) || dir.join(f).exists()))
        .cloned()
        .collect()
}

/// Check a layer's files completely (values and depths, and values alone); the number of states
/// decoded, or the problems found.
/// `game` is the manifest's: every file that names its layer (layer file version 2) must name
/// this one of this game.
pub fn check_layer(
    dir: &Path,
    game: &serde_json::Value,
    layer: &ManifestLayer,
) -> Result<u64, Vec<String>> {
    check_layer_files(dir, game, layer, &|_| true)
}

/// [`check_layer`] on the files of the layer that `held` says the copy holds (a partial copy:
/// `parts.json`); the states decoded from the first of them.
pub fn check_layer_files(
    dir: &Path,
    game: &serde_json::Value,
    layer: &ManifestLayer,
    held: &dyn Fn(&str) -> bool,
) -> Result<u64, Vec<String>> {
    let identity = LayerIdentity::new(game.clone(), &layer.name);
    let mut states = None;
    if held(&layer.file) {
        states = Some(check_layer_file(
            dir,
            &identity,
            layer,
            &layer.file,
            &[ENCODING_PACKED],
        )?);
    }
    if let Some(values) = layer.values_file.as_ref().filter(|v| held(v)) {
        let grouped = [ENCODING_VALUES, ENCODING_GROUPED];
        let n = check_layer_file(dir, &identity, layer, values, &grouped)?;
        states.get_or_insert(n);
    }
    Ok(states.unwrap_or(0))
}

/// Check one layer file of `layer` against the manifest; its encoding must be one of `encodings`.
fn check_layer_file(
    dir: &Path,
    identity: &LayerIdentity,
    layer: &ManifestLayer,
    name: &str,
    encodings: &[u32],
) -> Result<u64, Vec<String>> {
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
    if h.states != layer.states {
        problems.push(mismatch(
            "states",
            h.states.to_string(),
            layer.states.to_string(),
        ));
    }
    if h.block_states != layer.block_states {
        problems.push(mismatch(
            "block size",
            h.block_states.to_string(),
            layer.block_states.to_string(),
        ));
    }
    if h.encoding == ENCODING_PACKED && h.max_depth != layer.max_depth {
        problems.push(mismatch(
            "max depth",
            h.max_depth.to_string(),
            layer.max_depth.to_string(),
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let mut hasher = Sha256::new();
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
    if counts != layer.counts {
        problems.push(format!(
            "{name}: the decoded values count {}, {MANIFEST} says {}",
            counts_in_words(&counts),
            counts_in_words(&layer.counts)
        ));
    }
    let digest = hex::encode(hasher.finalize());
    if digest != layer.digest {
        problems.push(format!(
            "{name}: the values' digest is {digest}, {MANIFEST} says {}",
            layer.digest
        ));
    }
    if problems.is_empty() {
        Ok(h.states)
    } else {
        Err(problems)
    }
}

/// Error messages name files relative to the release directory.
fn relative(e: FormatError, dir: &Path) -> String {
    let prefix = format!("{}/", dir.display());
    e.to_string().replace(&prefix, "")
}
