//! Fault tolerance of distributed builds: broken, then resumed with `kingmaker resume --workers`.
//! 1. The game is TOPPEN (3.4 million states, ~50 waves) on two workers started on loopback (free
//!    ports), killed when the test ends (a Drop guard); kill waves are seeded from the clock and
//!    the seed is printed: KINGMAKER_TEST_SEED=... replays them.

use kingmaker_e2e::{
    addrs, assert_interrupted_share, assert_same_tables, bin, kingmaker, read_json,
    reference_build, seeded, wait_for_wave, Worker,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const TOKEN: &str = "e2e-resume-token";
/// Four shards of TOPPEN: two per worker, so updates cross between them.
const SHARD_SIZE: &str = "1000000";
/// A hang guard for waiting on a wave: generous, never a judge of speed.
const HANG: Duration = Duration::from_secs(300);

/// An uninterrupted embedded build (once per test binary): every broken distributed run must
/// end with its tables (values and depths) and summary.
fn reference() -> &'static Path {
    static REF: OnceLock<PathBuf> = OnceLock::new();
    REF.get_or_init(|| {
        reference_build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "distributed-resume-reference",
            &["toppen"],
        )
    })
}

/// The run ended with the reference's tables and summary.
#[track_caller]
fn assert_like_reference(run: &Path, what: &str) {
    let expected = reference();
    assert_same_tables(run, expected);
    assert_eq!(
        read_json(&run.join("summary.json"))["layers"],
        read_json(&expected.join("summary.json"))["layers"],
        "{what}"
    );
}

fn two_workers(dir: &Path) -> Vec<Worker> {
    (0..2)
        .map(|i| Worker::start_on(TOKEN, &dir.join(format!("worker{i}")), "127.0.0.1:0"))
        .collect()
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

fn resume_to_end(run: &Path, workers: Option<&[Worker]>) {
    let out = resume(run, workers);
    assert!(
        out.status.success(),
        "resume failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
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

/// The coordinator is killed (kill -9) right after a wave seen in progress.json (drawn at random,
/// seeded), and the run resumed on the same workers: at least two of the three kills must land
/// before the run finished (in practice all do: the last kill is at wave 40 of 49).
#[test]
fn coordinator_killed_at_random_waves_resumes_on_the_same_workers() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let workers = two_workers(tmp.path());
    let waves = seeded(3, 1, 41);
    let mut interrupted = 0;
    for (i, &k) in waves.iter().enumerate() {
        let (run, log) = (
            tmp.path().join(format!("run{i}")),
            tmp.path().join(format!("run{i}.log")),
        );
        let mut build = spawn_build(&workers, &run, &log);
        let seen = wait_for_wave(&run, &mut build, None, k, HANG);
        build.kill().unwrap(); // SIGKILL
        build.wait().unwrap();
        if run.join("summary.json").exists() {
            eprintln!(
                "kill {i} (after wave {k}, seen: {seen}) came too late: the build had finished"
            );
            assert_like_reference(&run, &format!("uninterrupted run {i}"));
            continue;
        }
        assert!(
            seen,
            "the build stopped before wave {k}:\n{}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        interrupted += 1;
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
        assert_like_reference(
            &run,
            &format!("coordinator killed after wave {k} (kill {i})"),
        );
    }
    assert_interrupted_share(interrupted, waves.len(), 2, 3);
}

/// A worker is killed (kill -9) right after a wave seen in progress.json, restarted on its data
/// directory, and the run resumed: at least one of the two kills must have stopped the build.
#[test]
fn a_worker_killed_at_random_waves_is_named_then_restarted_and_resumed() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let mut workers = two_workers(tmp.path());
    let waves = seeded(2, 2, 36);
    let mut interrupted = 0;
    for (i, &k) in waves.iter().enumerate() {
        let (run, log) = (
            tmp.path().join(format!("run{i}")),
            tmp.path().join(format!("run{i}.log")),
        );
        let mut build = spawn_build(&workers, &run, &log);
        let seen = wait_for_wave(&run, &mut build, None, k, HANG);
        let victim = workers[i % 2].addr.clone();
        workers[i % 2].kill(); // SIGKILL
        let status = wait_at_most(&mut build, HANG).expect("the build should stop on its own");
        let err = std::fs::read_to_string(&log).unwrap();
        workers[i % 2].restart();
        if status.success() {
            eprintln!(
                "kill {i} (after wave {k}, seen: {seen}) came too late: the build had finished"
            );
            assert_like_reference(&run, &format!("uninterrupted run {i}"));
            continue;
        }
        interrupted += 1;
        assert!(
            err.contains(&format!("worker {victim}")),
            "the killed worker is named:\n{err}"
        );
        assert!(!run.join("summary.json").exists());
        // The workers of the run come from run.json.
        resume_to_end(&run, None);
        assert_like_reference(&run, &format!("worker killed after wave {k} (kill {i})"));
    }
    assert_interrupted_share(interrupted, waves.len(), 1, 2);
}

#[test]
fn a_flipped_byte_in_a_workers_checkpoint_chunk_is_named_and_survived() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let workers = two_workers(tmp.path());
    // A few checkpoints, then a graceful stop (SIGTERM: finish the wave, checkpoint, exit 0).
    let (run, wave) = build_then_stop(&workers, tmp.path());

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
    // The replica on worker 0 held a good copy: nothing older was needed.
    assert!(
        err.contains("from the replica on worker 0")
            && err.contains(&format!("resuming after wave {wave}"))
            && !err.contains("cannot be restored"),
        "the newest checkpoint is restored from the replica: {err}"
    );
    assert_like_reference(&run, "resumed past a damaged chunk");
}

/// Stop a TOPPEN build on two workers gracefully once a checkpoint after wave 3 or later exists;
/// returns the run and the wave of its newest checkpoint.
fn build_then_stop(workers: &[Worker], dir: &Path) -> (PathBuf, u64) {
    let (run, log) = (dir.join("run"), dir.join("run.log"));
    let mut build = spawn_build(workers, &run, &log);
    let start = Instant::now();
    while read_checkpoint_wave(&run).is_none_or(|w| w < 3) {
        assert!(
            build.try_wait().unwrap().is_none(),
            "the build ended early:\n{}",
            std::fs::read_to_string(&log).unwrap()
        );
        assert!(start.elapsed() < HANG, "no checkpoint after {HANG:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(Command::new("kill")
        .args(["-TERM", &build.id().to_string()])
        .status()
        .unwrap()
        .success());
    let status = wait_at_most(&mut build, HANG).expect("a graceful stop ends");
    assert!(status.success() && !run.join("summary.json").exists());
    let wave = read_checkpoint_wave(&run).unwrap();
    (run, wave)
}

fn read_checkpoint_wave(run: &Path) -> Option<u64> {
    let state = std::fs::read_to_string(run.join("checkpoint.json")).ok()?;
    serde_json::from_str::<Value>(&state).ok()?["current"]["last"]["wave"].as_u64()
}

/// A worker host lost for good: its data directory is gone, and a new worker on an empty one, at
/// another address, takes its place. The checkpoint it had lives on as the replica on its ring
/// successor, so the resume starts from that checkpoint (nothing before it is computed again) and
/// ends with the reference's tables; and so for either worker.
#[test]
fn a_worker_whose_disk_is_lost_is_replaced_and_restored_from_its_replica() {
    reference();
    for lost in [1usize, 0] {
        let tmp = tempfile::tempdir().unwrap();
        let mut workers = two_workers(tmp.path());
        let (run, wave) = build_then_stop(&workers, tmp.path());
        workers[lost].kill();
        std::fs::remove_dir_all(&workers[lost].data).unwrap();
        let fresh = tmp.path().join(format!("replacement{lost}"));
        workers[lost] = Worker::start_on(TOKEN, &fresh, "127.0.0.1:0");
        let out = resume(&run, Some(&workers));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "resume with a replaced worker {lost}: {err}"
        );
        let holder = (lost + 1) % 2;
        assert!(
            err.contains(&format!("resuming after wave {wave}"))
                && err.contains(&format!("from the replica on worker {holder}"))
                && !err.contains("cannot be restored"),
            "worker {lost}'s checkpoint after wave {wave} comes from worker {holder}'s replica: {err}"
        );
        assert_like_reference(
            &run,
            &format!("worker {lost} replaced after its disk was lost"),
        );
    }
}
