//! Several runs of `kingmaker deploy` on the same hosts (network namespaces, as in deploy.rs):
//! each has its own environment file, unit, port and data, a teardown of one leaves the other
//! whole, a port held by another run is named by launch; and the lab's own script
//! (scripts/lab-hosts.sh) writes a usable inventory and replaces a host whose key then changes.

use kingmaker_e2e::lab::*;
use kingmaker_e2e::slurm_lab::run_digests;
use std::path::{Path, PathBuf};
use std::process::Command;

const CC3P: &str = "game = \"cc3p\"\noptions = [\"--level\", \"1\"]\ncheckpoint_every_waves = 1\n\
                    checkpoint_every_secs = 0\nbuild_args = [\"--worker-timeout\", \"5\"]";

/// An inventory for `run` on the lab's hosts whose workers listen on `port`.
fn inventory_on_port(lab: &Lab, run: &str, workers: &[&str], port: u16) -> PathBuf {
    let path = lab.inventory(run, CC3P, workers);
    set_port(&path, port);
    path
}

fn set_port(inv: &Path, port: u16) {
    let text = std::fs::read_to_string(inv).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("worker_port = "))
        .unwrap()
        .to_string();
    std::fs::write(inv, text.replace(&line, &format!("worker_port = {port}"))).unwrap();
}

fn exists(lab: &Lab, rel: &str) -> bool {
    lab.dir().join(rel).exists()
}

/// Two runs provisioned and launched on the same three hosts: neither takes over the other's
/// settings or token, both finish with the embedded build's digests, and a teardown of one with
/// --delete-data leaves the other whole. On the way: `deploy list`, `deploy logs`, what resume
/// says it restarts, the hint to tear down idle workers, and a host provisioned by an older
/// kingmaker (one coordinator.env for every run).
#[test]
fn two_runs_live_side_by_side_on_the_same_hosts() {
    require_prerequisites();
    let lab = Lab::new(3);
    let workers = ["h1", "h2"];
    let reference_dir = lab.dir().join("ref");
    let reference = reference(&["cc3p", "--level", "1"], &reference_dir);
    let a = inventory_on_port(&lab, "runa", &workers, 7070);
    let b = inventory_on_port(&lab, "runb", &workers, 7070);
    deploy_ok(&a, &["provision"]);
    // The same port as run A's workers: refused before any host is changed, with a free port.
    deploy_err(&b, &["provision"], "worker_port 7070 is another run's");
    deploy_err(&b, &["provision"], "worker_port = 7071");
    assert!(!exists(&lab, "h1/opt/etc/worker-runb.env"));
    set_port(&b, 7071);
    let out = deploy_ok(&b, &["provision"]);
    assert!(out.contains("also hold run(s) runa"), "{out}");

    // Run A's token is still the one on its hosts (it was "DIFFERENT" on the coordinator's
    // host, whose one coordinator.env run B's provision overwrote).
    for (inv, run) in [(&a, "runa"), (&b, "runb")] {
        let s = status(inv);
        for h in s["hosts"].as_array().unwrap() {
            assert_eq!(
                h["token_matches"], true,
                "run {run}, host {}: {s:#}",
                h["name"]
            );
        }
    }
    for f in [
        "h0/opt/etc/coordinator-runa.env",
        "h0/opt/etc/coordinator-runb.env",
        "h1/opt/etc/worker-runa.env",
        "h1/opt/etc/worker-runb.env",
    ] {
        assert!(exists(&lab, f), "{f} missing");
    }

    deploy_ok(&a, &["launch", "--settle-secs", "1"]);
    deploy_ok(&b, &["launch", "--settle-secs", "1"]);
    for (inv, run) in [(&a, "runa"), (&b, "runb")] {
        wait_status(inv, &format!("run {run} to complete"), 300, |s| {
            phase(s) == "complete"
        });
        assert_eq!(
            run_digests(&lab.dir().join(format!("h0/data/{run}/run"))),
            reference,
            "run {run} differs from the embedded build"
        );
    }
    workers_listen_on(&lab, &workers, &[7070, 7071]);

    // Complete: resume says so and that the idle workers can go.
    let out = deploy_ok(&a, &["resume"]);
    assert!(
        out.contains("is complete") && out.contains("still run, idle") && out.contains("teardown"),
        "{out}"
    );
    // Every run on the hosts, from any inventory.
    let out = deploy_ok(&b, &["list"]);
    for (host, role, run) in [
        ("h0", "coordinator", "runa"),
        ("h0", "coordinator", "runb"),
        ("h1", "worker", "runa"),
        ("h2", "worker", "runb"),
    ] {
        assert!(
            out.lines().any(|l| {
                let w: Vec<&str> = l
                    .trim_start_matches(['*', ' '])
                    .split_whitespace()
                    .collect();
                w.len() >= 4 && w[0] == host && w[1] == role && w[2] == run
            }),
            "no {role} of {run} on {host} in:\n{out}"
        );
    }
    assert!(out.contains("10.") && out.contains(":7071"), "{out}");
    assert!(
        out.contains("run runa is complete but its workers still run"),
        "{out}"
    );
    let out = deploy_ok(&b, &["logs", "h1", "--lines", "200"]);
    assert!(out.contains("starting the worker of run runb"), "{out}");
    deploy_err(&b, &["logs", "h9"], "its hosts are h0, h1, h2");

    // Tear run A down with its data: run B keeps everything.
    deploy_ok(&a, &["teardown", "--delete-data", "--stop-timeout", "10"]);
    for f in [
        "h0/opt/etc/coordinator-runa.env",
        "h1/opt/etc/worker-runa.env",
        "h0/data/runa",
        "h1/data/runa",
    ] {
        assert!(!exists(&lab, f), "{f} left by run A's teardown");
    }
    for f in [
        "h0/opt/etc/coordinator-runb.env",
        "h1/opt/etc/worker-runb.env",
        "h2/opt/etc/worker-runb.env",
        "h0/data/runb/run/summary.json",
    ] {
        assert!(exists(&lab, f), "{f} of run B deleted by run A's teardown");
    }
    let s = status(&b);
    assert_eq!(phase(&s), "complete", "{s:#}");
    for h in s["hosts"].as_array().unwrap() {
        assert_eq!(h["token_matches"], true, "{s:#}");
    }
    assert_eq!(host_state(&s, "h1"), "running", "{s:#}");
    let out = deploy_ok(&b, &["resume"]);
    assert!(out.contains("complete"), "{out}");

    // A host provisioned by an older kingmaker kept the coordinator's settings in one
    // coordinator.env: deploy says so, and provision moves them to the run's own file.
    std::fs::rename(
        lab.dir().join("h0/opt/etc/coordinator-runb.env"),
        lab.dir().join("h0/opt/etc/coordinator.env"),
    )
    .unwrap();
    deploy_err(&b, &["resume"], "provisioned there by an older kingmaker");
    let out = deploy_ok(&b, &["provision"]);
    assert!(out.contains("moved run runb's settings"), "{out}");
    assert!(!exists(&lab, "h0/opt/etc/coordinator.env"));
    assert!(exists(&lab, "h0/opt/etc/coordinator-runb.env"));
    assert!(deploy_ok(&b, &["resume"]).contains("complete"));
    deploy_ok(&b, &["teardown", "--delete-data", "--stop-timeout", "10"]);
}

/// Each worker host has a listener per port, on its private address.
fn workers_listen_on(lab: &Lab, workers: &[&str], ports: &[u16]) {
    for w in workers {
        let h = lab.host(w);
        let out = Command::new("ip")
            .args(["netns", "exec", &h.ns, "ss", "-Hltn"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for p in ports {
            assert!(
                text.contains(&format!("{}:{p} ", h.ip)),
                "{w} does not listen on {p}:\n{text}"
            );
        }
    }
}

/// Launch checks that the listener on a worker's port is its own worker: another run's worker
/// (or any process) holding the port is named, where launch used to report the worker as up
/// (with an empty pid) and start a coordinator that then failed on a refused token.
#[test]
fn launch_names_a_port_held_by_another_run_or_process() {
    require_prerequisites();
    let lab = Lab::new(2);
    let workers = ["h1"];
    let a = inventory_on_port(&lab, "runa", &workers, 7070);
    let b = inventory_on_port(&lab, "runb", &workers, 7071);
    deploy_ok(&a, &["provision"]);
    deploy_ok(&a, &["launch", "--settle-secs", "1"]);
    wait_status(&a, "run A to complete", 300, |s| phase(s) == "complete");
    // Run A is complete; its worker still runs (idle) on port 7070.
    deploy_ok(&b, &["provision"]);

    // Run B on run A's port, in its inventory and on its host, as an older kingmaker (which
    // checked no port) provisioned it.
    set_port(&b, 7070);
    let env = lab.dir().join("h1/opt/etc/worker-runb.env");
    let text = std::fs::read_to_string(&env).unwrap();
    std::fs::write(&env, text.replace(":7071\"", ":7070\"")).unwrap();
    let out = deploy(&b, &["launch", "--settle-secs", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("$ kingmaker deploy launch (run B on run A's port)\n{stdout}{stderr}");
    assert!(!out.status.success(), "launch should fail:\n{stdout}");
    for want in [
        "host h1: port 7070",
        "taken by the worker of run runa",
        "Address already in use",
        "worker_port",
    ] {
        assert!(stderr.contains(want), "{want:?} not in:\n{stderr}");
    }
    assert!(
        !stdout.contains("coordinator started"),
        "the coordinator was started on a worker that is not up:\n{stdout}"
    );

    // A process that is no worker at all holds run B's port.
    set_port(&b, 7071);
    deploy_ok(&b, &["provision"]);
    let h1 = lab.host("h1");
    let mut squatter = Command::new("ip")
        .args([
            "netns",
            "exec",
            &h1.ns,
            "python3",
            "-c",
            &format!(
                "import socket, time\ns = socket.socket()\ns.bind(('{}', 7071))\ns.listen()\ntime.sleep(600)",
                h1.ip
            ),
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let out = deploy(&b, &["launch", "--settle-secs", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("$ kingmaker deploy launch (run B's port held by another process)\n{stderr}");
    let _ = squatter.kill();
    let _ = squatter.wait();
    assert!(!out.status.success(), "launch should fail");
    assert!(
        stderr.contains("port 7071") && stderr.contains("python3"),
        "the holder of the port is not named:\n{stderr}"
    );

    // With its own port free, run B runs beside run A. Resume starts what is down, and says
    // exactly what: its worker (which exited on the clash) and its coordinator, never started.
    let out = deploy_ok(&b, &["resume", "--settle-secs", "1"]);
    assert!(
        out.contains("restarting: the worker on h1, the coordinator on h0"),
        "{out}"
    );
    wait_status(&b, "run B to complete", 300, |s| phase(s) == "complete");
    let s = status(&a);
    assert_eq!(phase(&s), "complete", "{s:#}");
}

/// Stops the hosts of scripts/lab-hosts.sh however the test ends.
struct LabScript {
    dir: PathBuf,
    script: PathBuf,
}

impl LabScript {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new("bash")
            .arg(&self.script)
            .arg(args[0])
            .arg(&self.dir)
            .args(&args[1..])
            .output()
            .unwrap()
    }
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "lab-hosts.sh {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for LabScript {
    fn drop(&mut self) {
        let _ = self.run(&["down"]);
    }
}

/// The runbook's replacement of a host, on scripts/lab-hosts.sh's hosts with the inventory it
/// writes: the inventory works as written (no `binaries` pointing at nothing), a replaced host's
/// new key is named as such (not "unreachable"), and the step the message gives pins the new key
/// and lets provision through. `restart` boots a host's sshd again.
#[test]
fn lab_inventory_works_and_a_replaced_host_key_is_named_with_its_fix() {
    require_prerequisites();
    let tmp = tempfile::tempdir().unwrap();
    let lab = LabScript {
        dir: tmp.path().join("lab"),
        script: Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lab-hosts.sh"),
    };
    // A subnet no other address or route of this machine uses.
    let taken = String::from_utf8_lossy(
        &Command::new("ip")
            .args(["-o", "addr"])
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned()
        + &String::from_utf8_lossy(&Command::new("ip").arg("route").output().unwrap().stdout);
    let third = (0..250u32)
        .map(|k| (std::process::id() + k) % 250 + 1)
        .find(|x| !taken.contains(&format!("10.252.{x}.")))
        .unwrap();
    let subnet = format!("10.252.{third}");
    lab.ok(&["up", "2", &subnet]);
    let inv_text = lab.ok(&["inventory", "lab1", "cc3p", "--level", "1"]);
    assert!(
        !inv_text.lines().any(|l| l.starts_with("binaries")),
        "the lab's inventory sets binaries:\n{inv_text}"
    );
    let inv = lab.dir.join("lab1.toml");
    std::fs::write(&inv, inv_text.replace("\"10GiB\"", "\"64MiB\"")).unwrap();
    // The binaries beside the kingmaker that runs deploy (the tests' own, or KINGMAKER_BIN_DIR).
    deploy_ok(&inv, &["provision"]);

    let replaced = lab.ok(&["replace", "h1"]);
    assert!(replaced.contains("new host key"), "{replaced}");
    let out = deploy(&inv, &["provision"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("$ kingmaker deploy provision (h1 replaced)\n{stderr}");
    assert!(!out.status.success());
    assert!(
        stderr.contains("host key changed") && !stderr.contains("unreachable"),
        "a changed key is not an unreachable host:\n{stderr}"
    );
    // The step the message gives, run as given.
    let step = stderr
        .rsplit("`ssh-keygen -R ")
        .next()
        .and_then(|s| s.split('`').next())
        .map(|s| format!("ssh-keygen -R {s}"))
        .unwrap_or_else(|| panic!("no ssh-keygen -R step in:\n{stderr}"));
    let run = Command::new("sh")
        .arg("-c")
        .arg(&step)
        .current_dir(&lab.dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{step}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The replaced host is empty again: provision installs it; the loop of §6 is gone.
    let out = deploy_ok(&inv, &["provision"]);
    assert!(out.contains("installed kingmaker-worker"), "{out}");

    // A host's sshd killed and booted again, with the same key: nothing to re-pin.
    let pid = std::fs::read_to_string(lab.dir.join("h1/sshd.pid")).unwrap();
    run_quiet(&["kill", pid.trim()]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    deploy_err(&inv, &["provision"], "unreachable over SSH");
    assert!(lab.ok(&["restart", "h1"]).contains("started again"));
    deploy_ok(&inv, &["provision"]);
}
