//! Go from the command line: a build finds the start's optimal score, and `line` plays it out,
//! in text and JSON, naming the winner by the final score.

use kingmaker_e2e::{kingmaker_ok, read_json};
use serde_json::Value;

#[test]
fn a_plane_1x3_build_and_its_principal_line_in_json() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("go");
    let run = run.to_str().unwrap();
    kingmaker_ok(&[
        "build",
        "go",
        "--surface",
        "plane",
        "--size",
        "1x3",
        "--out",
        run,
    ]);
    let summary = read_json(&tmp.path().join("go/summary.json"));
    assert_eq!(summary["start"]["score"], 3, "{summary}");

    let line: Value = serde_json::from_str(&kingmaker_ok(&[
        "line",
        run,
        "start",
        "--layer",
        "score_ge_3",
        "--json",
    ]))
    .unwrap();
    let ending = &line["ending"];
    assert_eq!(ending["kind"], "game_over", "{line}");
    assert_eq!(ending["outcome"], "final score +3 (Black − White)");
    assert_eq!(ending["winner"], "Black");

    let text = kingmaker_ok(&["line", run, "start", "--layer", "score_ge_3"]);
    assert!(text.contains("final score +3"), "{text}");
}
