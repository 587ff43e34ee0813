//! Options are checked before anything is written: bad sizes and counts refused by `build`,
//! `resume` and the worker, and a too-large shard size already in run.json still resumes.

use kingmaker_e2e::{bin, kingmaker, kingmaker_ok, path_str as s, read_json};
use std::process::Command;

/// `kingmaker ARGS...` must fail with a message containing `want`, without panicking.
fn refused(args: &[&str], want: &str) {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} was accepted");
    assert!(err.contains(want), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn bad_sizes_and_counts_are_refused_before_the_run_directory_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let too_many_threads = (4 * cores + 1).to_string();
    for (extra, want) in [
        (vec!["--shard-size", "18446744073709551615"], "--shard-size"),
        (vec!["--shard-size", "0"], "--shard-size"),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--threads", &too_many_threads], "per core"),
        (vec!["--local-workers", "0"], "--local-workers"),
        (vec!["--local-workers", "100000"], "--local-workers"),
        (vec!["--memory-budget", "0"], "--memory-budget"),
        (vec!["--memory-budget", "99999999T"], "too large"),
        (
            vec!["--checkpoint-every-secs", "18446744073709551615"],
            "--checkpoint-every-secs",
        ),
        (vec!["--worker-timeout", "0"], "more than 0"),
        (
            vec![
                "--worker-timeout",
                "0",
                "--workers",
                "127.0.0.1:9",
                "--token",
                "t",
            ],
            "more than 0",
        ),
    ] {
        let mut args = vec!["build", "cc3p", "--level", "1", "--out", s(&out)];
        args.extend(extra);
        refused(&args, want);
        assert!(!out.exists(), "{args:?} created the run directory");
    }
    // `resume` checks the same options before it touches the run.
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&out)]);
    std::fs::remove_file(out.join("summary.json")).unwrap();
    for (extra, want) in [
        (vec!["--threads", "0"], "--threads"),
        (vec!["--local-workers", "0"], "--local-workers"),
        (vec!["--memory-budget", "0"], "--memory-budget"),
        (vec!["--worker-timeout", "0"], "more than 0"),
    ] {
        let mut args = vec!["resume", s(&out)];
        args.extend(extra);
        refused(&args, want);
    }
}

/// A run directory whose run.json has a shard size too large to round (as builds wrote before
/// the option was checked) still resumes, to the digests of a normal build.
#[test]
fn a_huge_shard_size_in_run_json_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = tmp.path().join("ref");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&reference)]);
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let mut info = read_json(&reference.join("run.json"));
    info["shard_size"] = serde_json::json!(u64::MAX);
    std::fs::write(run.join("run.json"), info.to_string()).unwrap();
    let out = kingmaker(&["resume", s(&run)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        read_json(&run.join("summary.json"))["layers"],
        read_json(&reference.join("summary.json"))["layers"]
    );
}

#[test]
fn the_worker_refuses_bad_threads_and_budgets() {
    let tmp = tempfile::tempdir().unwrap();
    for (extra, want) in [
        (["--threads", "0"], "--threads"),
        (["--threads", "100000"], "per core"),
        (["--memory-budget", "0"], "--memory-budget"),
    ] {
        let out = Command::new(bin("kingmaker-worker"))
            .args(["--listen", "127.0.0.1:0", "--data-dir", s(tmp.path())])
            .args(["--token", "t"])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{extra:?} was accepted");
        assert!(err.contains(want) && !err.contains("panicked"), "{err}");
    }
}
