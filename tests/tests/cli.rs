//! The operator CLI's edges, through the real `kingmaker` binary: options given twice, pack's
//! leftovers, `status` and `summarize` on finished runs and on releases, what `pack` and `verify`
//! report, illegal states in `query`, `deck` and `deck verify`, `bfs` past the last new state,
//! and the HTTP API's parameters.

use kingmaker_e2e::{kingmaker, kingmaker_ok, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `kingmaker ARGS...` must fail with a message containing `want`, without panicking; its stderr.
#[track_caller]
fn refused(args: &[&str], want: &str) -> String {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} was accepted: {err}");
    assert!(err.contains(want), "{args:?}: expected {want:?} in {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

/// Build cc3p level 1 into `dir/run`.
fn build_level_1(dir: &Path) -> PathBuf {
    let run = dir.join("run");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&run)]);
    run
}

/// Build cc3p level 1 into `dir/run` and pack it into `dir/rel`.
fn build_and_pack(dir: &Path) -> (PathBuf, PathBuf) {
    let run = build_level_1(dir);
    let rel = dir.join("rel");
    kingmaker_ok(&["pack", s(&run), "--out", s(&rel)]);
    (run, rel)
}

// ---- layers and thresholds given twice ----

#[test]
fn a_layer_or_threshold_given_twice_is_refused_before_the_run_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    refused(
        &["build", "cc3p", "--level", "1", "--layers", "solo,solo", "--out", s(&out)],
        "\"solo\" twice",
    );
    assert!(!out.exists(), "the refused build created its run directory");
    refused(
        &[
            "build", "go", "--surface", "plane", "--size", "2x2", "--thresholds", "1,1", "--out",
            s(&out),
        ],
        "1 twice",
    );
    assert!(!out.exists(), "the refused build created its run directory");
    // Distinct ones still build and pack.
    kingmaker_ok(&[
        "build", "go", "--surface", "plane", "--size", "2x2", "--thresholds", "0,1", "--out",
        s(&out),
    ]);
    kingmaker_ok(&["pack", s(&out), "--out", s(&tmp.path().join("rel"))]);
    // A resume given a layer twice is refused the same way.
    let run = build_level_1(&tmp.path().join("cc3p"));
    refused(
        &["resume", s(&run), "--layers", "enable_ab,enable_ab"],
        "\"enable_ab\" twice",
    );
}
