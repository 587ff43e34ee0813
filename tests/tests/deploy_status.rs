//! `deploy status` as a monitor, on lab hosts: its exit status says where the run stands
//! (3 running, 4 stopped, 5 a host unreachable, 0 complete), its hints name the deploy's own
//! commands and its three names say which is which, and `--watch` goes on through a host cut off
//! (a timestamped line says why), then stops by itself when the run is complete, which it shows
//! as complete with a finished coordinator.

use kingmaker_e2e::lab::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const RUN: &str = "watched";

/// `deploy status ARGS...`: its exit status and stdout.
fn status_of(inv: &Path, args: &[&str]) -> (i32, String, Output) {
    let mut all = vec!["status"];
    all.extend_from_slice(args);
    let out = deploy(inv, &all);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text, out)
}

#[track_caller]
fn expect_code(inv: &Path, args: &[&str], code: i32, what: &str) -> String {
    let (got, text, out) = status_of(inv, args);
    assert_eq!(
        got,
        code,
        "deploy status {args:?} while {what} should exit {code}:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

fn still_running(s: &Value, before: &str) {
    assert_ne!(
        phase(s),
        "complete",
        "the run finished before {before}: the test did not test it"
    );
}

#[test]
fn status_exit_codes_hints_and_a_watch_through_a_cut_host() {
    require_prerequisites();
    let lab = Lab::new(2);
    // TOPPEN's ~50 waves, slowed so that the run outlasts the faults; a worker timeout longer
    // than the cut, so that the run itself rides it out.
    let inv = lab.inventory(
        RUN,
        "game = \"toppen\"\ncheckpoint_every_waves = 1\ncheckpoint_every_secs = 0\n\
         build_args = [\"--worker-timeout\", \"30\"]\n\
         worker_args = [\"--wave-delay-ms\", \"700\"]",
        &["h1"],
    );
    let hint = format!("kingmaker deploy resume --inventory {}", inv.display());
    deploy_ok(&inv, &["provision"]);
    // The coordinator's own hints (in its log, when it stops on a lost worker) name it too.
    let env = std::fs::read_to_string(lab.dir().join(format!("h0/opt/etc/coordinator-{RUN}.env")))
        .unwrap();
    assert!(
        env.contains(&format!("KINGMAKER_DEPLOY_RESUME=\"{hint}\"")),
        "{env}"
    );
    deploy_ok(&inv, &["launch", "--settle-secs", "1"]);
    let s = wait_status(&inv, "wave 2", 120, |s| {
        wave(s) >= 2 || phase(s) == "complete"
    });
    still_running(&s, "the first status");

    // Running: 3, and the run's three names, each said for what it is.
    let text = expect_code(&inv, &[], 3, "the run runs");
    for line in [
        format!("run {RUN} (the inventory's run name): running"),
        "  game: toppen ".to_string(),
        "; run id on the workers (their data directories): ".to_string(),
    ] {
        assert!(text.contains(&line), "status should say {line:?}:\n{text}");
    }
    let s: Value =
        serde_json::from_str(&expect_code(&inv, &["--json"], 3, "the run runs")).unwrap();
    assert_eq!(s["standing"], "running", "{s:#}");

    // Stopped: 4, and the hint names the deploy's resume, not `kingmaker resume DIR`.
    assert!(kill_service(&lab, "h0", "coordinator", RUN));
    let s = wait_status(&inv, "the coordinator to be down", 60, |s| {
        phase(s).starts_with("stopped")
    });
    assert!(phase(&s).contains(&hint), "{s:#}");
    let text = expect_code(&inv, &[], 4, "the coordinator is down");
    assert!(
        text.contains(&hint) && !text.contains("`kingmaker resume"),
        "the stopped run's hint should be `{hint}`:\n{text}"
    );
    deploy_ok(&inv, &["resume", "--settle-secs", "1"]);
    let s = wait_status(&inv, "the resumed run", 120, |s| {
        phase(s) == "running" || phase(s) == "complete"
    });
    still_running(&s, "the watch");

    // A watch, then h1 cut off for longer than an SSH connection's timeout (5 s).
    let log = lab.dir().join("watch.out");
    let mut watch = Command::new(kingmaker_e2e::bin("kingmaker"))
        .args(["deploy", "status", "--watch", "1", "--inventory"])
        .arg(&inv)
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let h1 = lab.host("h1");
    sh(&["ip", "-n", &h1.ns, "link", "set", "eth0", "down"]);
    let cut = Instant::now();
    // Unreachable: 5, with ssh's reason.
    let (code, text, out) = status_of(&inv, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    std::thread::sleep(Duration::from_secs(8).saturating_sub(cut.elapsed()));
    sh(&["ip", "-n", &h1.ns, "link", "set", "eth0", "up"]);
    assert_eq!(code, 5, "status with h1 cut off:\n{text}\n{stderr}");
    assert!(
        stderr.contains("host h1") && stderr.contains("unreachable over SSH"),
        "{stderr}"
    );
    assert!(
        text.contains("h1           worker       UNREACHABLE"),
        "{text}"
    );

    // The watch rides the cut out and ends by itself when the run is complete.
    let deadline = Instant::now() + Duration::from_secs(300);
    let ended = loop {
        if let Some(st) = watch.try_wait().unwrap() {
            break st;
        }
        if Instant::now() > deadline {
            let _ = watch.kill();
            panic!(
                "the watch never ended:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let watched = std::fs::read_to_string(&log).unwrap();
    assert!(
        ended.success(),
        "the watch should end with 0 when the run is complete: {ended}\n{watched}"
    );
    let stamps = watched
        .lines()
        .filter(|l| l.len() == 20 && l.ends_with('Z') && l.as_bytes()[10] == b'T')
        .count();
    assert!(stamps >= 3, "every refresh is timestamped:\n{watched}");
    assert!(
        watched.lines().any(|l| l.starts_with("20")
            && l.contains("Z could not take the whole snapshot: host h1")
            && l.contains("unreachable over SSH")
            && l.ends_with("trying again in 1 s")),
        "the watch should say, with the time, that h1 could not be reached:\n{watched}"
    );
    let last = watched.rsplit("\n\n").next().unwrap();
    assert!(
        last.contains(&format!("run {RUN} (the inventory's run name): complete"))
            && last.contains(" finished ")
            && !last.contains("(not running)")
            && !last.contains("states/s"),
        "the last refresh shows a complete run, its coordinator finished, no rate:\n{last}"
    );

    // Complete: 0, whatever the workers do now; the coordinator is finished, not stopped.
    let s: Value = serde_json::from_str(&expect_code(&inv, &["--json"], 0, "complete")).unwrap();
    assert_eq!(
        (phase(&s), &s["standing"]),
        ("complete", &Value::from("complete"))
    );
    let h0 = s["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == "h0");
    assert_eq!(h0.unwrap()["service"], "finished", "{s:#}");
    deploy_ok(&inv, &["teardown", "--stop-timeout", "5"]);
}

/// An ssh client killed by a signal (here a stand-in `ssh` on PATH that kills itself) is named
/// as such, with the host, not as `exit -1` with nothing after it.
#[test]
fn an_ssh_client_killed_by_a_signal_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = tmp.path().join("ssh");
    std::fs::write(&fake, "#!/bin/sh\nkill -9 $$\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let inv = tmp.path().join("inv.toml");
    std::fs::write(
        &inv,
        "[run]\nname = \"r\"\ngame = \"cc3p\"\noptions = [\"--level\", \"1\"]\n\
         token_file = \"r.token\"\n[ssh]\nknown_hosts = \"kh\"\n\
         [[host]]\nname = \"h0\"\nrole = \"coordinator\"\naddress = \"192.0.2.1\"\n\
         install_dir = \"/opt/km\"\ndata_dir = \"/var/km\"\n\
         [[host]]\nname = \"h1\"\nrole = \"worker\"\naddress = \"192.0.2.2\"\nprivate_address = \"10.0.0.2\"\n\
         install_dir = \"/opt/km\"\ndata_dir = \"/var/km\"\n",
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        tmp.path().display(),
        std::env::var("PATH").unwrap()
    );
    let out = Command::new(kingmaker_e2e::bin("kingmaker"))
        .args(["deploy", "status", "--inventory"])
        .arg(&inv)
        .env("PATH", path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains("the ssh client was killed by signal 9") && !text.contains("exit -1"),
        "{text}"
    );
}
