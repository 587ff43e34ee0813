//! `deploy logs HOST`: the last lines of the run's service log on one host (the journal under
//! systemd, the log file otherwise), and the command that follows it.

use super::host::{self, log_tail};
use super::Deployment;
use anyhow::{bail, Result};

pub fn run(d: &Deployment, name: &str, lines: usize) -> Result<()> {
    let Some(h) = d.inv.hosts.iter().find(|h| h.name == name) else {
        let names: Vec<&str> = d.inv.hosts.iter().map(|h| h.name.as_str()).collect();
        bail!(
            "no host {name:?} in {}: its hosts are {}",
            d.inv_hint(),
            names.join(", ")
        );
    };
    let run = &d.inv.run.name;
    // Probed first: an unreachable host is an error, not an empty log.
    let health = host::probe(&d.ssh, &d.inv, h)?;
    let text = log_tail(&d.ssh, &d.inv, h, lines.max(1));
    let follow = if health.supervisor == "systemd" {
        format!("journalctl -fu {}", h.unit(run))
    } else {
        format!("tail -F {}", h.log_file(run))
    };
    eprintln!(
        "# the {} of run {run} on {} ({}, pid {}); follow it with: {} {}",
        h.role.as_str(),
        h.name,
        health.state,
        health
            .pid
            .map(|p| p.to_string())
            .unwrap_or_else(|| "-".into()),
        d.ssh.hint(h),
        super::ssh::quote(&follow)
    );
    if text.trim().is_empty() {
        eprintln!(
            "# its log is empty: the service has not been started on this host (`kingmaker deploy launch`)"
        );
    } else {
        println!("{text}");
    }
    Ok(())
}
