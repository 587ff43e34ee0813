//! `deploy list`: the runs provisioned on the inventory's hosts (any inventory's), read from the
//! environment files deploy wrote there; provision uses the same reading to keep runs apart.

use super::host::prelude;
use super::inventory::{Host, Inventory};
use super::ssh::Ssh;
use super::Deployment;
use anyhow::{bail, Result};

/// One run's service on a host, as its environment file and supervisor describe it.
#[derive(Clone, Debug)]
pub struct RunEntry {
    pub role: String,
    pub run: String,
    /// running, stopped, or systemd's word.
    pub state: String,
    pub pid: String,
    /// A worker's `ADDR:PORT`.
    pub listen: String,
    /// A coordinator's run: not launched, launched, complete.
    pub phase: String,
    /// The environment file's name under INSTALL_DIR/etc (`coordinator.env`: an older kingmaker's).
    pub file: String,
}

impl RunEntry {
    /// A worker's port, if its environment names one.
    pub fn port(&self) -> Option<u16> {
        self.listen.rsplit(':').next()?.parse().ok()
    }
    pub fn legacy(&self) -> bool {
        self.file == "coordinator.env"
    }
}

const LIST: &str = r#"
for f in "$KM_INSTALL"/etc/*.env; do
  [ -f "$f" ] || continue
  b=$(basename "$f" .env)
  case "$b" in
    coordinator) role=coordinator; KM_UNIT=kingmaker-coordinator.service ;;
    coordinator-*) role=coordinator; KM_UNIT="kingmaker-coordinator@${b#coordinator-}.service" ;;
    worker-*) role=worker; KM_UNIT="kingmaker-worker@${b#worker-}.service" ;;
    *) continue ;;
  esac
  run=$(km_env_value KINGMAKER_RUN "$f")
  [ -n "$run" ] || run=${b#*-}
  KM_PID="$KM_INSTALL/run/$role-$run.pid"
  rd=$(km_env_value KINGMAKER_RUN_DIR "$f")
  phase=""
  if [ -n "$rd" ]; then
    if [ -e "$rd/summary.json" ]; then phase=complete
    elif [ -e "$rd/run.json" ]; then phase=launched
    else phase="not launched"; fi
  fi
  printf 'entry=%s|%s|%s|%s|%s|%s|%s.env\n' "$role" "$run" "$(km_state)" "$(km_pid)" \
    "$(km_env_value KINGMAKER_LISTEN "$f")" "$phase" "$b"
done
exit 0
"#;

/// Every run provisioned on a host (from INSTALL_DIR/etc/*.env).
pub fn runs_on(ssh: &Ssh, inv: &Inventory, host: &Host) -> Result<Vec<RunEntry>> {
    let r = ssh.run(host, &format!("{}{LIST}", prelude(inv, host)), None)?;
    if !r.ok() {
        bail!(
            "host {}: listing its runs: {}",
            host.name,
            super::host::failure(&r)
        );
    }
    Ok(r.stdout
        .lines()
        .filter_map(|l| l.strip_prefix("entry="))
        .map(|l| {
            let f: Vec<&str> = l.splitn(7, '|').collect();
            let at = |i: usize| f.get(i).copied().unwrap_or("").to_string();
            RunEntry {
                role: at(0),
                run: at(1),
                state: at(2),
                pid: at(3),
                listen: at(4),
                phase: at(5),
                file: at(6),
            }
        })
        .collect())
}

/// `deploy list`.
pub fn run(d: &Deployment) -> Result<()> {
    let results = d.each(&d.all_hosts(), |h| runs_on(&d.ssh, &d.inv, h));
    let ours = &d.inv.run.name;
    println!(
        "runs provisioned on the hosts of {} (* marks its run, {ours}):",
        d.inv_hint()
    );
    println!(
        "  {:<12} {:<12} {:<20} {:<10} {:>8}  where",
        "host", "role", "run", "service", "pid"
    );
    let mut errors = Vec::new();
    let mut all: Vec<RunEntry> = Vec::new();
    for (h, r) in results {
        match r {
            Ok(entries) if entries.is_empty() => println!("  {:<12} (no run)", h.name),
            Ok(entries) => {
                for e in entries {
                    let mark = if &e.run == ours { "*" } else { " " };
                    let place = match (e.role.as_str(), e.legacy()) {
                        ("worker", _) => format!("listens on {}", e.listen),
                        (_, true) => format!(
                            "{}; {} (an older kingmaker's: `deploy provision` of that run gives it its own files)",
                            e.phase, e.file
                        ),
                        _ => e.phase.clone(),
                    };
                    println!(
                        "{mark} {:<12} {:<12} {:<20} {:<10} {:>8}  {place}",
                        h.name, e.role, e.run, e.state, e.pid
                    );
                    all.push(e);
                }
            }
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    // A finished run whose workers still run: they are idle and billed.
    let mut idle: Vec<&str> = all
        .iter()
        .filter(|e| e.role == "coordinator" && e.phase == "complete")
        .filter(|c| {
            all.iter()
                .any(|w| w.role == "worker" && w.run == c.run && w.state == "running")
        })
        .map(|c| c.run.as_str())
        .collect();
    idle.dedup();
    for run in idle {
        println!(
            "run {run} is complete but its workers still run, idle: `kingmaker deploy teardown` with its \
             inventory stops them (after `deploy fetch`, which may need them)"
        );
    }
    if !errors.is_empty() {
        bail!("{}", errors.join("\n"));
    }
    Ok(())
}
