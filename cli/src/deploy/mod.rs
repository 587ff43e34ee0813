//! `kingmaker deploy`: run a build on rented servers over SSH (docs/operators.md, the runbook).
//! 1. Only the system `ssh`/`scp` (ssh.rs) and a POSIX shell there (host.rs): any stock image does.
//! 2. Services run under systemd (`deploy/systemd/`), else `setsid nohup` with a pid file, so that
//!    they outlive the operator's SSH session.
//! 3. The token travels on stdin into a root-only file: never on a command line, which `ps` shows.

mod detached;
mod fetch;
mod host;
pub(crate) mod inventory;
mod launch;
mod list;
mod logs;
mod provision;
mod publish;
mod ssh;
mod status;
mod teardown;
pub(crate) mod units;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use host::Health;
use inventory::{Host, Inventory};
use kingmaker_coordinator::digits::human_bytes;
use sha2::{Digest, Sha256};
use ssh::Ssh;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct DeployArgs {
    #[command(subcommand)]
    pub action: Action,
    /// The inventory: hosts, roles and the run (see deploy/inventory.example.toml).
    #[arg(long, short = 'i', global = true, env = "KINGMAKER_INVENTORY")]
    pub inventory: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Copy the binaries, create the directories, hand out the token, install the services.
    /// Idempotent: run it again after changing the inventory or rebuilding the binaries.
    Provision,
    /// Start the workers, then the coordinator's build, as services that outlive this SSH session.
    Launch {
        /// Seconds to watch the services after starting them before declaring the launch good.
        #[arg(long, default_value_t = 5)]
        settle_secs: u64,
    },
    /// The run's progress (from the coordinator) and every host's health.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Print again every N seconds until interrupted.
        #[arg(long)]
        watch: Option<u64>,
    },
    /// After a crash, a reboot or a lost worker: start what is down; the build resumes from its
    /// last checkpoint.
    Resume {
        #[arg(long, default_value_t = 5)]
        settle_secs: u64,
        /// Seconds to let a running coordinator checkpoint and stop before it is killed (when
        /// workers must be restarted under it).
        #[arg(long, default_value_t = 120)]
        stop_timeout: u64,
    },
    /// Pack the finished run on the coordinator, download the release and verify it here.
    Fetch {
        /// Where to put the release (default: the inventory's run.release_dir).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Publish a run whose layers were kept on its workers without gathering it: each worker
    /// host packs its parts and serves them over HTTP, the coordinator writes the manifest that
    /// lists them at their URLs, and the manifest is downloaded here.
    Publish {
        /// The port each worker host serves its parts on (at its private address).
        #[arg(long, default_value_t = 8090)]
        port: u16,
        /// Where to put the manifest (default: the inventory's run.release_dir, ending `.parts`).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The last lines of the run's service log on one host (the journal under systemd, else the
    /// log file).
    Logs {
        /// The host, by its name in the inventory.
        host: String,
        /// How many lines.
        #[arg(long, short = 'n', default_value_t = 50)]
        lines: usize,
    },
    /// The runs provisioned on the inventory's hosts (of any inventory), from their environment
    /// files: role, service state, a worker's port, a coordinator's progress.
    List,
    /// Stop every service of the run (the coordinator checkpoints first). Data is kept unless
    /// --delete-data is given.
    Teardown {
        /// Also delete the run's data, release, logs and environment files (with the token) on
        /// every host. The binaries and unit templates stay.
        #[arg(long)]
        delete_data: bool,
        /// Seconds to let each service stop before it is killed.
        #[arg(long, default_value_t = 120)]
        stop_timeout: u64,
    },
}

/// Checks a `kingmaker build ...` command line (program name first) as the CLI would parse it:
/// the caller's parser, so that deploy needs nothing from the CLI around it.
pub type BuildArgsCheck = fn(&[String]) -> Result<(), clap::Error>;

/// Run one deploy action. `check_build` parses the build command the inventory describes, before
/// any server is touched (provision, launch).
pub fn run(args: DeployArgs, check_build: BuildArgsCheck) -> Result<()> {
    let path = args.inventory.context(
        "--inventory FILE is required (or KINGMAKER_INVENTORY); start from deploy/inventory.example.toml",
    )?;
    let inv = Inventory::load(&path)?;
    let ssh = Ssh::new(&inv)?;
    let d = Deployment {
        inv,
        ssh,
        path,
        check_build,
    };
    match args.action {
        Action::Provision => provision::run(&d),
        Action::Launch { settle_secs } => launch::launch(&d, settle_secs),
        Action::Status { json, watch } => status::run(&d, json, watch),
        Action::Resume {
            settle_secs,
            stop_timeout,
        } => launch::resume(&d, settle_secs, stop_timeout),
        Action::Fetch { out } => fetch::run(&d, out),
        Action::Publish { port, out } => publish::run(&d, port, out),
        Action::Logs { host, lines } => logs::run(&d, &host, lines),
        Action::List => list::run(&d),
        Action::Teardown {
            delete_data,
            stop_timeout,
        } => teardown::run(&d, delete_data, stop_timeout),
    }
}

/// The inventory and the way to reach its hosts.
pub struct Deployment {
    pub inv: Inventory,
    pub ssh: Ssh,
    /// The inventory file as the operator named it (for printed hints).
    pub path: PathBuf,
    /// Parses a `kingmaker build` command line (see [`BuildArgsCheck`]).
    pub check_build: BuildArgsCheck,
}

impl Deployment {
    pub fn inv_hint(&self) -> String {
        ssh::quote(&self.path.display().to_string())
    }

    /// Run `f` on every host in parallel; results in inventory order.
    pub fn each<'a, T: Send>(
        &'a self,
        hosts: &[&'a Host],
        f: impl Fn(&'a Host) -> Result<T> + Sync,
    ) -> Vec<(&'a Host, Result<T>)> {
        std::thread::scope(|s| {
            let handles: Vec<_> = hosts.iter().map(|h| (*h, s.spawn(|| f(h)))).collect();
            handles
                .into_iter()
                .map(|(h, j)| {
                    (
                        h,
                        j.join()
                            .unwrap_or_else(|_| Err(anyhow::anyhow!("host {}: panicked", h.name))),
                    )
                })
                .collect()
        })
    }

    pub fn all_hosts(&self) -> Vec<&Host> {
        self.inv.hosts.iter().collect()
    }

    /// Probe every host; any unreachable host or broken probe is an error naming all of them.
    pub fn probe_all(&self) -> Result<Vec<(&Host, Health)>> {
        let results = self.each(&self.all_hosts(), |h| host::probe(&self.ssh, &self.inv, h));
        let mut ok = Vec::new();
        let mut errors = Vec::new();
        for (h, r) in results {
            match r {
                Ok(health) => ok.push((h, health)),
                Err(e) => errors.push(format!("{e:#}")),
            }
        }
        if !errors.is_empty() {
            bail!("{}", errors.join("\n"));
        }
        Ok(ok)
    }

    /// The run's token from token_file (which must exist and be private).
    pub fn token(&self) -> Result<String> {
        let path = self.inv.token_file();
        read_token(&path)
    }

    /// The local binary a host's role runs.
    pub fn local_binary(&self, name: &str) -> Result<PathBuf> {
        let dir = match &self.inv.run.binaries {
            Some(d) => self.inv.local_path(d),
            None => std::env::current_exe()
                .context("locating the running kingmaker")?
                .parent()
                .context("the running kingmaker has no directory")?
                .to_path_buf(),
        };
        let path = dir.join(name);
        if !path.is_file() {
            bail!(
                "{} not found: build it (`cargo build --release --bins`) or set run.binaries in the inventory",
                path.display()
            );
        }
        Ok(path)
    }

    /// Preflight for launch and resume: every host reachable, binaries and environment files in
    /// place, tokens matching ours, enough disk. Prints warnings; errors name every problem.
    pub fn preflight(&self) -> Result<Vec<(&Host, Health)>> {
        let token = self.token()?;
        let fp = fingerprint(&token);
        let healths = self.probe_all()?;
        let min_free = inventory::parse_bytes(&self.inv.run.min_free_disk)?;
        let mut problems = Vec::new();
        for (h, health) in &healths {
            let binary = binary_name(h);
            if health.binary_sha256.is_empty() {
                problems.push(format!(
                    "host {}: {}/{binary} is missing: run `kingmaker deploy provision`",
                    h.name,
                    h.bin_dir()
                ));
            } else if let Ok(local) = self.local_binary(binary).and_then(|p| sha256_file(&p)) {
                if local != health.binary_sha256 {
                    eprintln!(
                        "warning: host {}: {binary} differs from {} here; `kingmaker deploy provision` updates it",
                        h.name,
                        self.local_binary(binary).map(|p| p.display().to_string()).unwrap_or_default()
                    );
                }
            }
            if !health.env_file && health.legacy_env_run == self.inv.run.name {
                problems.push(format!(
                    "host {}: run {} was provisioned there by an older kingmaker, whose one coordinator \
                     environment file ({}) every run on the host shared: run `kingmaker deploy provision` \
                     to give the run its own ({}); the run keeps its data and continues with `kingmaker \
                     deploy resume`",
                    h.name,
                    self.inv.run.name,
                    h.legacy_env_file(),
                    h.env_file(&self.inv.run.name)
                ));
            } else if !health.env_file {
                problems.push(format!(
                    "host {}: no environment file {}: run `kingmaker deploy provision`",
                    h.name,
                    h.env_file(&self.inv.run.name)
                ));
            } else if health.token_fp != fp {
                problems.push(format!(
                    "host {}: its environment file holds a different token than {} (fingerprint {} vs {fp}): \
                     run `kingmaker deploy provision` to hand out the current one",
                    h.name,
                    self.inv.token_file().display(),
                    if health.token_fp.is_empty() { "none" } else { &health.token_fp }
                ));
            }
            if health.running()
                && !health.running_token_fp.is_empty()
                && health.running_token_fp != fp
            {
                problems.push(format!(
                    "host {}: its running {} was started with a different token (fingerprint {} vs {fp}): \
                     stop it (`kingmaker deploy teardown`) and start it again (`kingmaker deploy resume`)",
                    h.name,
                    h.role.as_str(),
                    health.running_token_fp
                ));
            }
            if health.disk_free < min_free {
                problems.push(format!(
                    "host {}: only {} free in {} (min_free_disk is {}): free space or attach a bigger disk",
                    h.name,
                    human_bytes(health.disk_free),
                    h.data_dir,
                    self.inv.run.min_free_disk
                ));
            }
            if h.role == inventory::Role::Worker && !health.has_private_address {
                problems.push(format!(
                    "host {}: private_address {} is not an address of this host (see `ip addr` there)",
                    h.name,
                    h.private_address.map(|a| a.to_string()).unwrap_or_default()
                ));
            }
        }
        if !problems.is_empty() {
            bail!("{}", problems.join("\n"));
        }
        Ok(healths)
    }
}

pub fn binary_name(h: &Host) -> &'static str {
    match h.role {
        inventory::Role::Coordinator => "kingmaker",
        inventory::Role::Worker => "kingmaker-worker",
    }
}

/// First 16 hex digits of the token's sha256: safe to print and compare.
pub fn fingerprint(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))[..16].to_string()
}

pub fn sha256_file(path: &Path) -> Result<String> {
    Ok(kingmaker_tablefmt::fsio::file_sha256(path)?.1)
}

fn read_token(path: &Path) -> Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).with_context(|| {
        format!(
            "the token file {} is missing: `kingmaker deploy provision` creates it",
            path.display()
        )
    })?;
    if meta.permissions().mode() & 0o077 != 0 {
        bail!(
            "the token file {} is readable by others: `chmod 600 {}`",
            path.display(),
            path.display()
        );
    }
    // A token is one short line.
    let token = kingmaker_tablefmt::fsio::read_bounded_text(path, 4096, "a token file")
        .with_context(|| format!("reading {}", path.display()))?;
    let token = token.trim().to_string();
    if token.len() < 16
        || !token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+/=".contains(c))
    {
        bail!(
            "the token in {} must be at least 16 characters of letters, digits and -_.+/= \
             (delete it and `kingmaker deploy provision` makes a new one)",
            path.display()
        );
    }
    Ok(token)
}

/// The token file, created (32 random bytes, hex, mode 0600) if it does not exist.
fn token_or_create(path: &Path) -> Result<String> {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    if !path.exists() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .context("reading /dev/urandom")?;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("creating the token file {}", path.display()))?;
        writeln!(f, "{}", hex::encode(bytes))?;
        f.sync_all()?;
        println!(
            "created the run's token in {} (mode 0600; keep it out of version control)",
            path.display()
        );
    }
    read_token(path)
}

/// Print per-host results; an error naming every failed host if any failed.
pub fn report<T>(results: Vec<(&Host, Result<T>)>, mut ok: impl FnMut(&Host, T)) -> Result<()> {
    let mut failed = Vec::new();
    for (h, r) in results {
        match r {
            Ok(v) => ok(h, v),
            Err(e) => failed.push(format!("{e:#}")),
        }
    }
    if !failed.is_empty() {
        bail!("{}", failed.join("\n"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_created_private_and_checked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets/run.token");
        let t = token_or_create(&path).unwrap();
        assert_eq!(t.len(), 64);
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(token_or_create(&path).unwrap(), t);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(format!("{:#}", read_token(&path).unwrap_err()).contains("chmod 600"));
        assert_eq!(fingerprint("abc").len(), 16);
    }
}
