//! `deploy launch` and `deploy resume`: start the workers, wait until they listen, then start the
//! coordinator; watch for a few seconds that it stays up.

use super::host::{self, Health};
use super::inventory::Host;
use super::{report, Deployment};
use anyhow::{bail, Result};
use std::time::{Duration, Instant};

pub fn launch(d: &Deployment, settle_secs: u64) -> Result<()> {
    super::provision::check_build_args(d)?;
    let (healths, coord, coordinator_running) = preflight(d)?;
    if coordinator_running {
        bail!(
            "the coordinator on {} is already running run {}: see `kingmaker deploy status`",
            coord.name,
            d.inv.run.name
        );
    }
    let run_dir = coord.run_dir(&d.inv.run.name);
    let started = d.ssh.run(
        coord,
        &format!("test -e {}/run.json", super::ssh::quote(&run_dir)),
        None,
    )?;
    if started.ok() {
        bail!(
            "run {} was launched before ({run_dir}/run.json exists on {}): use `kingmaker deploy resume` to continue \
             it, or `kingmaker deploy teardown --delete-data` to start over",
            d.inv.run.name,
            coord.name
        );
    }
    start_workers(d, &healths)?;
    if start_coordinator(d, settle_secs)? {
        print_watch_hints(d);
    }
    Ok(())
}

pub fn resume(d: &Deployment, settle_secs: u64, stop_timeout: u64) -> Result<()> {
    let (healths, coord, coordinator_running) = preflight(d)?;
    let phase = super::status::run_phase(d).unwrap_or_default();
    if phase == "complete" {
        println!(
            "run {} is complete: `kingmaker deploy fetch --inventory {}` downloads it",
            d.inv.run.name,
            d.inv_hint()
        );
        print_teardown_hint(d, &healths);
        return Ok(());
    }
    let down: Vec<&str> = healths
        .iter()
        .filter(|(h, hl)| h.name != coord.name && !hl.running())
        .map(|(h, _)| h.name.as_str())
        .collect();
    if coordinator_running && down.is_empty() {
        println!(
            "every service of run {} is running; nothing to resume",
            d.inv.run.name
        );
        print_watch_hints(d);
        return Ok(());
    }
    if coordinator_running {
        // The coordinator lost workers: it stops on its own within its heartbeat timeout; make
        // sure it has before the workers come back, so that it resumes from its checkpoint.
        println!(
            "[{}] worker(s) {} are down: stopping the coordinator so it resumes with them",
            coord.name,
            down.join(", ")
        );
        let out = host::service(&d.ssh, &d.inv, coord, &format!("km_stop {stop_timeout}"))?;
        println!("[{}] coordinator {out}", coord.name);
    }
    let mut restarting: Vec<String> = down.iter().map(|h| format!("the worker on {h}")).collect();
    restarting.push(format!(
        "the coordinator on {}{}",
        coord.name,
        if coordinator_running {
            " (stopped above)"
        } else {
            ""
        }
    ));
    let running: Vec<&str> = healths
        .iter()
        .filter(|(h, hl)| h.name != coord.name && hl.running())
        .map(|(h, _)| h.name.as_str())
        .collect();
    println!(
        "restarting: {}{}",
        restarting.join(", "),
        if running.is_empty() {
            String::new()
        } else {
            format!("; left running: the worker(s) on {}", running.join(", "))
        }
    );
    start_workers(d, &healths)?;
    if start_coordinator(d, settle_secs)? {
        print_watch_hints(d);
    }
    Ok(())
}

/// The preflight of both: every host's health, the coordinator's host, and whether the
/// coordinator runs.
fn preflight(d: &Deployment) -> Result<(Healths<'_>, &Host, bool)> {
    let healths = d.preflight()?;
    let coord = d.inv.coordinator();
    let (_, health) = healths
        .iter()
        .find(|(h, _)| h.name == coord.name)
        .expect("probed");
    let running = health.running();
    Ok((healths, coord, running))
}

/// Every host with what its probe found.
type Healths<'d> = Vec<(&'d Host, Health)>;

/// Start the workers that are down (a teardown since the build, a host restarted), and wait until
/// every worker listens: the readers of layers kept on them go through their services.
pub(super) fn ensure_workers(d: &Deployment) -> Result<()> {
    let healths = d.preflight()?;
    start_workers(d, &healths)
}

/// Start every worker that is not running, then wait until every worker listens.
fn start_workers(d: &Deployment, healths: &[(&Host, Health)]) -> Result<()> {
    let workers = d.inv.workers();
    if workers.is_empty() {
        println!("no worker hosts: the coordinator builds on its own cores (embedded)");
        return Ok(());
    }
    let results = d.each(&workers, |h| {
        let running = healths
            .iter()
            .any(|(x, hl)| x.name == h.name && hl.running());
        let what = if running {
            "already running"
        } else {
            host::service(&d.ssh, &d.inv, h, "km_start")?;
            "started"
        };
        let pid = wait_listening(d, h)?;
        Ok(format!(
            "worker {what} (pid {pid}); listening on {}",
            h.listen(d.inv.run.worker_port)
        ))
    });
    report(results, |h, msg| println!("[{}] {msg}", h.name))
}

/// Wait until this run's worker listens on its port; its pid. The port is checked to be its own:
/// another run's worker (or any other process) listening there is named, not taken for it.
fn wait_listening(d: &Deployment, h: &Host) -> Result<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let health = host::probe(&d.ssh, &d.inv, h)?;
        // Where the host cannot name the listener (no ss, no /proc/PID/fd to read), a worker
        // that runs while the port listens is taken for it, as before this check.
        if health.listening && health.running() && (health.listener_ours || health.listener_unknown)
        {
            return Ok(health.pid.unwrap_or(0));
        }
        let taken = health.other_listener_pid.is_some();
        if !health.running() || (taken && Instant::now() > deadline) {
            let log = since_last_start(&host::log_tail(&d.ssh, &d.inv, h, 15));
            if taken || log.contains("Address already in use") {
                bail!("{}", port_clash(d, h, &health, &log));
            }
            if !health.running() {
                bail!(
                    "host {}: the worker exited at start; its log:\n{}",
                    h.name,
                    indent(&log)
                );
            }
        }
        if Instant::now() > deadline {
            bail!(
                "host {}: the worker runs but does not listen on port {} after 30s; its log:\n{}",
                h.name,
                d.inv.run.worker_port,
                indent(&host::log_tail(&d.ssh, &d.inv, h, 15))
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// A nohup log's lines since the last start (the log file keeps earlier starts' lines).
fn since_last_start(log: &str) -> String {
    match log.rfind("=== ") {
        Some(i) if log[i..].contains(" starting the ") => log[i..].to_string(),
        _ => log.to_string(),
    }
}

/// The message for a worker port held by someone else: who holds it, and what to do.
fn port_clash(d: &Deployment, h: &Host, health: &Health, log: &str) -> String {
    let port = d.inv.run.worker_port;
    let holder = match (
        health.other_listener_pid,
        health.other_listener_run.as_str(),
    ) {
        (Some(pid), other) if !other.is_empty() => format!(
            "the worker of run {other} (pid {pid}: {})",
            health.other_listener_cmd.trim()
        ),
        (Some(pid), _) => format!("pid {pid} ({})", health.other_listener_cmd.trim()),
        (None, _) => "another process".to_string(),
    };
    let ours = if health.running() {
        format!("the worker of run {} does not get it", d.inv.run.name)
    } else {
        let line = log
            .lines()
            .rev()
            .find(|l| l.contains("Address already in use"))
            .map(|l| format!(": \"{}\"", l.trim()))
            .unwrap_or_default();
        format!("the worker of run {} exited{line}", d.inv.run.name)
    };
    format!(
        "host {}: port {port} ({}) is taken by {holder}; {ours}. Runs on one host need ports of \
         their own: set `worker_port` in [run] of {} to a port no run there uses (`kingmaker deploy \
         list` shows theirs), provision, then launch again; or stop what holds it",
        h.name,
        h.listen(port),
        d.inv_hint(),
    )
}

/// Start the coordinator and watch it for `settle_secs`: a build that dies at once (bad
/// arguments, a wrong token, an unreachable worker) is reported with its log. True while it runs,
/// false when the build is already complete.
fn start_coordinator(d: &Deployment, settle_secs: u64) -> Result<bool> {
    let coord = d.inv.coordinator();
    let msg = host::service(&d.ssh, &d.inv, coord, "km_start")?;
    println!("[{}] coordinator {msg}", coord.name);
    let deadline = Instant::now() + Duration::from_secs(settle_secs);
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let health = host::probe(&d.ssh, &d.inv, coord)?;
        if !health.running() {
            let phase = super::status::run_phase(d).unwrap_or_default();
            if phase == "complete" {
                println!(
                    "[{}] the build is complete: `kingmaker deploy fetch --inventory {}` downloads it",
                    coord.name,
                    d.inv_hint()
                );
                if let Ok(healths) = d.probe_all() {
                    print_teardown_hint(d, &healths);
                }
                return Ok(false);
            }
            bail!(
                "host {}: the coordinator stopped ({}); its log:\n{}",
                coord.name,
                health.state,
                indent(&host::log_tail(&d.ssh, &d.inv, coord, 20))
            );
        }
        if Instant::now() >= deadline {
            println!(
                "[{}] coordinator running (pid {})",
                coord.name,
                health.pid.unwrap_or(0)
            );
            return Ok(true);
        }
    }
}

fn print_watch_hints(d: &Deployment) {
    let coord = d.inv.coordinator();
    let inv = d.inv_hint();
    println!(
        "run {} is going; it survives this SSH session. Watch it with:",
        d.inv.run.name
    );
    println!("  kingmaker deploy status --inventory {inv} --watch 60");
    let logs = match host::probe(&d.ssh, &d.inv, coord).map(|h| h.supervisor) {
        Ok(s) if s == "systemd" => format!("journalctl -fu {}", coord.unit(&d.inv.run.name)),
        _ => format!("tail -F {}", coord.log_file(&d.inv.run.name)),
    };
    println!("  {} {}", d.ssh.hint(coord), super::ssh::quote(&logs));
    println!(
        "After a crash, a reboot or a lost worker: `kingmaker deploy resume --inventory {inv}`; when it is \
         complete: `kingmaker deploy fetch --inventory {inv}`."
    );
}

/// A complete run's workers that still run are idle, and their servers billed: say how to stop
/// them (after fetch, which collects layers kept on them).
fn print_teardown_hint(d: &Deployment, healths: &[(&Host, Health)]) {
    let idle: Vec<&str> = healths
        .iter()
        .filter(|(h, hl)| h.role == super::inventory::Role::Worker && hl.running())
        .map(|(h, _)| h.name.as_str())
        .collect();
    if idle.is_empty() {
        return;
    }
    println!(
        "its workers on {} still run, idle: once the release is fetched, `kingmaker deploy teardown \
         --inventory {}` stops them (`--delete-data` frees their disks), then delete the servers",
        idle.join(", "),
        d.inv_hint()
    );
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_port_clash_is_read_from_the_last_start_only() {
        let log = "=== 2026-12-07T10:00:00Z starting the worker of run a\n\
                   error: cannot listen on 10.0.0.11:7070: Address already in use\n\
                   === 2026-12-07T11:00:00Z starting the worker of run a\n\
                   error: out of memory\n";
        let last = super::since_last_start(log);
        assert!(last.starts_with("=== 2026-12-07T11:00:00Z"), "{last}");
        assert!(!last.contains("Address already in use"));
        assert_eq!(super::since_last_start("journal lines"), "journal lines");
    }
}
