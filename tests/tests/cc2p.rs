//! The published rows of docs/rules.md §3 through the `kingmaker` binary; half and full solves.
//! 1. Every row runs in every test run, 7×7 with 3 pieces included (about three minutes on two
//!    cores; its output is also recorded in docs/results.md).

use kingmaker_e2e::{
    assert_same_tables, bin, http_get, kingmaker, kingmaker_ok, read_json, start_serve,
    wait_for_wave,
};
use std::path::Path;

/// (board, pieces, states, player-0 wins, draws, illegal)
fn check_row(board: &str, pieces: u8, states: u64, wins: u64, draws: u64, illegal: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        board,
        "--pieces",
        &pieces.to_string(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    let s = read_json(&dir.join("summary.json"));
    let row = format!("{board} / {pieces}");
    assert_eq!(s["game"], "cc2p");
    assert_eq!(s["board"], board);
    assert_eq!(s["pieces"], pieces);
    assert_eq!(s["states"], states, "{row} states");
    assert_eq!(s["illegal"], illegal, "{row} illegal");
    let solo = &s["layers"]["solo"];
    assert_eq!(solo["win"], wins, "{row} player-0 wins");
    assert_eq!(
        solo["loss"], wins,
        "{row}: player-1 wins equal player-0 wins (colour symmetry)"
    );
    assert_eq!(solo["draw"], draws, "{row} draws");
    assert_eq!(
        s["start"]["value"], "W",
        "{row}: the start is a first-player win"
    );
}

#[test]
fn board_7x7_with_1_piece() {
    check_row("7x7", 1, 4_704, 2_304, 0, 96);
}

#[test]
fn board_7x7_with_2_pieces() {
    check_row("7x7", 2, 2_542_512, 1_265_851, 0, 10_810);
}

#[test]
fn board_4x4_with_6_pieces() {
    check_row("4x4", 6, 3_363_360, 1_436_159, 85_622, 405_420);
}

#[test]
fn board_7x7_with_3_pieces() {
    check_row("7x7", 3, 559_352_640, 279_297_470, 180_860, 576_840);
}

#[test]
fn bad_boards_are_refused() {
    for (board, pieces) in [("3x3", "1"), ("7x6", "1"), ("seven", "1"), ("7x7", "7")] {
        let out = kingmaker_e2e::kingmaker(&[
            "build",
            "cc2p",
            "--board",
            board,
            "--pieces",
            pieces,
            "--out",
            "/nonexistent/x",
        ]);
        assert!(
            !out.status.success(),
            "{board} / {pieces} should be refused"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
    }
}

fn build(board: &str, pieces: u8, extra: &[&str], dir: &Path) {
    let pieces = pieces.to_string();
    let mut args = vec![
        "build",
        "cc2p",
        "--board",
        board,
        "--pieces",
        &pieces,
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend(extra);
    kingmaker_ok(&args);
}

/// The files of a finished run that must not depend on how it was solved: every layer file
/// (values and depths of every state) and summary.json.
#[track_caller]
fn same_tables(a: &Path, b: &Path, what: &str) {
    assert_same_tables(a, b);
    let (x, y) = (
        std::fs::read(a.join("summary.json")).unwrap(),
        std::fs::read(b.join("summary.json")).unwrap(),
    );
    assert!(x == y, "{what}: summary.json differs");
}

/// Builds solve the colour-swap half of the index space and expand it; `--no-symmetry` solves the
/// whole space. Both must write the same bytes.
#[test]
fn the_half_solve_writes_the_tables_of_the_full_solve() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = vec![("7x7", 1), ("7x7", 2)];
    rows.extend((1..=6).map(|k| ("4x4", k)));
    for (board, pieces) in rows {
        let what = format!("{board} / {pieces}");
        let half = tmp.path().join(format!("{board}-{pieces}-half"));
        let full = tmp.path().join(format!("{board}-{pieces}-full"));
        // Small shards for the half solve: several shards, gathered in order.
        build(board, pieces, &["--shard-size", "65536"], &half);
        build(board, pieces, &["--no-symmetry"], &full);
        same_tables(&half, &full, &what);
        let info = read_json(&half.join("run.json"));
        assert_eq!(info["solved_as"]["game"], "cc2p_half", "{what}");
        assert!(read_json(&full.join("run.json")).get("solved_as").is_none());
        assert!(!half.join("work").exists(), "{what}: work/ left behind");
    }
}

/// A half solve stopped after a checkpoint (SIGTERM right after wave 3 of 37 is seen in
/// progress.json: finish the wave, checkpoint, exit) resumes on the half game from that checkpoint
/// and ends with the full solve's tables.
#[test]
fn a_stopped_half_solve_resumes_to_the_full_tables() {
    use std::process::{Command, Stdio};
    use std::time::Duration;
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    build("7x7", 2, &["--no-symmetry"], &full);
    let run = tmp.path().join("run");
    let mut child = Command::new(bin("kingmaker"))
        .args([
            "build",
            "cc2p",
            "--board",
            "7x7",
            "--pieces",
            "2",
            "--checkpoint-every-waves",
            "1",
            "--out",
            run.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for_wave(&run, &mut child, None, 3, Duration::from_secs(300)),
        "the build ended before wave 3"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(
        child.wait().unwrap().success(),
        "a stop request ends with 0"
    );
    assert!(
        !run.join("summary.json").exists(),
        "SIGTERM after wave 3 of 37 should stop the build, not finish it"
    );
    let wave = read_json(&run.join("checkpoint.json"))["current"]["last"]["wave"]
        .as_u64()
        .expect("the stop checkpoints the current layer");
    assert!(wave >= 3, "checkpointed after wave {wave}");
    let out = kingmaker(&["resume", run.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume failed: {err}");
    assert!(
        err.contains(&format!("resuming after wave {wave}")),
        "resumed from the checkpoint of wave {wave}: {err}"
    );
    same_tables(&run, &full, "resumed half solve");
}

/// The start of cc2p is the real start, as `serve` and `query` report it.
#[test]
fn cc2p_start_is_the_real_start_in_serve_and_query() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cc2p-4x4-1");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        "4x4",
        "--pieces",
        "1",
        "--out",
        run.to_str().unwrap(),
    ]);
    // 4×4 / 1: player 0 starts on cell 0, player 1 on its mirror image, cell 15.
    let start = "0:0;1:15;0";
    let (_server, addr) = start_serve(&run);
    let (status, body) = http_get(&addr, "/api/info");
    assert!(status.contains("200"), "{status}");
    let info: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["start"], start, "{info}");

    let out = kingmaker_ok(&["query", run.to_str().unwrap(), "start", "--json"]);
    let q: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(q["position"], start, "{q}");
    // The start is a first-player win, as the summary says.
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["start"]["value"], "W");
    assert_eq!(q["value"], "W", "{q}");
}
