//! `deploy provision`: make every host ready to run its part. Idempotent.

use super::host::{self, describe_supervisor, prelude};
use super::inventory::{parse_bytes, Host, Role};
use super::ssh::quote;
use super::{
    binary_name, fingerprint, human_bytes, list, report, sha256_file, token_or_create, units,
    Deployment,
};
use anyhow::{bail, Result};
use std::collections::BTreeSet;

pub fn run(d: &Deployment) -> Result<()> {
    check_build_args(d)?;
    check_shares(d)?;
    check_other_runs(d)?;
    let token = token_or_create(&d.inv.token_file())?;
    // Read the local binaries once, before touching any host.
    let mut binaries = Vec::new();
    for name in ["kingmaker", "kingmaker-worker"] {
        if d.inv.hosts.iter().any(|h| binary_name(h) == name) {
            let path = d.local_binary(name)?;
            binaries.push((name, path.clone(), sha256_file(&path)?));
        }
    }
    println!(
        "provisioning run {} on {} host(s); known hosts pinned in {}",
        d.inv.run.name,
        d.inv.hosts.len(),
        d.inv.known_hosts().display()
    );
    let results = d.each(&d.all_hosts(), |h| {
        let (_, local, sha) = binaries
            .iter()
            .find(|(n, _, _)| *n == binary_name(h))
            .expect("read above");
        provision_host(d, h, &token, local, sha)
    });
    report(results, |h, msg| println!("[{}] {msg}", h.name))?;
    println!("provisioned; start the run with `kingmaker deploy launch --inventory ...`");
    Ok(())
}

/// The build's arguments must parse, here, before any server is touched.
pub fn check_build_args(d: &Deployment) -> Result<()> {
    let argv = units::build_argv(&d.inv);
    if let Err(e) = (d.check_build)(&argv) {
        bail!(
            "the inventory's run (game, options, build_args) is not a valid `kingmaker build`: {}",
            e.render().to_string().trim()
        );
    }
    Ok(())
}

/// Every host holds its share of the job, as `kingmaker plan` counts it with what the hosts
/// have (their cores, memory and free disk, read over SSH): checked before any host is changed.
pub fn check_shares(d: &Deployment) -> Result<()> {
    use crate::cmd::plan::{inventory_spec, job_shape};
    use kingmaker_coordinator::plan::{plan, HostSpec, Rates};
    let healths = d.probe_all()?;
    let hosts: Vec<HostSpec> = healths
        .iter()
        .map(|(h, health)| -> Result<HostSpec> {
            Ok(HostSpec {
                name: h.name.clone(),
                role: match h.role {
                    Role::Coordinator => "coordinator",
                    Role::Worker => "worker",
                }
                .into(),
                cores: h
                    .threads
                    .map(|t| t as u64)
                    .or_else(|| health.cores.trim().parse().ok())
                    .unwrap_or(1),
                memory: health.mem_total,
                disk: Some(health.disk_free),
                budget: h.memory_budget.as_deref().map(parse_bytes).transpose()?,
            })
        })
        .collect::<Result<_>>()?;
    let spec = inventory_spec(&d.inv)?;
    let (job, _) = job_shape(&spec, None, &d.inv.run.coordinator_args().0, false, &hosts)?;
    let bill = plan(&job, &hosts, &Rates::unknown());
    let lacking: Vec<String> = bill
        .hosts
        .iter()
        .filter(|h| !h.lacks.is_empty())
        .map(|h| format!("host {}: {}", h.name, h.lacks.join("; ")))
        .collect();
    if !lacking.is_empty() {
        bail!(
            "these hosts cannot hold the run {} (nothing was changed on any host): {}. Rent \
             more, or add hosts (`kingmaker plan --inventory {}` prices it)",
            d.inv.run.name,
            lacking.join(" | "),
            d.inv_hint()
        );
    }
    Ok(())
}

/// Other runs on these hosts keep what is theirs: each run has its own environment file, unit,
/// pid file and log, and a worker port no other run uses on the same host (checked before any
/// host is changed; a clash is refused with a free port to take).
fn check_other_runs(d: &Deployment) -> Result<()> {
    let ours = &d.inv.run.name;
    let port = d.inv.run.worker_port;
    let results = d.each(&d.all_hosts(), |h| list::runs_on(&d.ssh, &d.inv, h));
    let mut clashes = Vec::new();
    let mut used = BTreeSet::new();
    let mut others = BTreeSet::new();
    for (h, r) in results {
        for e in r? {
            if &e.run == ours {
                continue;
            }
            others.insert(e.run.clone());
            let Some(p) = e.port().filter(|_| e.role == "worker") else {
                continue;
            };
            used.insert(p);
            let worker_here = d.inv.workers().iter().any(|w| w.name == h.name);
            if p == port && worker_here {
                clashes.push(format!(
                    "host {}: run {}'s worker listens on port {p} there ({}/etc/{}; its worker is {})",
                    h.name, e.run, h.install_dir, e.file, e.state
                ));
            }
        }
    }
    if !clashes.is_empty() {
        let free = (port.saturating_add(1)..=u16::MAX)
            .find(|p| !used.contains(p))
            .unwrap_or(port);
        bail!(
            "run {ours}'s worker_port {port} is another run's on these hosts (nothing was changed on \
             any host): {}. Give run {ours} a port of its own: set `worker_port = {free}` in [run] of \
             {} (let it through the firewall too, docs/operators.md §8), then provision again",
            clashes.join("; "),
            d.inv_hint()
        );
    }
    if !others.is_empty() {
        println!(
            "these hosts also hold run(s) {}: each run has its own environment file (token), unit, \
             pid file, log and worker port; provisioning {ours} changes none of theirs",
            others.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    Ok(())
}

fn provision_host(
    d: &Deployment,
    h: &Host,
    token: &str,
    local: &std::path::Path,
    sha: &str,
) -> Result<String> {
    let inv = &d.inv;
    let health = host::probe(&d.ssh, inv, h)?;
    let mut problems = Vec::new();
    if health.uid != "0" {
        problems.push(format!(
            "commands run as uid {} without root: use user = \"root\" or a user with passwordless sudo (sudo = true)",
            health.uid
        ));
    }
    let local_arch = std::env::consts::ARCH;
    if health.arch != local_arch {
        problems.push(format!(
            "its CPU is {} but the binaries here are built for {local_arch}: build them for {} (run.binaries)",
            health.arch, health.arch
        ));
    }
    let min_free = parse_bytes(&inv.run.min_free_disk)?;
    if health.disk_free < min_free {
        problems.push(format!(
            "only {} free for {} (min_free_disk is {})",
            human_bytes(health.disk_free),
            h.data_dir,
            inv.run.min_free_disk
        ));
    }
    if let Some(m) = &h.memory_budget {
        let budget = parse_bytes(m)?;
        if health.mem_total > 0 && budget > health.mem_total {
            problems.push(format!(
                "memory_budget {m} is more than the host's {}",
                human_bytes(health.mem_total)
            ));
        }
    }
    if h.role == Role::Worker && !health.has_private_address {
        problems.push(format!(
            "private_address {} is not an address of this host: workers listen on the private network only \
             (attach the provider's private network, or fix private_address)",
            h.private_address.map(|a| a.to_string()).unwrap_or_default()
        ));
    }
    let run = &inv.run.name;
    // A host provisioned by an older kingmaker keeps its coordinator's settings in the one
    // coordinator.env: this run's are moved to its own file (another run's are left alone).
    let legacy_ours = h.role == Role::Coordinator && &health.legacy_env_run == run;
    if legacy_ours && health.legacy_unit_active {
        problems.push(format!(
            "the coordinator of run {run} runs under {}, the unit of an older kingmaker: stop it first \
             (`systemctl stop {}` there; it checkpoints), then provision again and `kingmaker deploy resume`",
            units::LEGACY_COORDINATOR_UNIT,
            units::LEGACY_COORDINATOR_UNIT
        ));
    }
    if !problems.is_empty() {
        bail!("host {}: {}", h.name, problems.join("; "));
    }
    let systemd = health.supervisor == "systemd";
    let data = match h.role {
        Role::Coordinator => h.run_data(run),
        Role::Worker => h.worker_dir(run),
    };
    let setup = format!(
        "{}set -e\nmkdir -p \"$KM_INSTALL/bin\" \"$KM_INSTALL/etc\" \"$KM_INSTALL/run\" \"$KM_INSTALL/log\" {data}\n\
         chmod 700 \"$KM_INSTALL/etc\"\n\
         if [ \"$KM_SUP\" = systemd ]; then\n\
           id kingmaker >/dev/null 2>&1 || useradd --system --home-dir \"$KM_DATA\" --no-create-home --shell /usr/sbin/nologin kingmaker\n\
           chown -R kingmaker:kingmaker {run_data}\n\
         fi\n",
        prelude(inv, h),
        data = quote(&data),
        run_data = quote(&h.run_data(run)),
    );
    d.ssh.run_ok(h, "creating the directories", &setup, None)?;
    let name = binary_name(h);
    let mut done = Vec::new();
    if health.binary_sha256 != sha {
        d.ssh
            .upload(h, local, &format!("{}/{name}", h.bin_dir()), "755")?;
        done.push(format!("installed {name}"));
    } else {
        done.push(format!("{name} up to date"));
    }
    d.ssh.upload_bytes(
        h,
        units::SERVICE_SCRIPT.as_bytes(),
        &format!("{}/kingmaker-service", h.bin_dir()),
        "755",
    )?;
    d.ssh.upload_bytes(
        h,
        // The inventory as the operator can name it from anywhere on this machine.
        units::env_file(
            inv,
            &std::fs::canonicalize(&d.path).unwrap_or_else(|_| d.path.clone()),
            h,
            token,
        )
        .as_bytes(),
        &h.env_file(run),
        "600",
    )?;
    done.push(format!("token in {} (0600)", h.env_file(run)));
    if health.env_file && !health.token_fp.is_empty() && health.token_fp != fingerprint(token) {
        done.push(format!(
            "WARNING: it held another token for run {run} (fingerprint {}), now this inventory's: \
             another inventory with the same run name? A service running with the old token needs \
             `teardown` and `resume`",
            health.token_fp
        ));
    }
    if legacy_ours {
        let legacy_unit = format!("/etc/systemd/system/{}", units::LEGACY_COORDINATOR_UNIT);
        d.ssh.run_ok(
            h,
            "removing the older kingmaker's coordinator.env",
            &format!(
                "{}rm -f \"$KM_LEGACY_ENV\"\n\
                 if [ \"$KM_SUP\" = systemd ]; then\n\
                   systemctl disable {unit} >/dev/null 2>&1 || true\n\
                   rm -rf {file} {file}.d\n\
                 fi\n",
                prelude(inv, h),
                unit = units::LEGACY_COORDINATOR_UNIT,
                file = quote(&legacy_unit),
            ),
            None,
        )?;
        done.push(format!(
            "moved run {run}'s settings from {} (an older kingmaker's, one for every run) to its own {}",
            h.legacy_env_file(),
            h.env_file(run)
        ));
    } else if h.role == Role::Coordinator && !health.legacy_env_run.is_empty() {
        done.push(format!(
            "left {} of run {} (an older kingmaker's) as it is: provision that run with this kingmaker \
             to give it its own files",
            h.legacy_env_file(),
            health.legacy_env_run
        ));
    }
    if systemd {
        let (unit_name, unit) = units::unit(h);
        d.ssh.upload_bytes(
            h,
            unit.as_bytes(),
            &format!("/etc/systemd/system/{unit_name}"),
            "644",
        )?;
        let dropin_dir = format!("/etc/systemd/system/{}.d", h.unit(run));
        match units::memory_dropin(h) {
            Some(text) => {
                d.ssh.run_ok(
                    h,
                    "creating the drop-in directory",
                    &format!("mkdir -p {}", quote(&dropin_dir)),
                    None,
                )?;
                d.ssh.upload_bytes(
                    h,
                    text.as_bytes(),
                    &format!("{dropin_dir}/memory.conf"),
                    "644",
                )?;
            }
            None => {
                d.ssh.run_ok(
                    h,
                    "removing a memory drop-in",
                    &format!("rm -f {}/memory.conf", quote(&dropin_dir)),
                    None,
                )?;
            }
        }
        d.ssh.run_ok(
            h,
            "systemctl daemon-reload",
            "systemctl daemon-reload",
            None,
        )?;
        done.push(format!("unit {} installed", h.unit(run)));
    }
    Ok(format!(
        "{} {}: {}, {} cores, {} memory, {} free; supervisor: {}",
        h.role.as_str(),
        h.target(),
        done.join(", "),
        health.cores,
        human_bytes(health.mem_total),
        human_bytes(health.disk_free),
        describe_supervisor(&health.supervisor)
    ))
}
