//! `kingmaker deploy` end to end, against hosts made of network namespaces on this machine.
//! 1. The hosts share this machine's filesystem, so each gets its own install_dir and data_dir in
//!    the test's temporary directory; systemd does not run in the namespaces, so deploy picks its
//!    documented fallback (setsid nohup with a pid file), as on any host without systemd.

use kingmaker_e2e::lab::*;
use kingmaker_e2e::{assert_same_states, assert_same_tables, kingmaker_ok};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The operator is this test, in the root namespace, with the run's own known_hosts; the hosts
/// and the helpers are `kingmaker_e2e::lab`, whose prerequisites are checked first. Only loopback,
/// the bridge and the test's namespaces are ever contacted.
#[test]
fn deploy_builds_survives_losses_resumes_and_fetches() {
    require_prerequisites();
    let lab = Lab::new(3);
    let workers = ["h1", "h2"];

    // --- level-1 cc3p on 1 coordinator + 2 workers -------------------------------------------
    let reference_cc3p_run = lab.dir().join("ref-cc3p");
    let reference_cc3p = reference(&["cc3p", "--level", "1"], &reference_cc3p_run);
    let inv = lab.inventory(
        "cc3p1",
        "game = \"cc3p\"\noptions = [\"--level\", \"1\"]\ncheckpoint_every_waves = 1\ncheckpoint_every_secs = 0\n\
         build_args = [\"--worker-timeout\", \"2\"]\nworker_args = [\"--wave-delay-ms\", \"400\"]",
        &workers,
    );
    // Fail loudly and early, before anything is installed.
    deploy_err(&inv, &["launch"], "token file");
    let out = deploy_ok(&inv, &["provision"]);
    assert!(out.contains("installed kingmaker-worker"), "{out}");
    assert!(
        out.contains("setsid nohup") || out.contains("systemd"),
        "{out}"
    );
    // Idempotent: nothing to copy the second time.
    let again = deploy_ok(&inv, &["provision"]);
    assert!(again.contains("kingmaker-worker up to date"), "{again}");
    early_failures(&lab, &inv);

    let out = deploy_ok(&inv, &["launch"]);
    assert!(
        out.contains("deploy status"),
        "launch prints how to watch:\n{out}"
    );
    // The operator's SSH sessions are all closed by now: the run goes on without them.
    let s = wait_status(&inv, "cc3p's wave 2", 120, |s| {
        wave(s) >= 2 || phase(s) == "complete"
    });
    assert_ne!(
        phase(&s),
        "complete",
        "the cc3p run finished before a worker could be killed (its waves are slowed to 400 ms): \
         the test did not test a lost worker"
    );
    token_is_secret(&lab, "cc3p1");
    workers_listen_privately(&lab, &workers);
    // A second launch is refused (running, or launched before: resume continues it).
    deploy_err(&inv, &["launch"], "already running|was launched before");

    // Lose a worker mid-run: the coordinator stops; resume brings both back.
    assert!(
        kill_service(&lab, "h2", "worker", "cc3p1"),
        "the worker was not running"
    );
    let s = wait_status(
        &inv,
        "the coordinator to notice the lost worker",
        120,
        |s| host_state(s, "h0") != "running" || phase(s) == "complete",
    );
    assert!(
        phase(&s).starts_with("stopped"),
        "the run should have stopped with its worker, not finished: {s:#}"
    );
    assert_eq!(host_state(&s, "h2"), "stopped", "{s:#}");
    deploy_err(&inv, &["fetch"], "not complete");
    let out = deploy_ok(&inv, &["resume"]);
    assert!(out.contains("h2"), "{out}");
    wait_status(&inv, "the cc3p run to complete", 300, |s| {
        phase(s) == "complete"
    });
    let out = deploy_ok(&inv, &["resume"]);
    assert!(out.contains("complete"), "{out}");
    // The README's promise: a distributed run resumes on its workers (`kingmaker resume DIR
    // --workers ...`), not on the coordinator's host.
    let log = std::fs::read_to_string(lab.dir().join("h0/opt/log/coordinator-cc3p1.log"))
        .unwrap_or_default();
    let resumed = log
        .split("kingmaker-service: resuming")
        .nth(1)
        .unwrap_or_else(|| panic!("the coordinator was not resumed; its log:\n{log}"));
    let on = format!(
        "on workers {}:7070,{}:7070",
        lab.host("h1").ip,
        lab.host("h2").ip
    );
    assert!(
        resumed.contains(&on) && !log.contains("built on this host"),
        "the run should resume {on}; coordinator log:\n{log}"
    );
    // The deployed run's tables (values and depths) are the embedded build's.
    assert_same_tables(&lab.dir().join("h0/data/cc3p1/run"), &reference_cc3p_run);
    deploy_ok(&inv, &["fetch"]);
    let release = lab.dir().join("releases/cc3p1");
    assert_eq!(
        release_digests(&release),
        reference_cc3p,
        "the deployed cc3p level 1 differs from the embedded build"
    );
    kingmaker_ok(&["verify", release.to_str().unwrap()]);
    // A second fetch finds the release in place.
    assert!(deploy_ok(&inv, &["fetch"]).contains("already holds this release"));
    deploy_ok(&inv, &["teardown", "--delete-data"]);
    for h in ["h0", "h1", "h2"] {
        assert!(
            !lab.dir().join(h).join("data/cc3p1").exists(),
            "{h}: data left after teardown --delete-data"
        );
        assert!(
            !lab.dir()
                .join(h)
                .join("opt/etc")
                .read_dir()
                .unwrap()
                .any(|_| true),
            "{h}: env file left"
        );
    }

    // --- TOPPEN -------------------------------------------------------------------------------
    let reference_toppen = reference(&["toppen"], &lab.dir().join("ref-toppen"));
    // On the workers, its layers kept there (fetch collects them before it packs); the
    // coordinator is killed mid-run (a crashed box) and resumed.
    let inv = lab.inventory(
        "toppen",
        "game = \"toppen\"\ncheckpoint_every_waves = 1\ncheckpoint_every_secs = 0\n\
         build_args = [\"--worker-timeout\", \"2\", \"--keep-layers-on-workers\"]\nworker_args = [\"--wave-delay-ms\", \"200\"]",
        &workers,
    );
    toppen_run(
        &lab,
        &inv,
        "toppen",
        &reference_toppen,
        &lab.dir().join("ref-toppen"),
    );
}

fn toppen_run(lab: &Lab, inv: &Path, run: &str, reference: &Value, reference_run: &Path) {
    deploy_ok(inv, &["provision"]);
    deploy_ok(inv, &["launch", "--settle-secs", "1"]);
    // Already running everywhere: nothing to do.
    let out = deploy_ok(inv, &["resume"]);
    assert!(
        out.contains("nothing to resume") || out.contains("complete"),
        "{out}"
    );
    let s = wait_status(inv, "TOPPEN's wave 3", 120, |s| {
        wave(s) >= 3 || phase(s) == "complete"
    });
    assert_ne!(
        phase(&s),
        "complete",
        "TOPPEN finished before its coordinator could be killed (its waves are slowed to 200 ms): \
         the test did not test a crashed coordinator"
    );
    assert!(
        kill_service(lab, "h0", "coordinator", run),
        "the coordinator was not running"
    );
    let s = wait_status(inv, "the coordinator to be down", 30, |s| {
        host_state(s, "h0") != "running"
    });
    assert!(
        phase(&s).starts_with("stopped"),
        "the killed run should be stopped, not finished: {s:#}"
    );
    // Its workers keep running; resume restarts only the coordinator.
    assert_eq!(host_state(&s, "h1"), "running", "{s:#}");
    deploy_ok(inv, &["resume"]);
    wait_status(inv, "the TOPPEN run to complete", 300, |s| {
        phase(s) == "complete"
    });
    // Its layers stayed on the workers (--keep-layers-on-workers): fetch must collect them (in
    // parts, which pack reads).
    let layers = lab.dir().join("h0/data").join(run).join("run/layers");
    let files_in_layers = || -> Vec<String> {
        std::fs::read_dir(&layers)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    let names = files_in_layers();
    assert!(
        names.iter().any(|n| n.ends_with(".kept.json"))
            && !names.iter().any(|n| n.ends_with(".kmt")),
        "the coordinator gathered layers it should have left on the workers: {names:?}"
    );
    deploy_ok(inv, &["fetch"]);
    assert_eq!(
        &release_digests(&lab.dir().join("releases").join(run)),
        reference,
        "the deployed TOPPEN differs"
    );
    let names = files_in_layers();
    assert!(
        names.iter().any(|n| n.contains(".part-"))
            && !names
                .iter()
                .any(|n| n.ends_with(".kmt") && !n.contains(".part-")),
        "fetch should have copied the parts and left them in parts: {names:?}"
    );
    // Values and depths of every state, after the crash and the resume (the parts fetch
    // collected, read together).
    assert_same_states(
        &lab.dir().join("h0/data").join(run).join("run"),
        reference_run,
    );
    deploy_ok(inv, &["teardown"]);
    let s = status(inv);
    assert!(
        s["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["health"]["state"] == "stopped"),
        "{s:#}"
    );
    assert!(
        lab.dir()
            .join("h0/data")
            .join(run)
            .join("run/summary.json")
            .exists(),
        "teardown without --delete-data keeps the data"
    );
}

/// Unreachable hosts, missing binaries, wrong tokens, a full disk and a host without systemd are
/// refused with the reason, before anything starts.
fn early_failures(lab: &Lab, inv: &Path) {
    let text = std::fs::read_to_string(inv).unwrap();
    let variant = |name: &str, from: &str, to: &str| {
        assert!(text.contains(from), "{from:?} not in the inventory");
        let path = lab.dir().join(format!("{name}.toml"));
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        path
    };
    // A host where nothing answers SSH: a second address of the test's own namespace h2, on
    // which its sshd does not listen (so no packet goes to a host the test did not make).
    let h2 = lab.host("h2");
    let spare = format!("{}.99", lab.subnet);
    sh(&[
        "ip",
        "-n",
        &h2.ns,
        "addr",
        "add",
        &format!("{spare}/24"),
        "dev",
        "eth0",
    ]);
    let dead = variant(
        "dead",
        &format!("address = \"{}\"", h2.ip),
        &format!("address = \"{spare}\""),
    );
    deploy_err(&dead, &["status"], "unreachable over SSH");
    deploy_err(&dead, &["launch"], "unreachable over SSH");
    sh(&[
        "ip",
        "-n",
        &h2.ns,
        "addr",
        "del",
        &format!("{spare}/24"),
        "dev",
        "eth0",
    ]);
    // No room.
    let full = variant(
        "full",
        "min_free_disk = \"64MiB\"",
        "min_free_disk = \"1000TiB\"",
    );
    deploy_err(&full, &["launch"], "min_free_disk");
    // A job the hosts cannot hold (7×7 / 6's cells are 17 TiB a worker): refused by the plan's
    // check with what each host lacks, before provision changes any host.
    let huge = variant(
        "huge",
        "name = \"cc3p1\"\ngame = \"cc3p\"\noptions = [\"--level\", \"1\"]",
        "name = \"huge\"\ngame = \"cc2p\"\noptions = [\"--board\", \"7x7\", \"--pieces\", \"6\"]",
    );
    deploy_err(
        &huge,
        &["provision"],
        "these hosts cannot hold the run huge",
    );
    deploy_err(&huge, &["provision"], "host h1: disk: needs up to");
    for h in ["h0", "h1", "h2"] {
        let env = lab.dir().join(format!("{h}/opt/etc/worker-huge.env"));
        assert!(!env.exists(), "provision changed {h}: {}", env.display());
    }
    // systemd asked for on a host where it does not run.
    if !Path::new("/run/systemd/system").exists() {
        let sd = variant("sd", "supervisor = \"auto\"", "supervisor = \"systemd\"");
        deploy_err(&sd, &["provision"], "systemd is not running");
    }
    // A worker whose binary went missing.
    let worker_bin = lab.dir().join("h1/opt/bin/kingmaker-worker");
    let saved = lab.dir().join("saved-worker");
    std::fs::rename(&worker_bin, &saved).unwrap();
    deploy_err(inv, &["launch"], "kingmaker-worker is missing");
    std::fs::rename(&saved, &worker_bin).unwrap();
    // A worker with another run's token.
    let env = lab.dir().join("h2/opt/etc/worker-cc3p1.env");
    let original = std::fs::read_to_string(&env).unwrap();
    let token_line = original
        .lines()
        .find(|l| l.starts_with("KINGMAKER_TOKEN="))
        .unwrap();
    std::fs::write(
        &env,
        original.replace(
            token_line,
            "KINGMAKER_TOKEN=\"0123456789abcdef0123456789abcdef\"",
        ),
    )
    .unwrap();
    deploy_err(inv, &["launch"], "different token");
    std::fs::write(&env, original).unwrap();
    // Nothing was started by any of these.
    let s = status(inv);
    assert!(
        s["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["health"]["state"] == "stopped"),
        "{s:#}"
    );
}

/// The systemd units as provision installs them pass `systemd-analyze verify`.
#[test]
fn systemd_units_verify() {
    let analyze = which("systemd-analyze").expect(
        "this test needs systemd-analyze: install the Debian package systemd (scripts/setup.sh --tests does)",
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("deploy");
    let tmp = tempfile::tempdir().unwrap();
    // As provision does: the units' /opt/kingmaker becomes the host's install_dir, which holds the
    // service script and the environment files the units name.
    let install = tmp.path().join("opt");
    std::fs::create_dir_all(install.join("bin")).unwrap();
    std::fs::create_dir_all(install.join("etc")).unwrap();
    std::fs::copy(
        root.join("kingmaker-service"),
        install.join("bin/kingmaker-service"),
    )
    .unwrap();
    std::fs::write(install.join("etc/coordinator-run1.env"), "").unwrap();
    std::fs::write(install.join("etc/worker-run1.env"), "").unwrap();
    let mut units = Vec::new();
    for (file, instance) in [
        (
            "kingmaker-coordinator@.service",
            "kingmaker-coordinator@run1.service",
        ),
        ("kingmaker-worker@.service", "kingmaker-worker@run1.service"),
    ] {
        let text = std::fs::read_to_string(root.join("systemd").join(file)).unwrap();
        assert!(
            text.contains("EnvironmentFile=/opt/kingmaker/etc/"),
            "{file} takes its token from an EnvironmentFile"
        );
        assert!(!text.contains("TOKEN"), "{file} names no token");
        let text = text.replace("/opt/kingmaker", install.to_str().unwrap());
        std::fs::write(tmp.path().join(file), &text).unwrap();
        std::fs::write(tmp.path().join(instance), &text).unwrap();
        units.push(tmp.path().join(instance));
    }
    let out = Command::new(analyze)
        .arg("verify")
        .args(&units)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "systemd-analyze verify: {}\n{stderr}",
        out.status
    );
}
