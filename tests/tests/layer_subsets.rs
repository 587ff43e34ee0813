//! `--layers` subsets end to end: a build of some of a game's layers, equal to the full build's,
//! and a resume of the rest that makes it the full build.

use kingmaker_e2e::{
    assert_same_tables, cc3p_reference_in, kingmaker, kingmaker_ok, layer_names, read_json,
};
use serde_json::{json, Value};
use std::path::Path;

/// The embedded build of cc3p level 1 (once per test binary).
fn cc3p_reference() -> &'static Path {
    cc3p_reference_in(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// `build cc3p --level 1 --layers solo,enable_ac` gives exactly those two tables, equal to the full
/// build's (values and depths), and its control classes (from solo alone); `resume --layers
/// enable_ab` then adds the third, and the run is the full build: its layers in run.json (in the
/// game's order), its tables and its whole summary, classes included.
#[test]
fn layer_subsets_build_and_resume_to_the_full_build() {
    let reference = cc3p_reference();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let dir = run.to_str().unwrap();
    kingmaker_ok(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--layers",
        "solo,enable_ac",
        "--out",
        dir,
    ]);
    assert_eq!(layer_names(&run), ["enable_ac", "solo"]);
    for name in ["solo", "enable_ac"] {
        let file = format!("layers/{name}.kmt");
        assert!(
            std::fs::read(run.join(&file)).unwrap()
                == std::fs::read(reference.join(&file)).unwrap(),
            "{file} differs from the full build's"
        );
    }
    let names: Vec<Value> = read_json(&run.join("run.json"))["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].clone())
        .collect();
    assert_eq!(names, [json!("solo"), json!("enable_ac")]);
    let partial = read_json(&run.join("summary.json"));
    let full = read_json(&reference.join("summary.json"));
    // The classes read the solo layer alone: the full build's, before enable_ab exists.
    assert_eq!(partial["classes"], full["classes"], "{partial}");
    let layers = partial["layers"].as_object().unwrap();
    assert_eq!(
        layers.keys().collect::<Vec<_>>(),
        ["enable_ac", "solo"],
        "{partial}"
    );
    for (name, layer) in layers {
        assert_eq!(layer, &full["layers"][name], "{name}");
    }

    let out = kingmaker(&["resume", dir, "--layers", "enable_ab"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(layer_names(&run), ["enable_ab", "enable_ac", "solo"]);
    assert_eq!(
        read_json(&run.join("run.json"))["layers"],
        read_json(&reference.join("run.json"))["layers"],
        "run.json lists the layers in the game's order, as a build of all three does"
    );
    assert_same_tables(&run, reference);
    let summary = read_json(&run.join("summary.json"));
    assert!(summary["classes"].is_object(), "{summary}");
    assert_eq!(summary, full, "the summary of the full build");
}
