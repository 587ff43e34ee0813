//! `kingmaker line` through the real binary: a damaged table is named, not read as a missing
//! value.

use kingmaker_e2e::{kingmaker, kingmaker_ok};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Flip one byte in the middle of a layer file's blocks (docs/format.md: a 96-byte header whose
/// `blocks` field is at offset 32, then 16 bytes per block and a crc32, then the blocks).
fn damage_blocks(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let blocks = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize;
    let first = 96 + 16 * blocks + 4;
    assert!(first < bytes.len(), "{} has block data", file.display());
    let middle = first + (bytes.len() - first) / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn a_damaged_block_is_reported_as_a_crc_error() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cc2p");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        "4x4",
        "--pieces",
        "2",
        "--out",
        s(&run),
    ]);
    kingmaker_ok(&["line", s(&run), "start"]);
    damage_blocks(&run.join("layers/solo.kmt"));
    let out = kingmaker(&["line", s(&run), "start"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "line read a damaged table: {err}");
    assert!(
        err.contains("solo.kmt") && err.contains("crc32 mismatch"),
        "the file and the crc mismatch are named: {err}"
    );
    assert!(!err.contains("has no W, L or D value"), "{err}");
}
