//! Fault tolerance of distributed builds, tested by breaking things: the coordinator killed with
//! kill -9 at random moments, a worker killed at random moments (and restarted on its data
//! directory), a graceful stop, a flipped byte in a worker's checkpoint chunk. Every broken run is
//! resumed with `kingmaker resume RUN_DIR --workers ...` and must end with the digests of an
//! uninterrupted embedded build.
//!
//! The game is TOPPEN (3.4 million states, ~50 waves) on two workers started by the test on
//! loopback (free ports), killed when the test ends, pass or fail (a Drop guard). Kill times are
//! seeded from the clock and the seed is printed: KINGMAKER_TEST_SEED=... replays them.

use kingmaker_e2e::{bin, kingmaker, kingmaker_ok, read_json};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

const TOKEN: &str = "e2e-resume-token";
/// Four shards of TOPPEN: two per worker, so updates cross between them.
const SHARD_SIZE: &str = "1000000";

/// Layer digests of an uninterrupted embedded build (computed once per test binary).
fn reference() -> &'static Value {
    static REF: OnceLock<Value> = OnceLock::new();
    REF.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ref");
        kingmaker_ok(&["build", "toppen", "--out", dir.to_str().unwrap()]);
        read_json(&dir.join("summary.json"))["layers"].clone()
    })
}

/// A worker process on a data directory that outlives it (so it can be restarted there), killed
/// and reaped on drop.
struct Worker {
    child: Option<Child>,
    addr: String,
    data: PathBuf,
    log: PathBuf,
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Worker {
    /// Start a worker on `data`, listening on `listen` (port 0: a free one).
    fn start(data: &Path, listen: &str) -> Worker {
        let log = data.with_extension("log");
        let mut child = Command::new(bin("kingmaker-worker"))
            .args(["--listen", listen, "--data-dir"])
            .arg(data)
            .args(["--threads", "1"])
            .env("KINGMAKER_TOKEN", TOKEN)
            .stdout(Stdio::piped())
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&log)
                    .unwrap(),
            )
            .spawn()
            .expect("starting kingmaker-worker");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut worker = Worker {
            child: Some(child),
            addr: String::new(),
            data: data.to_path_buf(),
            log,
        };
        while worker.addr.is_empty() {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| {
                    panic!(
                        "the worker did not say where it listens; its log:\n{}",
                        worker.log_text()
                    )
                });
            if let Some(addr) = line.strip_prefix("kingmaker-worker listening on ") {
                worker.addr = addr.trim().to_string();
            }
        }
        worker
    }

    /// SIGKILL, and reap.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start again on the same address and data directory (after [`Worker::kill`]).
    fn restart(&mut self) {
        self.kill();
        let mut again = Worker::start(&self.data, &self.addr);
        self.child = again.child.take();
        assert_eq!(again.addr, self.addr);
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

fn two_workers(dir: &Path) -> Vec<Worker> {
    (0..2)
        .map(|i| Worker::start(&dir.join(format!("worker{i}")), "127.0.0.1:0"))
        .collect()
}

fn addrs(workers: &[Worker]) -> String {
    workers
        .iter()
        .map(|w| w.addr.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// `kingmaker build toppen` on `workers` into `run`, in the background (stderr into `log`).
fn spawn_build(workers: &[Worker], run: &Path, log: &Path) -> Child {
    Command::new(bin("kingmaker"))
        .args([
            "build",
            "toppen",
            "--checkpoint-every-waves",
            "1",
            "--shard-size",
            SHARD_SIZE,
            "--out",
        ])
        .arg(run)
        .args([
            "--workers",
            &addrs(workers),
            "--token",
            TOKEN,
            "--worker-timeout",
            "10",
        ])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("starting kingmaker build")
}

/// `kingmaker resume RUN [--workers ...]` with the token.
fn resume(run: &Path, workers: Option<&[Worker]>) -> Output {
    let mut args = vec![
        "resume".to_string(),
        run.display().to_string(),
        "--token".into(),
        TOKEN.into(),
    ];
    if let Some(w) = workers {
        args.extend(["--workers".to_string(), addrs(w)]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    kingmaker(&args)
}

fn resume_to_end(run: &Path, workers: Option<&[Worker]>) -> Value {
    let out = resume(run, workers);
    assert!(
        out.status.success(),
        "resume failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    read_json(&run.join("summary.json"))["layers"].clone()
}

/// A pseudo-random sequence seeded from the clock (or KINGMAKER_TEST_SEED); the seed is printed.
fn random_millis(count: usize, lo: u64, hi: u64) -> Vec<u64> {
    let mut x: u64 = std::env::var("KINGMAKER_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("kill times seeded with KINGMAKER_TEST_SEED={x}");
    let times = (0..count)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (x >> 33) % (hi - lo).max(1)
        })
        .collect();
    eprintln!("kill times (ms): {times:?}");
    times
}

/// How long an uninterrupted distributed build takes here (so kills land inside one).
fn probe_span(workers: &[Worker], dir: &Path) -> u64 {
    let t = Instant::now();
    let (run, log) = (dir.join("probe"), dir.join("probe.log"));
    let out = spawn_build(workers, &run, &log).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert_eq!(
        &read_json(&run.join("summary.json"))["layers"],
        reference(),
        "uninterrupted distributed build"
    );
    t.elapsed().as_millis() as u64
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

#[test]
fn coordinator_killed_at_random_moments_resumes_on_the_same_workers() {
    let expected = reference();
    let tmp = tempfile::tempdir().unwrap();
    let workers = two_workers(tmp.path());
    let span = probe_span(&workers, tmp.path());
    for (i, &ms) in random_millis(3, 200, span.max(400)).iter().enumerate() {
        let (run, log) = (
            tmp.path().join(format!("run{i}")),
            tmp.path().join(format!("run{i}.log")),
        );
        let mut build = spawn_build(&workers, &run, &log);
        std::thread::sleep(Duration::from_millis(ms));
        build.kill().unwrap(); // SIGKILL
        build.wait().unwrap();
        let layers = if run.join("summary.json").exists() {
            read_json(&run.join("summary.json"))["layers"].clone()
        } else if !run.join("run.json").exists() {
            // Killed before the build had written anything: nothing to resume.
            continue;
        } else {
            // The workers still hold the killed coordinator's layer: resume takes it over, from
            // the last checkpoint when there is one.
            let checkpointed = std::fs::read_to_string(run.join("checkpoint.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .and_then(|s| s["current"]["last"]["wave"].as_u64());
            let out = resume(&run, Some(&workers));
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "resume failed: {}\n{err}", out.status);
            if let Some(wave) = checkpointed {
                assert!(
                    err.contains(&format!("resuming after wave {wave}")),
                    "resumed from its checkpoint: {err}"
                );
            }
            read_json(&run.join("summary.json"))["layers"].clone()
        };
        assert_eq!(
            &layers, expected,
            "coordinator killed after {ms} ms (kill {i})"
        );
    }
}

#[test]
fn a_worker_killed_at_random_moments_is_named_then_restarted_and_resumed() {
    let expected = reference();
    let tmp = tempfile::tempdir().unwrap();
    let mut workers = two_workers(tmp.path());
    let span = probe_span(&workers, tmp.path());
    for (i, &ms) in random_millis(2, span / 5, span * 3 / 4).iter().enumerate() {
        let (run, log) = (
            tmp.path().join(format!("run{i}")),
            tmp.path().join(format!("run{i}.log")),
        );
        let mut build = spawn_build(&workers, &run, &log);
        std::thread::sleep(Duration::from_millis(ms));
        let victim = workers[i % 2].addr.clone();
        workers[i % 2].kill(); // SIGKILL
        let status = wait_at_most(&mut build, Duration::from_secs(30))
            .expect("the build should stop on its own");
        let err = std::fs::read_to_string(&log).unwrap();
        workers[i % 2].restart();
        if status.success() {
            eprintln!("kill {i} after {ms} ms came too late: the build had finished");
            assert_eq!(&read_json(&run.join("summary.json"))["layers"], expected);
            continue;
        }
        assert!(
            err.contains(&format!("worker {victim}")),
            "the killed worker is named:\n{err}"
        );
        assert!(!run.join("summary.json").exists());
        // The workers of the run come from run.json.
        assert_eq!(
            &resume_to_end(&run, None),
            expected,
            "worker killed after {ms} ms (kill {i})"
        );
    }
}

#[test]
fn a_flipped_byte_in_a_workers_checkpoint_chunk_is_named_and_survived() {
    let expected = reference();
    let tmp = tempfile::tempdir().unwrap();
    let workers = two_workers(tmp.path());
    let (run, log) = (tmp.path().join("run"), tmp.path().join("run.log"));
    let mut build = spawn_build(&workers, &run, &log);
    // Wait for a few checkpoints, then stop gracefully (SIGTERM: finish the wave, checkpoint, exit 0).
    let start = Instant::now();
    loop {
        let state = std::fs::read_to_string(run.join("checkpoint.json")).unwrap_or_default();
        let wave = serde_json::from_str::<Value>(&state)
            .ok()
            .and_then(|s| s["current"]["last"]["wave"].as_u64());
        if wave.is_some_and(|w| w >= 3) {
            break;
        }
        assert!(
            build.try_wait().unwrap().is_none(),
            "the build ended early:\n{}",
            std::fs::read_to_string(&log).unwrap()
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no checkpoint after 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(Command::new("kill")
        .args(["-TERM", &build.id().to_string()])
        .status()
        .unwrap()
        .success());
    let status = wait_at_most(&mut build, Duration::from_secs(30)).expect("a graceful stop ends");
    let err = std::fs::read_to_string(&log).unwrap();
    assert!(
        status.success(),
        "a graceful stop exits 0, got {status}:\n{err}"
    );
    assert!(
        !run.join("summary.json").exists(),
        "the build should still have been running"
    );

    // One worker too few is refused, naming the run's workers.
    let out = resume(&run, Some(&workers[..1]));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains("2 workers"),
        "{text}"
    );

    // Flip a byte in worker 1's newest checkpoint.
    let info = read_json(&run.join("run.json"));
    let run_id = info["distributed"]["run_id"].as_str().unwrap();
    let wave = read_json(&run.join("checkpoint.json"))["current"]["last"]["wave"]
        .as_u64()
        .unwrap();
    let cpdir = workers[1].data.join(run_id).join("solo").join("checkpoint");
    let manifest = read_json(&cpdir.join(format!("worker-1.solo.w{wave:05}.json")));
    let chunk = manifest["shards"][0]["cells"][0]["file"]
        .as_str()
        .unwrap()
        .to_string();
    let path = cpdir.join(&chunk);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();

    let out = resume(&run, Some(&workers));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume recovers: {err}");
    assert!(
        err.contains(&chunk) && err.contains(&workers[1].addr),
        "the damaged chunk and its worker are named: {err}"
    );
    assert_eq!(&read_json(&run.join("summary.json"))["layers"], expected);
}
