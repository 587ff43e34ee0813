//! Hosts made of network namespaces on this machine, and helpers that drive `kingmaker deploy`.
//! 1. Needs root, `ip`, `sshd` and `systemd-analyze` (scripts/setup.sh --tests installs them);
//!    without them the tests fail naming what is missing: a test that cannot run never passes.

use crate::{bin, kingmaker_ok, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const SSHD: &str = "/usr/sbin/sshd";

/// Fail the test, naming the missing prerequisite, when this machine cannot run the namespace
/// tests.
pub fn require_prerequisites() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
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
    // One name per call: the tests of a file run at once, in one process.
    static PROBES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let probe = format!("kmprobe{}-{n}", std::process::id());
    assert!(
        run_quiet(&["ip", "netns", "add", &probe]),
        "the deploy test needs `ip netns add`, which failed: run it as root with CAP_SYS_ADMIN \
         (a container needs --privileged or --cap-add SYS_ADMIN)"
    );
    run_quiet(&["ip", "netns", "del", &probe]);
}

pub fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .chain(["/usr/sbin", "/sbin"])
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.exists())
}

pub fn run_quiet(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[track_caller]
pub fn sh(args: &[&str]) {
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

/// The test's hosts: each a network namespace with its own address on a private test subnet (a
/// veth pair to a bridge in the root namespace) and its own sshd (config, host key and
/// authorized_keys generated here). Only loopback, the bridge and the namespaces are contacted.
/// Dropping it removes all of them and kills every process left in the namespaces, even when the
/// test failed.
pub struct Lab {
    pub tmp: tempfile::TempDir,
    pub subnet: String,
    pub bridge: String,
    pub hosts: Vec<LabHost>,
}

pub struct LabHost {
    pub name: String,
    pub ns: String,
    pub veth: String,
    pub ip: String,
    pub sshd: Option<Child>,
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
    pub fn new(n: usize) -> Lab {
        // The tests of a file run at once in one process: each lab gets names of its own (a
        // letter after the pid), and they are made one at a time, so that the next one finds
        // the subnet this one took.
        static MAKING: std::sync::Mutex<u8> = std::sync::Mutex::new(0);
        let mut made = MAKING.lock().unwrap_or_else(|e| e.into_inner());
        let letter = char::from(b'a' + *made % 26);
        *made = made.wrapping_add(1);
        let pid = std::process::id();
        let tag = format!("{}{letter}", pid % 1_000_000);
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

    pub fn dir(&self) -> &Path {
        self.tmp.path()
    }

    pub fn host(&self, name: &str) -> &LabHost {
        self.hosts.iter().find(|h| h.name == name).unwrap()
    }

    /// An inventory for run `name`: h0 the coordinator, the other hosts listed as workers.
    pub fn inventory(&self, name: &str, run: &str, workers: &[&str]) -> PathBuf {
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

pub fn deploy(inv: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin("kingmaker"));
    cmd.arg("deploy").args(args).arg("--inventory").arg(inv);
    cmd.output().expect("running kingmaker deploy")
}

#[track_caller]
pub fn deploy_ok(inv: &Path, args: &[&str]) -> String {
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
pub fn deploy_err(inv: &Path, args: &[&str], expect: &str) {
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

/// `deploy status --json`, whatever the run's standing: it exits 0 complete, 3 running, 4
/// stopped (docs/cli.md); an unreachable host (5) or an error fails the test.
pub fn status(inv: &Path) -> Value {
    let out = deploy(inv, &["status", "--json"]);
    assert!(
        matches!(out.status.code(), Some(0 | 3 | 4)),
        "kingmaker deploy status --json failed: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("status JSON")
}

pub fn host_state(s: &Value, host: &str) -> String {
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
pub fn wait_status(inv: &Path, what: &str, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
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
pub fn wave(s: &Value) -> u64 {
    s["status"]["progress"]["wave"].as_u64().unwrap_or(0)
}

pub fn phase(s: &Value) -> &str {
    s["status"]["phase"].as_str().unwrap_or("")
}

/// Layer digests of an embedded build on this machine.
pub fn reference(args: &[&str], dir: &Path) -> Value {
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

pub fn release_digests(release: &Path) -> Value {
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
pub fn kill_service(lab: &Lab, host: &str, role: &str, run: &str) -> bool {
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
pub fn token_is_secret(lab: &Lab, run: &str) {
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
pub fn workers_listen_privately(lab: &Lab, workers: &[&str]) {
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
