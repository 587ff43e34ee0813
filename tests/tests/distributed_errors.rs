//! A distributed build's errors name the worker at fault, and what makes a set of workers
//! unusable is refused before the run directory is made.
//! 1. A full disk is blamed on the worker whose disk it is, with its address and the path (a
//!    full tmpfs where a worker stores its predecessor's replicas; needs root to mount, else the
//!    test says so and passes).
//! 2. One worker under two addresses, workers busy with another coordinator's run, and a worker
//!    that finds another worker at a peer's address (its own /etc/hosts, in a mount namespace:
//!    root again) are refused up front: no run directory.
//! 3. A second worker on a data directory in use is refused when it starts.

use kingmaker_e2e::{bin, distributed, finish, kingmaker, log_text, spawn, wait_for_wave, Worker};
use kingmaker_e2e::{Killed, CC3P, HANG, TOKEN};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A tmpfs mounted by the test, unmounted (lazily: a worker may still hold it) on drop.
struct Mounted(PathBuf);

impl Mounted {
    /// A tmpfs of one page at `dir`, filled: every write there fails with "No space left on
    /// device". `None` where it cannot be mounted (not root).
    fn full(dir: &Path) -> Option<Mounted> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4k", "tmpfs"])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            return None;
        }
        let mounted = Mounted(dir.to_path_buf());
        use std::io::Write;
        let mut fill = std::fs::File::create(dir.join("fill")).unwrap();
        while fill.write_all(&[0u8; 4096]).is_ok() {}
        Some(mounted)
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// The first subdirectory of `dir` (a worker's run, a run's layer), once there is one.
fn first_subdir(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .find(|e| e.file_type().is_ok_and(|t| t.is_dir()) && e.file_name() != "layers")
        .map(|e| e.path())
}

/// Worker 1's disk is full where it keeps worker 0's replicas: worker 0 saves its checkpoint and
/// reports that its successor could not store the copy. The error must blame worker 1 (its
/// address, host and data directory) and give the path, not worker 0.
#[test]
fn a_full_disk_is_blamed_on_the_worker_whose_disk_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "200"]))
        .collect();
    let (run, log) = (tmp.path().join("run"), tmp.path().join("run.log"));
    // The first checkpoint a second after the layer opens: time to fill the disk before it.
    let mut build = spawn(
        &distributed(
            &CC3P,
            &workers,
            &run,
            &[
                "--shard-size",
                "256",
                "--checkpoint-every-waves",
                "0",
                "--checkpoint-every-secs",
                "1",
            ],
        ),
        &log,
    );
    let started = Instant::now();
    let layer_dir = loop {
        if let Some(layer) = first_subdir(&workers[1].data).and_then(|r| first_subdir(&r)) {
            break layer;
        }
        assert!(
            started.elapsed() < HANG,
            "worker 1 opened no layer:\n{}",
            log_text(&log)
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let replicas = layer_dir.join("replicas").join("worker-0");
    let Some(_full) = Mounted::full(&replicas) else {
        eprintln!("skipped: cannot mount a tmpfs (the test needs root)");
        return;
    };
    let status = finish(&mut build, &log);
    let text = log_text(&log);
    assert!(!status.success(), "the build must fail:\n{text}");
    let err = text
        .lines()
        .find(|l| l.starts_with("kingmaker: error:"))
        .unwrap_or_else(|| panic!("no error line:\n{text}"));
    let data = std::fs::canonicalize(&workers[1].data).unwrap();
    let blamed = format!(
        "worker {} (host {}, data directory {})",
        workers[1].addr,
        host_name(),
        data.display()
    );
    assert!(
        err.contains(&blamed)
            && err.contains(&format!("{}/", replicas.display()))
            && err.contains("No space left on device"),
        "the error must name worker 1 ({blamed}) and the full path:\n{err}"
    );
    // Nothing is down: the advice is to remove the cause, not to restart.
    assert!(!err.contains("restart what is down"), "{err}");
    for wrong in [
        format!("worker {}: ", workers[0].addr),
        format!("worker {} (host", workers[0].addr),
    ] {
        assert!(
            !err.contains(wrong.as_str()),
            "worker 0 is blamed ({wrong}):\n{err}"
        );
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// `127.0.0.1:P,localhost:P` is one worker: refused before the run directory is made, naming
/// both addresses.
#[test]
fn one_worker_under_two_addresses_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let worker = Worker::start(TOKEN, &[]);
    let port = worker.addr.rsplit(':').next().unwrap();
    let other = format!("localhost:{port}");
    let run = tmp.path().join("run");
    let out = kingmaker(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--out",
        run.to_str().unwrap(),
        "--workers",
        &format!("{},{other}", worker.addr),
        "--token",
        TOKEN,
    ]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&worker.addr) && err.contains(&other) && err.contains("same kingmaker-worker"),
        "{err}"
    );
    assert!(!run.exists(), "the run directory was made:\n{err}");
}

/// A second coordinator on workers busy with a first one's run is told so, with who started that
/// run, before it makes its run directory; the first run goes on undisturbed.
#[test]
fn a_second_worker_on_a_data_directory_in_use_is_refused_when_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let first = Worker::start_on(TOKEN, &data, "127.0.0.1:0");
    let mut child = Command::new(bin("kingmaker-worker"))
        .args(["--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&data)
        .env("KINGMAKER_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A worker that starts serves until killed: give it 10 s to refuse.
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() && started.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    let second = child.wait_with_output().unwrap();
    let err = stderr(&second);
    assert!(!second.status.success(), "a second worker started: {err}");
    assert!(
        err.contains(&format!("is in use by pid {}", first.pid()))
            && err.contains("give each worker a data directory of its own"),
        "{err}"
    );
    drop(first);
    // Once the first is gone, the directory is free again.
    let again = Worker::start_on(TOKEN, &data, "127.0.0.1:0");
    assert!(!again.addr.is_empty());
}

#[test]
fn a_second_coordinator_on_busy_workers_is_refused_up_front() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "100"]))
        .collect();
    let (first, log) = (tmp.path().join("first"), tmp.path().join("first.log"));
    let mut build = spawn(
        &distributed(&CC3P, &workers, &first, &["--shard-size", "256"]),
        &log,
    );
    assert!(
        wait_for_wave(&first, &mut build.0, None, 1, HANG),
        "the first build ended early:\n{}",
        log_text(&log)
    );
    let second = tmp.path().join("second");
    let out = kingmaker(
        &distributed(&CC3P, &workers, &second, &["--shard-size", "256"])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    let run_id = kingmaker_e2e::read_json(&first.join("run.json"))["distributed"]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let first_abs = std::path::absolute(&first).unwrap();
    assert!(
        err.contains(&format!(
            "is busy with run {run_id} (started by `kingmaker build`"
        )) && err.contains(&first_abs.display().to_string()),
        "{err}"
    );
    assert!(!second.exists(), "the run directory was made:\n{err}");
    assert!(
        finish(&mut build, &log).success(),
        "the first build must go on:\n{}",
        log_text(&log)
    );
}

/// A worker in a mount namespace of its own whose /etc/hosts says `localhost` is 127.0.0.2, so
/// that `localhost:PORT` means another worker to it than to the coordinator; `None` where the
/// namespace cannot be made (not root). Its address, and the process (killed on drop).
fn worker_with_hosts(dir: &Path) -> Option<(String, Killed)> {
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, "127.0.0.2 localhost\n").unwrap();
    let script = format!(
        "mount --bind {} /etc/hosts && exec {} --listen 127.0.0.1:0 --data-dir {} --threads 1",
        hosts.display(),
        bin("kingmaker-worker").display(),
        dir.join("data").display()
    );
    let mut child = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .env("KINGMAKER_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("worker.log")).unwrap())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take().unwrap();
    let child = Killed(child);
    // Read on to the end, so the worker never writes into a closed pipe.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx.recv_timeout(std::time::Duration::from_secs(30)).ok()?;
    let addr = line
        .strip_prefix("kingmaker-worker listening on ")?
        .trim()
        .to_string();
    Some((addr, child))
}

/// `--workers 127.0.0.1:PA,localhost:PB`, where worker A's `localhost` is another host (here
/// 127.0.0.2, with a third worker on port PB): A would send B's updates to that worker. Refused
/// before the run directory is made, naming both workers A finds and the coordinator finds.
#[test]
fn a_worker_that_finds_another_worker_at_a_peers_address_is_refused_up_front() {
    let tmp = tempfile::tempdir().unwrap();
    let b = Worker::start(TOKEN, &[]);
    let port = b.addr.rsplit(':').next().unwrap();
    let stranger = Worker::start_on(
        TOKEN,
        &tmp.path().join("stranger"),
        &format!("127.0.0.2:{port}"),
    );
    let Some((a, _a)) = worker_with_hosts(tmp.path()) else {
        eprintln!("skipped: cannot make a mount namespace (the test needs root)");
        return;
    };
    let run = tmp.path().join("run");
    let out = kingmaker(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--shard-size",
        "256",
        "--out",
        run.to_str().unwrap(),
        "--workers",
        &format!("{a},localhost:{port}"),
        "--token",
        TOKEN,
    ]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    let data = |w: &Worker| {
        std::fs::canonicalize(&w.data)
            .unwrap()
            .display()
            .to_string()
    };
    assert!(
        err.contains(&format!("worker {a} (host "))
            && err.contains(&format!(
                "finds another kingmaker-worker at localhost:{port}"
            ))
            && err.contains(&data(&stranger))
            && err.contains(&data(&b)),
        "{err}"
    );
    assert!(!run.exists(), "the run directory was made:\n{err}");
}

/// Two coordinators started at the same moment on the same idle workers: one builds, the other
/// is refused as the busy case is (no run directory), never both past their checks to meet at the
/// first layer. The workers are held (Reserve) from the checks on.
#[test]
fn two_coordinators_started_at_once_do_not_both_start() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
    for round in 0..4 {
        let runs: Vec<PathBuf> = (0..2)
            .map(|i| tmp.path().join(format!("round{round}-{i}")))
            .collect();
        let mut builds: Vec<Killed> = runs
            .iter()
            .map(|run| {
                spawn(
                    &distributed(&CC3P, &workers, run, &["--shard-size", "256"]),
                    &run.with_extension("log"),
                )
            })
            .collect();
        let ok: Vec<bool> = builds
            .iter_mut()
            .zip(&runs)
            .map(|(b, run)| finish(b, &run.with_extension("log")).success())
            .collect();
        let logs: Vec<String> = runs
            .iter()
            .map(|r| log_text(&r.with_extension("log")))
            .collect();
        assert_eq!(
            ok.iter().filter(|&&o| o).count(),
            1,
            "round {round}: one build must win: {ok:?}\n{}\n{}",
            logs[0],
            logs[1]
        );
        let loser = ok.iter().position(|&o| !o).unwrap();
        assert!(
            logs[loser].contains("is busy with run") && !runs[loser].exists(),
            "round {round}: the loser must be refused up front:\n{}",
            logs[loser]
        );
    }
}

/// `resume --layers` on workers busy with another run is refused before it touches the run:
/// run.json keeps its layers and summary.json stays.
#[test]
fn a_resume_on_busy_workers_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "100"]))
        .collect();
    let done = tmp.path().join("done");
    let log = tmp.path().join("done.log");
    let mut first = spawn(
        &distributed(
            &CC3P,
            &workers,
            &done,
            &["--shard-size", "256", "--layers", "solo"],
        ),
        &log,
    );
    assert!(finish(&mut first, &log).success(), "{}", log_text(&log));
    let before = std::fs::read(done.join("run.json")).unwrap();
    let (busy, busy_log) = (tmp.path().join("busy"), tmp.path().join("busy.log"));
    let mut other = spawn(
        &distributed(&CC3P, &workers, &busy, &["--shard-size", "256"]),
        &busy_log,
    );
    assert!(
        wait_for_wave(&busy, &mut other.0, None, 1, HANG),
        "{}",
        log_text(&busy_log)
    );
    let out = kingmaker(&[
        "resume",
        done.to_str().unwrap(),
        "--layers",
        "enable_ab",
        "--token",
        TOKEN,
    ]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("is busy with run"), "{err}");
    assert_eq!(
        std::fs::read(done.join("run.json")).unwrap(),
        before,
        "run.json changed:\n{err}"
    );
    assert!(
        done.join("summary.json").exists(),
        "summary.json removed:\n{err}"
    );
    assert!(
        finish(&mut other, &busy_log).success(),
        "{}",
        log_text(&busy_log)
    );
}
