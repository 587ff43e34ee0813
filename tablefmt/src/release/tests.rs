use super::manifest::*;
use super::verify::verify_release;
use super::*;
use sha2::{Digest, Sha256};

/// A layer with the structure of a 3-player game: the mover is `index % 3` and a W for the
/// mover-0 states ends after a number of plies ≡ 1 (mod 3), so the depth code applies.
fn periodic_data(states: usize, seed: u64) -> (Vec<u8>, Vec<u16>) {
    let (mut values, mut depth) = layer_data(states, seed, true);
    for i in (0..states).step_by(3) {
        if values[i] == 1 && depth[i] != 0 {
            depth[i] = depth[i] / 3 * 3 + 1;
        }
    }
    for (v, d) in values.iter_mut().zip(depth.iter_mut()) {
        if *d > 300 {
            *v = 1;
            *d = 301;
        }
    }
    (values, depth)
}

/// A deterministic pseudo-random layer: runs of values, depths only on W/L states.
fn layer_data(states: usize, seed: u64, deep: bool) -> (Vec<u8>, Vec<u16>) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut values = Vec::with_capacity(states);
    let mut depth = Vec::with_capacity(states);
    while values.len() < states {
        let r = next();
        let v = (r % 4) as u8;
        let run = 1 + (r >> 8) % 9;
        for _ in 0..run {
            if values.len() == states {
                break;
            }
            values.push(v);
            let d = if v == 1 || v == 2 {
                let m = if deep { 700 } else { 40 };
                (next() % m) as u16
            } else {
                0
            };
            depth.push(d);
        }
    }
    (values, depth)
}

fn write(dir: &Path, name: &str, values: &[u8], depth: &[u16], opts: &PackOptions) -> WrittenLayer {
    write_layer(
        &dir.join(layer_file_name(name)),
        values.len() as u64,
        opts,
        |first, v, d| {
            let f = first as usize;
            v.copy_from_slice(&values[f..f + v.len()]);
            d.copy_from_slice(&depth[f..f + d.len()]);
            Ok(())
        },
    )
    .unwrap()
}

#[test]
fn layer_files_round_trip_every_state() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, &(states, bs, deep)) in [
        (1662, 64, false),
        (1000, 4, false),
        (5000, 1 << 16, true),
        (0, 64, false),
        (4097, 256, true),
    ]
    .iter()
    .enumerate()
    {
        let (values, depth) = if i % 2 == 0 {
            periodic_data(states, i as u64 + 1)
        } else {
            layer_data(states, i as u64 + 1, deep)
        };
        let opts = PackOptions {
            block_states: bs,
            zstd_level: 3,
        };
        let name = format!("l{i}");
        let w = write(tmp.path(), &name, &values, &depth, &opts);
        let mut counts = ValueCounts::default();
        counts.add(&values);
        assert_eq!(w.counts, counts);
        assert_eq!(w.digest, hex::encode(Sha256::digest(&values)));
        assert_eq!(w.max_depth, depth.iter().copied().max().unwrap_or(0));
        assert_eq!(w.blocks, (states as u64).div_ceil(bs as u64));
        if i % 2 == 0 && states > 0 {
            assert_eq!(w.depth_modulus, 3, "layer {i} has a period-3 depth pattern");
        }
        let path = tmp.path().join(layer_file_name(&name));
        assert_eq!(file_sha256(&path).unwrap(), (w.size, w.sha256.clone()));
        let file = LayerFile::open(&path).unwrap();
        file.set_cache_blocks(2);
        assert_eq!(file.states(), states as u64);
        for s in 0..states {
            assert_eq!(
                file.get(s as u64).unwrap(),
                (values[s], depth[s]),
                "state {s} of layer {i}"
            );
        }
        // Random order exercises the cache's evictions.
        for k in 0..states {
            let s = (k * 7919) % states;
            assert_eq!(file.lookup(s as u64).unwrap(), (values[s], depth[s]));
        }
        assert!(
            file.get(states as u64).is_err(),
            "out of range is an error, not a panic"
        );
    }
}

#[test]
fn header_round_trips_and_rejects_nonsense() {
    let mut code = depth::DepthCode::plain();
    code.modulus = 3;
    code.residue[1][2] = 0;
    let h = LayerHeader::new(1662, 64, 14, code);
    let bytes = h.to_bytes();
    assert_eq!(LayerHeader::parse(&bytes, "x").unwrap(), h);
    let err = LayerHeader::parse(&bytes[..40], "x")
        .unwrap_err()
        .to_string();
    assert!(err.contains("truncated"), "{err}");
    let mut wrong = bytes;
    wrong[0] = b'X';
    assert!(LayerHeader::parse(&wrong, "x")
        .unwrap_err()
        .to_string()
        .contains("magic"));
    // A consistent-looking header with a different version, crc recomputed.
    let mut v2 = bytes;
    v2[8] = 2;
    let crc = crc32(&v2[..CRC_AT]);
    v2[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    assert!(LayerHeader::parse(&v2, "x")
        .unwrap_err()
        .to_string()
        .contains("version 2"));
    // Wrong block count, crc recomputed: caught by the consistency rule.
    let mut nb = bytes;
    nb[32] = 99;
    let crc = crc32(&nb[..CRC_AT]);
    nb[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    assert!(LayerHeader::parse(&nb, "x")
        .unwrap_err()
        .to_string()
        .contains("inconsistent"));
}

/// Open a layer file and decode every block; the first error.
fn read_all(path: &Path) -> Result<(), FormatError> {
    let f = LayerFile::open(path)?;
    for b in 0..f.blocks() {
        f.read_block(b)?;
    }
    Ok(())
}

#[test]
fn flipping_any_byte_of_a_layer_file_is_detected_by_the_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let (values, depth) = layer_data(300, 9, false);
    write(
        tmp.path(),
        "x",
        &values,
        &depth,
        &PackOptions {
            block_states: 64,
            zstd_level: 3,
        },
    );
    let path = tmp.path().join("x.kmt");
    let good = std::fs::read(&path).unwrap();
    read_all(&path).unwrap();
    for i in 0..good.len() {
        for bit in [0x01u8, 0x80] {
            let mut bad = good.clone();
            bad[i] ^= bit;
            std::fs::write(&path, &bad).unwrap();
            assert!(
                read_all(&path).is_err(),
                "flip of bit {bit:#x} in byte {i} of {} went unnoticed",
                good.len()
            );
        }
    }
    for len in [0, 10, 63, 64, 100, good.len() - 1] {
        std::fs::write(&path, &good[..len]).unwrap();
        let err = read_all(&path).unwrap_err().to_string();
        assert!(
            err.contains("truncated") || err.contains("shorter"),
            "length {len}: {err}"
        );
    }
    let mut longer = good.clone();
    longer.push(0);
    std::fs::write(&path, &longer).unwrap();
    assert!(read_all(&path)
        .unwrap_err()
        .to_string()
        .contains("unexpected bytes"));
}

/// A small release of two layers in `dir`.
fn make_release(dir: &Path) -> Manifest {
    let mut layers = Vec::new();
    let mut files = Vec::new();
    for (i, name) in ["solo", "enable_ab"].iter().enumerate() {
        let (values, depth) = layer_data(700, 20 + i as u64, false);
        let opts = PackOptions {
            block_states: 128,
            zstd_level: 3,
        };
        let w = write(dir, name, &values, &depth, &opts);
        let file = layer_file_name(name);
        files.push(ManifestFile {
            path: file.clone(),
            size: w.size,
            sha256: w.sha256,
        });
        layers.push(ManifestLayer {
            name: name.to_string(),
            coalition: 1,
            objective: 1,
            file,
            states: 700,
            block_states: 128,
            blocks: w.blocks,
            counts: w.counts,
            digest: w.digest,
            max_depth: w.max_depth,
        });
    }
    let manifest = Manifest {
        format: FORMAT_NAME.into(),
        format_version: FORMAT_VERSION,
        game: serde_json::json!({"game": "test"}),
        name: "test".into(),
        states: 700,
        layers,
        files,
        provenance: Provenance {
            kingmaker_version: "0".into(),
            packed_at: "2026-01-01T00:00:00Z".into(),
            host: "h".into(),
            run: serde_json::json!({}),
            summary: serde_json::json!({}),
        },
    };
    write_manifest(dir, &manifest).unwrap();
    manifest
}

#[test]
fn a_release_verifies_and_every_flipped_byte_of_every_file_fails_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = make_release(dir);
    let report = verify_release(dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!(report.states, 1400);
    assert_eq!(report.files, 4);
    assert_eq!(read_manifest(dir).unwrap(), manifest);
    for name in [
        "manifest.json",
        "manifest.sha256",
        "solo.kmt",
        "enable_ab.kmt",
    ] {
        let path = dir.join(name);
        let good = std::fs::read(&path).unwrap();
        // Every byte of the small files; a stride through the larger ones (the reader test above
        // covers every byte of a layer file).
        let step = if good.len() > 600 { 7 } else { 1 };
        for i in (0..good.len()).step_by(step) {
            let mut bad = good.clone();
            bad[i] ^= 0x20;
            std::fs::write(&path, &bad).unwrap();
            let report = verify_release(dir);
            assert!(!report.ok(), "flipping byte {i} of {name} went unnoticed");
            assert!(
                report.problems.iter().any(|p| p.contains(name)),
                "{name} byte {i}: {:?}",
                report.problems
            );
        }
        std::fs::write(&path, &good).unwrap();
    }
    assert!(verify_release(dir).ok());
}

#[test]
fn truncated_missing_and_extra_files_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    make_release(dir);
    let path = dir.join("solo.kmt");
    let good = std::fs::read(&path).unwrap();
    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    let r = verify_release(dir);
    assert!(
        r.problems
            .iter()
            .any(|p| p.starts_with("solo.kmt: truncated")),
        "{:?}",
        r.problems
    );
    std::fs::remove_file(&path).unwrap();
    let r = verify_release(dir);
    assert!(
        r.problems
            .iter()
            .any(|p| p == "solo.kmt: missing (listed in manifest.json)"),
        "{:?}",
        r.problems
    );
    std::fs::write(&path, &good).unwrap();
    std::fs::write(dir.join("notes.txt"), b"hello").unwrap();
    let r = verify_release(dir);
    assert!(r.ok());
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    std::fs::remove_file(dir.join("manifest.sha256")).unwrap();
    let r = verify_release(dir);
    assert!(
        r.problems[0].contains("missing manifest.sha256"),
        "{:?}",
        r.problems
    );
}

#[test]
fn file_names_are_plain() {
    for ok in ["solo.kmt", "enable_ab.kmt", "a-b_c.1"] {
        check_file_name(ok).unwrap();
    }
    for bad in [
        "",
        "../solo.kmt",
        "a/b",
        ".hidden",
        "x\\y",
        "/etc/passwd",
        "a b",
        "é",
    ] {
        assert!(check_file_name(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_manifest_checksum_line_is_sha256sum_format() {
    let line = manifest_sha256_line(b"abc");
    assert_eq!(
        line,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  manifest.json\n"
    );
}
