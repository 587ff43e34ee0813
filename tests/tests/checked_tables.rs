//! No table is believed before it is checked: a layer file that is not the one asked for (swapped,
//! misplaced) is refused by every reader, and a finished layer that is damaged, missing or
//! contradicted by `checkpoint.json` is read back, refused and solved again by `resume` instead
//! of ending up in a summary or a release.

use kingmaker_e2e::{http_get, kingmaker, kingmaker_ok, read_json};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A finished cc3p level-1 run (three layers, milliseconds).
fn level_1(tmp: &Path, name: &str) -> PathBuf {
    let run = tmp.join(name);
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&run)]);
    run
}

/// Exchange two files.
fn swap(a: &Path, b: &Path) {
    let tmp = a.with_extension("swap");
    std::fs::rename(a, &tmp).unwrap();
    std::fs::rename(b, a).unwrap();
    std::fs::rename(&tmp, b).unwrap();
}

/// `kingmaker ARGS` must fail, and its stderr must contain every one of `want`.
fn fails_saying(args: &[&str], want: &[&str]) -> String {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "kingmaker {args:?} succeeded");
    for w in want {
        assert!(err.contains(w), "kingmaker {args:?}: no {w:?} in {err}");
    }
    err
}

/// The stderr of `kingmaker ARGS`, which must succeed.
fn succeeds(args: &[&str]) -> String {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "kingmaker {args:?} failed: {err}");
    err
}

/// What `serve DIR` does with its tables: the first line it prints and, when it listens, the
/// answer to `/api/position?p=start`; or its error when it refuses to start.
fn serve_start(dir: &Path) -> Result<(String, String), String> {
    let mut child = Command::new(kingmaker_e2e::bin("kingmaker"))
        .args(["serve", s(dir), "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.split_whitespace().last().unwrap_or("").to_string();
    if !url.starts_with("http://") {
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "serve printed {line:?} and exited 0");
        return Err(err);
    }
    let answer = http_get(&url, "/api/position?p=start");
    let _ = child.kill();
    let _ = child.wait();
    Ok(answer)
}

#[test]
fn swapped_layer_files_of_a_release_are_refused_by_query_serve_line_and_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let run = level_1(tmp.path(), "run");
    let rel = tmp.path().join("rel");
    kingmaker_ok(&["pack", s(&run), "--out", s(&rel)]);
    let truth = kingmaker_ok(&["query", s(&rel), "start", "--json"]);
    assert!(truth.contains("kingmaker"), "{truth}");
    swap(&rel.join("solo.kmt"), &rel.join("enable_ab.kmt"));
    let said = [
        "solo.kmt",
        "holds layer enable_ab",
        "not the layer solo",
        "swapped",
    ];
    fails_saying(&["query", s(&rel), "start"], &said);
    match serve_start(&rel) {
        Err(err) => assert!(err.contains("holds layer enable_ab"), "{err}"),
        Ok((status, body)) => {
            assert!(!status.contains("200"), "{status}: {body}");
            assert!(body.contains("holds layer enable_ab"), "{body}");
        }
    }
    fails_saying(&["verify", s(&rel)], &["not the layer solo"]);
}

#[test]
fn swapped_or_foreign_layer_files_of_a_run_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let run = level_1(tmp.path(), "run");
    let layers = run.join("layers");
    swap(&layers.join("solo.kmt"), &layers.join("enable_ac.kmt"));
    fails_saying(
        &["query", s(&run), "start"],
        &["holds layer enable_ac", "not the layer solo"],
    );
    swap(&layers.join("solo.kmt"), &layers.join("enable_ac.kmt"));
    kingmaker_ok(&["query", s(&run), "start"]);
    // Another game's table under the right name.
    let toppen = tmp.path().join("toppen");
    kingmaker_ok(&["build", "toppen", "--out", s(&toppen)]);
    std::fs::copy(toppen.join("layers/solo.kmt"), layers.join("solo.kmt")).unwrap();
    fails_saying(
        &["query", s(&run), "start"],
        &["toppen", "not the layer solo"],
    );
}

/// A run whose layers are finished but whose summary is not written yet: a build stopped
/// between its last table and `summary.json`, as `resume` finds it.
fn stopped_before_the_summary(tmp: &Path, name: &str) -> PathBuf {
    let run = level_1(tmp, name);
    std::fs::remove_file(run.join("summary.json")).unwrap();
    run
}

/// Flip one bit in the middle of a file.
fn flip_middle(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0x10;
    std::fs::write(path, bytes).unwrap();
}

/// Resume `run` to its end; its summary must equal `reference`'s (counts and digests), and the
/// damaged layer's file must be kept beside the new one.
fn resumes_to(run: &Path, reference: &Path, layer: &str, said: &str) {
    let err = succeeds(&["resume", s(run)]);
    assert!(err.contains(said), "resume did not say {said:?}: {err}");
    assert!(
        err.contains(&format!("layer {layer}")) && err.contains("solved again"),
        "{err}"
    );
    assert_eq!(
        read_json(&run.join("summary.json"))["layers"],
        read_json(&reference.join("summary.json"))["layers"]
    );
    kingmaker_e2e::assert_same_tables(run, reference);
}

#[test]
fn a_flipped_block_of_a_finished_layer_is_refused_by_summarize_and_solved_again_by_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = level_1(tmp.path(), "reference");
    let run = stopped_before_the_summary(tmp.path(), "run");
    flip_middle(&run.join("layers/enable_ab.kmt"));
    fails_saying(
        &["summarize", s(&run)],
        &["layer enable_ab", "crc32 mismatch", "kingmaker resume"],
    );
    resumes_to(&run, &reference, "enable_ab", "crc32 mismatch");
    assert!(run.join("layers/enable_ab.kmt.damaged").exists());
}

#[test]
fn forged_counts_or_digests_in_checkpoint_json_are_not_copied_into_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = level_1(tmp.path(), "reference");
    for (k, field) in ["digest", "win"].iter().enumerate() {
        let run = stopped_before_the_summary(tmp.path(), &format!("run{k}"));
        let path = run.join("checkpoint.json");
        let mut state = read_json(&path);
        let layer = state["finished"][0]["layer"]["name"]
            .as_str()
            .unwrap()
            .to_string();
        let table = &mut state["finished"][0]["table"];
        if *field == "digest" {
            table["digest"] = "00".repeat(32).into();
        } else {
            let c = &mut table["counts"]["win"];
            *c = (c.as_u64().unwrap() + 1).into();
        }
        std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
        resumes_to(&run, &reference, &layer, "checkpoint.json records");
    }
}

#[test]
fn a_missing_truncated_or_header_damaged_finished_layer_is_solved_again() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = level_1(tmp.path(), "reference");
    type Damage = fn(&Path);
    let damages: [(&str, Damage, &str); 3] = [
        ("missing", |p| std::fs::remove_file(p).unwrap(), "missing"),
        (
            "truncated",
            |p| {
                let bytes = std::fs::read(p).unwrap();
                std::fs::write(p, &bytes[..bytes.len() - 7]).unwrap();
            },
            "truncated",
        ),
        (
            "header",
            |p| {
                let mut bytes = std::fs::read(p).unwrap();
                bytes[20] ^= 1;
                std::fs::write(p, bytes).unwrap();
            },
            "header crc32 mismatch",
        ),
    ];
    for (name, damage, said) in damages {
        let run = stopped_before_the_summary(tmp.path(), name);
        damage(&run.join("layers/solo.kmt"));
        resumes_to(&run, &reference, "solo", said);
    }
}
