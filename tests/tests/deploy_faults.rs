//! The operator's runbook under every fault it documents, through `kingmaker deploy` on lab hosts.
//! 1. The game is TOPPEN (one layer, ~50 waves) with waves slowed to 2 s on the workers and a
//!    checkpoint after every wave, so every fault lands mid-run even when `deploy status` over SSH
//!    is slow on a loaded machine (at 800 ms a run could end before the last fault).

use kingmaker_e2e::lab::*;
use kingmaker_e2e::{assert_same_tables, bin, find_program, kingmaker_ok, raw_get, start_serve};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const RUN: &str = "faults";
/// The run's --worker-timeout, in seconds.
const TIMEOUT: f64 = 2.0;

/// Wait until the run has closed `waves` more waves than `s` shows (or finished).
fn progress_by(inv: &Path, s: &Value, waves: u64, what: &str) -> Value {
    let from = wave(s);
    wait_status(inv, what, 180, |s| {
        wave(s) >= from + waves || phase(s) == "complete"
    })
}

/// The run must still be going (so the next fault lands mid-run).
#[track_caller]
fn still_running(s: &Value, fault: &str) {
    assert_ne!(
        phase(s),
        "complete",
        "the run finished before {fault}: the test did not test it"
    );
}

/// Wait for the coordinator to stop after a fault; the seconds it took from `since`.
fn noticed(inv: &Path, since: Instant, fault: &str) -> f64 {
    let s = wait_status(
        inv,
        &format!("the coordinator to notice {fault}"),
        60,
        |s| host_state(s, "h0") != "running",
    );
    assert!(
        phase(&s).starts_with("stopped"),
        "after {fault} the run should be stopped, not finished: {s:#}"
    );
    since.elapsed().as_secs_f64()
}

fn coordinator_log(lab: &Lab) -> String {
    std::fs::read_to_string(lab.dir().join(format!("h0/opt/log/coordinator-{RUN}.log")))
        .unwrap_or_default()
}

fn pid_of(lab: &Lab, host: &str, role: &str) -> String {
    let file = lab
        .dir()
        .join(host)
        .join("opt/run")
        .join(format!("{role}-{RUN}.pid"));
    std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
        .trim()
        .to_string()
}

/// Resume after a fault and wait until the run is going again; the seconds until the first
/// wave after the restore.
fn resume(inv: &Path, s: &Value) -> f64 {
    let t = Instant::now();
    deploy_ok(inv, &["resume"]);
    progress_by(inv, s, 1, "the resumed run's next wave");
    t.elapsed().as_secs_f64()
}

/// Run `args` in host `host`'s namespace.
fn in_host(lab: &Lab, host: &str) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", &lab.host(host).ns]);
    cmd
}

/// In one run: the operator's SSH connection dropped in the middle of `deploy status`, a worker
/// killed with kill -9 mid-wave, a worker stopped (SIGSTOP) for longer than `--worker-timeout`,
/// the coordinator killed with kill -9, and a worker host lost for good (its data directory gone,
/// a new empty one in the inventory). The run must end with the tables (values and depths) of an
/// embedded build. Then `deploy fetch` is killed mid-pack (the operator's session dropped again)
/// and run again, which must follow the pack it left running rather than start another. The
/// release is published over plain HTTP from the coordinator's host, fetched on a worker's host
/// through a connection that is cut mid-download, verified, served and queried.
#[test]
fn the_runbook_holds_through_every_fault_then_publishes_and_fetches() {
    require_prerequisites();
    let lab = Lab::new(3);
    let reference_run = lab.dir().join("reference");
    let reference_digests = reference(&["toppen"], &reference_run);
    let inv = lab.inventory(
        RUN,
        &format!(
            "game = \"toppen\"\ncheckpoint_every_waves = 1\ncheckpoint_every_secs = 0\n\
             build_args = [\"--worker-timeout\", \"{TIMEOUT}\"]\n\
             worker_args = [\"--wave-delay-ms\", \"2000\"]\n\
             pack_args = [\"--zstd-level\", \"19\"]"
        ),
        &["h1", "h2"],
    );
    deploy_ok(&inv, &["provision"]);
    deploy_ok(&inv, &["launch", "--settle-secs", "1"]);
    let s = wait_status(&inv, "wave 2", 120, |s| {
        wave(s) >= 2 || phase(s) == "complete"
    });
    still_running(&s, "the dropped SSH connection");

    // 1. The operator's SSH connection drops in the middle of `deploy status`: the deploy process
    // and its ssh children die with their session. The run does not notice.
    let mut watching: Child = {
        use std::os::unix::process::CommandExt;
        Command::new(bin("kingmaker"))
            .args(["deploy", "status", "--watch", "1", "--inventory"])
            .arg(&inv)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: a plain system call; the group is the one the child leads.
    let killed = unsafe { libc::kill(-(watching.id() as i32), libc::SIGKILL) };
    assert_eq!(killed, 0);
    let _ = watching.wait();
    let s = progress_by(&inv, &s, 2, "the run to go on after the dropped session");
    still_running(&s, "the worker's kill");
    assert_eq!(host_state(&s, "h0"), "running", "{s:#}");
    eprintln!(
        "dropped SSH mid-status: the run went on to wave {}",
        wave(&s)
    );

    // 2. kill -9 a worker mid-wave.
    let t = Instant::now();
    assert!(kill_service(&lab, "h2", "worker", RUN));
    let seen = noticed(&inv, t, "the killed worker");
    let restored = resume(&inv, &s);
    eprintln!("worker killed: noticed in {seen:.1} s (status polls included), running again {restored:.1} s after resume");
    let s = progress_by(&inv, &status(&inv), 2, "waves after the worker's resume");
    still_running(&s, "the worker's SIGSTOP");

    // 3. A worker stopped for longer than the worker timeout (a frozen VM).
    let pid = pid_of(&lab, "h1", "worker");
    let t = Instant::now();
    sh(&["kill", "-STOP", &pid]);
    let seen = noticed(&inv, t, "the stalled worker");
    let log = coordinator_log(&lab);
    let silence: f64 = log
        .rsplit("has not answered heartbeats for ")
        .next()
        .and_then(|rest| rest.split('s').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the stall is reported as silence: {log}"));
    assert!(
        silence <= TIMEOUT + 2.0,
        "the stall was reported after {silence} s of silence, the timeout being {TIMEOUT} s:\n{}",
        log.lines().rev().take(12).collect::<Vec<_>>().join("\n")
    );
    sh(&["kill", "-CONT", &pid]);
    let restored = resume(&inv, &s);
    eprintln!("worker stopped: reported after {silence:.1} s of silence ({seen:.1} s with status polls), running again {restored:.1} s after resume");
    let s = progress_by(&inv, &status(&inv), 2, "waves after the stall");
    still_running(&s, "the coordinator's kill");

    // 4. kill -9 the coordinator.
    let t = Instant::now();
    assert!(kill_service(&lab, "h0", "coordinator", RUN));
    let seen = noticed(&inv, t, "the killed coordinator");
    let restored = resume(&inv, &s);
    eprintln!(
        "coordinator killed: down in {seen:.1} s, running again {restored:.1} s after resume"
    );
    let s = progress_by(
        &inv,
        &status(&inv),
        2,
        "waves after the coordinator's resume",
    );
    still_running(&s, "the lost host");

    // 5. A worker host lost for good: its disk is gone; a new empty data directory takes its
    // place in the inventory. Its checkpoint comes back from the replica on its ring successor.
    let checkpoint_wave = wave(&s);
    let t = Instant::now();
    assert!(kill_service(&lab, "h2", "worker", RUN));
    noticed(&inv, t, "the lost host");
    std::fs::remove_dir_all(lab.dir().join("h2/data")).unwrap();
    let text = std::fs::read_to_string(&inv).unwrap();
    let old = format!("data_dir = \"{}\"", lab.dir().join("h2/data").display());
    assert!(text.contains(&old));
    let new = format!("data_dir = \"{}\"", lab.dir().join("h2/data-new").display());
    std::fs::write(&inv, text.replacen(&old, &new, 1)).unwrap();
    deploy_ok(&inv, &["provision"]);
    let restored = resume(&inv, &s);
    wait_status(&inv, "the run to complete", 300, |s| phase(s) == "complete");
    let log = coordinator_log(&lab);
    let resumed_at = log
        .rsplit("resuming after wave ")
        .next()
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(
        log.contains("from the replica on worker 0") && !log.contains("cannot be restored"),
        "worker 1's checkpoint comes from the replica on worker 0:\n{log}"
    );
    assert!(
        resumed_at + 1 >= checkpoint_wave,
        "resumed after wave {resumed_at}, the lost host had checkpointed wave {checkpoint_wave} or so"
    );
    eprintln!("host lost: resumed after wave {resumed_at} from the replica, running again {restored:.1} s after resume");

    // The tables: values and depths of every state, as the embedded build's.
    assert_same_tables(
        &lab.dir().join(format!("h0/data/{RUN}/run")),
        &reference_run,
    );
    fetch_through_a_dropped_session(&lab, &inv);
    assert_eq!(
        release_digests(&lab.dir().join("releases").join(RUN)),
        reference_digests
    );

    publish_and_fetch(&lab);
    deploy_ok(&inv, &["teardown"]);
}

/// `deploy fetch` killed with its ssh children once the pack has started on the coordinator: the
/// pack goes on (detached), and the next `deploy fetch` follows it or finds it finished, never
/// packing again.
fn fetch_through_a_dropped_session(lab: &Lab, inv: &Path) {
    use std::os::unix::process::CommandExt;
    let base = lab.dir().join(format!("h0/data/{RUN}"));
    let mut fetch = Command::new(bin("kingmaker"))
        .args(["deploy", "fetch", "--inventory"])
        .arg(inv)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(base.join("pack.pid")).map_or(true, |p| p.trim().is_empty()) {
        assert!(Instant::now() < deadline, "the pack did not start on h0");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: a plain system call; the group is the one the child leads.
    let killed = unsafe { libc::kill(-(fetch.id() as i32), libc::SIGKILL) };
    assert_eq!(killed, 0);
    let _ = fetch.wait();
    let again = deploy_ok(inv, &["fetch"]);
    assert!(
        again.contains("still running: following it") || again.contains("already packed"),
        "the second fetch follows the first one's pack:\n{again}"
    );
    assert!(!again.contains("(detached"), "packed again:\n{again}");
    let log = std::fs::read_to_string(base.join("pack.log")).unwrap();
    assert_eq!(log.matches("release of toppen written").count(), 1, "{log}");
    assert_eq!(
        std::fs::read_to_string(base.join("pack.exit"))
            .unwrap()
            .trim(),
        "0"
    );
    eprintln!(
        "fetch killed mid-pack: the next fetch {}",
        if again.contains("following") {
            "followed the running pack"
        } else {
            "found it finished"
        }
    );
}

/// The release packed on the coordinator's host, served there over plain HTTP (Python's static
/// server, on a link slowed to 1 Mbit/s), fetched on h1 while h0's link is cut for 3 s, then
/// verified, served and queried there.
fn publish_and_fetch(lab: &Lab) {
    let release = lab.dir().join(format!("h0/data/{RUN}/release"));
    assert!(
        release.join("manifest.json").exists(),
        "deploy fetch packs on the coordinator"
    );
    let python = find_program(&["python3"]).expect("python3 serves the release");
    let h0 = lab.host("h0");
    sh(&[
        "ip", "netns", "exec", &h0.ns, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate",
        "1mbit", "burst", "16kb", "latency", "200ms",
    ]);
    struct Server(Child);
    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _server = Server(
        in_host(lab, "h0")
            .arg(&python)
            .args(["-m", "http.server", "8080", "--bind", &h0.ip, "--directory"])
            .arg(&release)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://{}:8080/", h0.ip);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(format!("{}:8080", h0.ip)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the release server does not listen"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let dest = lab.dir().join("fetched");
    let fetch = in_host(lab, "h1")
        .arg(bin("kingmaker"))
        .args(["fetch", &url])
        .arg(&dest)
        .args(["--timeout", "2", "--retries", "10"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    sh(&["ip", "-n", &h0.ns, "link", "set", "eth0", "down"]);
    std::thread::sleep(Duration::from_secs(3));
    sh(&["ip", "-n", &h0.ns, "link", "set", "eth0", "up"]);
    let out = fetch.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fetch through a cut link: {err}");
    assert!(
        err.contains("resuming"),
        "the cut came mid-download and the download was resumed: {err}"
    );
    let d = dest.to_str().unwrap();
    let verify = in_host(lab, "h1")
        .arg(bin("kingmaker"))
        .args(["verify", d, "--deep", "--sample", "200"])
        .output()
        .unwrap();
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stderr)
    );
    // TOPPEN has a start per terrain: query one, from the command line and over HTTP.
    let position = "####/#..#/####:AABBABABAB:A";
    let q = kingmaker_ok(&["query", d, position, "--json"]);
    let q: Value = serde_json::from_str(&q).unwrap();
    let (_serve, base) = start_serve(&dest);
    let answer = raw_get(
        &base,
        "/api/position?p=%23%23%23%23%2F%23..%23%2F%23%23%23%23%3AAABBABABAB%3AA",
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(!q.is_null());
}
