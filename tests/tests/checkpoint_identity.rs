//! Every checkpoint names the game, its parameters and the layer it belongs to: a resume whose
//! run.json says another game (same layout, so the cells would fit) is refused, naming both, and
//! nothing of the run is changed; put back, the run resumes to the uninterrupted build's tables.
//! Embedded, on two in-process workers, and on two real workers.

use kingmaker_e2e::{
    addrs, assert_same_tables, bin, kingmaker, read_json, reference_build, wait_for_wave, Worker,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

const TOKEN: &str = "e2e-identity-token";
const HANG: Duration = Duration::from_secs(300);
/// connect4 5×4, four in a row: some 20 waves, a few seconds; connect 3 has the same states.
const GAME: [&str; 5] = ["connect4", "--board", "5x4", "--connect", "4"];

fn reference() -> &'static Path {
    static REF: OnceLock<PathBuf> = OnceLock::new();
    REF.get_or_init(|| {
        reference_build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "identity-reference",
            &GAME,
        )
    })
}

/// Build connect4 5×4 / 4 into `run` (a checkpoint every two waves, `extra` options), killed
/// (-9) once wave 3 closed: its last checkpoint is after wave 2 or later.
fn build_killed_after_a_checkpoint(run: &Path, extra: &[String]) -> u64 {
    let mut child = Command::new(bin("kingmaker"))
        .arg("build")
        .args(GAME)
        .args(["--checkpoint-every-waves", "2", "--shard-size", "65536"])
        .arg("--out")
        .arg(run)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting kingmaker build");
    let seen = wait_for_wave(run, &mut child, None, 3, HANG);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        seen && !run.join("summary.json").exists(),
        "the build ended before wave 3"
    );
    read_json(&run.join("checkpoint.json"))["current"]["last"]["wave"]
        .as_u64()
        .expect("a checkpoint after wave 2")
}

/// Replace `from` by `to` everywhere in the file `path` (as `sed -i 's/from/to/'` does on
/// pretty-printed JSON).
fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no {from}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap();
}

fn resume(run: &Path, workers: Option<&[Worker]>) -> (Output, String) {
    let mut args = vec!["resume".to_string(), run.display().to_string()];
    if let Some(w) = workers {
        args.extend(["--workers".into(), addrs(w), "--token".into(), TOKEN.into()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = kingmaker(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, stderr)
}

/// Every file under `dir` with its bytes (what a refused resume must leave as it was).
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                todo.push(path);
            } else if !["run.json", "checkpoint.json", "kingmaker.lock"].contains(&name.as_str()) {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// The reproduction of issue 63: run.json's connect edited from 4 to 3 after a kill -9. Then
/// checkpoint.json edited the same way, so that only the workers' manifests say the truth. Both
/// refused (no fallback to an earlier checkpoint or the layer's start), the run untouched; put
/// back, it resumes from its checkpoint to the reference's tables.
fn edited_game_is_refused(run: &Path, extra: &[String], workers: Option<&[Worker]>) {
    let wave = build_killed_after_a_checkpoint(run, extra);
    let (info, state) = (run.join("run.json"), run.join("checkpoint.json"));
    let before = snapshot(run);

    edit(&info, r#""connect": 4"#, r#""connect": 3"#);
    let (out, err) = resume(run, workers);
    assert!(!out.status.success(), "a resume of another game: {err}");
    for part in [
        r#""connect":4"#,
        r#""connect":3"#,
        "connect: 4 in checkpoint.json, 3 in run.json",
        "run.json was edited",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    assert!(!err.contains("resuming after wave"), "{err}");
    assert!(snapshot(run) == before, "a refused resume changed the run");

    // checkpoint.json edited too: the workers' manifests still name connect 4.
    edit(&state, r#""connect": 4"#, r#""connect": 3"#);
    let (out, err) = resume(run, workers);
    assert!(!out.status.success(), "a checkpoint of another game: {err}");
    for part in [
        "checkpoint refused",
        &format!(".solo.w{wave:05}.json"),
        r#""connect":4"#,
        r#""connect":3"#,
        "build anew",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    assert!(!err.contains("falling back"), "{err}");

    edit(&info, r#""connect": 3"#, r#""connect": 4"#);
    edit(&state, r#""connect": 3"#, r#""connect": 4"#);
    let (out, err) = resume(run, workers);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("resuming after wave {wave}")),
        "{err}"
    );
    assert_same_tables(run, reference());
}

#[test]
fn an_edited_run_json_is_refused_embedded() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    edited_game_is_refused(&tmp.path().join("run"), &[], None);
}

#[test]
fn an_edited_run_json_is_refused_on_two_in_process_workers() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let extra = ["--local-workers".to_string(), "2".into()];
    edited_game_is_refused(&tmp.path().join("run"), &extra, None);
}

#[test]
fn an_edited_run_json_is_refused_on_two_workers() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|i| Worker::start_on(TOKEN, &tmp.path().join(format!("worker{i}")), "127.0.0.1:0"))
        .collect();
    let extra: Vec<String> = ["--workers", &addrs(&workers), "--token", TOKEN]
        .iter()
        .map(|s| s.to_string())
        .collect();
    edited_game_is_refused(&tmp.path().join("run"), &extra, Some(&workers));
}

/// A checkpoint written before manifests named their game (format 2: no `version`, no `game`;
/// checkpoint.json without `spec`) is refused with what to do, not restored on faith.
#[test]
fn a_checkpoint_that_names_no_game_is_refused() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let wave = build_killed_after_a_checkpoint(&run, &[]);
    let state_path = run.join("checkpoint.json");
    let mut state = read_json(&state_path);
    let recorded = state.as_object_mut().unwrap();
    assert!(
        recorded.remove("spec").is_some(),
        "checkpoint.json names its game"
    );
    std::fs::write(&state_path, serde_json::to_vec_pretty(&state).unwrap()).unwrap();
    let cpdir = run.join("work/worker-0/checkpoint");
    for e in std::fs::read_dir(&cpdir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") {
            let mut m: Value = read_json(&e.path());
            let fields = m.as_object_mut().unwrap();
            assert_eq!(fields.remove("version"), Some(Value::from(3)), "{name}");
            assert!(fields.remove("game").is_some(), "{name} names its game");
            std::fs::write(e.path(), serde_json::to_vec_pretty(&m).unwrap()).unwrap();
        }
    }
    let (out, err) = resume(&run, None);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("worker-0.solo.w{wave:05}.json"))
            && err.contains("format 2")
            && err.contains("kingmaker that began it"),
        "{err}"
    );
    assert!(!err.contains("falling back"), "{err}");
}
