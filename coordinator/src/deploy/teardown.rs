//! `deploy teardown`: stop the run's services (the coordinator first, so it checkpoints while
//! its workers still answer); with `--delete-data`, remove the run's data and secrets as well.

use super::host::{self, prelude};
use super::inventory::Role;
use super::ssh::quote;
use super::{report, Deployment};
use anyhow::Result;

pub fn run(d: &Deployment, delete_data: bool, stop_timeout: u64) -> Result<()> {
    let coord = d.inv.coordinator();
    let stop = format!("km_stop {stop_timeout}");
    let first = d.each(&[coord], |h| host::service(&d.ssh, &d.inv, h, &stop));
    report(first, |h, msg| println!("[{}] coordinator {msg}", h.name))?;
    let workers = d.inv.workers();
    let rest = d.each(&workers, |h| host::service(&d.ssh, &d.inv, h, &stop));
    report(rest, |h, msg| println!("[{}] worker {msg}", h.name))?;
    if !delete_data {
        println!(
            "services stopped; data kept (the run continues with `kingmaker deploy resume`; \
             `teardown --delete-data` removes it)"
        );
        return Ok(());
    }
    let name = &d.inv.run.name;
    let results = d.each(&d.all_hosts(), |h| {
        let script = format!(
            "{}set -e\n\
             rm -rf {data}\n\
             rm -f \"$KM_ENV\" \"$KM_PID\" \"$KM_LOG\"\n\
             if [ \"$KM_SUP\" = systemd ]; then\n\
               rm -rf /etc/systemd/system/{unit}.d\n\
               {coordinator_unit}\
               systemctl daemon-reload\n\
             fi\n",
            prelude(&d.inv, h),
            data = quote(&h.run_data(name)),
            unit = quote(&h.unit(name)),
            coordinator_unit = if h.role == Role::Coordinator {
                "rm -f /etc/systemd/system/kingmaker-coordinator.service\n"
            } else {
                ""
            },
        );
        d.ssh.run_ok(h, "deleting the run's data", &script, None)?;
        Ok(format!(
            "deleted {} and the run's environment file (token), pid file and log",
            h.run_data(name)
        ))
    });
    report(results, |h, msg| println!("[{}] {msg}", h.name))?;
    println!(
        "run {name} torn down; its data is gone. The binaries stay in each host's install_dir."
    );
    Ok(())
}
