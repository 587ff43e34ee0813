//! Hardening (issue 18): the explorer's start position, the run-directory lock, option validation,
//! combinatorial counts, the HTTP server's timeouts and limits (fetch's are in fetch.rs).

use kingmaker_e2e::{bin, http_get, kingmaker, kingmaker_ok, packed_release, read_json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `kingmaker serve DIR --listen 127.0.0.1:0 EXTRA...`; its address (`127.0.0.1:PORT`).
fn start_serve(dir: &Path, extra: &[&str]) -> (Killed, String) {
    let mut child = Command::new(bin("kingmaker"))
        .args(["serve", s(dir), "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting kingmaker serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.split_whitespace().last().unwrap_or("").to_string();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "serve said {line:?}");
    (Killed(child), addr)
}

// ---- item 1: the start position of cc2p ----

#[test]
fn cc2p_start_is_the_real_start_in_serve_and_query() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cc2p-4x4-1");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        "4x4",
        "--pieces",
        "1",
        "--out",
        s(&run),
    ]);
    // 4×4 / 1: player 0 starts on cell 0, player 1 on its mirror image, cell 15.
    let start = "0:0;1:15;0";
    let (_server, addr) = start_serve(&run, &[]);
    let (status, body) = http_get(&addr, "/api/info");
    assert!(status.contains("200"), "{status}");
    let info: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["start"], start, "{info}");

    let out = kingmaker_ok(&["query", s(&run), "start", "--json"]);
    let q: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(q["position"], start, "{q}");
    // The start is a first-player win, as the summary says.
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["start"]["value"], "W");
    assert_eq!(q["value"], "W", "{q}");
}

// ---- items 5 and 7: options are checked before anything is written ----

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

// ---- items 3 and 11: one process at a time works on a run directory ----

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
    serde_json::from_str(&kingmaker_ok(&["status", s(dir), "--json"])).unwrap()
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
    let text = kingmaker_ok(&["status", s(&dir)]);
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

// ---- item 8: cc2p counts are combinatorial ----

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

// ---- item 6: serve's header-read timeout and connection limit ----

/// A half-sent request is closed within the header timeout, and a normal request is answered
/// while more idle connections are open than the server's file limit would allow (64 here).
#[test]
fn serve_drops_half_sent_requests_and_idle_connections_do_not_starve_it() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&run)]);
    let mut cmd = Command::new(bin("kingmaker"));
    cmd.args(["serve", s(&run), "--listen", "127.0.0.1:0"])
        .args(["--header-timeout", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // SAFETY: setrlimit is async-signal-safe; it only lowers this child's own file limit.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Killed(child);
    let addr = line
        .split_whitespace()
        .last()
        .unwrap()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();

    // Half a request: closed by the server after about a second (a 408 may come first).
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /api/info HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    half.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let t = Instant::now();
    let mut rest = Vec::new();
    let closed = half.read_to_end(&mut rest).is_ok();
    assert!(
        closed && t.elapsed() < Duration::from_secs(8),
        "a half-sent request was held for {:?}",
        t.elapsed()
    );
    let rest = String::from_utf8_lossy(&rest);
    assert!(
        rest.is_empty() || rest.starts_with("HTTP/1.1 408"),
        "{rest}"
    );

    // 150 idle connections (nothing sent, or half a request), more than 64 descriptors allow.
    let idle: Vec<TcpStream> = (0..150)
        .map(|i| {
            let mut c = TcpStream::connect(&addr).unwrap();
            if i % 2 == 0 {
                c.write_all(b"GET / HTTP/1.1\r\n").unwrap();
            }
            c
        })
        .collect();
    let t = Instant::now();
    let (status, body) = http_get(&addr, "/api/info");
    assert!(status.contains("200"), "{status} after {:?}", t.elapsed());
    assert!(body.contains("cc3p"), "{body}");
    drop(idle);
    // And afterwards, at once.
    let (status, _) = http_get(&addr, "/api/position?p=start");
    assert!(status.contains("200"), "{status}");
}

/// Item 9: a release whose manifest names another game (with every checksum redone) is refused
/// by `verify`, `query` and `fetch`, since that game's index space has another size.
#[test]
fn a_release_relabelled_as_another_game_is_refused() {
    use kingmaker_tablefmt::release::manifest::{read_manifest, write_manifest};
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let mut m = read_manifest(&rel).unwrap();
    m.game = serde_json::json!({"game": "toppen", "first": 0, "diagonal": false});
    std::fs::remove_file(rel.join("manifest.sha256")).unwrap();
    write_manifest(&rel, &m).unwrap();
    let out = kingmaker(&["verify", s(&rel)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    // Refused by the game's size, or first by the layer files, which name the game they hold.
    assert!(
        err.contains("does not describe these tables")
            || err.contains(r#"holds layer solo of {"game":"cc3p","level":1}, not the layer solo of {"diagonal":false,"first":0,"game":"toppen"}"#),
        "{err}"
    );
    let out = kingmaker(&["query", s(&rel), "start"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not describe these tables"));
}
