//! `deploy teardown`: stop the run's services (the coordinator first, so it checkpoints while
//! its workers still answer); with `--delete-data`, remove the run's data and secrets as well.

use super::host::{self, prelude};
use super::ssh::quote;
use super::{report, status, units, Deployment};
use anyhow::Result;

pub fn run(d: &Deployment, delete_data: bool, stop_timeout: u64) -> Result<()> {
    let coord = d.inv.coordinator();
    let stop = format!("km_stop {stop_timeout}");
    let first = d.each(&[coord], |h| host::service(&d.ssh, &d.inv, h, &stop));
    let killed = first
        .iter()
        .any(|(_, r)| r.as_ref().is_ok_and(|msg| msg.contains("killed after")));
    report(first, |h, msg| println!("[{}] coordinator {msg}", h.name))?;
    if killed {
        // It was still in a wave: what it did since its last checkpoint will be done again.
        let since = match status::run_status(d) {
            Ok(s) => match s["checkpoint"].as_object() {
                Some(c) => format!(
                    "its last checkpoint, layer {} after wave {}",
                    c["layer"].as_str().unwrap_or("?"),
                    c["last"]["wave"]
                ),
                None => "the start of its layer (it has no checkpoint yet)".to_string(),
            },
            Err(e) => format!("its last checkpoint (which one could not be read: {e:#})"),
        };
        println!(
            "the coordinator did not finish its wave within {stop_timeout} s and was killed: the \
             run resumes from {since}. To keep the wave, give --stop-timeout more than a wave \
             takes (`deploy status` shows the rate)."
        );
    }
    let workers = d.inv.workers();
    let rest = d.each(&workers, |h| host::service(&d.ssh, &d.inv, h, &stop));
    report(rest, |h, msg| println!("[{}] worker {msg}", h.name))?;
    // The servers `deploy publish` started: a release in parts is no longer served.
    for h in &workers {
        if super::publish::stop_serving(d, h)? {
            println!("[{}] stopped serving its published parts", h.name);
        }
    }
    if !delete_data {
        println!(
            "services stopped; data kept (the run continues with `kingmaker deploy resume`; \
             `teardown --delete-data` removes it)"
        );
        return Ok(());
    }
    let name = &d.inv.run.name;
    let results = d.each(&d.all_hosts(), |h| {
        // Only this run's files: other runs on the host have their own environment file, unit
        // instance, pid file, log and data, and the unit templates are shared. An older
        // kingmaker's coordinator.env (and its unit) go only when they name this run.
        let script = format!(
            "{}set -e\n\
             rm -rf {data}\n\
             rm -f \"$KM_ENV\" \"$KM_PID\" \"$KM_LOG\"\n\
             legacy=no\n\
             if [ -n \"$KM_LEGACY_ENV\" ] && [ \"$(km_env_value KINGMAKER_RUN \"$KM_LEGACY_ENV\")\" = \"$KM_RUN\" ]; then\n\
               rm -f \"$KM_LEGACY_ENV\"\n\
               legacy=yes\n\
             fi\n\
             if [ \"$KM_SUP\" = systemd ]; then\n\
               rm -rf /etc/systemd/system/{unit}.d\n\
               if [ $legacy = yes ]; then\n\
                 systemctl disable {legacy_unit} >/dev/null 2>&1 || true\n\
                 rm -rf /etc/systemd/system/{legacy_unit} /etc/systemd/system/{legacy_unit}.d\n\
               fi\n\
               systemctl daemon-reload\n\
             fi\n",
            prelude(&d.inv, h),
            data = quote(&h.run_data(name)),
            unit = quote(&h.unit(name)),
            legacy_unit = units::LEGACY_COORDINATOR_UNIT,
        );
        d.ssh.run_ok(h, "deleting the run's data", &script, None)?;
        Ok(format!(
            "deleted {} and the run's environment file (token), pid file and log; other runs' \
             files are untouched",
            h.run_data(name)
        ))
    });
    report(results, |h, msg| println!("[{}] {msg}", h.name))?;
    println!(
        "run {name} torn down; its data is gone. The binaries stay in each host's install_dir."
    );
    Ok(())
}
