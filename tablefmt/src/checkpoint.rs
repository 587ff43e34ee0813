//! Worker checkpoints (version 3): one worker's shard arrays at a wave boundary, on disk.
//! A chunk file ([`ChunkRef`]) is never modified once written, so checkpoints share unchanged
//! chunks; the manifest ([`WorkerCheckpoint`]) is written after every chunk it names, names the
//! game and layer ([`WorkerCheckpoint::identity`]), and binds chunks and wave logs by length and
//! crc32. Every byte and name: docs/format.md, "Worker checkpoints".

use crate::layer::LayerIdentity;
use crate::FormatError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Version of the checkpoint files in docs/format.md: a manifest's `version` (absent before 3:
/// [`UNVERSIONED`]); the cells' format is in the chunks' names.
pub const CHECKPOINT_VERSION: u32 = 3;
/// The version a manifest without a `version` field is read as: 2 (or 1, as its chunks' names
/// say). Such a manifest does not name its game, so it is refused ([`identity_problem`]).
pub const UNVERSIONED: u32 = 2;
/// zstd level for checkpoint chunks: fast, and shard arrays compress well even so.
const LEVEL: i32 = 1;
/// Bytes of a shard's cells per checkpoint chunk (the last one shorter).
pub const CHUNK_BYTES: u64 = 1 << 22;

/// How a chunk holds its cells, as its file name says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellsFormat {
    /// Version 1: a byte per cell (0 uncounted, 1–248 a counter, 249–254 W / L old, current,
    /// new, 255 illegal); chunk C holds cells C·2^22 on. Read, converted, never written.
    Bytes,
    /// Version 2: six-bit cells packed five to a little-endian 32-bit word (bits 6j..6j + 6 of
    /// word w: cell 5w + j; bits 30 and 31 zero); chunk C holds bytes C·2^22 on.
    Packed,
}

impl CellsFormat {
    /// The word in the chunk file names of this format.
    fn tag(self) -> &'static str {
        match self {
            CellsFormat::Bytes => "cells",
            CellsFormat::Packed => "cells6",
        }
    }
}

/// Where a chunk lives and how to check it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    /// File name inside the checkpoint directory.
    pub file: String,
    /// Length and crc32 of the raw (decompressed) bytes.
    pub raw_len: u64,
    /// crc32 of the raw bytes.
    pub raw_crc: u32,
    /// Length and crc32 of the compressed frame as stored.
    pub frame_len: u64,
    /// crc32 of the frame as stored.
    pub frame_crc: u32,
}

pub use crate::fsio::crc32;

/// Compress `data` into `dir/file` durably and describe it.
pub fn write_chunk(dir: &Path, file: &str, data: &[u8]) -> Result<ChunkRef, FormatError> {
    let path = dir.join(file);
    let frame = zstd::bulk::compress(data, LEVEL).map_err(|e| FormatError::io(&path, e))?;
    crate::fsio::write_atomically(&path, &frame)?;
    Ok(ChunkRef {
        file: file.to_string(),
        raw_len: data.len() as u64,
        raw_crc: crc32(data),
        frame_len: frame.len() as u64,
        frame_crc: crc32(&frame),
    })
}

/// Read a chunk back, checking the frame and the raw bytes against `r`. A file name that is not
/// one [`chunk_name`] produces (one that could leave `dir`) is refused, never opened.
pub fn read_chunk(dir: &Path, r: &ChunkRef) -> Result<Vec<u8>, FormatError> {
    if parse_chunk_name(&r.file).is_none() {
        return Err(FormatError::Corrupt(format!(
            "checkpoint chunk {:?} in {}: not a chunk file name (sSSSSS-cells6-cCCCCC-wNNNNN.zst)",
            r.file,
            dir.display()
        )));
    }
    read_checked(dir, r)
}

/// The raw bytes of the chunk `r` describes, its frame and raw bytes checked against `r`; the
/// caller has checked that `r.file` is a name of its format (one that stays inside `dir`).
pub(crate) fn read_checked(dir: &Path, r: &ChunkRef) -> Result<Vec<u8>, FormatError> {
    let path = dir.join(&r.file);
    let bad =
        |what: String| FormatError::Corrupt(format!("checkpoint chunk {}: {what}", path.display()));
    let frame = match read_frame(&path, r.frame_len) {
        Ok(Ok(frame)) => frame,
        Ok(Err(len)) => {
            return Err(bad(format!(
                "{len} bytes on disk, {} expected (truncated?)",
                r.frame_len
            )))
        }
        Err(FormatError::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(bad("missing".into()))
        }
        Err(e) => return Err(e),
    };
    if crc32(&frame) != r.frame_crc {
        return Err(bad("crc32 mismatch (the file was altered)".into()));
    }
    let raw = zstd::bulk::decompress(&frame, r.raw_len as usize)
        .map_err(|e| bad(format!("zstd: {e}")))?;
    if raw.len() as u64 != r.raw_len || crc32(&raw) != r.raw_crc {
        return Err(bad("decompressed bytes do not match their crc32".into()));
    }
    Ok(raw)
}

/// The bytes of a chunk file (a regular file: [`crate::fsio::open_regular`]) if it holds
/// `frame_len` bytes, or its length if not (nothing read then).
fn read_frame(path: &Path, frame_len: u64) -> Result<Result<Vec<u8>, u64>, FormatError> {
    use std::io::Read;
    let file = crate::fsio::open_regular(path)?;
    let len = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
    if len != frame_len {
        return Ok(Err(len));
    }
    let mut frame = Vec::with_capacity(len as usize);
    file.take(frame_len)
        .read_to_end(&mut frame)
        .map_err(|e| FormatError::io(path, e))?;
    Ok(Ok(frame))
}

/// Check a chunk without keeping its bytes.
pub fn check_chunk(dir: &Path, r: &ChunkRef) -> Result<(), FormatError> {
    read_chunk(dir, r).map(|_| ())
}

/// Check a chunk file's stored frame (its length and crc32) without decompressing it: what a
/// replica holder checks of the files it receives. The error names the file.
pub fn check_frame(dir: &Path, r: &ChunkRef) -> Result<(), FormatError> {
    let path = dir.join(&r.file);
    if parse_chunk_name(&r.file).is_none() {
        return Err(FormatError::Corrupt(format!(
            "{:?} is not a chunk file name",
            r.file
        )));
    }
    let frame = match read_frame(&path, r.frame_len)? {
        Ok(frame) => frame,
        Err(len) => {
            return Err(FormatError::Corrupt(format!(
                "checkpoint chunk {}: {len} bytes, the manifest says {}",
                path.display(),
                r.frame_len
            )))
        }
    };
    if crc32(&frame) != r.frame_crc {
        return Err(FormatError::Corrupt(format!(
            "checkpoint chunk {}: {} bytes with crc32 {:08x}, the manifest says {} bytes with {:08x}",
            path.display(),
            frame.len(),
            crc32(&frame),
            r.frame_len,
            r.frame_crc
        )));
    }
    Ok(())
}

/// The directory, inside a worker's directory for a layer, that holds its copy of worker
/// `owner`'s checkpoints of that layer (the same files as `owner`'s `checkpoint/` directory, and
/// its wave logs): every worker keeps one for its ring predecessor, so a worker whose disk is lost
/// restores from its successor.
pub fn replica_dir(layer_dir: &Path, owner: usize) -> PathBuf {
    layer_dir.join("replicas").join(format!("worker-{owner}"))
}

/// File name of chunk `chunk` of shard `shard`'s cells, written after wave `wave`.
pub fn chunk_name(shard: usize, chunk: u64, wave: u32) -> String {
    format_chunk_name(CellsFormat::Packed, shard, chunk, wave)
}

/// [`chunk_name`] in a given format (version 1 names for tests and conversions).
pub fn format_chunk_name(format: CellsFormat, shard: usize, chunk: u64, wave: u32) -> String {
    format!("s{shard:05}-{}-c{chunk:05}-w{wave:05}.zst", format.tag())
}

/// The shard, chunk and wave of a chunk file name, when it is exactly one [`chunk_name`] writes
/// or version 1 wrote (`None` for any other name: so a name accepted here has no `/`, no `..`,
/// and stays inside its directory).
pub fn parse_chunk_name(name: &str) -> Option<(usize, u64, u32)> {
    parse_chunk_name_and_format(name).map(|(parsed, _)| parsed)
}

/// The format a chunk file name says its cells are in (`None` for other names).
pub fn chunk_format(name: &str) -> Option<CellsFormat> {
    parse_chunk_name_and_format(name).map(|(_, format)| format)
}

fn parse_chunk_name_and_format(name: &str) -> Option<((usize, u64, u32), CellsFormat)> {
    fn digits<T: std::str::FromStr>(s: &str) -> Option<T> {
        if s.len() >= 5 && s.bytes().all(|b| b.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    }
    let rest = name.strip_prefix('s')?.strip_suffix(".zst")?;
    let (format, (shard, rest)) = [CellsFormat::Packed, CellsFormat::Bytes]
        .into_iter()
        .find_map(|f| Some((f, rest.split_once(&format!("-{}-c", f.tag()))?)))?;
    let (chunk, wave) = rest.split_once("-w")?;
    let parsed = (digits(shard)?, digits(chunk)?, digits(wave)?);
    // Canonical only: no extra leading zeros beyond the writer's padding.
    (format_chunk_name(format, parsed.0, parsed.1, parsed.2) == name).then_some((parsed, format))
}

/// The shard a chunk file name belongs to (`None` for other names).
pub fn chunk_shard(name: &str) -> Option<usize> {
    if !name.ends_with(".zst") {
        return None;
    }
    name.strip_prefix('s')
        .and_then(|r| r.get(..5))
        .and_then(|n| n.parse::<usize>().ok())
}

/// The saved state of one shard: its cells chunk by chunk, and its wave log's length and crc32.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardCheckpoint {
    /// The shard's index.
    pub shard: usize,
    /// Its cells' chunks, in order ([`CHUNK_BYTES`] bytes each, as their names' format says).
    pub cells: Vec<ChunkRef>,
    /// The cells that count their successors outside the cell (code 56): `(i, n)`, cell `i` of
    /// the shard has `n` successors left. Version 2; empty (and left out) when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overflow: Vec<(u64, u32)>,
    /// Length in bytes of the shard's wave log at the checkpoint: a resume cuts the log back to it.
    pub wave_log_len: u64,
    /// crc32 of those `wave_log_len` bytes.
    pub wave_log_crc: u32,
}

impl ShardCheckpoint {
    /// The format of the shard's chunks ([`parse_manifest`] checked that they agree).
    pub fn format(&self) -> CellsFormat {
        self.cells
            .first()
            .and_then(|r| chunk_format(&r.file))
            .unwrap_or(CellsFormat::Packed)
    }
}

/// One worker's checkpoint of one layer after wave `wave` closed: the manifest.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerCheckpoint {
    /// [`CHECKPOINT_VERSION`]; absent (read as [`UNVERSIONED`]) in manifests of versions 1 and 2.
    #[serde(default = "unversioned")]
    pub version: u32,
    /// The game whose arrays these are, as JSON (`{"game": FAMILY, PARAMETER: VALUE, ...}`: the
    /// game the kernel solves, `run.json`'s `solved_as`, else its `spec`). With `layer`, what the
    /// checkpoint belongs to ([`WorkerCheckpoint::identity`]). Null in versions 1 and 2.
    #[serde(default)]
    pub game: serde_json::Value,
    /// Name of the layer being solved.
    pub layer: String,
    /// The last wave closed before the checkpoint.
    pub wave: u32,
    /// The worker whose shards these are.
    pub worker: usize,
    /// One entry per shard the worker owns.
    pub shards: Vec<ShardCheckpoint>,
}

fn unversioned() -> u32 {
    UNVERSIONED
}

impl WorkerCheckpoint {
    /// What the checkpoint belongs to: its game and layer (the notion a layer file's identity
    /// record has).
    pub fn identity(&self) -> LayerIdentity {
        LayerIdentity::new(self.game.clone(), &self.layer)
    }
}

/// Why the manifest `cp` (read from `name`) cannot be restored for `expected` (the game and
/// layer being solved), in words that name both and say what to do; `None` when it belongs to
/// them. A manifest from before version 3 names no game: it is refused, since nothing proves
/// that its cells are this game's.
pub fn identity_problem(
    cp: &WorkerCheckpoint,
    expected: &LayerIdentity,
    name: &str,
) -> Option<String> {
    if cp.version < CHECKPOINT_VERSION {
        return Some(format!(
            "{name} is a checkpoint of format {} (written by a kingmaker from before 2026-12-07), \
             which does not record its game, so it cannot be checked to be {}: resume the run \
             with the kingmaker that began it (run.json's kingmaker_version), or build it anew",
            cp.version,
            expected.describe()
        ));
    }
    if cp.version > CHECKPOINT_VERSION {
        return Some(format!(
            "{name} is a checkpoint of format {}, newer than this kingmaker's {CHECKPOINT_VERSION}: \
             resume the run with the kingmaker that wrote it",
            cp.version
        ));
    }
    let found = cp.identity();
    (found != *expected).then(|| {
        format!(
            "{name} is a checkpoint of {}, but this run solves {}{}: the run's files were mixed \
             up or run.json was edited since the checkpoint; restore them, or build anew into \
             another directory",
            found.describe(),
            expected.describe(),
            differences(
                &found.game,
                &expected.game,
                ("in the checkpoint", "in this run")
            )
        )
    })
}

/// The parameters in which two games' JSON differ, as ` (connect: 4 in A, 3 in B)` for labels
/// `A` and `B`; empty when they are not both objects or do not differ.
pub fn differences(
    found: &serde_json::Value,
    expected: &serde_json::Value,
    labels: (&str, &str),
) -> String {
    let (Some(a), Some(b)) = (found.as_object(), expected.as_object()) else {
        return String::new();
    };
    let missing = serde_json::Value::Null;
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let diffs: Vec<String> = keys
        .into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            format!(
                "{k}: {} {}, {} {}",
                a.get(k).unwrap_or(&missing),
                labels.0,
                b.get(k).unwrap_or(&missing),
                labels.1
            )
        })
        .collect();
    if diffs.is_empty() {
        String::new()
    } else {
        format!(" ({})", diffs.join(", "))
    }
}

/// File name of worker `worker`'s manifest of `layer` at `wave`.
pub fn manifest_name(worker: usize, layer: &str, wave: u32) -> String {
    format!("worker-{worker}.{layer}.w{wave:05}.json")
}

/// The manifest path of a worker's checkpoint of `layer` at `wave`.
pub fn manifest_path(dir: &Path, worker: usize, layer: &str, wave: u32) -> PathBuf {
    dir.join(manifest_name(worker, layer, wave))
}

/// Whether `name` is one of worker `worker`'s manifests (any layer, any wave).
pub fn is_manifest_of(worker: usize, name: &str) -> bool {
    name.starts_with(&format!("worker-{worker}.")) && name.ends_with(".json")
}

/// Write a manifest durably: to a temporary file, fsync, rename into place, fsync the directory.
pub fn write_manifest(path: &Path, manifest: &WorkerCheckpoint) -> Result<(), FormatError> {
    let text = serde_json::to_vec_pretty(manifest).expect("serialisable");
    crate::fsio::write_atomically(path, &text)
}

/// Read a manifest, naming the file in errors (unreadable: [`FormatError::Io`]; not a manifest:
/// [`FormatError::Corrupt`]).
pub fn read_manifest(path: &Path) -> Result<WorkerCheckpoint, FormatError> {
    let cap = crate::fsio::METADATA_CAP;
    let text = crate::fsio::read_bounded(path, cap, "a checkpoint manifest")?;
    parse_manifest(&text)
        .map_err(|e| FormatError::Corrupt(format!("{} is malformed: {e}", path.display())))
}

/// Parse a manifest's bytes and check the chunk file names it lists: each must be the name the
/// writer gives chunk C of shard S ([`chunk_name`], any wave), where S is the shard it is listed
/// under and C its position in `cells`. A name with a `/`, `..` or an absolute path is never one,
/// so every chunk a parsed manifest names lies inside the manifest's directory. The error names
/// the offending file.
pub fn parse_manifest(bytes: &[u8]) -> Result<WorkerCheckpoint, String> {
    let cp: WorkerCheckpoint = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    for s in &cp.shards {
        for (c, r) in s.cells.iter().enumerate() {
            match parse_chunk_name(&r.file) {
                Some((shard, chunk, _)) if shard == s.shard && chunk == c as u64 => {}
                Some(_) => {
                    return Err(format!(
                        "chunk file {:?} is listed as chunk {c} of shard {}, but its name says \
                         otherwise",
                        r.file, s.shard
                    ))
                }
                None => {
                    return Err(format!(
                        "chunk file {:?} (chunk {c} of shard {}) is not a chunk file name \
                         (sSSSSS-cells6-cCCCCC-wNNNNN.zst, inside the checkpoint directory)",
                        r.file, s.shard
                    ))
                }
            }
        }
        if let Some(r) = s
            .cells
            .iter()
            .find(|r| chunk_format(&r.file) != Some(s.format()))
        {
            return Err(format!(
                "chunk file {:?} of shard {} is not in the format of the shard's first chunk",
                r.file, s.shard
            ));
        }
    }
    Ok(cp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip_and_corruption_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
        let name = chunk_name(0, 0, 0);
        let r = write_chunk(dir.path(), &name, &data).unwrap();
        assert_eq!(read_chunk(dir.path(), &r).unwrap(), data);
        assert!(r.frame_len < r.raw_len / 10, "repetitive arrays compress");

        let path = dir.path().join(&name);
        let mut bytes = std::fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let err = read_chunk(dir.path(), &r).unwrap_err().to_string();
        assert!(err.contains(&name) && err.contains("crc32"), "{err}");

        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(read_chunk(dir.path(), &r)
            .unwrap_err()
            .to_string()
            .contains("truncated"));

        std::fs::remove_file(&path).unwrap();
        assert!(read_chunk(dir.path(), &r)
            .unwrap_err()
            .to_string()
            .contains("missing"));
    }

    #[test]
    fn names_and_manifests() {
        assert_eq!(chunk_name(3, 12, 7), "s00003-cells6-c00012-w00007.zst");
        assert_eq!(chunk_shard(&chunk_name(3, 12, 7)), Some(3));
        assert_eq!(chunk_shard("s00003-cells6-c00012-w00007.zst.tmp"), None);
        assert_eq!(manifest_name(1, "solo", 42), "worker-1.solo.w00042.json");
        assert!(is_manifest_of(1, "worker-1.solo.w00042.json"));
        assert!(!is_manifest_of(1, "worker-12.solo.w00042.json"));

        let dir = tempfile::tempdir().unwrap();
        let cp = WorkerCheckpoint {
            version: CHECKPOINT_VERSION,
            game: serde_json::json!({"game": "connect4", "board": "5x4", "connect": 4}),
            layer: "solo".into(),
            wave: 42,
            worker: 1,
            shards: vec![ShardCheckpoint {
                shard: 0,
                cells: vec![write_chunk(dir.path(), &chunk_name(0, 0, 42), b"cells").unwrap()],
                overflow: vec![(3, 60), (9, 57)],
                wave_log_len: 12,
                wave_log_crc: 7,
            }],
        };
        let path = manifest_path(dir.path(), 1, "solo", 42);
        write_manifest(&path, &cp).unwrap();
        let back = read_manifest(&path).unwrap();
        assert_eq!((back.wave, back.shards[0].cells[0].raw_len), (42, 5));
        assert_eq!(back.shards[0].overflow, vec![(3, 60), (9, 57)]);
        assert_eq!(back.shards[0].format(), CellsFormat::Packed);
        assert_eq!((back.version, back.identity()), (3, cp.identity()));
        std::fs::write(&path, b"{\"wave\": ").unwrap();
        let err = read_manifest(&path).unwrap_err();
        assert!(
            matches!(err, FormatError::Corrupt(ref m) if m.contains("is malformed")),
            "{err}"
        );
    }

    /// A manifest's chunk file names stay inside its directory — only the
    /// names the writer produces, for the shard and position they are listed at.
    #[test]
    fn chunk_names_outside_the_directory_are_refused() {
        assert_eq!(parse_chunk_name(&chunk_name(3, 12, 7)), Some((3, 12, 7)));
        assert_eq!(
            parse_chunk_name(&chunk_name(123_456, 0, 100_000)),
            Some((123_456, 0, 100_000))
        );
        for bad in [
            "",
            "..",
            "../s00000-cells-c00000-w00001.zst",
            "/tmp/s00000-cells-c00000-w00001.zst",
            "s00000-cells-c00000-w00001.zst/..",
            "sub/s00000-cells-c00000-w00001.zst",
            "s00000-cells-c00000-w00001.zst.tmp",
            "s0-cells-c0-w1.zst",
            "s000000-cells-c00000-w00001.zst",
            "s+0000-cells-c00000-w00001.zst",
            "s00000-cells-c00000-w0000\u{0}.zst",
        ] {
            assert_eq!(parse_chunk_name(bad), None, "{bad:?}");
        }
        let dir = tempfile::tempdir().unwrap();
        let good = chunk_name(0, 0, 1);
        let cp = |file: &str| WorkerCheckpoint {
            version: CHECKPOINT_VERSION,
            game: serde_json::Value::Null,
            layer: "solo".into(),
            wave: 1,
            worker: 0,
            shards: vec![ShardCheckpoint {
                shard: 0,
                cells: vec![ChunkRef {
                    file: file.into(),
                    raw_len: 1,
                    raw_crc: 0,
                    frame_len: 1,
                    frame_crc: 0,
                }],
                overflow: vec![],
                wave_log_len: 0,
                wave_log_crc: 0,
            }],
        };
        let path = manifest_path(dir.path(), 0, "solo", 1);
        write_manifest(&path, &cp(&good)).unwrap();
        assert_eq!(read_manifest(&path).unwrap().shards[0].cells[0].file, good);
        for bad in [
            format!("../{good}"),
            format!("/{good}"),
            format!("x/../{good}"),
            chunk_name(1, 0, 1),
            chunk_name(0, 1, 1),
        ] {
            write_manifest(&path, &cp(&bad)).unwrap();
            let err = read_manifest(&path).unwrap_err();
            assert!(
                matches!(err, FormatError::Corrupt(ref m)
                    if m.contains(&format!("{bad:?}")) && m.contains("worker-0.solo.w00001.json")),
                "{bad}: {err}"
            );
            let err = read_chunk(dir.path(), &cp(&bad).shards[0].cells[0]);
            if bad.contains('/') {
                assert!(err.unwrap_err().to_string().contains(&bad));
            }
        }
    }

    /// Version 1 wrote a byte per cell under other names and no overflow counts: its manifests
    /// still parse, say their format, and a shard may not mix the two.
    #[test]
    fn version_1_chunks_are_read_and_not_mixed() {
        let v1 = format_chunk_name(CellsFormat::Bytes, 3, 12, 7);
        assert_eq!(v1, "s00003-cells-c00012-w00007.zst");
        assert_eq!(chunk_name(3, 12, 7), "s00003-cells6-c00012-w00007.zst");
        assert_eq!(parse_chunk_name(&v1), Some((3, 12, 7)));
        assert_eq!(chunk_format(&v1), Some(CellsFormat::Bytes));
        assert_eq!(
            chunk_format(&chunk_name(3, 12, 7)),
            Some(CellsFormat::Packed)
        );
        assert_eq!(chunk_shard(&v1), Some(3));
        let chunk = |file: String| {
            format!(
                r#"{{"file": "{file}", "raw_len": 1, "raw_crc": 0, "frame_len": 1, "frame_crc": 0}}"#
            )
        };
        let manifest = |chunks: &[String]| {
            format!(
                r#"{{"layer": "solo", "wave": 7, "worker": 0, "shards": [{{"shard": 3, "cells": [{}], "wave_log_len": 0, "wave_log_crc": 0}}]}}"#,
                chunks.join(", ")
            )
        };
        let old = manifest(&[
            chunk(format_chunk_name(CellsFormat::Bytes, 3, 0, 7)),
            chunk(format_chunk_name(CellsFormat::Bytes, 3, 1, 5)),
        ]);
        let cp = parse_manifest(old.as_bytes()).unwrap();
        assert_eq!(cp.shards[0].format(), CellsFormat::Bytes);
        assert!(cp.shards[0].overflow.is_empty());
        let mixed = manifest(&[
            chunk(format_chunk_name(CellsFormat::Bytes, 3, 0, 7)),
            chunk(chunk_name(3, 1, 7)),
        ]);
        let err = parse_manifest(mixed.as_bytes()).unwrap_err();
        assert!(err.contains("not in the format"), "{err}");
    }

    /// A manifest names its game and layer; one of another game, another layer, or from before
    /// version 3 (no game) is refused with both identities named and what to do.
    #[test]
    fn a_manifest_names_its_game_and_another_is_refused() {
        let game = |connect: u32| serde_json::json!({"game": "connect4", "board": "5x4", "connect": connect});
        let cp = WorkerCheckpoint {
            version: CHECKPOINT_VERSION,
            game: game(4),
            layer: "solo".into(),
            wave: 2,
            worker: 0,
            shards: vec![],
        };
        let text = serde_json::to_string(&cp).unwrap();
        assert!(
            text.contains(r#""version":3"#) && text.contains(r#""connect":4"#),
            "{text}"
        );
        let back = parse_manifest(text.as_bytes()).unwrap();
        let mine = LayerIdentity::new(game(4), "solo");
        assert_eq!(identity_problem(&back, &mine, "m.json"), None);

        let other = LayerIdentity::new(game(3), "solo");
        let err = identity_problem(&back, &other, "m.json").unwrap();
        for part in [
            "m.json",
            r#""connect":4"#,
            r#""connect":3"#,
            "connect: 4 in the checkpoint, 3 in this run",
            "build anew",
        ] {
            assert!(err.contains(part), "{part}: {err}");
        }
        let err =
            identity_problem(&back, &LayerIdentity::new(game(4), "enable_ab"), "m.json").unwrap();
        assert!(
            err.contains("layer solo") && err.contains("layer enable_ab"),
            "{err}"
        );

        // Version 2 wrote no version and no game: read as version 2, and refused.
        let old = r#"{"layer": "solo", "wave": 2, "worker": 0, "shards": []}"#;
        let old = parse_manifest(old.as_bytes()).unwrap();
        assert_eq!(
            (old.version, &old.game),
            (UNVERSIONED, &serde_json::Value::Null)
        );
        let err = identity_problem(&old, &mine, "m.json").unwrap();
        assert!(
            err.contains("format 2") && err.contains("kingmaker that began it"),
            "{err}"
        );
        let newer = WorkerCheckpoint {
            version: CHECKPOINT_VERSION + 1,
            ..cp
        };
        let err = identity_problem(&newer, &mine, "m.json").unwrap();
        assert!(err.contains("newer"), "{err}");
    }
}
