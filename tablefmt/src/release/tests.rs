use super::manifest::*;
use super::verify::verify_release;
use super::*;
use crate::layer::tests::{layer_data, write};
use std::path::Path;

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
            url: None,
        });
        let values_file = values_file_name(name);
        // One values file plain (encoding 2), one grouped by period 3 (encoding 3).
        let period = [1, 3][i];
        let v = write_values(
            &dir.join(&values_file),
            &crate::layer::tests::test_identity(name),
            700,
            &opts,
            period,
            |first, out| {
                let f = first as usize;
                out.copy_from_slice(&values[f..f + out.len()]);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(v.digest, w.digest);
        files.push(ManifestFile {
            path: values_file.clone(),
            size: v.size,
            sha256: v.sha256,
            url: None,
        });
        layers.push(ManifestLayer {
            name: name.to_string(),
            coalition: 1,
            objective: 1,
            file,
            values_file: Some(values_file),
            states: 700,
            block_states: 128,
            blocks: w.blocks,
            counts: w.counts,
            digest: w.digest,
            max_depth: w.max_depth,
            parts: Vec::new(),
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
    assert_eq!(report.files, 6);
    assert_eq!(read_manifest(dir).unwrap(), manifest);
    for name in [
        "manifest.json",
        "manifest.sha256",
        "solo.kmt",
        "enable_ab.kmt",
        "solo.values.kmt",
        "enable_ab.values.kmt",
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
    // The lock `fetch` leaves is not a stray file.
    std::fs::write(dir.join(super::verify::DIR_LOCK_FILE), b"{}").unwrap();
    let r = verify_release(dir);
    assert!(r.ok());
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].starts_with("notes.txt"), "{:?}", r.warnings);
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

/// Exchange two files of a release directory.
fn swap(dir: &Path, a: &str, b: &str) {
    let tmp = dir.join("swap.tmp");
    std::fs::rename(dir.join(a), &tmp).unwrap();
    std::fs::rename(dir.join(b), dir.join(a)).unwrap();
    std::fs::rename(&tmp, dir.join(b)).unwrap();
}

#[test]
fn swapped_layer_files_are_refused_by_every_reader_and_by_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let manifest = make_release(dir);
    open_listed_file(dir, &manifest, "solo", "solo.kmt").unwrap();
    swap(dir, "solo.kmt", "enable_ab.kmt");
    let err = open_listed_file(dir, &manifest, "solo", "solo.kmt")
        .err()
        .unwrap();
    assert!(err.to_string().contains("holds layer enable_ab"), "{err}");
    let report = verify_release(dir);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("not the layer solo")),
        "{:?}",
        report.problems
    );
}

#[test]
fn version_1_files_of_a_release_are_checked_by_their_sha256() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut manifest = make_release(dir);
    for f in &mut manifest.files {
        crate::layer::tests::downgrade_to_version_1(&dir.join(&f.path));
        f.sha256 = file_sha256(&dir.join(&f.path)).unwrap().1;
        f.size = std::fs::metadata(dir.join(&f.path)).unwrap().len();
    }
    write_manifest(dir, &manifest).unwrap();
    let report = verify_release(dir);
    assert!(report.ok(), "{:?}", report.problems);
    let solo = open_listed_file(dir, &manifest, "solo", "solo.kmt").unwrap();
    assert_eq!(solo.identity(), None);
    swap(dir, "solo.kmt", "enable_ab.kmt");
    let err = open_listed_file(dir, &manifest, "solo", "solo.kmt")
        .err()
        .unwrap();
    assert!(err.to_string().contains("sha256"), "{err}");
}

#[test]
fn counts_read_as_words() {
    let c = crate::table::ValueCounts {
        win: 1234,
        loss: 5,
        draw: 6,
        illegal: 4_947_100_130,
    };
    assert_eq!(counts_in_words(&c), "W 1,234 L 5 D 6 illegal 4,947,100,130");
    assert_eq!(
        counts_in_words(&Default::default()),
        "W 0 L 0 D 0 illegal 0"
    );
}

#[test]
fn a_partial_copy_is_checked_on_the_files_its_parts_list_names() {
    use super::parts::*;
    let tmp = tempfile::tempdir().unwrap();
    let manifest = make_release(tmp.path());
    let values_only = PartChoice {
        layers: vec!["enable_ab".into()],
        values_only: true,
        ..Default::default()
    };
    let take = values_only.files(&manifest).unwrap();
    assert_eq!(take, ["enable_ab.values.kmt"]);
    let whole = PartChoice::default();
    assert_eq!(whole.files(&manifest).unwrap().len(), manifest.files.len());
    let unknown = PartChoice {
        layers: vec!["nope".into()],
        values_only: false,
        ..Default::default()
    };
    let e = unknown.files(&manifest).unwrap_err().to_string();
    assert!(
        e.contains("no layer nope (its layers: solo, enable_ab)"),
        "{e}"
    );

    // Keep only what the parts list names: the copy verifies, on those files alone.
    for f in manifest.files.iter().filter(|f| !take.contains(&f.path)) {
        std::fs::remove_file(tmp.path().join(&f.path)).unwrap();
    }
    let report = verify_release(tmp.path());
    assert!(report
        .problems
        .iter()
        .any(|p| p.contains("solo.kmt: missing")));
    write_parts(tmp.path(), &Parts::new(take.clone())).unwrap();
    let report = verify_release(tmp.path());
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!((report.layers, report.states), (1, 700));
    assert_eq!(report.parts.unwrap().files, take);

    // A layer file here that the list leaves out is checked too: readers open it.
    let stray = tmp.path().join("solo.kmt");
    std::fs::copy(tmp.path().join("enable_ab.values.kmt"), &stray).unwrap();
    let report = verify_release(tmp.path());
    assert!(
        !report.ok() && report.problems.iter().all(|p| p.contains("solo.kmt")),
        "{:?}",
        report.problems
    );
    assert!(report
        .warnings
        .iter()
        .any(|w| w.contains("solo.kmt: here although")));
    std::fs::remove_file(&stray).unwrap();
    assert!(verify_release(tmp.path()).ok());

    // A parts list that is not one, lists nothing or a file twice, or names a file the release
    // does not have.
    for bad in [
        &b"not json"[..],
        br#"{"format": "kingmaker-release-parts", "format_version": 9, "files": []}"#,
        br#"{"format": "kingmaker-release-parts", "format_version": 1, "files": []}"#,
        br#"{"format": "kingmaker-release-parts", "format_version": 1, "files": ["enable_ab.values.kmt", "enable_ab.values.kmt"]}"#,
        br#"{"format": "kingmaker-release-parts", "format_version": 1, "files": ["x.kmt"]}"#,
    ] {
        std::fs::write(tmp.path().join(PARTS), bad).unwrap();
        let report = verify_release(tmp.path());
        assert!(
            !report.ok() && report.problems[0].contains("parts.json"),
            "{:?}",
            report.problems
        );
    }
}

proptest::proptest! {
    /// Whatever bytes `parts.json` holds, reading it answers (a list or an error), never panics.
    #[test]
    fn any_parts_file_is_read_or_refused(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
        let tmp = tempfile::tempdir().unwrap();
        let manifest = make_release(tmp.path());
        std::fs::write(tmp.path().join(super::parts::PARTS), &bytes).unwrap();
        let _ = super::parts::read_parts(tmp.path(), &manifest);
    }
}

#[test]
fn a_manifest_that_lists_a_name_the_tool_writes_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = make_release(tmp.path());
    for reserved in [
        "parts.json",
        "kingmaker.lock",
        "run.json",
        "manifest.sha256",
        "summary.json",
        "solo.kmt.part",
    ] {
        let mut m = manifest.clone();
        m.files.push(ManifestFile {
            path: reserved.into(),
            ..m.files[0].clone()
        });
        let e = m.check().unwrap_err().to_string();
        assert!(
            e.contains(&format!("lists {reserved}, which no file")),
            "{e}"
        );
        // Neither written nor read.
        assert!(write_manifest(tmp.path(), &m).is_err());
        let bytes = m.to_bytes();
        let line = manifest_sha256_line(&bytes);
        assert!(Manifest::parse_checked(&bytes, line.as_bytes()).is_err());
    }
    manifest.check().unwrap();
}

#[test]
fn a_layer_asked_for_twice_is_refused() {
    use super::parts::PartChoice;
    let tmp = tempfile::tempdir().unwrap();
    let manifest = make_release(tmp.path());
    let twice = PartChoice {
        layers: vec!["solo".into(), "solo".into()],
        values_only: false,
        ..Default::default()
    };
    let e = twice.files(&manifest).unwrap_err().to_string();
    assert!(e.contains("--layers names \"solo\" twice"), "{e}");
}

#[test]
fn verify_warns_of_a_file_linked_from_outside_the_release() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = tmp.path().join("rel");
    std::fs::create_dir(&rel).unwrap();
    make_release(&rel);
    assert!(verify_release(&rel).warnings.is_empty());
    // The same bytes, moved out and linked back: they check, and the link is named.
    std::fs::rename(rel.join("solo.kmt"), tmp.path().join("elsewhere.kmt")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("elsewhere.kmt"), rel.join("solo.kmt")).unwrap();
    let r = verify_release(&rel);
    assert!(r.ok(), "{:?}", r.problems);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(
        r.warnings[0].starts_with("solo.kmt: a symbolic link to ")
            && r.warnings[0].contains("outside the release"),
        "{:?}",
        r.warnings
    );
    // A link inside the release is not worth a word.
    std::fs::rename(tmp.path().join("elsewhere.kmt"), rel.join("copy.kmt")).unwrap();
    std::fs::remove_file(rel.join("solo.kmt")).unwrap();
    std::os::unix::fs::symlink("copy.kmt", rel.join("solo.kmt")).unwrap();
    let r = verify_release(&rel);
    assert!(r.ok(), "{:?}", r.problems);
    assert!(
        r.warnings
            .iter()
            .all(|w| w.starts_with("copy.kmt: not part")),
        "{:?}",
        r.warnings
    );
    // A link that leads nowhere: missing, and why.
    std::fs::remove_file(rel.join("solo.kmt")).unwrap();
    std::os::unix::fs::symlink(tmp.path().join("gone.kmt"), rel.join("solo.kmt")).unwrap();
    let r = verify_release(&rel);
    assert!(r
        .problems
        .iter()
        .any(|p| p.starts_with("solo.kmt: missing")));
    assert!(
        r.warnings.iter().any(|w| w.contains("leads nowhere")),
        "{:?}",
        r.warnings
    );
}

/// The release of [`make_release`] with every layer cut into three parts (rows 0..233, 233..466,
/// 466..700), each packed into files of its own in `dir`, as a host packs its kept part.
fn make_parts_release(dir: &Path) -> Manifest {
    let whole_dir = dir.join("whole");
    std::fs::create_dir(&whole_dir).unwrap();
    let whole = make_release(&whole_dir);
    let opts = PackOptions {
        block_states: 128,
        zstd_level: 3,
    };
    let mut m = whole.clone();
    m.files.clear();
    for layer in &mut m.layers {
        let src = LayerFile::open(&whole_dir.join(&layer.file)).unwrap();
        layer.file.clear();
        layer.values_file = None;
        for (k, (first, states)) in [(0, 233), (233, 233), (466, 234)].into_iter().enumerate() {
            let name = crate::kept::part_layer_name(&layer.name, k);
            let (f, v, w) =
                piece::pack_rows(&src, first, states, &m.game, &name, dir, &opts).unwrap();
            layer.parts.push(ManifestPart {
                name,
                first,
                states,
                file: f.path.clone(),
                values_file: v.path.clone(),
                counts: w.counts,
                max_depth: w.max_depth,
            });
            m.files.extend([f, v]);
        }
    }
    std::fs::remove_dir_all(&whole_dir).unwrap();
    m.format_version = m.needed_version();
    assert_eq!(m.format_version, 3);
    write_manifest(dir, &m).unwrap();
    m
}

/// One state less of the first value that has any.
fn take_one(c: &mut crate::table::ValueCounts) {
    let n = [&mut c.win, &mut c.loss, &mut c.draw, &mut c.illegal]
        .into_iter()
        .find(|n| **n > 0)
        .unwrap();
    *n -= 1;
}

/// `m.check()`'s error, which must say `says`.
fn refused_saying(m: &Manifest, says: &str) {
    let e = m.check().err().map(|e| e.to_string());
    assert!(
        e.as_deref().is_some_and(|e| e.contains(says)),
        "wanted an error saying {says:?}, got {e:?}"
    );
}

#[test]
fn a_manifest_with_parts_is_checked_row_by_row() {
    let tmp = tempfile::tempdir().unwrap();
    let good = make_parts_release(tmp.path());
    good.check().unwrap();
    let edit = |f: &dyn Fn(&mut Manifest)| {
        let mut m = good.clone();
        f(&mut m);
        m
    };
    // Rows not covered: the last part ends early (its counts moved to match its rows).
    let short = edit(&|m| {
        let p = m.layers[0].parts.last_mut().unwrap();
        p.states -= 1;
        take_one(&mut p.counts);
    });
    refused_saying(&short, "the parts hold rows 0 .. 699, the layer 700");
    // A gap, an overlap, and a part of no rows.
    let gap = edit(&|m| m.layers[0].parts[1].first += 1);
    refused_saying(
        &gap,
        "part solo.part-0001 holds rows 234 .. 467, where rows 233 .. on were due",
    );
    let overlap = edit(&|m| m.layers[0].parts[1].first -= 1);
    refused_saying(
        &overlap,
        "holds rows 232 .. 465, where rows 233 .. on were due",
    );
    let empty = edit(&|m| {
        let p = &mut m.layers[0].parts[1];
        p.states = 0;
    });
    refused_saying(&empty, "part solo.part-0001 holds rows 233 .. 233");
    // Counts that do not add up: to a part's rows, or to the layer's.
    let counts = edit(&|m| m.layers[0].parts[0].counts.win += 1);
    refused_saying(
        &counts,
        "part solo.part-0000's counts add up to 234, not its 233 states",
    );
    let layer_counts = edit(&|m| {
        let c = &mut m.layers[0].parts[0].counts;
        take_one(c);
        c.draw += 1;
    });
    refused_saying(&layer_counts, "the parts' counts");
    let depth = edit(&|m| m.layers[0].max_depth += 1);
    refused_saying(&depth, "largest depth");
    // Part names are `<layer>.part-KKKK`.
    for bad in [
        "solo.part-1",
        "enable_ab.part-0000",
        "solo.part-00x1",
        "solo",
        "solo.part-00001",
    ] {
        let named = edit(&|m| m.layers[0].parts[0].name = bad.into());
        refused_saying(&named, &format!("part {bad:?} is not named solo.part-KKKK"));
    }
    // A layer with both parts and a file of its own.
    let both = edit(&|m| m.layers[0].file = "solo.part-0000.kmt".into());
    refused_saying(&both, "both parts and a file of its own");
    // Parts and urls are version 3.
    let v2 = edit(&|m| m.format_version = 2);
    refused_saying(&v2, "parts in format version 2 (parts are version 3 on)");
    let mut whole = tempfile::tempdir().map(|t| make_release(t.path())).unwrap();
    whole.files[0].url = Some("http://host:8080/rel/solo.kmt".into());
    whole.format_version = 2;
    refused_saying(&whole, "a url in format version 2 (urls are version 3 on)");
    whole.format_version = 3;
    whole.check().unwrap();
    for bad in [
        "ftp://host/solo.kmt",
        "http://",
        "http:///solo.kmt",
        "http://host/so lo.kmt",
        "file:///etc/passwd",
    ] {
        let m = edit(&|m| m.files[0].url = Some(bad.into()));
        refused_saying(&m, "is not an http:// or https:// URL");
    }
    let long = format!("http://host/{}", "x".repeat(MAX_URL_LEN));
    refused_saying(
        &edit(&|m| m.files[0].url = Some(long.clone())),
        "at most 2048",
    );
}

#[test]
fn a_release_in_parts_verifies_with_the_whole_layers_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let m = make_parts_release(dir);
    let report = verify_release(dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!((report.layers, report.states, report.files), (2, 1400, 14));
    assert!(report.digests_unchecked.is_empty() && report.at_urls == 0);
    // The digest is the whole layer's: carried over the parts in row order.
    let mut wrong = m.clone();
    wrong.layers[1].digest = "0".repeat(64);
    write_manifest(dir, &wrong).unwrap();
    let report = verify_release(dir);
    let digest: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.contains("digest"))
        .collect();
    assert_eq!(digest.len(), 2, "{:?}", report.problems);
    assert!(
        digest[0].starts_with(
            "layer enable_ab (enable_ab.part-0000.kmt .. enable_ab.part-0002.kmt, 3 parts in row \
             order): the values' digest is "
        ),
        "{digest:?}"
    );
    write_manifest(dir, &m).unwrap();
    assert!(verify_release(dir).ok());
}

#[test]
fn swapped_changed_or_damaged_parts_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let m = make_parts_release(dir);

    // Two parts' files exchanged (same sizes listed for each): each holds the other part.
    swap(dir, "solo.part-0000.kmt", "solo.part-0001.kmt");
    let report = verify_release(dir);
    assert!(
        report.problems.iter().any(|p| p.contains("solo.part-0000.kmt")
            && p.contains("not the layer solo.part-0000")),
        "{:?}",
        report.problems
    );
    swap(dir, "solo.part-0000.kmt", "solo.part-0001.kmt");
    assert!(verify_release(dir).ok());

    // A part's counts changed in the manifest (the layer's sums kept): both parts are named.
    let mut moved = m.clone();
    let [a, b] = [0, 1].map(|k| moved.layers[0].parts[k].counts);
    let (from, to) = if a.win > 0 && b.loss > 0 {
        (0, 1)
    } else {
        (1, 0)
    };
    moved.layers[0].parts[from].counts.win -= 1;
    moved.layers[0].parts[from].counts.loss += 1;
    moved.layers[0].parts[to].counts.win += 1;
    moved.layers[0].parts[to].counts.loss -= 1;
    write_manifest(dir, &moved).unwrap();
    let report = verify_release(dir);
    let counts: Vec<_> = report
        .problems
        .iter()
        .filter(|p| p.contains("the decoded values count"))
        .collect();
    for k in [from, to] {
        let name = format!("solo.part-000{k}.kmt: the decoded values count");
        assert!(
            counts.iter().any(|p| p.starts_with(&name)),
            "{name}: {:?}",
            report.problems
        );
    }
    write_manifest(dir, &m).unwrap();

    // A damaged block of a part, its sha256 relisted so that the block check alone finds it.
    let name = "enable_ab.part-0001.values.kmt";
    let path = dir.join(name);
    let good = std::fs::read(&path).unwrap();
    let file = LayerFile::open(&path).unwrap();
    let last = *file.index().last().unwrap();
    drop(file);
    let mut bad = good.clone();
    bad[last.offset as usize + 2] ^= 0x55;
    std::fs::write(&path, &bad).unwrap();
    let mut relisted = m.clone();
    let entry = relisted.files.iter_mut().find(|f| f.path == name).unwrap();
    entry.sha256 = file_sha256(&path).unwrap().1;
    write_manifest(dir, &relisted).unwrap();
    let report = verify_release(dir);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.starts_with(&format!("{name}: block"))),
        "{:?}",
        report.problems
    );
    std::fs::write(&path, &good).unwrap();
    write_manifest(dir, &m).unwrap();
    assert!(verify_release(dir).ok());
}

#[test]
fn some_parts_here_and_files_at_urls_verify_as_what_they_are() {
    use super::parts::*;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut m = make_parts_release(dir);

    // `--parts`: the chosen parts' files, with or without depths; layers and repeats refused.
    let choose = |parts: &[&str], layers: &[&str], values_only: bool| PartChoice {
        layers: layers.iter().map(|s| s.to_string()).collect(),
        parts: parts.iter().map(|s| s.to_string()).collect(),
        values_only,
    };
    let take = choose(&["solo.part-0001"], &[], false).files(&m).unwrap();
    assert_eq!(take, ["solo.part-0001.kmt", "solo.part-0001.values.kmt"]);
    let values = choose(&["solo.part-0001"], &["enable_ab"], true)
        .files(&m)
        .unwrap();
    assert_eq!(
        values,
        [
            "solo.part-0001.values.kmt",
            "enable_ab.part-0000.values.kmt",
            "enable_ab.part-0001.values.kmt",
            "enable_ab.part-0002.values.kmt"
        ]
    );
    for (parts, says) in [
        (&["solo.part-0009"][..], "has no part solo.part-0009 (its parts: solo.part-0000 .. solo.part-0002, enable_ab.part-0000 .. enable_ab.part-0002)"),
        (&["solo"][..], "solo is a layer of the release test, not a part: take it with --layers solo"),
        (&["solo.part-0000", "solo.part-0000"][..], "--parts names \"solo.part-0000\" twice"),
    ] {
        let e = choose(parts, &[], false).files(&m).unwrap_err().to_string();
        assert!(e.contains(says), "{e}");
    }

    // A copy of one part: its files verify, the layer's digest is said not to be checked.
    for f in m.files.iter().filter(|f| !take.contains(&f.path)) {
        std::fs::remove_file(dir.join(&f.path)).unwrap();
    }
    write_parts(dir, &Parts::new(take.clone())).unwrap();
    let report = verify_release(dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!((report.layers, report.states), (1, 233));
    assert_eq!(report.digests_unchecked, ["solo"]);

    // Files at urls with no copy here are not missing: counted, not checked.
    std::fs::remove_file(dir.join(PARTS)).unwrap();
    for f in &mut m.files {
        f.url = Some(format!("http://part-host:8080/release/{}", f.path));
    }
    write_manifest(dir, &m).unwrap();
    let report = verify_release(dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!((report.at_urls, report.layers, report.states), (10, 1, 233));
    // A file of the manifest alone that is not at a url is missing.
    m.files[0].url = None;
    write_manifest(dir, &m).unwrap();
    let report = verify_release(dir);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("solo.part-0000.kmt: missing")),
        "{:?}",
        report.problems
    );
    // The manifest alone, every file at a url: nothing to check yet, and nothing wrong.
    m.files[0].url = Some("http://part-host:8080/release/solo.part-0000.kmt".into());
    write_manifest(dir, &m).unwrap();
    for f in &take {
        std::fs::remove_file(dir.join(f)).unwrap();
    }
    let report = verify_release(dir);
    assert!(report.ok(), "{:?}", report.problems);
    assert_eq!((report.at_urls, report.layers, report.states), (12, 0, 0));
}
