//! One process at a time works on a run directory: a second build or resume is refused while one
//! runs, and `status` says running during a resume and stopped after a crash.

use kingmaker_e2e::{bin, kingmaker, kingmaker_status, path_str as s, read_json, Killed};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn signal(child: &Child, sig: i32) {
    // SAFETY: signalling our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Wait until progress.json names `pid` (the process announces itself before its first wave).
fn wait_for_announcement(dir: &Path, pid: u32) -> serde_json::Value {
    let t = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(dir.join("progress.json")) {
            if let Ok(p) = serde_json::from_str::<serde_json::Value>(&text) {
                if p["pid"] == pid {
                    return p;
                }
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "pid {pid} never announced itself in {}",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn status_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&kingmaker_status(&[s(dir), "--json"])).unwrap()
}

fn spawn_kingmaker(args: &[&str]) -> Child {
    Command::new(bin("kingmaker"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn a_second_resume_or_build_is_refused_while_a_build_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let build = spawn_kingmaker(&[
        "build",
        "toppen",
        "--checkpoint-every-waves",
        "1",
        "--out",
        s(&dir),
    ]);
    let build = Killed(build);
    wait_for_announcement(&dir, build.0.id());
    // Frozen: it holds the lock however long the checks below take.
    signal(&build.0, libc::SIGSTOP);
    let pid = build.0.id().to_string();
    let out = kingmaker(&["resume", s(&dir)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "resume went ahead beside the build");
    assert!(
        err.contains(&format!("in use by pid {pid}")) && err.contains("kingmaker build"),
        "{err}"
    );
    // A build into it is refused too (the directory is not empty).
    let out = kingmaker(&["build", "toppen", "--out", s(&dir)]);
    assert!(!out.status.success(), "a second build went ahead");
    let status = status_json(&dir);
    assert_eq!(status["phase"], "running", "{status}");
    assert_eq!(status["pid"], build.0.id(), "{status}");
    // Stopped by a signal (in the waves: the wave finishes, a checkpoint is written, exit 0; still
    // in setup: at once, exit 130): now a resume may go.
    signal(&build.0, libc::SIGTERM);
    signal(&build.0, libc::SIGCONT);
    let mut build = build;
    let code = build.0.wait().unwrap().code();
    assert!(matches!(code, Some(0) | Some(130)), "exit code {code:?}");
    if !dir.join("summary.json").exists() {
        assert!(status_json(&dir)["phase"]
            .as_str()
            .unwrap()
            .starts_with("stopped"));
    }
    // Two resumes at once: exactly one works on the run.
    let first = Killed(spawn_kingmaker(&["resume", s(&dir)]));
    wait_for_announcement(&dir, first.0.id());
    signal(&first.0, libc::SIGSTOP);
    let out = kingmaker(&["resume", s(&dir)]);
    let err = String::from_utf8_lossy(&out.stderr);
    if !dir.join("summary.json").exists() {
        assert!(!out.status.success());
        assert!(
            err.contains(&format!("in use by pid {}", first.0.id())),
            "{err}"
        );
    }
    signal(&first.0, libc::SIGCONT);
    let mut first = first;
    assert!(first.0.wait().unwrap().success());
    assert_eq!(status_json(&dir)["phase"], "complete");
}

#[test]
fn status_says_running_during_a_resume_and_stopped_after_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut build = spawn_kingmaker(&[
        "build",
        "toppen",
        "--checkpoint-every-waves",
        "1",
        "--out",
        s(&dir),
    ]);
    let t = Instant::now();
    while !dir.join("checkpoint.json").exists() {
        assert!(t.elapsed() < Duration::from_secs(60), "no checkpoint");
        std::thread::sleep(Duration::from_millis(2));
    }
    // A crash: progress.json keeps the dead pid; the lock goes with the process.
    signal(&build, libc::SIGKILL);
    build.wait().unwrap();
    let status = status_json(&dir);
    assert!(
        status["phase"].as_str().unwrap().starts_with("stopped"),
        "{status}"
    );
    // progress.json naming a live process (this test) does not make a run "running".
    let mut progress = read_json(&dir.join("progress.json"));
    progress["pid"] = serde_json::json!(std::process::id());
    std::fs::write(dir.join("progress.json"), progress.to_string()).unwrap();
    let status = status_json(&dir);
    assert!(
        status["phase"].as_str().unwrap().starts_with("stopped"),
        "a live pid in a stale progress.json: {status}"
    );

    let resume = Killed(spawn_kingmaker(&["resume", s(&dir)]));
    let announced = wait_for_announcement(&dir, resume.0.id());
    signal(&resume.0, libc::SIGSTOP);
    let checkpoint = read_json(&dir.join("checkpoint.json"));
    if announced["phase"] == "restoring" {
        assert_eq!(announced["wave"], checkpoint["current"]["last"]["wave"]);
    }
    let status = status_json(&dir);
    assert_eq!(status["phase"], "running", "{status}");
    assert_eq!(status["pid"], resume.0.id(), "{status}");
    let activity = status["activity"].as_str().unwrap();
    assert!(["restoring", "running"].contains(&activity), "{status}");
    assert!(status["checkpoint"]["last"]["wave"].is_u64(), "{status}");
    let text = kingmaker_status(&[s(&dir)]);
    assert!(
        text.contains(&format!("running (pid {}", resume.0.id()))
            && text.contains("last checkpoint: layer solo after wave"),
        "{text}"
    );
    signal(&resume.0, libc::SIGCONT);
    let mut resume = resume;
    assert!(resume.0.wait().unwrap().success());
    assert_eq!(status_json(&dir)["phase"], "complete");
}
