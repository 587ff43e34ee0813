//! `verify --deep` on a release whose layers are in parts: each state re-derived from its
//! children read across parts, the parts beside the manifest or at their URLs; as many states
//! checked as on the whole release, and a state that disagrees named with its part.

use kingmaker_e2e::parts_release::split_release;
use kingmaker_e2e::{kingmaker, kingmaker_ok, packed_release, path_str, start_serve};
use kingmaker_probe::{Notation, Tables};
use kingmaker_tablefmt::layer::LayerFile;
use kingmaker_tablefmt::release::manifest::{read_manifest, write_manifest};
use kingmaker_tablefmt::release::{write_layer, write_values, PackOptions};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Parts a layer is cut into.
const PARTS: u64 = 3;

/// `dir`'s manifest alone in `to`, every file at `base` + its name.
fn manifest_at(dir: &Path, to: &Path, base: &str) {
    let mut m = read_manifest(dir).unwrap();
    for f in &mut m.files {
        f.url = Some(format!("{base}{}", f.path));
    }
    m.format_version = m.needed_version();
    std::fs::create_dir_all(to).unwrap();
    write_manifest(to, &m).unwrap();
}

/// `kingmaker verify DIR ARGS... --json`, which must pass: its report.
fn verified(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["verify", path_str(dir)];
    all.extend_from_slice(args);
    all.push("--json");
    serde_json::from_str(&kingmaker_ok(&all)).unwrap()
}

/// `kingmaker verify DIR ARGS...`, which must fail: what it said.
fn failed(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["verify", path_str(dir)];
    all.extend_from_slice(args);
    let out = kingmaker(&all);
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{all:?} passed: {text}");
    text
}

#[test]
fn verify_deep_checks_a_release_in_parts_here_and_where_it_lies() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = packed_release(tmp.path());
    let parts = tmp.path().join("parts");
    split_release(&whole, &parts, PARTS, None);
    // The parts served by `kingmaker serve`, and a directory holding only their manifest.
    let (_serve, url) = start_serve(&parts);
    let remote = tmp.path().join("remote");
    manifest_at(&parts, &remote, &format!("{url}release/"));

    let full = verified(&whole, &["--deep"]);
    let sample = verified(&whole, &["--deep", "--sample", "100"]);
    assert_eq!(full["deep_states_checked"], 3 * 1662, "{full}");
    assert_eq!(sample["deep_states_checked"], 300, "{sample}");
    for dir in [&parts, &remote] {
        let v = verified(dir, &["--deep"]);
        assert_eq!(v["deep"], true, "{v}");
        assert_eq!(v["deep_states_checked"], full["deep_states_checked"], "{v}");
        assert_eq!(v["deep_sample_per_layer"], Value::Null, "{v}");
        let v = verified(dir, &["--deep", "--sample", "100"]);
        assert_eq!(
            v["deep_states_checked"], sample["deep_states_checked"],
            "{v}"
        );
        assert_eq!(v["deep_sample_per_layer"], 100, "{v}");
        let text = kingmaker_ok(&["verify", path_str(dir), "--deep"]);
        assert!(
            text.contains("deep: every state of every layer agrees with its children (4,986"),
            "{text}"
        );
    }
    assert_eq!(
        verified(&remote, &[])["files_at_urls"],
        6 * PARTS,
        "no copy here"
    );
}

/// Rewrite `layer` of the whole release `rel` with state `index` given the value `value` (its
/// depth kept), and a manifest that matches: every checksum and digest is right, only the rules
/// can tell.
fn forge(rel: &Path, layer: &str, index: u64, value: u8) {
    let mut m = read_manifest(rel).unwrap();
    let opts = PackOptions {
        block_states: m.layers[0].block_states,
        ..PackOptions::default()
    };
    let (file, values_file) = (format!("{layer}.kmt"), format!("{layer}.values.kmt"));
    let src = LayerFile::open(&rel.join(&file)).unwrap();
    let id = src.identity().unwrap().clone();
    let flip = |first: u64, v: &mut [u8]| {
        if (first..first + v.len() as u64).contains(&index) {
            v[(index - first) as usize] = value;
        }
    };
    let forged = |name: &str| rel.join(format!("{name}.forged"));
    let w = write_layer(&forged(&file), &id, src.states(), &opts, |first, v, d| {
        src.read_states(first, v, d)?;
        flip(first, v);
        Ok(())
    })
    .unwrap();
    let period = 1;
    let v = write_values(
        &forged(&values_file),
        &id,
        src.states(),
        &opts,
        period,
        |first, v| {
            src.read_states(first, v, &mut [])?;
            flip(first, v);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(v.digest, w.digest);
    for (name, written) in [(&file, &w), (&values_file, &v)] {
        std::fs::rename(forged(name), rel.join(name)).unwrap();
        let f = m.files.iter_mut().find(|f| &f.path == name).unwrap();
        (f.size, f.sha256) = (written.size, written.sha256.clone());
    }
    let l = m.layers.iter_mut().find(|l| l.name == layer).unwrap();
    (l.counts, l.digest, l.max_depth) = (w.counts, w.digest.clone(), w.max_depth);
    std::fs::remove_file(rel.join("manifest.sha256")).unwrap();
    write_manifest(rel, &m).unwrap();
}

#[test]
fn verify_deep_names_the_part_of_a_state_that_disagrees_with_its_children() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = packed_release(tmp.path());
    // A lost state (L, not terminal) of solo's middle part, made a win: its children say L.
    let t = Tables::open(&whole).unwrap();
    let n = t.states();
    let (first, end) = (n / PARTS, 2 * n / PARTS);
    let values = t.values("solo", first, (end - first) as usize).unwrap();
    let depths = t.depths("solo", first, (end - first) as usize).unwrap();
    let k = (0..values.len())
        .find(|&k| values[k] == 2 && depths[k] > 0)
        .expect("a lost state in the middle part");
    let (index, depth) = (first + k as u64, depths[k]);
    let position = t.game().format_position(index);
    drop(t);
    forge(&whole, "solo", index, 1);
    let parts: PathBuf = tmp.path().join("parts");
    split_release(&whole, &parts, PARTS, None);
    let (_serve, url) = start_serve(&parts);
    let remote = tmp.path().join("remote");
    manifest_at(&parts, &remote, &format!("{url}release/"));

    // Every checksum and digest matches: verify passes; --deep names the state and its part.
    let want = format!(
        "solo: {position} (index {index}, row {} of part solo.part-0001): stored W{depth}, its \
         children give L{depth}",
        index - first
    );
    for dir in [&parts, &remote] {
        verified(dir, &[]);
        for args in [&["--deep"][..], &["--deep", "--sample", "100000"]] {
            let err = failed(dir, args);
            assert!(err.contains(&want), "{args:?}: {err}");
            assert!(err.contains("disagree with their children"), "{err}");
        }
    }
}
