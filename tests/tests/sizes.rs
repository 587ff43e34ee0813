//! Sizes are bounded before work starts: a build that cannot fit is refused with its numbers
//! before anything is allocated, `count` answers at once (cc2p's published counts included) for
//! index spaces too large to enumerate, and a SIGTERM during a build's setup ends it at once.

use kingmaker_e2e::{bin, kingmaker, kingmaker_ok};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_build_larger_than_the_disk_is_refused_with_its_numbers_before_the_run_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("go");
    let out = kingmaker(&[
        "build",
        "go",
        "--surface",
        "plane",
        "--size",
        "1x31",
        "--out",
        run.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "1x31 Go was accepted: {err}");
    assert!(
        err.contains("may not fit") && err.contains(" states: cells of ") && err.contains("free"),
        "the refusal gives the states, the cells and the free disk: {err}"
    );
    assert!(!run.exists(), "nothing is created for a refused build");
}

/// The same build with `--out` relative to the working directory (a new directory, or one below
/// a new one): refused at once with the same numbers, nothing created. Should the check be
/// skipped, the build is held to 4 GiB of address space and a minute, not left to fill the
/// machine.
#[test]
fn a_relative_out_is_checked_like_an_absolute_one() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    for out in ["go", "runs/go"] {
        let mut command = Command::new(bin("kingmaker"));
        command
            .args(["build", "go", "--surface", "plane", "--size", "1x31"])
            .args(["--out", out])
            .current_dir(tmp.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // SAFETY: setrlimit only, between fork and exec.
        unsafe {
            command.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 4 << 30,
                    rlim_max: 4 << 30,
                };
                libc::setrlimit(libc::RLIMIT_AS, &limit);
                Ok(())
            });
        }
        let mut child = command.spawn().unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("--out {out}: the build ran for a minute instead of being refused");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let done = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&done.stderr);
        assert!(!done.status.success(), "--out {out} was accepted: {err}");
        assert!(
            err.contains("may not fit")
                && err.contains(" states: cells of ")
                && err.contains("free"),
            "--out {out}: the refusal gives the states, the cells and the free disk: {err}"
        );
        assert!(
            std::fs::read_dir(tmp.path()).unwrap().next().is_none(),
            "--out {out}: something was created for a refused build"
        );
    }
}

#[test]
fn count_gives_the_size_of_an_index_space_too_large_to_enumerate_at_once() {
    let t = Instant::now();
    let text = kingmaker_ok(&[
        "count",
        "go",
        "--surface",
        "torus",
        "--size",
        "5x6",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["states"].as_str().is_some_and(|s| s.len() > 10), "{text}");
    assert!(v["illegal_states"].is_null(), "{text}");
    assert!(
        v["illegal_states_note"]
            .as_str()
            .is_some_and(|n| n.contains("not counted")),
        "{text}"
    );
    // A hang guard, not a speed goal: enumerating would take hours.
    assert!(t.elapsed() < Duration::from_secs(120));
}

/// The first SIGTERM once waves run finishes the wave and checkpoints (exit 0); during setup
/// there is nothing to save, and it ends the process at once (exit 130), before any wave.
#[test]
fn sigterm_during_setup_ends_the_build_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cc2p");
    // Its setup (ranking tables, 141 M cells, the initial pass) takes seconds.
    let mut child = Command::new(bin("kingmaker"))
        .args(["build", "cc2p", "--board", "7x7", "--pieces", "3", "--out"])
        .arg(&run)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !run.join("run.json").exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the build ended before its setup"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "no run.json");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    let progress = std::fs::read_to_string(run.join("progress.json")).unwrap_or_default();
    assert_eq!(
        status.code(),
        Some(130),
        "a SIGTERM in setup ends the build at once (progress: {progress})"
    );
}

fn count_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["count", "cc2p"];
    all.extend(args);
    all.push("--json");
    serde_json::from_str(&kingmaker_ok(&all)).unwrap()
}

/// The published rows (RULES.md §3), up to 6×6 / 6 (2.3 trillion states: no enumeration could
/// answer), in both tip-rule conventions.
#[test]
fn cc2p_counts_are_the_published_ones_without_enumerating() {
    for (board, pieces, states, exact, shortcut) in [
        ("7x7", "1", 4_704u64, 96u64, 96u64),
        ("7x7", "2", 2_542_512, 10_810, 10_810),
        ("7x7", "3", 559_352_640, 576_840, 576_840),
        ("4x4", "6", 3_363_360, 405_420, 405_420),
        ("5x5", "6", 9_610_154_400, 64_173_018, 63_860_706),
        ("6x6", "6", 2_313_100_389_600, 0, 1_898_692_650),
    ] {
        let what = format!("{board} / {pieces}");
        let c = count_json(&["--board", board, "--pieces", pieces]);
        assert_eq!(c["states"], states.to_string(), "{what}: {c}");
        assert_eq!(c["placements"], (states / 2).to_string(), "{what}: {c}");
        if exact > 0 {
            assert_eq!(c["illegal_states"], exact.to_string(), "{what}: {c}");
            assert_eq!(c["illegal_states_exact"], exact.to_string(), "{what}: {c}");
        }
        assert_eq!(
            c["illegal_states_shortcut"],
            shortcut.to_string(),
            "{what}: {c}"
        );
        let c = count_json(&["--board", board, "--pieces", pieces, "--shortcut-tip-rule"]);
        assert_eq!(c["illegal_states"], shortcut.to_string(), "{what}: {c}");
    }
}
