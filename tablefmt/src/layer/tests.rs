use super::depth::DepthCode;
use super::header::CRC_AT;
use super::index::index_bytes;
use super::*;
use crate::release::{layer_file_name, write_layer, PackOptions};
use crate::table::ValueCounts;
use crate::{FormatError, Lookup};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The identity the tests' layer files carry.
pub(crate) fn test_identity(layer: &str) -> LayerIdentity {
    LayerIdentity::new(serde_json::json!({"game": "test"}), layer)
}

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
pub(crate) fn layer_data(states: usize, seed: u64, deep: bool) -> (Vec<u8>, Vec<u16>) {
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

pub(crate) fn write(
    dir: &Path,
    name: &str,
    values: &[u8],
    depth: &[u16],
    opts: &PackOptions,
) -> WrittenLayer {
    write_layer(
        &dir.join(layer_file_name(name)),
        &test_identity(name),
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
    let h = LayerHeader::new(1662, 64, ENCODING_PACKED, 14, code, 0);
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
    // Grouped values need a period of 2 or more and no depth residues.
    let grouped = LayerHeader::new(
        1662,
        64,
        ENCODING_GROUPED,
        0,
        depth::DepthCode::period(3),
        0,
    );
    assert_eq!(
        LayerHeader::parse(&grouped.to_bytes(), "x").unwrap(),
        grouped
    );
    for code in [depth::DepthCode::plain(), code] {
        let bad = LayerHeader::new(1662, 64, ENCODING_GROUPED, 0, code, 0).to_bytes();
        let err = LayerHeader::parse(&bad, "x").unwrap_err().to_string();
        assert!(err.contains("grouped values"), "{err}");
    }
    // A consistent-looking header with an unknown version, crc recomputed.
    let mut v3 = bytes;
    v3[8] = 3;
    let crc = crc32(&v3[..CRC_AT]);
    v3[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    assert!(LayerHeader::parse(&v3, "x")
        .unwrap_err()
        .to_string()
        .contains("version 3"));
    // Version 2 with no room for its identity record before the index.
    let mut v2 = bytes;
    v2[8] = 2;
    let crc = crc32(&v2[..CRC_AT]);
    v2[CRC_AT..].copy_from_slice(&crc.to_le_bytes());
    assert!(LayerHeader::parse(&v2, "x")
        .unwrap_err()
        .to_string()
        .contains("identity record"));
    // A version-2 header round trips with its record's length.
    let labelled = LayerHeader::new(1662, 64, ENCODING_PACKED, 14, code, 40);
    assert_eq!(labelled.version, 2);
    assert_eq!(labelled.index_offset, HEADER_LEN + 40);
    assert_eq!(
        LayerHeader::parse(&labelled.to_bytes(), "x").unwrap(),
        labelled
    );
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

#[test]
fn values_files_planes_and_ranges_agree_with_the_data() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, &(states, bs)) in [(1662usize, 64u32), (5001, 4), (0, 64), (70_001, 1 << 16)]
        .iter()
        .enumerate()
    {
        let (values, depth) = layer_data(states, 40 + i as u64, i % 2 == 1);
        // Plain (period 1: encoding 2) and grouped (encoding 3) values files.
        for period in [1u8, 2, 3, 5, 8] {
            let path = tmp.path().join(format!("v{i}-{period}.values.kmt"));
            let w = crate::release::write_values(
                &path,
                &test_identity("solo"),
                states as u64,
                &PackOptions {
                    block_states: bs,
                    zstd_level: 3,
                },
                period,
                |first, v| {
                    let f = first as usize;
                    v.copy_from_slice(&values[f..f + v.len()]);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(w.digest, hex::encode(Sha256::digest(&values)));
            let file = LayerFile::open(&path).unwrap();
            let want = if period > 1 {
                ENCODING_GROUPED
            } else {
                ENCODING_VALUES
            };
            assert_eq!(file.header().encoding, want);
            assert!(!file.has_depths());
            assert!(states == 0 || file.get(0).is_err(), "no made-up depths");
            let plane = file.values_plane().unwrap();
            assert_eq!(plane.states(), states as u64);
            for (s, &v) in values.iter().enumerate() {
                assert_eq!(plane.get(s as u64), v, "state {s}, period {period}");
                assert_eq!(file.value(s as u64).unwrap(), v);
            }
        }
        // The values-and-depths file, written by a streaming writer fed in uneven pieces.
        let path = tmp.path().join(format!("v{i}.kmt"));
        let mut writer = LayerWriter::create(
            &path,
            &test_identity("solo"),
            states as u64,
            bs,
            ENCODING_PACKED,
            DepthCode::plain(),
            1,
        )
        .unwrap();
        let mut at = 0;
        let mut step = 1;
        while at < states {
            let end = (at + step).min(states);
            writer.append(&values[at..end], &depth[at..end]).unwrap();
            at = end;
            step = step * 3 + 1;
        }
        let w2 = writer.finish().unwrap();
        assert_eq!(w2.digest, hex::encode(Sha256::digest(&values)));
        assert_eq!(w2.counts, {
            let mut c = crate::table::ValueCounts::default();
            c.add(&values);
            c
        });
        let file = LayerFile::open(&path).unwrap();
        let plane = file.values_plane().unwrap();
        for s in 0..states {
            assert_eq!(plane.get(s as u64), values[s]);
            assert_eq!(file.get(s as u64).unwrap(), (values[s], depth[s]));
        }
        if states > 10 {
            let (a, b) = (states / 3, states - 5);
            let mut v = vec![0u8; b - a];
            let mut d = vec![0u16; b - a];
            file.read_states(a as u64, &mut v, &mut d).unwrap();
            assert_eq!(&v[..], &values[a..b]);
            assert_eq!(&d[..], &depth[a..b]);
            assert!(file.read_states(b as u64, &mut v, &mut d).is_err());
        }
    }
}

#[test]
fn a_writer_refuses_too_few_too_many_and_bad_values() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("x.kmt");
    let make = || {
        LayerWriter::create(
            &path,
            &test_identity("t"),
            10,
            4,
            ENCODING_PACKED,
            DepthCode::plain(),
            1,
        )
        .unwrap()
    };
    let mut w = make();
    w.append(&[1; 5], &[1; 5]).unwrap();
    assert!(w.finish().is_err(), "5 of 10 states");
    assert!(!path.exists(), "an unfinished file is never in place");
    let mut w = make();
    assert!(w.append(&[1; 11], &[1; 11]).is_err());
    let mut w = make();
    assert!(w.append(&[4], &[0]).is_err());
    let mut w = make();
    assert!(w.append(&[1, 2], &[0]).is_err());
}

/// Rewrite a (version 2) layer file as version 1 wrote it: no identity record, the index right
/// after the header and every block offset moved up.
pub(crate) fn downgrade_to_version_1(path: &Path) {
    let file = LayerFile::open(path).unwrap();
    let h = *file.header();
    let old = std::fs::read(path).unwrap();
    let v1 = LayerHeader::new(
        h.states,
        h.block_states,
        h.encoding,
        h.max_depth,
        h.depth_code,
        0,
    );
    let shift = h.identity_len;
    let entries: Vec<BlockEntry> = file
        .index()
        .iter()
        .map(|e| BlockEntry {
            offset: e.offset - shift,
            ..*e
        })
        .collect();
    let mut out = v1.to_bytes().to_vec();
    out.extend_from_slice(&index_bytes(&entries));
    out.extend_from_slice(&old[h.data_offset() as usize..]);
    std::fs::write(path, out).unwrap();
}

#[test]
fn a_file_says_which_layer_of_which_game_it_holds_and_readers_refuse_another() {
    let tmp = tempfile::tempdir().unwrap();
    let (values, depth) = layer_data(300, 4, false);
    let opts = PackOptions {
        block_states: 64,
        zstd_level: 1,
    };
    write(tmp.path(), "solo", &values, &depth, &opts);
    let path = tmp.path().join("solo.kmt");
    let file = LayerFile::open(&path).unwrap();
    assert_eq!(file.header().version, LAYER_VERSION);
    assert_eq!(file.identity(), Some(&test_identity("solo")));
    LayerFile::open_as(&path, &test_identity("solo")).unwrap();
    let other_layer = LayerFile::open_as(&path, &test_identity("enable_ab"))
        .err()
        .unwrap();
    assert!(
        other_layer.to_string().contains("holds layer solo")
            && other_layer.to_string().contains("not the layer enable_ab"),
        "{other_layer}"
    );
    let other_game = LayerIdentity::new(serde_json::json!({"game": "test", "level": 2}), "solo");
    assert!(LayerFile::open_as(&path, &other_game).is_err());
    // An older file opens, says nothing of itself, and cannot be checked by identity.
    downgrade_to_version_1(&path);
    let old = LayerFile::open(&path).unwrap();
    assert_eq!((old.header().version, old.identity()), (1, None));
    let mut back = vec![0u8; values.len()];
    old.read_states(0, &mut back, &mut []).unwrap();
    assert_eq!(back, values);
    let err = old.check_identity(&test_identity("solo")).unwrap_err();
    assert!(err.to_string().contains("version 1"), "{err}");
}

#[test]
fn identity_records_round_trip_and_bad_ones_are_named() {
    let id = LayerIdentity::new(serde_json::json!({"game": "cc3p", "level": 1}), "solo");
    let record = id.to_record().unwrap();
    assert_eq!(LayerIdentity::parse_record(&record, "f").unwrap(), id);
    for i in 0..record.len() {
        let mut bad = record.clone();
        bad[i] ^= 0x20;
        assert!(LayerIdentity::parse_record(&bad, "f").is_err(), "byte {i}");
    }
    let huge = LayerIdentity::new(serde_json::json!("x".repeat(5000)), "solo");
    assert!(huge.to_record().is_err());
}

/// A file read elsewhere is opened with its recorded size: a record that disagrees with the
/// file's index is named as the recorded size, never as the file's own.
#[test]
fn a_recorded_size_that_disagrees_with_the_index_is_called_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let (values, depth) = layer_data(300, 9, false);
    let opts = PackOptions {
        block_states: 64,
        zstd_level: 3,
    };
    write(tmp.path(), "x", &values, &depth, &opts);
    let path = tmp.path().join("x.kmt");
    let size = std::fs::metadata(&path).unwrap().len();
    let open = |recorded: u64| {
        let file = std::fs::File::open(&path).unwrap();
        LayerFile::from_source(&path, Box::new(file), recorded)
    };
    open(size).unwrap();
    for recorded in [size - 7, size + 7] {
        let err = open(recorded).err().expect("a wrong record").to_string();
        assert!(
            err.contains(&format!("blocks end at byte {size}"))
                && err.contains(&format!("recorded size is {recorded} bytes"))
                && !err.contains("the file has"),
            "{err}"
        );
    }
}
