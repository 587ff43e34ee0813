//! Files the tool did not write are read only when regular and bounded, and destinations are
//! checked before the first write: /dev/zero, a sparse 3 GiB file or a FIFO in place of a run's
//! or a release's files is refused with its name, never read whole or waited on; `report` keeps
//! an existing file, two packs into one directory leave one release and no staging copy, and
//! `build --out` refuses a device or a directory that is no run.
//! Every command here runs with 1 GiB of address space and a time limit, so that a reader that
//! reads on fails the test instead of the machine.

use kingmaker_e2e::{bin, kingmaker, kingmaker_ok, path_str as s, reference_build, wait_for_wave};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The address space each command may use: a whole /dev/zero or a 3 GiB file does not fit.
const ADDRESS_SPACE: u64 = 1 << 30;

/// How `kingmaker ARGS` ended under [`ADDRESS_SPACE`] and `limit`: (exit code, or None when it
/// was killed for running past the limit; stderr).
fn limited(args: &[&str], limit: Duration) -> (Option<i32>, String) {
    let mut cmd = Command::new(bin("kingmaker"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit only, which is async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("running kingmaker");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status.code().unwrap_or(-1));
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (code, reader.join().unwrap())
}

/// `kingmaker ARGS` fails within 30 s, saying `expected`.
#[track_caller]
fn refused(args: &[&str], expected: &str) {
    let (code, err) = limited(args, Duration::from_secs(30));
    assert!(
        code.is_some(),
        "kingmaker {args:?} still ran after 30 s: {err}"
    );
    assert_ne!(code, Some(0), "kingmaker {args:?} succeeded: {err}");
    assert!(
        err.contains(expected),
        "kingmaker {args:?} did not say {expected:?}:\n{err}"
    );
}

/// A finished run (connect4 4×4, 3 in a row) and its release, built once per test process (the
/// tests of this file run at once and share it; each changes only its own copy).
fn run_and_release() -> (PathBuf, PathBuf) {
    static BUILT: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
            let args = ["connect4", "--board", "4x4", "--connect", "3"];
            let run = reference_build(base, "hostile-run", &args);
            // Releases of earlier test processes go as their runs do.
            for entry in std::fs::read_dir(base).unwrap().flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(pid) = name.strip_prefix("hostile-release-") {
                    if !Path::new("/proc").join(pid).exists() {
                        let _ = std::fs::remove_dir_all(entry.path());
                    }
                }
            }
            let release = base.join(format!("hostile-release-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&release);
            kingmaker_ok(&["pack", s(&run), "--out", s(&release)]);
            (run, release)
        })
        .clone()
}

/// A copy of `dir` at `to`.
fn copy(dir: &Path, to: &Path) {
    let out = Command::new("cp")
        .args(["-r", s(dir), s(to)])
        .output()
        .unwrap();
    assert!(out.status.success(), "cp: {out:?}");
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
}

fn zero_in_place_of(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

#[test]
fn dev_zero_or_a_sparse_giant_as_run_json_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = run_and_release();
    let z = tmp.path().join("z");
    copy(&run, &z);
    zero_in_place_of(&z.join("run.json"));
    let device = "z/run.json: not a regular file (a character device)";
    refused(&["status", s(&z)], device);
    refused(&["query", s(&z), ""], device);
    refused(&["pack", s(&z), "--out", s(&tmp.path().join("p"))], device);

    let y = tmp.path().join("y");
    copy(&run, &y);
    std::fs::File::create(y.join("run.json"))
        .unwrap()
        .set_len(3 << 30)
        .unwrap();
    let giant = "y/run.json: 3.0 GiB, more than the 64 MiB a run.json may be";
    refused(&["status", s(&y)], giant);
    refused(&["query", s(&y), ""], giant);
}

#[test]
fn dev_zero_as_a_release_manifest_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, release) = run_and_release();
    let r = tmp.path().join("r");
    copy(&release, &r);
    zero_in_place_of(&r.join("manifest.json"));
    let device = "r/manifest.json: not a regular file (a character device)";
    refused(&["status", s(&r)], device);
    refused(&["verify", s(&r)], device);
    refused(&["query", s(&r), ""], device);
}

#[test]
fn a_fifo_in_place_of_a_layer_file_is_refused_not_waited_on() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, release) = run_and_release();
    let v = tmp.path().join("v");
    copy(&release, &v);
    mkfifo(&v.join("solo.kmt"));
    let fifo = "solo.kmt: not a regular file (a FIFO)";
    refused(&["verify", s(&v)], fifo);
    refused(&["query", s(&v), ""], fifo);
    // A run's finished layer too.
    let w = tmp.path().join("w");
    copy(&run, &w);
    mkfifo(&w.join("layers/solo.kmt"));
    refused(&["query", s(&w), ""], fifo);
}

/// The files under `dir` (recursively) whose name ends with `suffix`.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_ending(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_fifo_in_place_of_a_wave_log_is_refused_by_resume_not_waited_on() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mut child = Command::new(bin("kingmaker"))
        .args(["build", "connect4", "--board", "5x4", "--connect", "4"])
        .args([
            "--checkpoint-every-waves",
            "2",
            "--shard-size",
            "65536",
            "--out",
        ])
        .arg(&run)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let seen = wait_for_wave(&run, &mut child, None, 3, Duration::from_secs(120));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        seen && run.join("checkpoint.json").exists(),
        "no checkpoint after wave 2"
    );
    let logs = files_ending(&run, ".waves");
    assert!(!logs.is_empty(), "no wave log under {}", run.display());
    std::fs::remove_file(&logs[0]).unwrap();
    mkfifo(&logs[0]);
    refused(&["resume", s(&run)], "not a regular file (a FIFO)");
}

#[test]
fn deck_verify_of_dev_zero_stops_at_its_cap() {
    refused(
        &["deck", "verify", "/dev/zero"],
        "/dev/zero: more than the 256 MiB a deck may be",
    );
    // A deck from a pipe still reads.
    let tmp = tempfile::tempdir().unwrap();
    let deck = tmp.path().join("deck.txt");
    std::fs::write(&deck, "0 1 2\n0 3 4\n0 5 6\n1 3 5\n1 4 6\n2 3 6\n2 4 5\n").unwrap();
    kingmaker_ok(&["deck", "verify", s(&deck)]);
}

#[test]
fn report_keeps_an_existing_file_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, release) = run_and_release();
    let r = tmp.path().join("r");
    copy(&release, &r);
    let layer = r.join("solo.kmt");
    let before = std::fs::read(&layer).unwrap();
    refused(
        &["report", s(&r), "--out", s(&layer)],
        "solo.kmt already exists: pass --force to replace it",
    );
    assert_eq!(
        std::fs::read(&layer).unwrap(),
        before,
        "the layer file was changed"
    );
    kingmaker_ok(&["verify", s(&r)]);
    refused(
        &["report", s(&r), "--out", "/dev/null"],
        "/dev/null is a character device, not a file",
    );
    refused(
        &["report", s(&r), "--out", s(tmp.path())],
        "is a directory: --out names the HTML file",
    );
    let page = tmp.path().join("report.html");
    std::fs::write(&page, "old").unwrap();
    kingmaker_ok(&["report", s(&r), "--out", s(&page), "--force"]);
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
}

#[test]
fn two_packs_into_one_new_directory_leave_one_release_and_no_staging_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = run_and_release();
    for round in 0..5 {
        let out = tmp.path().join(format!("p{round}"));
        let pack = || {
            Command::new(bin("kingmaker"))
                .args(["pack", s(&run), "--out", s(&out)])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (pack(), pack());
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let ok = [&a, &b].iter().filter(|o| o.status.success()).count();
        let err: String = [&a, &b]
            .iter()
            .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .collect();
        assert_eq!(ok, 1, "round {round}: {ok} packs succeeded:\n{err}");
        // The loser was refused by the winner's lock, or found its release in place.
        assert!(
            err.contains("`kingmaker pack`") || err.contains("already exists and is not empty"),
            "round {round}: {err}"
        );
        let left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".packing-"))
            .collect();
        assert!(
            left.is_empty(),
            "round {round}: left behind {left:?}:\n{err}"
        );
        assert!(!out.join("kingmaker.lock").exists(), "round {round}");
        kingmaker_ok(&["verify", s(&out)]);
    }
}

#[test]
fn build_refuses_a_device_or_a_directory_that_is_no_run() {
    let args = |out: &str| -> Vec<String> {
        ["build", "connect4", "--board", "3x3", "--out", out]
            .map(String::from)
            .to_vec()
    };
    for (out, expected) in [
        (
            "/dev/null",
            "/dev/null is a character device, not a directory",
        ),
        (
            "/",
            "/ already exists and is not empty; choose a new --out directory",
        ),
    ] {
        let a = args(out);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let (code, err) = limited(&a, Duration::from_secs(60));
        assert!(code.is_some_and(|c| c != 0), "build --out {out}: {err}");
        assert!(err.contains(expected), "build --out {out}: {err}");
        assert!(
            !err.contains("resume"),
            "build --out {out} sends to resume: {err}"
        );
    }
    // A run directory is still sent to resume.
    let (run, _) = run_and_release();
    let out = kingmaker(&["build", "connect4", "--board", "3x3", "--out", s(&run)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("kingmaker resume {}", s(&run))),
        "{err}"
    );
}

#[test]
fn census_refuses_a_directory_as_its_csv_or_report_before_counting() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("toppen");
    kingmaker_ok(&["build", "toppen", "--out", s(&run)]);
    let census = |flag: &str, path: &Path| {
        let (code, err) = limited(
            &["census", s(&run), "--all", flag, s(path)],
            Duration::from_secs(60),
        );
        assert!(
            code.is_some_and(|c| c != 0),
            "census {flag} {}: {err}",
            s(path)
        );
        err
    };
    let err = census("--csv", tmp.path());
    assert!(err.contains("is a directory, not a file to write"), "{err}");
    let err = census("--report", &tmp.path().join("missing/report.md"));
    assert!(err.contains("missing: no such directory to write"), "{err}");
}

#[test]
fn deck_svg_draws_only_into_a_new_empty_or_drawn_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    refused(
        &["deck", "--order", "2", "--svg", s(&file)],
        "notes.txt is a file, not a directory",
    );
    refused(
        &["deck", "--order", "2", "--svg", s(tmp.path())],
        "\"notes.txt\", which is no file of a deck's drawing",
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    // A drawing is drawn again in place.
    let cards = tmp.path().join("cards");
    kingmaker_ok(&["deck", "--order", "2", "--svg", s(&cards)]);
    kingmaker_ok(&["deck", "--order", "3", "--svg", s(&cards)]);
    // Order 3's 13 cards and its page; none of order 2's 7 is left.
    assert_eq!(std::fs::read_dir(&cards).unwrap().count(), 14);
    assert!(cards.join("index.html").exists());
}
