//! The inventory: which servers, in which role, and what to build (`deploy/inventory.example.toml`
//! documents every field).

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// The whole inventory file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inventory {
    pub run: RunSpec,
    #[serde(default)]
    pub ssh: SshSettings,
    #[serde(rename = "host", default)]
    pub hosts: Vec<Host>,
    /// The directory of the inventory file: relative local paths are relative to it.
    #[serde(skip)]
    pub base: PathBuf,
}

/// What to build and how.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Names the services, the remote directories and the release (letters, digits, `-`, `_`).
    pub name: String,
    /// The game, as `kingmaker build GAME` takes it.
    pub game: String,
    /// The game's options, e.g. `["--level", "1"]`.
    #[serde(default)]
    pub options: Vec<String>,
    /// The run's shared secret on the operator's machine (created with mode 0600 if missing).
    pub token_file: PathBuf,
    /// The port every worker listens on, on its private address.
    #[serde(default = "default_worker_port")]
    pub worker_port: u16,
    #[serde(default = "default_checkpoint_secs")]
    pub checkpoint_every_secs: u64,
    #[serde(default)]
    pub checkpoint_every_waves: u32,
    /// More arguments for `kingmaker build` (and for `kingmaker resume`, where it takes them).
    #[serde(default)]
    pub build_args: Vec<String>,
    /// More arguments for `kingmaker resume` only.
    #[serde(default)]
    pub resume_args: Vec<String>,
    /// More arguments for `kingmaker-worker`.
    #[serde(default)]
    pub worker_args: Vec<String>,
    /// More arguments for the `kingmaker pack` that `fetch` runs on the coordinator, e.g.
    /// `["--zstd-level", "9"]`.
    #[serde(default)]
    pub pack_args: Vec<String>,
    /// Where `fetch` puts the release on the operator's machine (default `releases/NAME`).
    pub release_dir: Option<PathBuf>,
    /// The directory holding `kingmaker` and `kingmaker-worker` to copy (default: beside the
    /// running `kingmaker`).
    pub binaries: Option<PathBuf>,
    /// Refuse to provision or launch on a host with less free space in its data directory.
    #[serde(default = "default_min_free")]
    pub min_free_disk: String,
}

/// How to reach the hosts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SshSettings {
    /// The run's own known_hosts file (default: the inventory's path with `.known_hosts`).
    pub known_hosts: Option<PathBuf>,
    /// Refuse hosts whose key is not already in `known_hosts` (default: trust on first use).
    #[serde(default)]
    pub strict_host_keys: bool,
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_secs: u64,
    /// Extra `-o` options for ssh and scp, e.g. `["ProxyJump=bastion"]`.
    #[serde(default)]
    pub options: Vec<String>,
}

impl Default for SshSettings {
    fn default() -> Self {
        SshSettings {
            known_hosts: None,
            strict_host_keys: false,
            connect_timeout_secs: default_connect_timeout(),
            options: Vec::new(),
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Coordinator,
    Worker,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Coordinator => "coordinator",
            Role::Worker => "worker",
        }
    }
}

/// How services are kept running on a host.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Supervisor {
    /// systemd when it is running, else `nohup`.
    #[default]
    Auto,
    /// systemd units; refuse a host where systemd is not running.
    Systemd,
    /// `setsid nohup` with a pid file (no restart on crash or reboot: `deploy resume` does it).
    Nohup,
}

impl Supervisor {
    pub fn as_str(self) -> &'static str {
        match self {
            Supervisor::Auto => "auto",
            Supervisor::Systemd => "systemd",
            Supervisor::Nohup => "nohup",
        }
    }
}

/// One server.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    pub name: String,
    pub role: Role,
    /// Where SSH reaches it (public address or DNS name).
    pub address: String,
    #[serde(default = "default_user")]
    pub user: String,
    #[serde(default = "default_port")]
    pub port: u16,
    pub identity_file: Option<PathBuf>,
    #[serde(default = "default_install_dir")]
    pub install_dir: String,
    #[serde(default = "default_data_dir")]
    pub data_dir: String,
    /// The most memory the service may use, e.g. "100GiB" (systemd MemoryMax; checked against
    /// the host's memory).
    pub memory_budget: Option<String>,
    /// The address on the private network: workers listen here, the coordinator connects here.
    pub private_address: Option<IpAddr>,
    #[serde(default)]
    pub supervisor: Supervisor,
    /// Run remote commands with `sudo -n` (default: when the user is not root).
    pub sudo: Option<bool>,
    /// Compute threads for this host's service (default: all cores).
    pub threads: Option<usize>,
    /// The server's size as rented, for `kingmaker plan` (checked against what `provision`
    /// finds): vCPUs, memory (e.g. "128GiB") and the free disk of its data directory.
    pub cores: Option<u64>,
    pub memory: Option<String>,
    pub disk: Option<String>,
}

fn default_worker_port() -> u16 {
    7070
}
fn default_checkpoint_secs() -> u64 {
    600
}
fn default_min_free() -> String {
    "1GiB".into()
}
fn default_connect_timeout() -> u64 {
    10
}
fn default_user() -> String {
    "root".into()
}
fn default_port() -> u16 {
    22
}
fn default_install_dir() -> String {
    "/opt/kingmaker".into()
}
fn default_data_dir() -> String {
    "/var/lib/kingmaker".into()
}

impl Host {
    pub fn sudo(&self) -> bool {
        self.sudo.unwrap_or(self.user != "root")
    }
    pub fn target(&self) -> String {
        format!("{}@{}", self.user, self.address)
    }
    /// `HOST:PORT` a worker listens on.
    pub fn listen(&self, port: u16) -> String {
        match self.private_address {
            Some(IpAddr::V6(a)) => format!("[{a}]:{port}"),
            Some(a) => format!("{a}:{port}"),
            None => String::new(),
        }
    }
    pub fn bin_dir(&self) -> String {
        format!("{}/bin", self.install_dir)
    }
    /// This host's environment file of the run (mode 0600: it holds the token). One per run and
    /// role, so that several runs live side by side on a host.
    pub fn env_file(&self, run: &str) -> String {
        format!("{}/etc/{}-{run}.env", self.install_dir, self.role.as_str())
    }
    /// The one coordinator environment file of a host provisioned by an older kingmaker (its
    /// `KINGMAKER_RUN` names the run it belongs to).
    pub fn legacy_env_file(&self) -> String {
        format!("{}/etc/coordinator.env", self.install_dir)
    }
    /// The systemd unit of this host's service of the run (an instance of a template).
    pub fn unit(&self, run: &str) -> String {
        format!("kingmaker-{}@{run}.service", self.role.as_str())
    }
    /// Pid file and log of the `nohup` supervisor.
    pub fn pid_file(&self, run: &str) -> String {
        format!("{}/run/{}-{run}.pid", self.install_dir, self.role.as_str())
    }
    pub fn log_file(&self, run: &str) -> String {
        format!("{}/log/{}-{run}.log", self.install_dir, self.role.as_str())
    }
    /// Everything of the run under the data directory.
    pub fn run_data(&self, run: &str) -> String {
        format!("{}/{run}", self.data_dir)
    }
    /// The coordinator's run directory, and where it packs the release.
    pub fn run_dir(&self, run: &str) -> String {
        format!("{}/{run}/run", self.data_dir)
    }
    pub fn release_dir(&self, run: &str) -> String {
        format!("{}/{run}/release", self.data_dir)
    }
    /// A worker's data directory.
    pub fn worker_dir(&self, run: &str) -> String {
        format!("{}/{run}/worker", self.data_dir)
    }
}

impl Inventory {
    pub fn load(path: &Path) -> Result<Inventory> {
        let cap = kingmaker_tablefmt::fsio::METADATA_CAP;
        let text = kingmaker_tablefmt::fsio::read_bounded_text(path, cap, "an inventory")
            .with_context(|| {
                format!(
                    "reading the inventory {} (see deploy/inventory.example.toml)",
                    path.display()
                )
            })?;
        let mut inv: Inventory = toml::from_str(&text)
            .with_context(|| format!("{} is not a valid inventory", path.display()))?;
        inv.base = path
            .parent()
            .map(Path::to_path_buf)
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| ".".into());
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "inventory".into());
        if inv.ssh.known_hosts.is_none() {
            inv.ssh.known_hosts = Some(PathBuf::from(format!("{stem}.known_hosts")));
        }
        inv.validate()
            .with_context(|| format!("in {}", path.display()))?;
        Ok(inv)
    }

    /// A local path from the inventory, relative to the inventory's directory; `~/` is the home.
    pub fn local_path(&self, p: &Path) -> PathBuf {
        if let Ok(rest) = p.strip_prefix("~") {
            if let Some(home) = std::env::var_os("HOME") {
                return PathBuf::from(home).join(rest);
            }
        }
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    pub fn known_hosts(&self) -> PathBuf {
        self.local_path(
            self.ssh
                .known_hosts
                .as_deref()
                .unwrap_or(Path::new("known_hosts")),
        )
    }

    pub fn token_file(&self) -> PathBuf {
        self.local_path(&self.run.token_file)
    }

    pub fn release_dir(&self) -> PathBuf {
        match &self.run.release_dir {
            Some(p) => self.local_path(p),
            None => self.base.join("releases").join(&self.run.name),
        }
    }

    pub fn coordinator(&self) -> &Host {
        self.hosts
            .iter()
            .find(|h| h.role == Role::Coordinator)
            .expect("validated: one coordinator")
    }

    pub fn workers(&self) -> Vec<&Host> {
        self.hosts
            .iter()
            .filter(|h| h.role == Role::Worker)
            .collect()
    }

    /// `HOST:PORT,...` of the workers, in inventory order (the coordinator's `--workers`).
    pub fn worker_addrs(&self) -> Vec<String> {
        self.workers()
            .iter()
            .map(|h| h.listen(self.run.worker_port))
            .collect()
    }

    fn validate(&self) -> Result<()> {
        let r = &self.run;
        if r.name.is_empty()
            || !r
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            bail!("run.name {:?} must be letters, digits, '-' or '_' (it names services and directories)", r.name);
        }
        for (what, words) in [
            ("run.game", std::slice::from_ref(&r.game)),
            ("run.options", &r.options[..]),
            ("run.build_args", &r.build_args[..]),
            ("run.resume_args", &r.resume_args[..]),
            ("run.worker_args", &r.worker_args[..]),
            ("run.pack_args", &r.pack_args[..]),
        ] {
            for w in words {
                check_word(w).with_context(|| format!("{what}: {w:?}"))?;
            }
        }
        r.refuse_launcher_options(
            "deploy",
            ["the run directory", "the worker hosts", "token_file"],
            "the host entries",
        )?;
        if r.pack_args
            .iter()
            .any(|a| a == "--out" || a.starts_with("--out="))
        {
            bail!("run.pack_args must not give --out: deploy packs into the coordinator's release directory");
        }
        parse_bytes(&r.min_free_disk).context("run.min_free_disk")?;
        let coordinators = self
            .hosts
            .iter()
            .filter(|h| h.role == Role::Coordinator)
            .count();
        if coordinators != 1 {
            bail!("the inventory needs exactly one host with role = \"coordinator\" (it has {coordinators})");
        }
        for (i, h) in self.hosts.iter().enumerate() {
            let ctx = || format!("host {:?}", h.name);
            if h.name.is_empty()
                || !h
                    .name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            {
                bail!(
                    "host name {:?} must be letters, digits, '-', '_' or '.'",
                    h.name
                );
            }
            if self.hosts[..i].iter().any(|o| o.name == h.name) {
                bail!("host {:?} is listed twice", h.name);
            }
            check_word(&h.address).with_context(ctx)?;
            check_word(&h.user).with_context(ctx)?;
            for (what, dir) in [("install_dir", &h.install_dir), ("data_dir", &h.data_dir)] {
                if !dir.starts_with('/') || dir.len() < 2 || dir.ends_with('/') {
                    bail!(
                        "host {:?}: {what} {dir:?} must be an absolute path without a trailing '/'",
                        h.name
                    );
                }
                check_word(dir).with_context(|| format!("host {:?}: {what}", h.name))?;
            }
            if let Some(m) = &h.memory_budget {
                parse_bytes(m).with_context(|| format!("host {:?}: memory_budget", h.name))?;
            }
            for (what, size) in [("memory", &h.memory), ("disk", &h.disk)] {
                if let Some(size) = size {
                    parse_bytes(size).with_context(|| format!("host {:?}: {what}", h.name))?;
                }
            }
            if h.role == Role::Worker {
                let Some(addr) = h.private_address else {
                    bail!("worker {:?} needs a private_address: workers listen on the private network only", h.name);
                };
                if !is_private(addr) {
                    bail!(
                        "worker {:?}: private_address {addr} is not a private address (10/8, 172.16/12, \
                         192.168/16, 100.64/10, fc00::/7 or loopback); workers must not listen on the internet",
                        h.name
                    );
                }
                if self.hosts[..i]
                    .iter()
                    .any(|o| o.role == Role::Worker && o.private_address == h.private_address)
                {
                    bail!(
                        "workers {:?} and another host share the private_address {addr}",
                        h.name
                    );
                }
            }
        }
        Ok(())
    }
}

impl RunSpec {
    /// The coordinator's `kingmaker build` arguments (the game first) and its `kingmaker resume`
    /// arguments, both with the run's checkpoint settings, and resume's with those of
    /// `build_args` it takes too.
    pub(crate) fn coordinator_args(&self) -> (Vec<String>, Vec<String>) {
        let checkpoints = [
            "--checkpoint-every-secs".to_string(),
            self.checkpoint_every_secs.to_string(),
            "--checkpoint-every-waves".to_string(),
            self.checkpoint_every_waves.to_string(),
        ];
        let build = std::iter::once(self.game.clone())
            .chain(self.options.iter().cloned())
            .chain(checkpoints.iter().cloned())
            .chain(self.build_args.iter().cloned())
            .collect();
        let resume = checkpoints
            .iter()
            .cloned()
            .chain(super::units::resume_takes(&self.build_args))
            .chain(self.resume_args.iter().cloned())
            .collect();
        (build, resume)
    }

    /// Refuse the options the launcher gives itself: `--out`, `--workers` and `--token` in
    /// `build_args`/`resume_args` (each set from its `owners` entry), and `--listen`,
    /// `--data-dir` and `--token` in `worker_args` (set from `workers_from`). `launcher` names
    /// who sets them ("deploy", "the job").
    pub(crate) fn refuse_launcher_options(
        &self,
        launcher: &str,
        owners: [&str; 3],
        workers_from: &str,
    ) -> Result<()> {
        let given = |args: &[&String], flag: &str| {
            args.iter()
                .any(|a| *a == flag || a.starts_with(&format!("{flag}=")))
        };
        let coordinator: Vec<&String> = self.build_args.iter().chain(&self.resume_args).collect();
        for (flag, owner) in ["--out", "--workers", "--token"].into_iter().zip(owners) {
            if given(&coordinator, flag) {
                bail!(
                    "run.build_args/resume_args must not give {flag}: {launcher} sets it from \
                     {owner}"
                );
            }
        }
        let worker: Vec<&String> = self.worker_args.iter().collect();
        if ["--listen", "--data-dir", "--token"]
            .iter()
            .any(|f| given(&worker, f))
        {
            bail!(
                "run.worker_args must not give --listen, --data-dir or --token: {launcher} sets \
                 them from {workers_from}"
            );
        }
        Ok(())
    }
}

/// Words that go into environment files and remote shell commands: no spaces, quotes or `$`.
pub(crate) fn check_word(w: &str) -> Result<()> {
    let ok = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:/=@+%[]".contains(c));
    if !ok {
        bail!("only letters, digits and -_.,:/=@+%[] are allowed here (no spaces, quotes or $)");
    }
    Ok(())
}

/// Is this address on a private network (or loopback)?
pub fn is_private(a: IpAddr) -> bool {
    match a {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_private() || v4.is_loopback() || (o[0] == 100 && (64..128).contains(&o[1]))
        }
        IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
    }
}

/// "100GiB", "64G", "512MiB", "1000000" → bytes (K, M, G, T are powers of 1024).
pub fn parse_bytes(s: &str) -> Result<u64> {
    kingmaker_kernel::memory::parse_size(s).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = include_str!("../../../deploy/inventory.example.toml");

    fn parse(text: &str) -> Result<Inventory> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("inv.toml");
        std::fs::write(&path, text)?;
        Inventory::load(&path)
    }

    #[test]
    fn the_example_is_valid() {
        let inv = parse(EXAMPLE).unwrap();
        assert_eq!(inv.coordinator().role, Role::Coordinator);
        assert_eq!(inv.workers().len(), 2);
        assert_eq!(inv.worker_addrs(), vec!["10.0.0.11:7070", "10.0.0.12:7070"]);
        assert!(inv.known_hosts().ends_with("cc3p-2.known_hosts"));
    }

    /// The plan for cc2p 6×6 / 6 (docs/results.md): five workers whose budgets hold the quarter's
    /// cells (six bits a state) in memory with a fifth to spare.
    #[test]
    fn the_6x6_6_plan_is_valid_and_holds_its_cells() {
        let inv = parse(include_str!("../../../deploy/cc2p-6x6-6.inventory.toml")).unwrap();
        assert_eq!(inv.workers().len(), 5);
        let budgets: u64 = inv
            .workers()
            .iter()
            .map(|w| parse_bytes(w.memory_budget.as_deref().unwrap()).unwrap())
            .sum();
        let quarter_cells = kingmaker_kernel::cell_code::cell_bytes(578_944_875_600);
        assert!(budgets * 4 / 5 > quarter_cells, "{budgets} bytes of budget");
        // The table stays on the workers, and the build the service will run is a valid one.
        assert!(inv
            .run
            .build_args
            .contains(&"--keep-layers-on-workers".to_string()));
        let argv = super::super::units::build_argv(&inv);
        crate::command_line(&kingmaker_games::game_commands())
            .try_get_matches_from(&argv)
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    }

    /// The plan for cc2p 7×7 / 6 (docs/results.md): 50 workers, the quarter's cells out of core
    /// (far beyond their budgets), the table kept on them.
    #[test]
    fn the_7x7_6_plan_is_valid_and_out_of_core() {
        let inv = parse(include_str!("../../../deploy/cc2p-7x7-6.inventory.toml")).unwrap();
        assert_eq!(inv.workers().len(), 50);
        let cells_each = kingmaker_kernel::cell_code::cell_bytes(42_645_604_101_646) / 50;
        for w in inv.workers() {
            let budget = parse_bytes(w.memory_budget.as_deref().unwrap()).unwrap();
            assert!(
                cells_each > 5 * budget,
                "{}: {budget} bytes of budget",
                w.name
            );
        }
        assert!(parse_bytes(&inv.run.min_free_disk).unwrap() > 2 * cells_each);
        let argv = super::super::units::build_argv(&inv);
        assert!(argv.contains(&"--keep-layers-on-workers".to_string()));
        crate::command_line(&kingmaker_games::game_commands())
            .try_get_matches_from(&argv)
            .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("100GiB").unwrap(), 100 << 30);
        assert_eq!(parse_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("12").unwrap(), 12);
        assert!(parse_bytes("12 parsecs").is_err());
        assert!(parse_bytes("GiB").is_err());
    }

    #[test]
    fn bad_inventories_are_refused() {
        let public = EXAMPLE.replace("10.0.0.11", "203.0.113.7");
        assert!(format!("{:#}", parse(&public).unwrap_err()).contains("not a private address"));
        let two = EXAMPLE.replace("role = \"worker\"", "role = \"coordinator\"");
        assert!(format!("{:#}", parse(&two).unwrap_err()).contains("exactly one"));
        let quoted = EXAMPLE.replace(
            "options = [\"--level\", \"1\"]",
            "options = [\"--level 1; rm -rf /\"]",
        );
        assert!(format!("{:#}", parse(&quoted).unwrap_err()).contains("only letters"));
        let out = EXAMPLE.replace("build_args = [", "build_args = [\"--out\", \"x\", ");
        assert!(format!("{:#}", parse(&out).unwrap_err()).contains("--out"));
        assert!(format!("{:#}", parse("[run]\nname = \"x\"\n").unwrap_err())
            .contains("not a valid inventory"));
    }

    #[test]
    fn private_ranges() {
        for a in [
            "10.1.2.3",
            "172.20.0.1",
            "192.168.1.1",
            "100.100.0.1",
            "127.0.0.1",
            "fd00::1",
        ] {
            assert!(is_private(a.parse().unwrap()), "{a}");
        }
        for a in ["8.8.8.8", "172.32.0.1", "2001:db8::1", "0.0.0.0"] {
            assert!(!is_private(a.parse().unwrap()), "{a}");
        }
    }
}
