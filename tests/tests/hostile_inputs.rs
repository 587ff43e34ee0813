//! What a hostile new user tries on the command line (issue 63): sampled shares whose intervals
//! hold at 0, at 1 and on tiny samples; `--seed` without `--sample`; `''` as the start; `line`
//! on an illegal position; `summarize --reachable` on a game without that census; a cc2p parse
//! error's example; `build cc3p --level 3`; the cc2p boards the docs promise.

use kingmaker_e2e::{kingmaker, kingmaker_ok, path_str};
use std::path::{Path, PathBuf};
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `kingmaker ARGS` must fail: its stderr.
#[track_caller]
fn refused(args: &[&str]) -> String {
    let out = kingmaker(args);
    assert!(
        !out.status.success(),
        "kingmaker {args:?} succeeded:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    stderr(&out)
}

fn build(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    all.extend(["--out", path_str(&out)]);
    kingmaker_ok(&all);
    out
}

fn cc3p_level_1(dir: &Path) -> PathBuf {
    build(dir, "cc3p-1", &["cc3p", "--level", "1"])
}

/// Every "p % (lo–hi %)" of a text: (p, lo, hi).
fn intervals(text: &str) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for (k, _) in text.match_indices(" % (") {
        let p = text[..k].rsplit(' ').next().unwrap();
        let rest = &text[k + 4..];
        let inside = &rest[..rest.find(" %)").expect("an interval ends with ` %)`")];
        let (lo, hi) = inside.split_once('–').expect("lo–hi");
        out.push((p.parse().unwrap(), lo.parse().unwrap(), hi.parse().unwrap()));
    }
    out
}

/// Sampled shares came with the normal approximation's ± : 0.00 ± 0.00 % from one state, or
/// where the sample held none of an outcome, and 25.00 ± 42.44 % (below 0) from 20 states.
/// Each must be an interval inside [0, 100] that contains its share and is never a point, and
/// a group the sample missed says "no states".
#[test]
fn sampled_shares_have_intervals_that_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let run = cc3p_level_1(tmp.path());
    let run = path_str(&run);
    for args in [
        &["--sample", "1", "--rule", "spoiler"][..],
        &["--sample", "20", "--seed", "3"],
        &["--sample", "5", "--seed", "2", "--rule", "cyclic"],
    ] {
        let mut all = vec!["preferences", run];
        all.extend_from_slice(args);
        let text = kingmaker_ok(&all);
        assert!(!text.contains('±'), "{args:?}:\n{text}");
        let found = intervals(&text);
        assert!(found.len() >= 4, "{args:?}: no intervals in\n{text}");
        for (p, lo, hi) in found {
            assert!(
                (0.0..=p).contains(&lo) && (p..=100.0).contains(&hi) && lo < hi,
                "{args:?}: {p} % ({lo}–{hi} %) in\n{text}"
            );
        }
    }
    // One state: it is not a kingmaker state of a spoiler (or the sample says which it is), and
    // its group shows 100 % with Wilson's interval, not ± 0.
    let text = kingmaker_ok(&["preferences", run, "--sample", "1", "--rule", "spoiler"]);
    assert!(text.contains("no states"), "{text}");
    assert!(text.contains("100.00 % (20.65–100.00 %)"), "{text}");
    assert!(text.contains("0.00 % (0.00–79.35 %)"), "{text}");
}

/// `--seed` without `--sample` was silently ignored.
#[test]
fn a_seed_without_a_sample_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let run = cc3p_level_1(tmp.path());
    let err = refused(&["preferences", path_str(&run), "--seed", "3"]);
    assert!(err.contains("--sample"), "{err}");
    // With a sample it is taken.
    kingmaker_ok(&[
        "preferences",
        path_str(&run),
        "--sample",
        "3",
        "--seed",
        "3",
    ]);
}

/// `''` is the start, as for Python's `probe('')` and the HTTP API's `position=` (it was "empty
/// field between ';' separators").
#[test]
fn nothing_is_the_start() {
    let tmp = tempfile::tempdir().unwrap();
    let run = cc3p_level_1(tmp.path());
    let run = path_str(&run);
    for cmd in ["query", "line"] {
        assert_eq!(
            kingmaker_ok(&[cmd, run, ""]),
            kingmaker_ok(&[cmd, run, "start"]),
            "{cmd}"
        );
        assert_eq!(
            kingmaker_ok(&[cmd, run, "  "]),
            kingmaker_ok(&[cmd, run, "start"])
        );
    }
}

/// `line` on an illegal position said "no W, L or D value (value byte 0)"; `query` says why it
/// is illegal, and so must `line`.
#[test]
fn line_says_why_a_position_is_illegal() {
    let tmp = tempfile::tempdir().unwrap();
    let run = cc3p_level_1(tmp.path());
    // A and B both on their goals.
    let pos = "A:d1;B:d4;C:e1;A";
    assert!(kingmaker_ok(&["query", path_str(&run), pos])
        .contains("illegal: two or more goals are filled"));
    for layer in ["solo", "enable_ab"] {
        let err = refused(&["line", path_str(&run), pos, "--layer", layer]);
        assert!(
            err.contains("is illegal: two or more goals are filled") && !err.contains("value byte"),
            "{err}"
        );
    }
    // A two-player game: player 0, to move, has already filled its goal.
    let cc2p = build(
        tmp.path(),
        "cc2p",
        &["cc2p", "--board", "4x4", "--pieces", "1"],
    );
    let err = refused(&["line", path_str(&cc2p), "0:15;1:0;0"]);
    assert!(
        err.contains("is illegal: player 0 is to move, but its goal is already filled")
            && !err.contains("value byte"),
        "{err}"
    );
}

/// `summarize --reachable` on a game without that census exited 0 with no reachable block and
/// no word: it must say so, fail, and leave summary.json as it was.
#[test]
fn summarize_reachable_says_when_a_game_has_no_such_census() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("cc2p", &["cc2p", "--board", "4x4", "--pieces", "2"][..]),
        (
            "connect4",
            &["connect4", "--board", "4x4", "--connect", "3"],
        ),
    ] {
        let run = build(tmp.path(), name, args);
        let summary = run.join("summary.json");
        let before = std::fs::read(&summary).unwrap();
        std::fs::write(&summary, &before).unwrap();
        let err = refused(&["summarize", path_str(&run), "--reachable"]);
        assert!(
            err.contains(&format!(
                "{name} has no census over the states reachable from the start"
            )) && err.contains("nothing was written"),
            "{err}"
        );
        assert_eq!(std::fs::read(&summary).unwrap(), before, "{name}");
        // Without it, summarize works as before.
        kingmaker_ok(&["summarize", path_str(&run)]);
    }
    // A game with the census still counts it.
    let run = cc3p_level_1(tmp.path());
    let out = kingmaker_ok(&["summarize", path_str(&run), "--reachable", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["reachable"].is_object(), "{v}");
}

/// A cc2p parse error's example was 7×7 / 3's start on every board (`0:0,1,2;1:46,47,48;0` is
/// no position on 6×6): it must be a position of the board in hand.
#[test]
fn cc2p_parse_errors_give_an_example_of_the_board_in_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let run = build(
        tmp.path(),
        "cc2p",
        &["cc2p", "--board", "6x6", "--pieces", "1"],
    );
    let run = path_str(&run);
    let err = refused(&["query", run, "0:0;1:1"]);
    let example = err
        .split_once("e.g. this board's start `")
        .and_then(|(_, rest)| rest.split_once('`'))
        .map(|(example, _)| example.to_string())
        .unwrap_or_else(|| panic!("no example in {err}"));
    assert_eq!(example, "0:0;1:35;0", "{err}");
    assert_eq!(
        kingmaker_ok(&["query", run, &example]),
        kingmaker_ok(&["query", run, "start"])
    );
}

/// `build cc3p --level 3` said "use counts() for level 3", a function of the library: it must
/// name the command that counts it.
#[test]
fn cc3p_level_3_points_to_its_count() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("l3");
    let err = refused(&["build", "cc3p", "--level", "3", "--out", path_str(&out)]);
    assert!(
        err.contains("`kingmaker count cc3p --level 3`") && !err.contains("counts()"),
        "{err}"
    );
    let count = kingmaker_ok(&["count", "cc3p", "--level", "3"]);
    assert!(count.contains("illegal_states"), "{count}");
}

/// docs/cli.md said cc2p boards are M = 4…9 while `--board 9x9` is refused: the range the docs
/// give is the one the binary takes.
#[test]
fn cc2p_boards_are_those_the_docs_give() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/cli.md"))
            .unwrap();
    let range = docs
        .split_once("boards (M = ")
        .and_then(|(_, rest)| rest.split_once(','))
        .map(|(range, _)| range)
        .expect("docs/cli.md gives cc2p's boards as `boards (M = A…B, …`");
    let (lo, hi) = range.split_once('…').unwrap();
    let (lo, hi): (u8, u8) = (lo.parse().unwrap(), hi.parse().unwrap());
    let board = |m: u8| format!("{m}x{m}");
    for m in lo..=hi {
        kingmaker_ok(&["count", "cc2p", "--board", &board(m), "--pieces", "1"]);
    }
    for m in [lo - 1, hi + 1] {
        let err = refused(&["count", "cc2p", "--board", &board(m), "--pieces", "1"]);
        assert!(err.contains(&format!("M in {lo}..={hi}")), "{err}");
    }
}
