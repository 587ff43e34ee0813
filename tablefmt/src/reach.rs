//! Checkpoints of a search for the states reachable from a start (version 1): at the boundary of
//! two levels, the bitmap of the states seen, the bitmap of the level to expand next, and what the
//! caller has counted of the levels before it. Every byte and name: docs/format.md,
//! "Reachable-states checkpoints".

use crate::checkpoint::{crc32, read_checked, write_chunk, ChunkRef};
use crate::FormatError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Version of the files below.
pub const REACH_VERSION: u32 = 1;
/// The manifest's file name in the checkpoint directory.
pub const MANIFEST: &str = "reach.json";
/// States per chunk of a bitmap (4 MiB of bits; the last chunk shorter).
pub const CHUNK_STATES: u64 = 1 << 25;
/// The two bitmaps of a checkpoint, as their chunk files begin.
pub const BITMAPS: [&str; 2] = ["seen", "level"];

/// The manifest `reach.json`: the search's state after it finished the levels before `depth`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReachManifest {
    /// [`REACH_VERSION`].
    pub version: u32,
    /// What the caller counts as it goes: a checkpoint is resumed only by the same counting.
    pub purpose: String,
    /// The game searched, as `run.json` names it (`{"game": "cc3p", "level": 2}`): a checkpoint
    /// is resumed only for the same game. Null in a manifest written before 2026-12-07, which is
    /// resumed on its purpose, size and start alone.
    #[serde(default)]
    pub game: serde_json::Value,
    /// The size of the game's index space (bits per bitmap).
    pub states: u64,
    /// The start state.
    pub start: u64,
    /// The level the `level` bitmap holds: the next to be expanded.
    pub depth: u32,
    /// New states at each depth up to `depth` (entry 0: the start alone).
    pub per_depth: Vec<u64>,
    /// The caller's counts of levels 0 to `depth` − 1, as the caller serialises them.
    pub counted: serde_json::Value,
    /// The chunks of the states seen, in order.
    pub seen: Vec<ChunkRef>,
    /// The chunks of the states of level `depth`, in order.
    pub level: Vec<ChunkRef>,
}

/// Chunks of a bitmap of `states` bits.
pub fn chunks(states: u64) -> usize {
    states.div_ceil(CHUNK_STATES) as usize
}

/// File name of chunk `chunk` of bitmap `bitmap` (one of [`BITMAPS`]) in the checkpoint at `depth`.
pub fn chunk_name(bitmap: &str, chunk: usize, depth: u32) -> String {
    format!("{bitmap}-c{chunk:06}-d{depth:04}.zst")
}

/// The bitmap, chunk and depth of a chunk file name, when it is exactly one [`chunk_name`] writes
/// (`None` for any other: a name accepted here has no `/` and no `..`).
pub fn parse_chunk_name(name: &str) -> Option<(&'static str, usize, u32)> {
    let rest = name.strip_suffix(".zst")?;
    let (bitmap, rest) = rest.split_once("-c")?;
    let bitmap = BITMAPS.into_iter().find(|&b| b == bitmap)?;
    let (chunk, depth) = rest.split_once("-d")?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(chunk) || !digits(depth) {
        return None;
    }
    let parsed = (bitmap, chunk.parse().ok()?, depth.parse().ok()?);
    // Canonical only: no extra leading zeros beyond the writer's padding.
    (chunk_name(parsed.0, parsed.1, parsed.2) == name).then_some(parsed)
}

/// Save chunk `chunk` of bitmap `bitmap` (its bits, little-endian words) for the checkpoint at
/// `depth`. Bytes equal to those of `previous` (the last checkpoint's chunk: same length and
/// crc32) are not written again; the new manifest names the old file.
pub fn write_bitmap_chunk(
    dir: &Path,
    bitmap: &str,
    chunk: usize,
    depth: u32,
    bytes: &[u8],
    previous: Option<&ChunkRef>,
) -> Result<ChunkRef, FormatError> {
    if let Some(p) = previous {
        if p.raw_len == bytes.len() as u64 && p.raw_crc == crc32(bytes) {
            return Ok(p.clone());
        }
    }
    write_chunk(dir, &chunk_name(bitmap, chunk, depth), bytes)
}

/// Read chunk `chunk` of bitmap `bitmap` back, checked against its reference.
pub fn read_bitmap_chunk(
    dir: &Path,
    bitmap: &str,
    chunk: usize,
    r: &ChunkRef,
) -> Result<Vec<u8>, FormatError> {
    match parse_chunk_name(&r.file) {
        Some((b, c, _)) if b == bitmap && c == chunk => read_checked(dir, r),
        _ => Err(FormatError::Corrupt(format!(
            "{}: chunk {chunk} of the {bitmap} bitmap is listed as {:?}, not a name of it \
             ({bitmap}-cCCCCCC-dDDDD.zst)",
            dir.join(MANIFEST).display(),
            r.file
        ))),
    }
}

/// Write the manifest durably (after every chunk it names).
pub fn write_manifest(dir: &Path, manifest: &ReachManifest) -> Result<(), FormatError> {
    let text = serde_json::to_vec_pretty(manifest).expect("serialisable");
    crate::fsio::write_atomically(&dir.join(MANIFEST), &text)
}

/// The manifest in `dir`, if there is one; a malformed one, of another version or with chunk
/// lists that do not fit `states`, is an error naming the file.
pub fn read_manifest(dir: &Path) -> Result<Option<ReachManifest>, FormatError> {
    let path = dir.join(MANIFEST);
    let meta = crate::fsio::METADATA_CAP;
    let Some(text) = crate::fsio::read_bounded_if_any(&path, meta, "a reach manifest")? else {
        return Ok(None);
    };
    let bad =
        |what: String| FormatError::Corrupt(format!("{} is malformed: {what}", path.display()));
    let m: ReachManifest = serde_json::from_slice(&text).map_err(|e| bad(e.to_string()))?;
    if m.version != REACH_VERSION {
        return Err(bad(format!(
            "version {}, this build reads {REACH_VERSION}",
            m.version
        )));
    }
    let expected = chunks(m.states);
    if m.seen.len() != expected || m.level.len() != expected {
        return Err(bad(format!(
            "{} and {} chunks listed, {expected} expected for {} states",
            m.seen.len(),
            m.level.len(),
            m.states
        )));
    }
    if m.per_depth.len() != m.depth as usize + 1 {
        return Err(bad(format!(
            "{} counts per depth for depth {}",
            m.per_depth.len(),
            m.depth
        )));
    }
    Ok(Some(m))
}

/// Delete the chunk files of `dir` that `keep` does not name, and temporary files a crash left.
pub fn remove_unlisted(dir: &Path, keep: &ReachManifest) -> Result<(), FormatError> {
    let listed: std::collections::HashSet<&str> = keep
        .seen
        .iter()
        .chain(&keep.level)
        .map(|r| r.file.as_str())
        .collect();
    let entries = std::fs::read_dir(dir).map_err(|e| FormatError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| FormatError::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let stale = parse_chunk_name(&name).is_some() && !listed.contains(name.as_str());
        if stale || (name.starts_with('.') && name.ends_with(".tmp")) {
            std::fs::remove_file(entry.path()).map_err(|e| FormatError::io(&entry.path(), e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_names_round_trip_and_nothing_else_parses() {
        let name = chunk_name("seen", 12, 9);
        assert_eq!(name, "seen-c000012-d0009.zst");
        assert_eq!(parse_chunk_name(&name), Some(("seen", 12, 9)));
        assert_eq!(
            parse_chunk_name("level-c1000000-d12345.zst"),
            Some(("level", 1_000_000, 12345))
        );
        for bad in [
            "seen-c12-d9.zst",
            "seen-c0000012-d0009.zst",
            "other-c000012-d0009.zst",
            "../seen-c000012-d0009.zst",
            "seen-c000012-d0009",
            "seen-c00001x-d0009.zst",
            "reach.json",
        ] {
            assert_eq!(parse_chunk_name(bad), None, "{bad}");
        }
    }

    fn manifest(dir: &Path, states: u64) -> ReachManifest {
        let n = chunks(states);
        let bytes = vec![0xA5u8; 16];
        let seen = (0..n)
            .map(|c| write_bitmap_chunk(dir, "seen", c, 3, &bytes, None).unwrap())
            .collect();
        let level = (0..n)
            .map(|c| write_bitmap_chunk(dir, "level", c, 3, &bytes, None).unwrap())
            .collect();
        ReachManifest {
            version: REACH_VERSION,
            purpose: "test".into(),
            game: serde_json::json!({"game": "test"}),
            states,
            start: 0,
            depth: 3,
            per_depth: vec![1, 2, 3, 4],
            counted: serde_json::json!({"k": [1, 2]}),
            seen,
            level,
        }
    }

    #[test]
    fn a_manifest_and_its_chunks_round_trip_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_manifest(dir.path()).unwrap(), None);
        let m = manifest(dir.path(), CHUNK_STATES + 5);
        write_manifest(dir.path(), &m).unwrap();
        let back = read_manifest(dir.path()).unwrap().unwrap();
        assert_eq!(back, m);
        assert_eq!(
            read_bitmap_chunk(dir.path(), "seen", 1, &back.seen[1]).unwrap(),
            vec![0xA5u8; 16]
        );
        // Listed under the wrong bitmap or position: refused without opening it.
        let err = read_bitmap_chunk(dir.path(), "level", 1, &back.seen[1]).unwrap_err();
        assert!(err.to_string().contains("not a name of it"), "{err}");
        // A flipped byte in a chunk: named.
        let path = dir.path().join(&back.level[0].file);
        let mut frame = std::fs::read(&path).unwrap();
        let last = frame.len() - 1;
        frame[last] ^= 1;
        std::fs::write(&path, frame).unwrap();
        let err = read_bitmap_chunk(dir.path(), "level", 0, &back.level[0]).unwrap_err();
        assert!(err.to_string().contains(&back.level[0].file), "{err}");
    }

    #[test]
    fn a_manifest_that_does_not_fit_its_states_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = manifest(dir.path(), 100);
        m.states = 3 * CHUNK_STATES;
        write_manifest(dir.path(), &m).unwrap();
        let err = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("reach.json is malformed") && err.contains("3 expected"),
            "{err}"
        );
        m.states = 100;
        m.version = 2;
        write_manifest(dir.path(), &m).unwrap();
        let err = read_manifest(dir.path()).unwrap_err().to_string();
        assert!(err.contains("version 2"), "{err}");
    }

    #[test]
    fn unchanged_chunks_are_shared_and_stale_ones_removed() {
        let dir = tempfile::tempdir().unwrap();
        let old = manifest(dir.path(), 10);
        let same =
            write_bitmap_chunk(dir.path(), "seen", 0, 4, &[0xA5; 16], Some(&old.seen[0])).unwrap();
        assert_eq!(same, old.seen[0]);
        let changed =
            write_bitmap_chunk(dir.path(), "level", 0, 4, &[1; 16], Some(&old.level[0])).unwrap();
        assert_eq!(changed.file, "level-c000000-d0004.zst");
        let new = ReachManifest {
            depth: 4,
            per_depth: vec![1, 2, 3, 4, 5],
            seen: vec![same],
            level: vec![changed],
            ..old.clone()
        };
        std::fs::write(dir.path().join(".reach.json.tmp"), b"half").unwrap();
        write_manifest(dir.path(), &new).unwrap();
        remove_unlisted(dir.path(), &new).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "level-c000000-d0004.zst",
                "reach.json",
                "seen-c000000-d0003.zst"
            ]
        );
    }
}
