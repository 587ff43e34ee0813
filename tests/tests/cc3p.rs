//! The published numbers of docs/rules.md §1 through the real `kingmaker` binary, and its
//! handling of bad input.

use kingmaker_e2e::{kingmaker, kingmaker_ok, read_json};
use serde_json::Value;

fn build_level1(dir: &std::path::Path, extra: &[&str]) -> Value {
    let out = dir.to_str().unwrap();
    let mut args = vec!["build", "cc3p", "--level", "1", "--out", out];
    args.extend_from_slice(extra);
    kingmaker_ok(&args);
    read_json(&dir.join("summary.json"))
}

#[test]
fn level1_build_reproduces_every_published_number() {
    let tmp = tempfile::tempdir().unwrap();
    let s = build_level1(&tmp.path().join("run"), &[]);
    assert_eq!(s["game"], "cc3p");
    assert_eq!(s["level"], 1);
    assert_eq!(s["states"], 1662);
    assert_eq!(s["illegal"], 75);
    // Over all 1,587 legal states.
    let l = &s["layers"];
    assert_eq!(
        (
            l["solo"]["win"].as_u64(),
            l["solo"]["loss"].as_u64(),
            l["solo"]["draw"].as_u64()
        ),
        (Some(449), Some(1138), Some(0))
    );
    assert_eq!(l["enable_ab"]["win"], 894);
    assert_eq!(l["enable_ac"]["win"], 737);
    for layer in ["solo", "enable_ab", "enable_ac"] {
        let sum: u64 = ["win", "loss", "draw"]
            .iter()
            .map(|k| l[layer][k].as_u64().unwrap())
            .sum();
        assert_eq!(sum, 1587, "{layer} counts every legal state once");
        assert_eq!(l[layer]["digest"].as_str().unwrap().len(), 64);
    }
    // Over the 1,245 reachable states.
    let r = &s["reachable"];
    assert_eq!(r["states"], 1245);
    assert_eq!(r["classes"]["terminal"], 171);
    assert_eq!(r["classes"]["solo_win"], 834);
    assert_eq!(r["classes"]["kingmaker"], 240);
    assert_eq!(r["classes"]["spoiler_draw"], 0);
    for p in ["A", "B", "C"] {
        assert_eq!(r["solo_by_player"][p]["win"], 335, "player {p}");
        assert_eq!(r["solo_by_player"][p]["loss"], 910, "player {p}");
        assert_eq!(r["solo_by_player"][p]["draw"], 0, "player {p}");
    }
    assert_eq!(r["layers"]["enable_ab"]["win"], 780);
    assert_eq!(r["layers"]["enable_ac"]["win"], 623);
    // Classes over all states add up (illegal states count as terminal).
    let c = &s["classes"];
    let total: u64 = ["terminal", "solo_win", "spoiler_draw", "kingmaker"]
        .iter()
        .map(|k| c[k].as_u64().unwrap())
        .sum();
    assert_eq!(total, 1662);
}

#[test]
fn start_position_every_pair_forces_the_third_out_and_all_enables_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    build_level1(&run, &[]);
    let q: Value = serde_json::from_str(&kingmaker_ok(&[
        "query",
        run.to_str().unwrap(),
        "start",
        "--json",
    ]))
    .unwrap();
    let a = &q["answers"];
    assert_eq!(a["class"], "kingmaker");
    for p in 0..3 {
        assert_eq!(
            a["solo"][p]["value"], "L",
            "no solo win, every player can be forced out"
        );
        for t in (0..3).filter(|&t| t != p) {
            assert_eq!(
                a["enable"][p][t]["value"], "W",
                "player {p} can hand the win to {t}"
            );
        }
    }
    assert!(!q["moves"].as_array().unwrap().is_empty());
    // The notation round-trips through the CLI.
    let pos = q["position"].as_str().unwrap();
    let again: Value = serde_json::from_str(&kingmaker_ok(&[
        "query",
        run.to_str().unwrap(),
        pos,
        "--json",
    ]))
    .unwrap();
    assert_eq!(again["index"], q["index"]);
}

#[test]
fn several_in_process_workers_and_small_shards_give_identical_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let one = build_level1(&tmp.path().join("one"), &[]);
    let three = build_level1(
        &tmp.path().join("three"),
        &["--local-workers", "3", "--shard-size", "128"],
    );
    assert_eq!(one["layers"], three["layers"]);
    assert_eq!(one["classes"], three["classes"]);
    // Cells in mapped files (out of core) rather than memory: the same summary, and the same
    // finished layer files byte for byte (values and depths).
    let files = build_level1(
        &tmp.path().join("files"),
        &["--memory-budget", "1K", "--shard-size", "256"],
    );
    assert_eq!(one, files);
    for layer in ["solo", "enable_ab", "enable_ac"] {
        let path = |run: &str| tmp.path().join(run).join(format!("layers/{layer}.kmt"));
        assert_eq!(
            std::fs::read(path("one")).unwrap(),
            std::fs::read(path("files")).unwrap(),
            "{layer}"
        );
    }
}

#[test]
fn count_prints_the_published_counts_of_all_three_levels() {
    let expect = [
        (1, "554", "1662", "75"),
        (2, "4947100130", "14841300390", "20694"),
        (3, "433341009067620463656", "", ""),
    ];
    for (level, placements, states, illegal) in expect {
        let out = kingmaker_ok(&["count", "cc3p", "--level", &level.to_string(), "--json"]);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["placements"], placements, "level {level}");
        if !states.is_empty() {
            assert_eq!(v["states"], states, "level {level}");
            assert_eq!(v["illegal_states"], illegal, "level {level}");
        }
    }
}

#[test]
fn bfs_prints_the_published_depths() {
    let v: Value = serde_json::from_str(&kingmaker_ok(&[
        "bfs", "cc3p", "--level", "1", "--depth", "12", "--json",
    ]))
    .unwrap();
    assert_eq!(
        v["new_per_depth"],
        serde_json::json!([2, 4, 8, 20, 53, 143, 261, 324, 256, 132, 34, 7])
    );
    assert_eq!(v["total_with_start"], 1245);
    let v: Value = serde_json::from_str(&kingmaker_ok(&[
        "bfs", "cc3p", "--level", "2", "--depth", "9", "--json",
    ]))
    .unwrap();
    assert_eq!(
        v["new_per_depth"],
        serde_json::json!([6, 36, 216, 1188, 6582, 36574, 124074, 463250, 1906964])
    );
    assert_eq!(v["total_with_start"], 2538891);
}

/// Bad input: one clear line naming the problem, a non-zero exit, no panic, nothing overwritten.
fn fails_with(args: &[&str], needle: &str) {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        err.to_lowercase().contains(&needle.to_lowercase()),
        "{args:?}: expected {needle:?} in {err}"
    );
}

#[test]
fn bad_input_is_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    build_level1(&run, &[]);
    let dir = run.to_str().unwrap();
    fails_with(&["build", "chess", "--out", "x"], "unrecognized subcommand");
    fails_with(&["build", "cc3p", "--level", "7"], "level");
    fails_with(&["count", "cc3p", "--level", "0"], "level");
    fails_with(&["query", dir, "A:zz9;B:b1;C:e1;A"], "zz9");
    fails_with(&["query", dir, "A:b4;B:b4;C:e1;A"], "b4");
    fails_with(&["query", dir, "nonsense"], "position");
    fails_with(
        &["query", tmp.path().join("nope").to_str().unwrap(), "start"],
        "run.json",
    );
    // An existing non-empty output directory is refused and left alone.
    let before = std::fs::read(run.join("summary.json")).unwrap();
    fails_with(
        &["build", "cc3p", "--level", "1", "--out", dir],
        "not empty",
    );
    assert_eq!(std::fs::read(run.join("summary.json")).unwrap(), before);
}

#[test]
fn layers_added_to_a_finished_run_give_the_full_build() {
    let tmp = tempfile::tempdir().unwrap();
    let full = build_level1(&tmp.path().join("full"), &[]);
    let part_dir = tmp.path().join("part");
    let part = build_level1(&part_dir, &["--layers", "solo"]);
    // The classes read the solo layer alone: the same counts, every ply's too, before the other
    // two layers exist; the reachable block counts the layers the run holds.
    assert_eq!(part["classes"], full["classes"]);
    for key in [
        "states",
        "new_per_depth",
        "classes_per_depth",
        "classes",
        "solo_by_player",
    ] {
        assert_eq!(
            part["reachable"][key], full["reachable"][key],
            "reachable.{key}"
        );
    }
    assert_eq!(
        part["reachable"]["layers"]["solo"],
        full["reachable"]["layers"]["solo"]
    );
    assert!(part["reachable"]["layers"]["enable_ab"].is_null(), "{part}");
    let solo_path = part_dir.join("layers/solo.kmt");
    let solo_written = std::fs::metadata(&solo_path).unwrap().modified().unwrap();
    let out = kingmaker(&["resume", part_dir.to_str().unwrap()]);
    assert!(
        !out.status.success(),
        "a complete run has nothing to resume"
    );
    kingmaker_ok(&[
        "resume",
        part_dir.to_str().unwrap(),
        "--layers",
        "enable_ac,enable_ab",
    ]);
    let added = read_json(&part_dir.join("summary.json"));
    assert_eq!(
        added, full,
        "the same summary as one build of all three layers"
    );
    assert_eq!(
        std::fs::metadata(&solo_path).unwrap().modified().unwrap(),
        solo_written,
        "the finished layer was kept, not solved and written again"
    );
    let info = read_json(&part_dir.join("run.json"));
    let names: Vec<&str> = info["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["solo", "enable_ab", "enable_ac"]);
    // Every state's value and depth, in every layer, as in the one build.
    kingmaker_e2e::assert_same_tables(&part_dir, &tmp.path().join("full"));
}

/// `--layers` picks a subset: only those layers are solved and written, each identical (values
/// and depths) to the same layer of a full build, and the summary has no classes.
#[test]
fn a_subset_of_layers_builds_those_layers_only() {
    let tmp = tempfile::tempdir().unwrap();
    let full_dir = tmp.path().join("full");
    let full = build_level1(&full_dir, &[]);
    let dir = tmp.path().join("subset");
    let s = build_level1(&dir, &["--layers", "enable_ac,enable_ab"]);
    assert_eq!(
        kingmaker_e2e::layer_names(&dir),
        ["enable_ab", "enable_ac"],
        "only the layers asked for"
    );
    assert!(s["classes"].is_null(), "classes need the solo layer");
    for layer in ["enable_ab", "enable_ac"] {
        assert_eq!(s["layers"][layer], full["layers"][layer], "{layer}");
        let file = format!("layers/{layer}.kmt");
        assert!(
            std::fs::read(dir.join(&file)).unwrap() == std::fs::read(full_dir.join(&file)).unwrap(),
            "{file} differs from the full build's"
        );
    }
    assert!(s["layers"]["solo"].is_null(), "{s}");
}

#[test]
fn summarize_adds_the_reachable_counts_of_a_full_build() {
    let tmp = tempfile::tempdir().unwrap();
    let full = build_level1(&tmp.path().join("full"), &[]);
    let dir = tmp.path().join("lean");
    let lean = build_level1(&dir, &["--reachable", "false"]);
    assert!(lean["reachable"].is_null());
    // A checkpoint of another search where the census keeps its own: refused, by name.
    let reach = dir.join("reach");
    std::fs::create_dir_all(&reach).unwrap();
    let states = lean["states"].as_u64().unwrap();
    let chunks = kingmaker_tablefmt::reach::chunks(states);
    let bits = |name: &str| -> Vec<_> {
        (0..chunks)
            .map(|c| {
                kingmaker_tablefmt::reach::write_bitmap_chunk(&reach, name, c, 1, &[0; 8], None)
                    .unwrap()
            })
            .collect()
    };
    let other = kingmaker_tablefmt::reach::ReachManifest {
        version: kingmaker_tablefmt::reach::REACH_VERSION,
        purpose: "something else".into(),
        game: serde_json::Value::Null,
        states,
        start: 0,
        depth: 1,
        per_depth: vec![1, 1],
        counted: serde_json::Value::Null,
        seen: bits("seen"),
        level: bits("level"),
    };
    kingmaker_tablefmt::reach::write_manifest(&reach, &other).unwrap();
    let out = kingmaker(&["summarize", dir.to_str().unwrap(), "--reachable"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("reach.json is the checkpoint of another search"),
        "{err}"
    );
    // One that names another game (run.json's game changed under it): refused, naming both.
    let level2 = kingmaker_tablefmt::reach::ReachManifest {
        game: serde_json::json!({"game": "cc3p", "level": 2}),
        ..other
    };
    kingmaker_tablefmt::reach::write_manifest(&reach, &level2).unwrap();
    let out = kingmaker(&["summarize", dir.to_str().unwrap(), "--reachable"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains(r#"is the checkpoint of a search of {"game":"cc3p","level":2}, not of {"game":"cc3p","level":1}"#),
        "{err}"
    );
    std::fs::remove_dir_all(&reach).unwrap();
    // Checkpointed at every ply, and the checkpoint gone once the census is written.
    let args = [
        "summarize",
        dir.to_str().unwrap(),
        "--reachable",
        "--checkpoint-every-secs",
        "0",
    ];
    kingmaker_ok(&args);
    assert_eq!(read_json(&dir.join("summary.json")), full);
    assert!(!reach.exists());
    let unfinished = tmp.path().join("unfinished");
    build_level1(&unfinished, &["--layers", "solo"]);
    let info = unfinished.join("run.json");
    let mut run = read_json(&info);
    run["layers"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "enable_ab", "coalition": 3, "objective": 2}));
    std::fs::write(&info, serde_json::to_vec(&run).unwrap()).unwrap();
    let out = kingmaker(&["summarize", unfinished.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not finished"));
}
