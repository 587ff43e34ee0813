//! A real SLURM cluster on this machine: munged and slurmctld in the root namespace (on the lab's
//! bridge), one slurmd in each lab host (its own network namespace and hostname). Needs root and
//! Debian's `slurm-wlm` and `munge` (scripts/setup.sh --tests installs them): without them the
//! test fails naming what is missing.

use crate::lab::{run_quiet, which, Lab};
use crate::{bin, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const DAEMONS: [&str; 4] = ["munged", "slurmctld", "slurmd", "nsenter"];
const CLIENTS: [&str; 5] = ["sbatch", "srun", "scontrol", "scancel", "squeue"];

/// Fail the test, naming the missing prerequisite, when this machine cannot run a SLURM cluster.
pub fn require_slurm() {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    assert!(
        root,
        "the SLURM test needs root (network namespaces, munged, slurmd): run the tests as root, as CI does"
    );
    for tool in DAEMONS.iter().chain(&CLIENTS).chain(&["ip"]) {
        assert!(
            which(tool).is_some(),
            "the SLURM test needs `{tool}`: install slurm-wlm and munge (scripts/setup.sh --tests does)"
        );
    }
}

/// The cluster: its nodes are the lab's hosts (node name = host name, NodeAddr = its address).
/// Dropping it stops the daemons; the lab's drop kills whatever the jobs left in the namespaces.
pub struct Cluster {
    pub lab: Lab,
    pub conf: PathBuf,
    daemons: Vec<Child>,
    /// Each node's slurmd, by host index.
    slurmd: Vec<Option<Child>>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in self
            .slurmd
            .iter_mut()
            .flatten()
            .chain(self.daemons.iter_mut())
        {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port(ip: &str) -> u16 {
    std::net::TcpListener::bind((ip, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Cluster {
    /// `n` nodes h0..h{n-1}, one partition `main` of all of them; `srun hostname` answers.
    pub fn start(n: usize) -> Cluster {
        let lab = Lab::new(n);
        let dir = lab.dir().join("slurm");
        for d in ["state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let key = dir.join("munge.key");
        let mut random = vec![0u8; 1024];
        {
            use std::io::Read;
            std::fs::File::open("/dev/urandom")
                .unwrap()
                .read_exact(&mut random)
                .unwrap();
        }
        std::fs::write(&key, &random).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
        }
        let socket = dir.join("munge.socket");
        let mut daemons = Vec::new();
        daemons.push(
            Command::new(which("munged").unwrap())
                .arg("--foreground")
                .arg("--force")
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--pid-file={}", dir.join("munged.pid").display()))
                .arg(format!(
                    "--log-file={}",
                    dir.join("log/munged.log").display()
                ))
                .arg(format!("--seed-file={}", dir.join("munged.seed").display()))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("starting munged"),
        );
        wait_until("munged's socket", 20, || socket.exists());
        let controller = format!("{}.1", lab.subnet);
        let ctld_port = free_port(&controller);
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim()
            .to_string();
        let d = dir.display();
        let mut conf = format!(
            "# A test cluster of kingmaker's e2e tests.\nClusterName=kmtest\n\
             SlurmctldHost={hostname}({controller})\nSlurmctldPort={ctld_port}\nSlurmdPort=6818\n\
             AuthType=auth/munge\nCredType=cred/munge\n\
             AuthInfo=socket={socket},cred_expire=10\n\
             SlurmUser=root\nSlurmdUser=root\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
             SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nMpiDefault=none\n\
             JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n\
             StateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool/%n\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd-%n.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\nSlurmdLogFile={d}/log/slurmd-%n.log\n\
             ReturnToService=2\nSlurmdTimeout=5\nInactiveLimit=0\nMinJobAge=3600\nKillWait=30\n\
             MessageTimeout=5\n",
            socket = socket.display(),
        );
        for h in &lab.hosts {
            conf.push_str(&format!(
                "NodeName={} NodeAddr={} State=UNKNOWN\n",
                h.name, h.ip
            ));
            std::fs::create_dir_all(dir.join("spool").join(&h.name)).unwrap();
        }
        let names: Vec<String> = lab.hosts.iter().map(|h| h.name.clone()).collect();
        conf.push_str(&format!(
            "PartitionName=main Nodes={} Default=YES MaxTime=INFINITE State=UP\n",
            names.join(",")
        ));
        let conf_path = dir.join("slurm.conf");
        std::fs::write(&conf_path, conf).unwrap();
        daemons.push(
            Command::new(which("slurmctld").unwrap())
                .args(["-D", "-i", "-f"])
                .arg(&conf_path)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("starting slurmctld"),
        );
        let mut cluster = Cluster {
            lab,
            conf: conf_path,
            daemons,
            slurmd: Vec::new(),
        };
        for i in 0..n {
            cluster.slurmd.push(None);
            cluster.start_slurmd(i);
        }
        cluster.wait_nodes_idle(60);
        let out = cluster.slurm("srun", &["--nodes", &n.to_string(), "hostname"]);
        assert!(
            out.status.success(),
            "srun hostname failed on the test cluster: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            cluster.logs()
        );
        let mut seen: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(String::from)
            .collect();
        seen.sort();
        assert_eq!(seen, names, "each node answers with its own hostname");
        cluster
    }

    /// slurmd of host `i`, in the host's network namespace, with the host's name as hostname and
    /// the cluster's names in its /etc/hosts (as a cluster's DNS would have them: the namespaces
    /// reach no DNS server).
    pub fn start_slurmd(&mut self, i: usize) {
        let hosts = self.lab.dir().join("slurm/hosts");
        let mut text = String::from("127.0.0.1 localhost\n");
        for h in &self.lab.hosts {
            text.push_str(&format!("{} {}\n", h.ip, h.name));
        }
        std::fs::write(&hosts, text).unwrap();
        let h = &self.lab.hosts[i];
        let child = Command::new(which("nsenter").unwrap())
            .arg(format!("--net=/run/netns/{}", h.ns))
            .args(["unshare", "--uts", "--mount", "sh", "-c"])
            .arg(format!(
                "hostname {name} && mount --bind {hosts} /etc/hosts && exec slurmd -D -f {conf} -N {name}",
                name = h.name,
                hosts = hosts.display(),
                conf = self.conf.display()
            ))
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting slurmd");
        self.slurmd[i] = Some(child);
    }

    /// A node's crash: kill -9 every process of its namespace (slurmd, the job's steps, the
    /// worker), as a power loss would.
    pub fn crash_node(&mut self, i: usize) {
        let ns = self.lab.hosts[i].ns.clone();
        let out = Command::new("ip")
            .args(["netns", "pids", &ns])
            .output()
            .unwrap();
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            run_quiet(&["kill", "-9", pid]);
        }
        if let Some(mut c) = self.slurmd[i].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn wait_nodes_idle(&self, secs: u64) {
        wait_until("every node idle", secs, || {
            let out = self.slurm("sinfo", &["--noheader", "--Node", "--format=%N %t"]);
            let text = String::from_utf8_lossy(&out.stdout);
            !text.trim().is_empty() && text.lines().all(|l| l.ends_with(" idle"))
        });
    }

    /// A SLURM client command against this cluster.
    pub fn slurm(&self, program: &str, args: &[&str]) -> Output {
        Command::new(program)
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e}"))
    }

    /// `kingmaker slurm ARGS... --inventory INV`, with this cluster's SLURM_CONF.
    pub fn kingmaker_slurm(&self, inv: &Path, args: &[&str]) -> Output {
        Command::new(bin("kingmaker"))
            .arg("slurm")
            .args(args)
            .arg("--inventory")
            .arg(inv)
            .env("SLURM_CONF", &self.conf)
            .output()
            .expect("running kingmaker slurm")
    }

    #[track_caller]
    pub fn kingmaker_slurm_ok(&self, inv: &Path, args: &[&str]) -> String {
        let out = self.kingmaker_slurm(inv, args);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kingmaker slurm {args:?} failed: {}\n{stdout}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
        stdout
    }

    /// `kingmaker slurm status --json`.
    pub fn status(&self, inv: &Path) -> Value {
        serde_json::from_str(&self.kingmaker_slurm_ok(inv, &["status", "--json"]))
            .expect("slurm status JSON")
    }

    /// An inventory for run `name` on all the nodes: `[run]` with `run` added, `[slurm]` with
    /// `slurm` added; the job's directory is DIR/NAME.
    pub fn inventory(&self, name: &str, run: &str, slurm: &str) -> PathBuf {
        let bins = bin("kingmaker").parent().unwrap().to_path_buf();
        let text = format!(
            "[run]\nname = \"{name}\"\ntoken_file = \"unused\"\n{run}\n\n[slurm]\ndir = \"{dir}/{name}\"\n\
             nodes = {n}\nbinaries = \"{bins}\"\nthreads = 1\n{slurm}\n",
            dir = self.lab.dir().display(),
            n = self.lab.hosts.len(),
            bins = bins.display(),
        );
        let path = self.lab.dir().join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The daemons' logs, for a failure's message.
    pub fn logs(&self) -> String {
        let mut s = String::new();
        let dir = self.lab.dir().join("slurm/log");
        for f in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(15).collect();
            s.push_str(&format!("--- {}\n", f.path().display()));
            for l in tail.iter().rev() {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }
}

/// Poll `pred` every 200 ms; fail the test after `secs`.
#[track_caller]
pub fn wait_until(what: &str, secs: u64, mut pred: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !pred() {
        assert!(
            Instant::now() < deadline,
            "timed out after {secs}s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The layer digests of a finished run directory (from its summary.json).
pub fn run_digests(run: &Path) -> Value {
    let s = read_json(&run.join("summary.json"));
    s["layers"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v["digest"].clone()))
        .collect::<serde_json::Map<_, _>>()
        .into()
}
