//! Fuzzing every reader of outside bytes in tablefmt: layer files (header, index, blocks),
//! release manifests, checkpoint chunk references, update buckets, lists of kept parts and
//! parts read in place on a worker. Arbitrary or damaged input gives an error,
//! never a panic, a hang or a huge allocation.

use kingmaker_tablefmt::checkpoint::{
    chunk_name, parse_chunk_name, parse_manifest, read_manifest, write_manifest, ChunkRef,
    ShardCheckpoint, WorkerCheckpoint,
};
use kingmaker_tablefmt::layer::{LayerFile, LayerHeader, LayerIdentity, HEADER_LEN};
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
    write_layer(
        &path,
        &LayerIdentity::new(serde_json::json!({"game": "test"}), "solo"),
        300,
        &opts,
        |first, v, d| {
            for (k, (v, d)) in v.iter_mut().zip(d.iter_mut()).enumerate() {
                let i = first + k as u64;
                *v = (i % 3) as u8 + 1;
                *d = if *v == 3 { 0 } else { (i % 11) as u16 };
            }
            Ok(())
        },
    )
    .unwrap();
    std::fs::read(&path).unwrap()
}

/// `bytes` with each `(place, byte)` of `edits` written (places taken modulo the length) and up
/// to 7 bytes cut from the end.
fn damaged(mut bytes: Vec<u8>, edits: &[(usize, u8)], cut: usize) -> Vec<u8> {
    for &(at, b) in edits {
        let k = at % bytes.len();
        bytes[k] = b;
    }
    let keep = bytes.len() - cut % 8;
    bytes.truncate(keep);
    bytes
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
        // Some edits leave the file valid (a byte set to its own value); most are caught.
        let _ = read_all(&damaged(valid_layer(), &edits, cut));
    }

    #[test]
    fn arbitrary_identity_records_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = LayerIdentity::parse_record(&bytes, "x");
    }

    #[test]
    fn identity_records_with_a_valid_crc_are_refused_or_round_trip(json in "\\{(\"[a-z]{1,6}\": ?(\"[a-z0-9]{0,6}\"|[0-9]{1,4}|\\{\\}|null), ?){0,4}\\}") {
        let mut record = (json.len() as u32).to_le_bytes().to_vec();
        record.extend_from_slice(json.as_bytes());
        record.extend_from_slice(&crc32fast::hash(json.as_bytes()).to_le_bytes());
        if let Ok(id) = LayerIdentity::parse_record(&record, "x") {
            prop_assert_eq!(LayerIdentity::parse_record(&id.to_record().unwrap(), "x").unwrap(), id);
        }
    }

    /// A valid file passes the readers' identity check as its own layer and as no other.
    #[test]
    fn a_file_opens_only_as_the_layer_its_record_names(layer in "[a-z_]{1,12}") {
        let bytes = valid_layer();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.kmt");
        std::fs::write(&path, &bytes).unwrap();
        let f = LayerFile::open(&path).unwrap();
        let held = f.identity().unwrap().clone();
        let other = LayerIdentity::new(held.game.clone(), &layer);
        prop_assert_eq!(f.check_identity(&other).is_ok(), layer == held.layer);
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

/// A worker checkpoint manifest of `shards` (shard number, chunk count, wave of each chunk).
fn manifest_of(wave: u32, worker: usize, shards: &[(usize, Vec<u32>)]) -> WorkerCheckpoint {
    WorkerCheckpoint {
        version: kingmaker_tablefmt::checkpoint::CHECKPOINT_VERSION,
        game: serde_json::json!({"game": "toppen"}),
        layer: "solo".into(),
        wave,
        worker,
        shards: shards
            .iter()
            .map(|(shard, waves)| ShardCheckpoint {
                shard: *shard,
                cells: waves
                    .iter()
                    .enumerate()
                    .map(|(c, &w)| ChunkRef {
                        file: chunk_name(*shard, c as u64, w),
                        raw_len: c as u64 * 7,
                        raw_crc: w,
                        frame_len: 3,
                        frame_crc: 9,
                    })
                    .collect(),
                overflow: vec![],
                wave_log_len: 12,
                wave_log_crc: 34,
            })
            .collect(),
    }
}

fn shards_strategy() -> impl Strategy<Value = Vec<(usize, Vec<u32>)>> {
    proptest::collection::vec(
        (
            any::<usize>(),
            proptest::collection::vec(any::<u32>(), 0..4),
        ),
        0..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn arbitrary_checkpoint_manifests_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        if let Err(m) = parse_manifest(&bytes) {
            prop_assert!(!m.is_empty());
        }
    }

    #[test]
    fn checkpoint_manifests_round_trip(wave in any::<u32>(), worker in any::<usize>(), shards in shards_strategy()) {
        let cp = manifest_of(wave, worker, &shards);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("worker-0.solo.w00001.json");
        write_manifest(&path, &cp).unwrap();
        let back = read_manifest(&path).unwrap();
        prop_assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&cp).unwrap());
        for s in &back.shards {
            for (c, r) in s.cells.iter().enumerate() {
                let (shard, chunk, _) = parse_chunk_name(&r.file).unwrap();
                prop_assert_eq!((shard, chunk), (s.shard, c as u64));
            }
        }
    }

    #[test]
    fn damaged_checkpoint_manifests_never_panic(shards in shards_strategy(), edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let mut bytes = serde_json::to_vec_pretty(&manifest_of(5, 0, &shards)).unwrap();
        for (at, b) in edits {
            let k = at % bytes.len();
            bytes[k] = b;
        }
        let keep = bytes.len() - cut % (bytes.len() + 1);
        bytes.truncate(keep);
        match parse_manifest(&bytes) {
            // Whatever parses names only chunk files inside the directory.
            Ok(cp) => {
                for r in cp.shards.iter().flat_map(|s| s.cells.iter()) {
                    prop_assert!(parse_chunk_name(&r.file).is_some() && !r.file.contains('/'));
                }
            }
            Err(m) => prop_assert!(!m.is_empty()),
        }
    }

    #[test]
    fn forged_chunk_names_are_refused_by_name(shards in shards_strategy(), pick in any::<usize>(), name in "(\\.\\./|/|[a-z]{1,4}/)?[a-zA-Z0-9./_-]{0,40}") {
        let mut cp = manifest_of(5, 0, &shards);
        let cells: Vec<(usize, usize)> = cp.shards.iter().enumerate()
            .flat_map(|(i, s)| (0..s.cells.len()).map(move |c| (i, c))).collect();
        prop_assume!(!cells.is_empty());
        let (i, c) = cells[pick % cells.len()];
        let canonical = chunk_name(cp.shards[i].shard, c as u64, 0);
        let listed_right = parse_chunk_name(&name)
            .is_some_and(|(s, k, _)| s == cp.shards[i].shard && k == c as u64);
        cp.shards[i].cells[c].file = name.clone();
        let result = parse_manifest(&serde_json::to_vec(&cp).unwrap());
        if listed_right {
            prop_assert!(result.is_ok());
            prop_assert!(name.starts_with('s') && !name.contains('/'), "{} vs {}", name, canonical);
        } else {
            let m = result.unwrap_err();
            prop_assert!(m.contains(&format!("{name:?}")), "{}", m);
        }
    }
}

#[test]
fn the_valid_layer_reads() {
    read_all(&valid_layer()).unwrap();
}

/// Decode an update bucket; the first error.
fn read_bucket(bytes: &[u8]) -> Result<usize, kingmaker_tablefmt::FormatError> {
    let mut n = 0;
    kingmaker_tablefmt::update_bucket::each_frame(bytes, "fuzz", |codes| {
        n += codes.len();
        Ok::<_, kingmaker_tablefmt::FormatError>(())
    })?;
    Ok(n)
}

/// A frame header with a valid crc32 over `payload`, announcing `count` codes.
fn forged_frame(count: u32, encoding: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut hasher = crc32fast::Hasher::new();
    for word in [count, len, encoding] {
        hasher.update(&word.to_le_bytes());
    }
    hasher.update(payload);
    let mut frame = Vec::new();
    for word in [count, len, hasher.finalize(), encoding] {
        frame.extend_from_slice(&word.to_le_bytes());
    }
    frame.extend_from_slice(payload);
    frame
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn arbitrary_update_buckets_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read_bucket(&bytes);
    }

    /// A frame whose crc32 is right but whose count or payload lies: refused, and nothing huge
    /// is allocated for the count it claims.
    #[test]
    fn forged_update_frames_are_refused(count in any::<u32>(), zstd in any::<bool>(), codes in proptest::collection::vec(any::<u32>(), 0..50)) {
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        let mut varints = Vec::new();
        let mut previous = 0;
        for &c in &sorted {
            prost::encoding::encode_varint((c - previous) as u64, &mut varints);
            previous = c;
        }
        let payload = if zstd { zstd::bulk::compress(&varints, 1).unwrap() } else { varints };
        let frame = forged_frame(count, zstd as u32, &payload);
        let read = read_bucket(&frame);
        prop_assert_eq!(read.is_ok(), count as usize == codes.len(), "{:?}", read);
    }
}

/// A part's bytes as a worker serves them (here: whatever the test gives), read in place.
struct Served(Vec<u8>);

impl kingmaker_tablefmt::layer::ReadAt for Served {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let bytes = start
            .checked_add(buf.len())
            .and_then(|end| self.0.get(start..end))
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        buf.copy_from_slice(bytes);
        Ok(())
    }
}

/// The list of one part of layer `solo` (300 rows): its file's `size` as recorded.
fn one_part_list(size: u64) -> kingmaker_tablefmt::kept::KeptLayer {
    use kingmaker_tablefmt::kept::{KeptLayer, KeptPart, KEPT_FORMAT};
    use kingmaker_tablefmt::table::{TableSummary, ValueCounts};
    let counts = ValueCounts {
        win: 100,
        loss: 100,
        draw: 100,
        illegal: 0,
    };
    KeptLayer {
        format: KEPT_FORMAT,
        game: serde_json::Value::Null,
        layer: "solo".into(),
        parts: vec![KeptPart {
            worker: "127.0.0.1:1".into(),
            first: 0,
            states: 300,
            file: "run/layers/solo.part-0000.kmt".into(),
            size,
            sha256: "00".repeat(32),
            counts,
            max_depth: 10,
        }],
        summary: TableSummary {
            states: 300,
            counts,
            digest: "00".repeat(32),
            max_depth: 10,
        },
    }
}

/// Open the one-part layer served as `bytes` on its worker and read every state; the first error.
fn read_served(bytes: Vec<u8>) -> Result<(), String> {
    let size = bytes.len() as u64;
    read_served_as(bytes, size)
}

/// As [`read_served`], the part's size recorded as `size`.
fn read_served_as(bytes: Vec<u8>, size: u64) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let kept = one_part_list(size);
    let served = move |_: &kingmaker_tablefmt::kept::KeptPart| {
        Ok(Box::new(Served(bytes.clone())) as Box<dyn kingmaker_tablefmt::layer::ReadAt>)
    };
    let game = serde_json::json!({"game": "test"});
    let table = kingmaker_tablefmt::kept::open_parts(dir.path(), &kept, &game, Some(&served))
        .map_err(|e| e.to_string())?
        .ok_or("no table")?;
    let (mut v, mut d) = (vec![0u8; 300], vec![0u16; 300]);
    table
        .read_states(0, &mut v, &mut d)
        .map_err(|e| e.to_string())?;
    table.values_plane().map_err(|e| e.to_string())?;
    Ok(())
}

/// A valid part file of `solo` (300 rows), as a worker writes it.
fn valid_part() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.kmt");
    let identity = LayerIdentity::new(serde_json::json!({"game": "test"}), "solo.part-0000");
    let opts = PackOptions {
        block_states: 64,
        zstd_level: 1,
    };
    write_layer(&path, &identity, 300, &opts, |first, v, d| {
        for (k, (v, d)) in v.iter_mut().zip(d.iter_mut()).enumerate() {
            *v = ((first as usize + k) % 3) as u8 + 1;
            *d = if *v == 3 { 0 } else { 10 };
        }
        Ok(())
    })
    .unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn a_valid_part_reads_in_place() {
    read_served(valid_part()).unwrap();
    // A worker that sends less than the part's recorded size: refused, the record believed.
    let part = valid_part();
    let size = part.len() as u64;
    let short = part[..part.len() - 10].to_vec();
    assert!(read_served_as(short, size).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever a worker sends for a part read in place, the reader refuses it or reads a table
    /// whose every block checked: never a panic.
    #[test]
    fn arbitrary_served_parts_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        prop_assert!(read_served(bytes).is_err());
    }

    #[test]
    fn damaged_served_parts_never_panic(edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        // Some edits leave the part valid (a byte set to its own value); most are caught.
        let _ = read_served(damaged(valid_part(), &edits, cut));
    }

    /// Arbitrary text as `layers/NAME.kept.json`: an error, never a panic.
    #[test]
    fn arbitrary_kept_lists_never_panic(text in "\\{(\"[a-z_]{1,8}\": ?(\"[a-z0-9._:/-]{0,12}\"|[0-9]{1,20}|\\[\\]|\\{\\}|null|\\[\\{\\}\\]), ?){0,8}\\}") {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("solo.kept.json"), &text).unwrap();
        let _ = kingmaker_tablefmt::kept::read_kept(dir.path(), "solo");
    }
}
