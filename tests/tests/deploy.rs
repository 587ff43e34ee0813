//! `kingmaker deploy` end to end, against hosts made on this machine: each host is a network
//! namespace with its own address on a private test subnet (a veth pair to a bridge in the root
//! namespace) and its own sshd (config, host key and authorized_keys generated here). The operator
//! is this test, in the root namespace, with the run's own known_hosts. Only loopback, the bridge
//! and the test's namespaces are ever contacted.
//!
//! The hosts share this machine's filesystem, so each gets its own install_dir and data_dir in
//! the test's temporary directory. systemd does not run inside the namespaces: deploy picks its
//! documented supervisor (setsid nohup with a pid file), as it does on any host without systemd.
//!
//! Needs root, `ip` (iproute2), `sshd` (openssh-server) and `systemd-analyze` (systemd):
//! scripts/setup.sh --tests installs them. Without them the tests fail and name what is missing:
//! a test that cannot run never passes.

use kingmaker_e2e::{assert_same_tables, bin, kingmaker_ok, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// Fail the test, naming the missing prerequisite, when this machine cannot run the namespace
/// tests.
fn require_prerequisites() {
    // SAFETY: geteuid has no preconditions.
    assert!(
        unsafe { libc::geteuid() } == 0,
        "the deploy test needs root (network namespaces): run the tests as root, as CI does"
    );
    assert!(
        Path::new(SSHD).exists(),
        "the deploy test needs {SSHD}: install openssh-server (scripts/setup.sh --tests does)"
    );
    for tool in ["ip", "ssh", "scp", "ssh-keygen"] {
        assert!(
            which(tool).is_some(),
            "the deploy test needs `{tool}`: install iproute2 / openssh-client (scripts/setup.sh --tests does)"
        );
    }
    let probe = format!("kmprobe{}", std::process::id());
    assert!(
        run_quiet(&["ip", "netns", "add", &probe]),
        "the deploy test needs `ip netns add`, which failed: run it as root with CAP_SYS_ADMIN \
         (a container needs --privileged or --cap-add SYS_ADMIN)"
    );
    run_quiet(&["ip", "netns", "del", &probe]);
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.exists())
}

fn run_quiet(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[track_caller]
fn sh(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The test's hosts: namespaces, veths, a bridge and one sshd per host. Dropping it removes all
/// of them and kills every process left in the namespaces, even when the test failed.
struct Lab {
    tmp: tempfile::TempDir,
    subnet: String,
    bridge: String,
    hosts: Vec<LabHost>,
}

struct LabHost {
    name: String,
    ns: String,
    veth: String,
    ip: String,
    sshd: Option<Child>,
}

impl Drop for Lab {
    fn drop(&mut self) {
        for h in &mut self.hosts {
            if let Some(mut c) = h.sshd.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
            // Whatever deploy started in the namespace (workers, coordinators) goes too.
            if let Ok(out) = Command::new("ip").args(["netns", "pids", &h.ns]).output() {
                for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                    run_quiet(&["kill", "-9", pid]);
                }
            }
            run_quiet(&["ip", "netns", "del", &h.ns]);
            run_quiet(&["ip", "link", "del", &h.veth]);
        }
        run_quiet(&["ip", "link", "del", &self.bridge]);
    }
}

impl Lab {
    /// `n` hosts h0..h{n-1} at SUBNET.10, .11, ... with sshd listening on port 22 of each.
    fn new(n: usize) -> Lab {
        let pid = std::process::id();
        let tag = pid % 1_000_000;
        let taken = String::from_utf8_lossy(
            &Command::new("ip")
                .args(["-o", "addr"])
                .output()
                .unwrap()
                .stdout,
        )
        .into_owned();
        let routes =
            String::from_utf8_lossy(&Command::new("ip").args(["route"]).output().unwrap().stdout)
                .into_owned();
        let third = (0..250u32)
            .map(|k| (pid + k) % 250 + 1)
            .find(|x| {
                let net = format!("10.250.{x}.");
                !taken.contains(&net) && !routes.contains(&net)
            })
            .expect("a free /24 in 10.250.0.0/16");
        let subnet = format!("10.250.{third}");
        let mut lab = Lab {
            tmp: tempfile::tempdir().unwrap(),
            subnet: subnet.clone(),
            bridge: format!("kmb{tag}"),
            hosts: Vec::new(),
        };
        sh(&["ip", "link", "add", &lab.bridge, "type", "bridge"]);
        // Bridged traffic should not meet the host's firewall (where br_netfilter is loaded).
        run_quiet(&[
            "ip",
            "link",
            "set",
            &lab.bridge,
            "type",
            "bridge",
            "nf_call_iptables",
            "0",
        ]);
        sh(&[
            "ip",
            "addr",
            "add",
            &format!("{subnet}.1/24"),
            "dev",
            &lab.bridge,
        ]);
        sh(&["ip", "link", "set", &lab.bridge, "up"]);
        let dir = lab.tmp.path().to_path_buf();
        sh(&[
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            dir.join("id_ed25519").to_str().unwrap(),
        ]);
        std::fs::copy(dir.join("id_ed25519.pub"), dir.join("authorized_keys")).unwrap();
        std::fs::create_dir_all("/run/sshd").unwrap();
        let mut known = String::new();
        for i in 0..n {
            let name = format!("h{i}");
            let ns = format!("kmd{tag}-{i}");
            let veth = format!("kmv{tag}h{i}");
            let peer = format!("kmp{tag}h{i}");
            let ip = format!("{subnet}.{}", 10 + i);
            lab.hosts.push(LabHost {
                name: name.clone(),
                ns: ns.clone(),
                veth: veth.clone(),
                ip: ip.clone(),
                sshd: None,
            });
            sh(&["ip", "netns", "add", &ns]);
            sh(&[
                "ip", "link", "add", &veth, "type", "veth", "peer", "name", &peer,
            ]);
            sh(&["ip", "link", "set", &veth, "master", &lab.bridge]);
            sh(&["ip", "link", "set", &veth, "up"]);
            sh(&["ip", "link", "set", &peer, "netns", &ns]);
            sh(&["ip", "-n", &ns, "link", "set", &peer, "name", "eth0"]);
            sh(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{ip}/24"),
                "dev",
                "eth0",
            ]);
            sh(&["ip", "-n", &ns, "link", "set", "eth0", "up"]);
            sh(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
            let hdir = dir.join(&name);
            std::fs::create_dir_all(&hdir).unwrap();
            let key = hdir.join("ssh_host_ed25519_key");
            sh(&[
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-f",
                key.to_str().unwrap(),
            ]);
            let pubkey = std::fs::read_to_string(key.with_extension("pub")).unwrap();
            let mut words = pubkey.split_whitespace();
            known.push_str(&format!(
                "{ip} {} {}\n",
                words.next().unwrap(),
                words.next().unwrap()
            ));
            let config = hdir.join("sshd_config");
            std::fs::write(
                &config,
                format!(
                    "ListenAddress {ip}\nPort 22\nHostKey {}\nPidFile {}\nAuthorizedKeysFile {}\n\
                     PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                     UsePAM no\nStrictModes no\nSubsystem sftp /usr/lib/openssh/sftp-server\nLogLevel ERROR\n",
                    key.display(),
                    hdir.join("sshd.pid").display(),
                    dir.join("authorized_keys").display()
                ),
            )
            .unwrap();
            let mut cmd = Command::new("ip");
            cmd.args([
                "netns",
                "exec",
                &ns,
                SSHD,
                "-D",
                "-e",
                "-f",
                config.to_str().unwrap(),
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
            // Make sshd the reaper of what its sessions leave running (deploy's services under
            // setsid nohup), as init is on a real host: this machine's PID 1 may not reap orphans,
            // and a zombie would look alive. The attribute survives the execs of ip and sshd.
            // SAFETY: prctl is async-signal-safe and touches no memory of the parent.
            unsafe {
                use std::os::unix::process::CommandExt;
                cmd.pre_exec(|| {
                    if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            let child = cmd.spawn().expect("starting sshd");
            lab.hosts.last_mut().unwrap().sshd = Some(child);
        }
        std::fs::write(dir.join("known_hosts"), known).unwrap();
        // Wait until every sshd answers.
        for h in &lab.hosts {
            let deadline = Instant::now() + Duration::from_secs(20);
            while std::net::TcpStream::connect_timeout(
                &format!("{}:22", h.ip).parse().unwrap(),
                Duration::from_secs(1),
            )
            .is_err()
            {
                assert!(
                    Instant::now() < deadline,
                    "sshd of {} does not answer",
                    h.name
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        lab
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    fn host(&self, name: &str) -> &LabHost {
        self.hosts.iter().find(|h| h.name == name).unwrap()
    }

    /// An inventory for run `name`: h0 the coordinator, the other hosts listed as workers.
    fn inventory(&self, name: &str, run: &str, workers: &[&str]) -> PathBuf {
        let bins = bin("kingmaker").parent().unwrap().to_path_buf();
        let mut text = format!(
            "[run]\nname = \"{name}\"\n{run}\ntoken_file = \"secrets/{name}.token\"\nworker_port = 7070\n\
             binaries = \"{}\"\nmin_free_disk = \"64MiB\"\nrelease_dir = \"releases/{name}\"\n\n\
             [ssh]\nknown_hosts = \"known_hosts\"\nstrict_host_keys = true\nconnect_timeout_secs = 5\n",
            bins.display()
        );
        let hosts =
            std::iter::once(("h0", "coordinator")).chain(workers.iter().map(|w| (*w, "worker")));
        for (h, role) in hosts {
            let lh = self.host(h);
            let base = self.dir().join(h);
            text.push_str(&format!(
                "\n[[host]]\nname = \"{h}\"\nrole = \"{role}\"\naddress = \"{ip}\"\nuser = \"root\"\n\
                 identity_file = \"id_ed25519\"\ninstall_dir = \"{base}/opt\"\ndata_dir = \"{base}/data\"\n\
                 private_address = \"{ip}\"\nmemory_budget = \"4GiB\"\nthreads = 1\n\
                 supervisor = \"{sup}\"\n",
                ip = lh.ip,
                base = base.display(),
                // auto finds no systemd here; say nohup outright where systemd runs (never install
                // units on the machine that runs the tests).
                sup = if Path::new("/run/systemd/system").exists() { "nohup" } else { "auto" },
            ));
        }
        let path = self.dir().join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        path
    }
}

fn deploy(inv: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin("kingmaker"));
    cmd.arg("deploy").args(args).arg("--inventory").arg(inv);
    cmd.output().expect("running kingmaker deploy")
}

#[track_caller]
fn deploy_ok(inv: &Path, args: &[&str]) -> String {
    let out = deploy(inv, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if args != ["status", "--json"] {
        eprintln!("$ kingmaker deploy {}\n{stdout}", args.join(" "));
    }
    assert!(
        out.status.success(),
        "kingmaker deploy {args:?} failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[track_caller]
fn deploy_err(inv: &Path, args: &[&str], expect: &str) {
    let out = deploy(inv, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "kingmaker deploy {args:?} should fail"
    );
    assert!(
        expect.split('|').any(|e| stderr.contains(e)),
        "kingmaker deploy {args:?}: expected {expect:?} in:\n{stderr}"
    );
}

fn status(inv: &Path) -> Value {
    serde_json::from_str(&deploy_ok(inv, &["status", "--json"])).expect("status JSON")
}

fn host_state(s: &Value, host: &str) -> String {
    let h = s["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == host)
        .unwrap();
    h["health"]["state"]
        .as_str()
        .unwrap_or("unreachable")
        .to_string()
}

/// Poll `deploy status --json` until `pred` holds.
fn wait_status(inv: &Path, what: &str, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let s = status(inv);
        if pred(&s) {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; last status:\n{s:#}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// The wave the build is in (from progress.json, rewritten every wave).
fn wave(s: &Value) -> u64 {
    s["status"]["progress"]["wave"].as_u64().unwrap_or(0)
}

fn phase(s: &Value) -> &str {
    s["status"]["phase"].as_str().unwrap_or("")
}

/// Layer digests of an embedded build on this machine.
fn reference(args: &[&str], dir: &Path) -> Value {
    let out = dir.to_str().unwrap();
    let mut all = vec!["build"];
    all.extend_from_slice(args);
    all.extend(["--out", out]);
    kingmaker_ok(&all);
    let s = read_json(&dir.join("summary.json"));
    let layers = s["layers"].as_object().unwrap();
    layers
        .iter()
        .map(|(k, v)| (k.clone(), v["digest"].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn release_digests(release: &Path) -> Value {
    let m = read_json(&release.join("manifest.json"));
    m["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["name"].as_str().unwrap().to_string(), l["digest"].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

/// Kill -9 the process behind a pid file written by deploy's nohup supervisor; false if it had
/// already ended.
fn kill_service(lab: &Lab, host: &str, role: &str, run: &str) -> bool {
    let pidfile = lab
        .dir()
        .join(host)
        .join("opt/run")
        .join(format!("{role}-{run}.pid"));
    let pid =
        std::fs::read_to_string(&pidfile).unwrap_or_else(|e| panic!("{}: {e}", pidfile.display()));
    run_quiet(&["kill", "-9", pid.trim()])
}

/// No process's command line, and no log file, shows the token.
fn token_is_secret(lab: &Lab, run: &str) {
    let token = std::fs::read_to_string(lab.dir().join(format!("secrets/{run}.token"))).unwrap();
    let token = token.trim();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            assert!(
                !String::from_utf8_lossy(&cmdline).contains(token),
                "the token shows in the command line of {:?}",
                entry.path()
            );
        }
    }
    for h in &lab.hosts {
        let logs = lab.dir().join(&h.name).join("opt/log");
        for f in std::fs::read_dir(&logs).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            assert!(
                !text.contains(token),
                "the token shows in {}",
                f.path().display()
            );
        }
        let env = lab.dir().join(&h.name).join("opt/etc");
        for f in std::fs::read_dir(&env).into_iter().flatten().flatten() {
            use std::os::unix::fs::PermissionsExt;
            let mode = f.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{} has mode {mode:o}", f.path().display());
        }
    }
}

/// The workers listen on their private address only (not 0.0.0.0, not loopback).
fn workers_listen_privately(lab: &Lab, workers: &[&str]) {
    for w in workers {
        let h = lab.host(w);
        let out = Command::new("ip")
            .args(["netns", "exec", &h.ns, "ss", "-Hltn", "sport", "=", ":7070"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let locals: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split_whitespace().nth(3))
            .collect();
        assert_eq!(
            locals,
            vec![format!("{}:7070", h.ip)],
            "worker {w} listens on {locals:?}"
        );
    }
}

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
    // On the workers; the coordinator is killed mid-run (a crashed box) and resumed.
    let inv = lab.inventory(
        "toppen",
        "game = \"toppen\"\ncheckpoint_every_waves = 1\ncheckpoint_every_secs = 0\n\
         build_args = [\"--worker-timeout\", \"2\"]\nworker_args = [\"--wave-delay-ms\", \"200\"]",
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
    deploy_ok(inv, &["fetch"]);
    assert_eq!(
        &release_digests(&lab.dir().join("releases").join(run)),
        reference,
        "the deployed TOPPEN differs"
    );
    // Values and depths of every state, after the crash and the resume.
    assert_same_tables(
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
    std::fs::write(install.join("etc/coordinator.env"), "").unwrap();
    std::fs::write(install.join("etc/worker-run1.env"), "").unwrap();
    let mut units = Vec::new();
    for (file, instance) in [
        (
            "kingmaker-coordinator.service",
            "kingmaker-coordinator.service",
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
