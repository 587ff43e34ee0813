//! The published rows of RULES.md §3 through the real `kingmaker` binary.
//!
//! 7×7 with 1 and 2 pieces and 4×4 with 6 pieces run in every test run; 7×7 with 3 pieces takes
//! minutes on two cores and is `#[ignore]`d: run it with
//! `cargo test --release -p kingmaker-e2e --test cc2p -- --ignored` (its output is recorded in
//! docs/results.md).

use kingmaker_e2e::{kingmaker_ok, read_json};

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
#[ignore = "minutes on two cores; see docs/results.md"]
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
