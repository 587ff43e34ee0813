//! TOPPEN through the real `kingmaker` binary: the published censuses of docs/rules.md §2, the
//! census of every decomino, principal lines (a draw cycle on the ring) and bad input.

use kingmaker_e2e::{kingmaker, kingmaker_ok, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One build of the default TOPPEN table, shared by every test of this file (a few seconds).
fn run_dir() -> &'static str {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| build("toppen-run", &[]))
        .to_str()
        .unwrap()
}

/// `kingmaker build toppen EXTRA --out <target tmp>/NAME` into a fresh directory.
fn build(name: &str, extra: &[&str]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).unwrap();
    }
    let mut args = vec!["build", "toppen", "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    kingmaker_ok(&args);
    let s = read_json(&dir.join("summary.json"));
    assert_eq!(s["game"], "toppen");
    dir
}

fn census(dir: &str, spec: &str) -> Value {
    serde_json::from_str(&kingmaker_ok(&["census", dir, "--terrain", spec, "--json"])).unwrap()
}

fn abd(c: &Value) -> (u64, u64, u64) {
    (
        c["a"].as_u64().unwrap(),
        c["b"].as_u64().unwrap(),
        c["d"].as_u64().unwrap(),
    )
}

const RING: &str = "####/#..#/####";
const CROSS: &str = "..#.../..#.../######/..#.../..#...";

#[test]
fn every_published_census() {
    let dir = run_dir();
    let s = read_json(&Path::new(dir).join("summary.json"));
    let solo = &s["layers"]["solo"];
    assert_eq!(
        solo["win"], solo["loss"],
        "swapping colours and sides swaps W and L"
    );
    // Every path-shaped terrain: straight, vertical, L, snake, staircase.
    let paths = [
        "##########",
        "#/#/#/#/#/#/#/#/#/#",
        "#########/#........",
        "###/..#/###/#../##",
        "#./##/.##/..##/...##/....#",
        "#####/....#/....#/....#/....#/....#",
    ];
    let class = census(dir, paths[0])["graph_class"].clone();
    for spec in paths {
        let c = census(dir, spec);
        assert_eq!(abd(&c), (122, 114, 16), "path {spec}");
        assert_eq!(c["graph_class"], class, "path {spec} has the path's graph");
        assert_eq!(c["automorphisms"], 2, "path {spec}");
    }
    let ring = census(dir, RING);
    assert_eq!(abd(&ring), (250, 0, 2));
    assert_eq!(ring["terrain"], RING);
    assert_eq!(ring["automorphisms"], 20, "the 10-cycle's dihedral group");
    assert_eq!(abd(&census(dir, CROSS)), (101, 119, 32));
    // The text form says the same.
    let text = kingmaker_ok(&["census", dir, "--terrain", RING]);
    assert!(text.contains("A wins 250, B wins 0, draws 2"), "{text}");
}

#[test]
fn census_of_every_decomino() {
    let dir = run_dir();
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("all.csv");
    let report = tmp.path().join("report.md");
    let out = kingmaker_ok(&[
        "census",
        dir,
        "--all",
        "--csv",
        csv.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]);
    assert!(out.contains("4655 free decominoes"), "{out}");
    assert!(out.contains("graph classes: 300"), "{out}");
    assert!(out.contains("most favourable to A"), "{out}");
    assert!(out.contains("most favourable to B"), "{out}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("terrain,a,b,d,graph_class,automorphisms")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4655);
    let mut specs = std::collections::HashSet::new();
    let mut by_class = std::collections::HashMap::new();
    for r in &rows {
        assert_eq!(r.len(), 6, "{r:?}");
        assert!(specs.insert(r[0]), "terrain {} listed twice", r[0]);
        let n: Vec<u64> = r[1..].iter().map(|x| x.parse().unwrap()).collect();
        assert_eq!(n[0] + n[1] + n[2], 252, "{r:?}");
        // Isomorphic terrains have identical censuses.
        let prev = by_class.entry(n[3]).or_insert((n[0], n[1], n[2]));
        assert_eq!(*prev, (n[0], n[1], n[2]), "graph class {}", n[3]);
    }
    assert_eq!(by_class.len(), 300);
    assert!(rows
        .iter()
        .any(|r| r[0] == RING && r[1..4] == ["250", "0", "2"]));
    assert!(rows
        .iter()
        .any(|r| r[0] == "##########" && r[1..4] == ["122", "114", "16"]));
    let md = std::fs::read_to_string(&report).unwrap();
    assert!(
        md.contains("If the second player chooses the terrain"),
        "{md}"
    );
    // The JSON summary agrees.
    let j: Value =
        serde_json::from_str(&kingmaker_ok(&["census", dir, "--all", "--json"])).unwrap();
    assert_eq!(j["terrains"], 4655);
    assert_eq!(j["graph_classes"], 300);
    let total: u64 = ["a", "b", "d"]
        .iter()
        .map(|k| j["colourings"][k].as_u64().unwrap())
        .sum();
    assert_eq!(total, 4655 * 252);
    assert_eq!(j["best_for_a"][0]["terrain"], RING);
}

#[test]
fn bad_terrains_are_refused_clearly() {
    let dir = run_dir();
    for (spec, why) in [
        ("###", "has 3 cells"),
        ("###########", "has 11 cells"),
        ("#####/...../#####", "not edge-connected"),
        ("#####/....#/##x##", "only `#`"),
        ("", "SPEC"),
        // A stray `/` is refused, not read as a row of no cells.
        ("####/#..#/####/", "row 4 of 4 is empty"),
        ("/####/#..#/####", "row 1 of 4 is empty"),
    ] {
        let out = kingmaker(&["census", dir, "--terrain", spec]);
        assert!(!out.status.success(), "{spec:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{spec:?}: {err}");
        assert!(!err.contains("panicked"), "{spec:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    // Neither --terrain nor --all.
    assert!(!kingmaker(&["census", dir]).status.success());
}

#[test]
fn line_shows_a_draw_cycle_on_the_ring() {
    let dir = run_dir();
    let ring: Value = serde_json::from_str(&kingmaker_ok(&[
        "census",
        dir,
        "--terrain",
        RING,
        "--colourings",
        "--json",
    ]))
    .unwrap();
    let colourings = ring["colourings"].as_array().unwrap();
    assert_eq!(colourings.len(), 252);
    let drawn: Vec<&str> = colourings
        .iter()
        .filter(|c| c["result"] == "D")
        .map(|c| c["position"].as_str().unwrap())
        .collect();
    assert_eq!(drawn.len(), 2);
    for pos in drawn {
        let line: Value =
            serde_json::from_str(&kingmaker_ok(&["line", dir, pos, "--json"])).unwrap();
        let plies = line["plies"].as_array().unwrap();
        assert!(plies.iter().all(|p| p["value"] == "D"), "{line}");
        assert_eq!(line["ending"]["kind"], "cycle", "{line}");
        let (from, to) = (
            line["ending"]["from"].as_u64().unwrap() as usize,
            line["ending"]["to"].as_u64().unwrap() as usize,
        );
        assert!(from < to && to == plies.len() - 1);
        assert_eq!(plies[from]["index"], plies[to]["index"], "the cycle closes");
        let text = kingmaker_ok(&["line", dir, pos]);
        assert!(text.contains("draw record"), "{text}");
        assert!(text.contains("   a b c d\n1  "), "boards are drawn: {text}");
    }
}

#[test]
fn line_of_a_won_start_ends_in_one_tower() {
    let dir = run_dir();
    let pos = "####/#..#/####:AABBABABAB:A";
    let q: Value = serde_json::from_str(&kingmaker_ok(&["query", dir, pos, "--json"])).unwrap();
    assert_eq!(q["value"], "W");
    let line: Value = serde_json::from_str(&kingmaker_ok(&["line", dir, pos, "--json"])).unwrap();
    let plies = line["plies"].as_array().unwrap();
    assert_eq!(line["ending"]["kind"], "game_over");
    assert_eq!(line["ending"]["winner"], "A");
    assert_eq!(
        plies.len() as u64 - 1,
        q["depth"].as_u64().unwrap(),
        "shortest win"
    );
    let depths: Vec<u64> = plies.iter().map(|p| p["depth"].as_u64().unwrap()).collect();
    assert!(depths.windows(2).all(|w| w[1] + 1 == w[0]), "{depths:?}");
    let last = plies.last().unwrap()["position"].as_str().unwrap();
    assert!(last.starts_with("#:"), "one tower at the end: {last}");
    let text = kingmaker_ok(&["line", dir, pos]);
    assert!(text.contains("game over after"), "{text}");
}

#[test]
fn query_prints_the_side_to_move_once() {
    let dir = run_dir();
    let out = kingmaker_ok(&["query", dir, "####/#..#/####:AABBABABAB:A"]);
    assert_eq!(out.matches("A to move").count(), 1, "{out}");
    assert!(out.contains("value W33"), "{out}");
    let over = kingmaker_ok(&["query", dir, "#:AAAAABBBBB"]);
    assert!(over.contains("game over: B wins"), "{over}");
    assert!(over.contains("no moves"), "{over}");
}

#[test]
fn b_first_swaps_the_roles() {
    let dir = build("toppen-b-first", &["--first", "B"]);
    let c = census(dir.to_str().unwrap(), RING);
    assert_eq!(abd(&c), (0, 250, 2));
    assert_eq!(c["first"], "B");
}

/// `--diagonal` (moves to all eight neighbours) end to end. A straight decomino has no diagonal
/// neighbours, so its cell graph is still the 10-path and its census must be the orthogonal
/// path's published one; the ring gains diagonal edges at its corners, which leave only the
/// rectangle's four symmetries of the 10-cycle's twenty.
#[test]
fn diagonal_build_keeps_the_path_census() {
    let dir = build("toppen-diagonal", &["--diagonal"]);
    let s = read_json(&dir.join("summary.json"));
    let solo = &s["layers"]["solo"];
    assert_eq!(
        solo["win"], solo["loss"],
        "swapping colours and sides swaps W and L"
    );
    let dir = dir.to_str().unwrap();
    let path = census(dir, "##########");
    assert_eq!(path["diagonal"], true);
    assert_eq!(abd(&path), (122, 114, 16), "the path's census");
    assert_eq!(path["automorphisms"], 2);
    let ring = census(dir, RING);
    assert_eq!(ring["automorphisms"], 4, "{ring}");
    let (a, b, d) = abd(&ring);
    assert_eq!(a + b + d, 252);
}

/// `census` and `line` read a release packed from the run as they read the run: the same census
/// (with every colouring's result and depth) and the same principal lines.
#[test]
fn census_and_line_read_a_release() {
    let dir = run_dir();
    let rel = Path::new(env!("CARGO_TARGET_TMPDIR")).join("toppen-release");
    if rel.exists() {
        std::fs::remove_dir_all(&rel).unwrap();
    }
    let rel = rel.to_str().unwrap();
    kingmaker_ok(&["pack", dir, "--out", rel]);
    for args in [
        vec!["--terrain", RING, "--colourings", "--json"],
        vec!["--terrain", CROSS, "--json"],
        vec!["--all", "--json"],
    ] {
        let on = |d: &str| {
            let mut all = vec!["census", d];
            all.extend_from_slice(&args);
            kingmaker_ok(&all)
        };
        assert_eq!(on(rel), on(dir), "census {args:?}");
    }
    for pos in ["####/#..#/####:AABBABABAB:A", "####/#..#/####:ABABBAABAB:A"] {
        for json in [true, false] {
            let on = |d: &str| {
                let mut all = vec!["line", d, pos];
                if json {
                    all.push("--json");
                }
                kingmaker_ok(&all)
            };
            assert_eq!(on(rel), on(dir), "line {pos}");
        }
    }
}

/// `start` names no position in TOPPEN (every terrain and colouring is a start): `query`, `line`
/// and the explorer's API say so and how to name one.
#[test]
fn start_says_each_terrain_has_its_own() {
    let dir = run_dir();
    for args in [
        vec!["query", dir, "start"],
        vec!["line", dir, "start"],
        vec!["query", dir, "START"],
    ] {
        let out = kingmaker(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        for words in [
            "TOPPEN has no single start",
            "every terrain",
            "SPEC:STACKS:SIDE",
            "####/#..#/####:AABBABABAB:A",
            "census DIR --terrain SPEC --colourings",
        ] {
            assert!(err.contains(words), "{args:?} should say {words:?}: {err}");
        }
    }
    // The example it gives is a position.
    kingmaker_ok(&["query", dir, "####/#..#/####:AABBABABAB:A"]);
}
