//! Distributed builds on `kingmaker-worker` processes on loopback, driven by `build --workers`.
//! 1. Workers listen on free ports (`--listen 127.0.0.1:0`) and die with the test (a Drop guard).
//! 2. The tables must have the embedded build's digests; a wrong token, an incompatible worker, a
//!    killed or stalled worker and a lost coordinator must each be reported clearly.

use kingmaker_e2e::{
    addrs, assert_ok, assert_same_tables, bin, kingmaker, metric, read_json, scrape_metrics, Worker,
};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const TOKEN: &str = "e2e-secret-token";

/// Layer digests of a finished run.
fn digests(run: &Path) -> Vec<(String, String)> {
    let summary = read_json(&run.join("summary.json"));
    let layers = summary["layers"]
        .as_object()
        .expect("layers in summary.json");
    let mut out: Vec<(String, String)> = layers
        .iter()
        .map(|(name, l)| (name.clone(), l["digest"].as_str().unwrap_or("").to_string()))
        .collect();
    out.sort();
    assert!(
        !out.is_empty() && out.iter().all(|(_, d)| d.len() == 64),
        "{summary}"
    );
    out
}

/// An embedded build of `game` into `dir/embedded` (the run directory).
fn embedded(game: &[&str], dir: &Path) -> PathBuf {
    let run = dir.join("embedded");
    let mut args = vec!["build"];
    args.extend(game);
    args.extend(["--out", run.to_str().unwrap()]);
    assert_ok(&kingmaker(&args), "embedded build");
    run
}

/// A distributed run holds the embedded (or full) run's tables: digests, and every state's value
/// and depth (the layer files byte for byte).
#[track_caller]
fn assert_like(run: &Path, expected: &Path, what: &str) {
    assert_eq!(digests(run), digests(expected), "{what}");
    assert_same_tables(run, expected);
}

/// `kingmaker build GAME... --workers ... --token TOKEN EXTRA...` into `run`.
fn distributed(game: &[&str], workers: &[Worker], run: &Path, extra: &[&str]) -> Output {
    let list = addrs(workers);
    let mut args = vec!["build"];
    args.extend(game);
    args.extend([
        "--out",
        run.to_str().unwrap(),
        "--workers",
        &list,
        "--token",
        TOKEN,
    ]);
    args.extend(extra);
    kingmaker(&args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The sample `name` of the worker whose metrics listen at `addr`.
fn worker_metric(addr: &str, name: &str) -> u64 {
    let text = scrape_metrics(addr).unwrap();
    metric(&text, name).unwrap_or_else(|| panic!("no metric {name} in\n{text}"))
}

#[test]
fn two_and_three_workers_give_the_embedded_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["cc3p", "--level", "1"];
    let expected = embedded(&game, tmp.path());
    for count in [2, 3] {
        let workers: Vec<Worker> = (0..count).map(|_| Worker::start(TOKEN, &[])).collect();
        let run = tmp.path().join(format!("workers-{count}"));
        // Small shards, so every worker owns some and updates cross between them.
        let out = distributed(
            &game,
            &workers,
            &run,
            &["--shard-size", "128", "--worker-timeout", "30"],
        );
        assert_ok(&out, &format!("build on {count} workers"));
        assert_like(&run, &expected, &format!("{count} workers"));
        let log = stderr(&out);
        assert!(log.contains("bytes on the wire"), "{log}");
        assert!(!log.contains(TOKEN), "the token must never be logged");
        for w in &workers {
            assert!(
                !w.log_text().contains(TOKEN),
                "the token must never be logged"
            );
        }
    }
}

#[test]
fn toppen_on_two_workers_gives_the_embedded_digests() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["toppen"];
    let expected = embedded(&game, tmp.path());
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
    let run = tmp.path().join("distributed");
    let out = distributed(
        &game,
        &workers,
        &run,
        &["--shard-size", "1000000", "--worker-timeout", "30"],
    );
    assert_ok(&out, "toppen on 2 workers");
    assert_like(&run, &expected, "toppen on 2 workers");
}

/// cc2p builds solve the colour-swap half (or its quarter) on the workers (they build the
/// `cc2p_half` game from the spec they are sent) and the coordinator expands it: the digests of a
/// full embedded solve. A decided state goes to the worker owning its predecessors, which lists
/// them there, instead of each predecessor being sent.
#[test]
fn cc2p_half_on_two_workers_gives_the_full_digests() {
    let tmp = tempfile::tempdir().unwrap();
    for (board, pieces) in [("7x7", "2"), ("5x5", "3")] {
        let game = ["cc2p", "--board", board, "--pieces", pieces];
        let full = tmp.path().join(format!("full-{board}-{pieces}"));
        let mut args = vec!["build"];
        args.extend(game);
        args.extend(["--no-symmetry", "--out", full.to_str().unwrap()]);
        assert_ok(&kingmaker(&args), "full embedded build");
        let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
        let run = tmp.path().join(format!("distributed-{board}-{pieces}"));
        let out = distributed(
            &game,
            &workers,
            &run,
            &["--shard-size", "100000", "--worker-timeout", "30"],
        );
        let what = format!("cc2p {board} / {pieces} on 2 workers");
        assert_ok(&out, &what);
        assert_like(&run, &full, &what);
        assert_eq!(
            read_json(&run.join("run.json"))["solved_as"]["game"],
            "cc2p_half"
        );
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(
            log.contains(" decided states, "),
            "{what}: no state sent\n{log}"
        );
    }
}

#[test]
fn metrics_endpoints_count_the_traffic() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--metrics", "127.0.0.1:0"]))
        .collect();
    let run = tmp.path().join("run");
    let out = distributed(
        &["cc3p", "--level", "1"],
        &workers,
        &run,
        &["--shard-size", "128", "--worker-timeout", "30"],
    );
    assert_ok(&out, "build");
    let total = |name: &str| -> u64 {
        workers
            .iter()
            .map(|w| worker_metric(w.metrics.as_ref().unwrap(), name))
            .sum()
    };
    let sent = total("kingmaker_worker_update_bytes_sent_total");
    let received = total("kingmaker_worker_update_bytes_received_total");
    assert!(
        sent > 0 && sent == received,
        "sent {sent}, received {received}"
    );
    let text = scrape_metrics(workers[0].metrics.as_ref().unwrap()).unwrap();
    assert!(
        text.contains("# TYPE kingmaker_worker_waves counter\nkingmaker_worker_waves_total "),
        "{text}"
    );
}

#[test]
fn a_wrong_or_missing_token_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let worker = Worker::start(TOKEN, &[]);
    let run = tmp.path().join("run");
    let out = kingmaker(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--out",
        run.to_str().unwrap(),
        "--workers",
        &worker.addr,
        "--token",
        "not-the-token",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains(&worker.addr) && err.contains("token"), "{err}");
    assert!(
        !err.contains("not-the-token") && !err.contains(TOKEN),
        "tokens must not be echoed: {err}"
    );
    assert!(
        !run.exists(),
        "workers are checked before the run directory is created"
    );

    let out = Command::new(bin("kingmaker"))
        .args([
            "build",
            "cc3p",
            "--level",
            "1",
            "--workers",
            &worker.addr,
            "--out",
        ])
        .arg(tmp.path().join("run2"))
        .env_remove("KINGMAKER_TOKEN")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("KINGMAKER_TOKEN"), "{}", stderr(&out));
}

#[test]
fn a_worker_of_another_protocol_version_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let worker = Worker::start(TOKEN, &["--protocol-version", "999"]);
    let out = distributed(
        &["cc3p", "--level", "1"],
        std::slice::from_ref(&worker),
        &tmp.path().join("run"),
        &[],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&worker.addr) && err.contains("protocol version 999"),
        "{err}"
    );
}

#[test]
fn an_unreachable_worker_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    // A port nobody listens on: bind one, note it, close it.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string();
    let out = kingmaker(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--out",
        tmp.path().join("run").to_str().unwrap(),
        "--workers",
        &addr,
        "--token",
        TOKEN,
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("cannot connect to worker {addr}")),
        "{err}"
    );
}

/// Start a distributed build in the background (its stderr goes to a file).
fn spawn_build(workers: &[Worker], run: &Path, log: &Path, extra: &[&str]) -> Child {
    Command::new(bin("kingmaker"))
        .args([
            "build",
            "cc3p",
            "--level",
            "1",
            "--shard-size",
            "128",
            "--out",
        ])
        .arg(run)
        .args(["--workers", &addrs(workers), "--token", TOKEN])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("starting kingmaker build")
}

/// Wait for `child` to exit, at most `limit`.
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Wait until `log` shows the build is in its waves (so a kill lands mid-run).
fn wait_for_waves(log: &Path) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(120) {
        if std::fs::read_to_string(log)
            .unwrap_or_default()
            .contains("wave 2:")
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "the build did not get to wave 2: {}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

/// A build of cc3p level 1 on `workers` alone (a new run, another coordinator) succeeds with the
/// embedded tables: the workers serve, and no run holds them any more.
fn serves_a_new_run(workers: &[Worker], dir: &Path, what: &str) {
    let expected = embedded(&["cc3p", "--level", "1"], dir);
    let run = dir.join("next-run");
    let out = distributed(
        &["cc3p", "--level", "1"],
        workers,
        &run,
        &["--shard-size", "128", "--worker-timeout", "30"],
    );
    assert_ok(&out, what);
    assert_like(&run, &expected, what);
}

#[test]
fn a_worker_killed_mid_run_is_reported_by_address() {
    let tmp = tempfile::tempdir().unwrap();
    // Slow waves (test-only flag) so the kill lands in the middle of the first layer.
    let mut workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "200"]))
        .collect();
    let (run, log) = (tmp.path().join("run"), tmp.path().join("build.log"));
    // A long heartbeat timeout: the kill must be noticed by the failed calls, not by a timeout.
    let mut build = spawn_build(&workers, &run, &log, &["--worker-timeout", "120"]);
    wait_for_waves(&log);
    let victim = workers[1].addr.clone();
    workers[1].kill(); // SIGKILL
                       // A hang guard only (the heartbeat timeout is 120 s, the guard longer): how the stop was
                       // noticed is judged by its message, not by a clock.
    let status = wait_at_most(&mut build, Duration::from_secs(200))
        .expect("the build should stop on its own");
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "{err}");
    assert!(
        err.contains(&format!("worker {victim} is unreachable")),
        "the victim's address should be named as unreachable:\n{err}"
    );
    assert!(
        !err.contains("has not answered heartbeats"),
        "a dead worker is noticed by the failed calls, not by the heartbeat timeout:\n{err}"
    );
    // The run directory is left as it was: run.json, no summary.
    assert!(run.join("run.json").exists() && !run.join("summary.json").exists());
    // The surviving worker was told to stop and keeps serving: it takes a new run at once.
    drop(workers.remove(1));
    serves_a_new_run(&workers, tmp.path(), "a new run on the surviving worker");
}

#[test]
fn a_stalled_worker_is_reported_by_address() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "200"]))
        .collect();
    let (run, log) = (tmp.path().join("run"), tmp.path().join("build.log"));
    let mut build = spawn_build(&workers, &run, &log, &["--worker-timeout", "3"]);
    wait_for_waves(&log);
    let stalled = workers[0].addr.clone();
    assert!(Command::new("kill")
        .args(["-STOP", &workers[0].pid().to_string()])
        .status()
        .unwrap()
        .success());
    let status = wait_at_most(&mut build, Duration::from_secs(120))
        .expect("the build should stop on its own");
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(!status.success(), "{err}");
    assert!(
        err.contains(&format!("worker {stalled}")) && err.contains("heartbeats"),
        "{err}"
    );
    // The stall is judged by the run's --worker-timeout (3 s), not by a connection's keep-alive:
    // the silence the coordinator reports is the timeout and at most one heartbeat interval more.
    let silence: f64 = err
        .split("has not answered heartbeats for ")
        .nth(1)
        .and_then(|rest| rest.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the silence is reported in seconds: {err}"));
    assert!(
        (3.0..=5.0).contains(&silence),
        "reported after {silence}s of silence, the timeout being 3s: {err}"
    );
}

/// Every file under `dir` with its length and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                out.push((e.path(), meta.len(), meta.modified().unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_worker_that_loses_its_coordinator_stops_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "200"]))
        .collect();
    let (run, log) = (tmp.path().join("run"), tmp.path().join("build.log"));
    // --worker-timeout 2: the workers' lease is 6 s.
    let mut build = spawn_build(&workers, &run, &log, &["--worker-timeout", "2"]);
    wait_for_waves(&log);
    build.kill().unwrap();
    build.wait().unwrap();
    // A hang guard only: the lease is 6 s.
    let start = Instant::now();
    for w in &workers {
        while !w.log_text().contains("lost the coordinator") {
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "worker {} kept going:\n{}",
                w.addr,
                w.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    assert!(!run.join("summary.json").exists());
    // The abandoned run's files, as they are once the workers say they stopped writing.
    let run_id = read_json(&run.join("run.json"))["distributed"]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let files: Vec<PathBuf> = workers.iter().map(|w| w.data.join(&run_id)).collect();
    let before: Vec<_> = files.iter().map(|d| snapshot(d)).collect();
    assert!(
        before.iter().all(|s| !s.is_empty()),
        "the workers hold the killed run's files: {before:?}"
    );
    // The workers wait for the next run: a new coordinator's build on them (refused as "busy with
    // run ... of another coordinator" while a live run holds them) succeeds...
    serves_a_new_run(&workers, tmp.path(), "a new run on the workers");
    // ...and all the while nothing wrote to the abandoned run's files.
    let after: Vec<_> = files.iter().map(|d| snapshot(d)).collect();
    assert_eq!(
        before, after,
        "a worker wrote to the run it had stopped writing to"
    );
}
