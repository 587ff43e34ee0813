//! The files deploy installs on a host: the service script, the systemd units (from
//! `deploy/systemd/`), memory drop-ins and the run's environment files.

use super::inventory::{parse_bytes, Host, Inventory, Role};
use std::path::Path;

pub const SERVICE_SCRIPT: &str = include_str!("../../../deploy/kingmaker-service");
pub const WORKER_UNIT: &str = include_str!("../../../deploy/systemd/kingmaker-worker@.service");
pub const COORDINATOR_UNIT: &str =
    include_str!("../../../deploy/systemd/kingmaker-coordinator@.service");
/// The unit an older kingmaker installed for a host's one coordinator (`coordinator.env`).
pub const LEGACY_COORDINATOR_UNIT: &str = "kingmaker-coordinator.service";

/// The prefix the unit templates are written with; replaced by the host's install_dir.
const TEMPLATE_PREFIX: &str = "/opt/kingmaker";

/// The unit template for a host's role: (file name under /etc/systemd/system, contents); each run
/// is an instance of it (`Host::unit`).
pub fn unit(host: &Host) -> (&'static str, String) {
    let (name, text) = match host.role {
        Role::Coordinator => ("kingmaker-coordinator@.service", COORDINATOR_UNIT),
        Role::Worker => ("kingmaker-worker@.service", WORKER_UNIT),
    };
    (name, text.replace(TEMPLATE_PREFIX, &host.install_dir))
}

/// A drop-in with the host's memory budget (MemoryMax), if it has one.
pub fn memory_dropin(host: &Host) -> Option<String> {
    let bytes = parse_bytes(host.memory_budget.as_deref()?).ok()?;
    Some(format!(
        "# Written by `kingmaker deploy provision` from the inventory's memory_budget.\n[Service]\nMemoryMax={bytes}\n"
    ))
}

/// The environment file of a host's service. It holds the token: install it with mode 0600.
/// Values are double-quoted words (the inventory refuses quotes, `$` and spaces inside them), which
/// systemd's EnvironmentFile= and a POSIX shell's `.` read alike.
pub fn env_file(inv: &Inventory, inventory: &Path, host: &Host, token: &str) -> String {
    let run = &inv.run;
    let mut vars: Vec<(&str, String)> = vec![
        ("KINGMAKER_RUN", run.name.clone()),
        ("KINGMAKER_BIN", host.bin_dir()),
        (
            "KINGMAKER_THREADS",
            host.threads.map(|t| t.to_string()).unwrap_or_default(),
        ),
    ];
    match host.role {
        Role::Worker => {
            vars.push(("KINGMAKER_LISTEN", host.listen(run.worker_port)));
            vars.push(("KINGMAKER_DATA_DIR", host.worker_dir(&run.name)));
            vars.push(("KINGMAKER_WORKER_ARGS", run.worker_args.join(" ")));
        }
        Role::Coordinator => {
            let (build, resume) = run.coordinator_args();
            vars.push(("KINGMAKER_RUN_DIR", host.run_dir(&run.name)));
            vars.push(("KINGMAKER_BUILD_ARGS", build.join(" ")));
            vars.push(("KINGMAKER_RESUME_ARGS", resume.join(" ")));
            vars.push(("KINGMAKER_WORKERS", inv.worker_addrs().join(",")));
            // The coordinator's hints name the deploy command that resumes it, with this
            // inventory, where the path can be written between the file's double quotes as it is.
            let path = inventory.display().to_string();
            if !path.contains(['"', '$', '`', '\\', ' ', '\n']) {
                vars.push((
                    kingmaker_coordinator::rundir::DEPLOY_RESUME_ENV,
                    format!("kingmaker deploy resume --inventory {path}"),
                ));
            }
        }
    }
    vars.push(("KINGMAKER_TOKEN", token.to_string()));
    let mut text = format!(
        "# The {} of Kingmaker run {}: written by `kingmaker deploy provision`.\n\
         # Mode 0600, owner root: it holds the run's token. Do not copy it anywhere.\n",
        host.role.as_str(),
        run.name
    );
    for (k, v) in vars {
        text.push_str(&format!("{k}=\"{v}\"\n"));
    }
    text
}

/// Those of `build_args` that `kingmaker resume` takes too (`--worker-timeout 2`, `--threads 8`,
/// ...), so that a resumed run keeps the settings it was built with.
pub(crate) fn resume_takes(build_args: &[String]) -> Vec<String> {
    use clap::Args;
    let resume = crate::cmd::resume::ResumeArgs::augment_args(clap::Command::new("resume"));
    let mut out = Vec::new();
    let mut words = build_args.iter().peekable();
    while let Some(word) = words.next() {
        let Some(option) = word.strip_prefix("--") else {
            continue;
        };
        let name = option.split('=').next().unwrap_or(option);
        let Some(arg) = resume.get_arguments().find(|a| a.get_long() == Some(name)) else {
            continue;
        };
        out.push(word.clone());
        let takes_value = arg.get_action().takes_values();
        if takes_value && !option.contains('=') {
            if let Some(value) = words.next() {
                out.push(value.clone());
            }
        }
    }
    out
}

/// The `kingmaker build` arguments deploy will use, as a list (for checking them locally).
pub fn build_argv(inv: &Inventory) -> Vec<String> {
    let run = &inv.run;
    let mut v = vec!["kingmaker".to_string(), "build".into(), run.game.clone()];
    v.extend(run.options.iter().cloned());
    v.extend([
        "--checkpoint-every-secs".into(),
        run.checkpoint_every_secs.to_string(),
    ]);
    v.extend([
        "--checkpoint-every-waves".into(),
        run.checkpoint_every_waves.to_string(),
    ]);
    v.extend(run.build_args.iter().cloned());
    // The service passes the workers (kingmaker-service), which some options require.
    v.extend(["--workers".into(), inv.worker_addrs().join(",")]);
    v.extend(["--out".into(), "/nonexistent/check".into()]);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_run_keeps_the_build_options_resume_takes() {
        let words = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            resume_takes(&words(
                "--worker-timeout 2 --shard-size 64 --threads=3 --no-symmetry"
            )),
            words("--worker-timeout 2 --threads=3")
        );
    }

    #[test]
    fn units_follow_the_install_dir() {
        let text = include_str!("../../../deploy/inventory.example.toml")
            .replace("/opt/kingmaker", "/srv/km");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inv.toml");
        std::fs::write(&path, text).unwrap();
        let inv = Inventory::load(&path).unwrap();
        let unit_of = unit;
        let (name, unit) = unit_of(inv.workers()[0]);
        assert_eq!(name, "kingmaker-worker@.service");
        assert!(unit.contains("EnvironmentFile=/srv/km/etc/worker-%i.env"));
        assert!(unit.contains("ExecStart=/srv/km/bin/kingmaker-service worker"));
        assert!(!unit.contains("/opt/kingmaker"));
        let (name, unit) = unit_of(inv.coordinator());
        assert_eq!(name, "kingmaker-coordinator@.service");
        assert!(unit.contains("EnvironmentFile=/srv/km/etc/coordinator-%i.env"));
        assert_eq!(
            inv.coordinator().unit("cc3p-2"),
            "kingmaker-coordinator@cc3p-2.service"
        );
        assert_eq!(
            inv.coordinator().env_file("cc3p-2"),
            "/srv/km/etc/coordinator-cc3p-2.env"
        );
        let env = env_file(
            &inv,
            Path::new("/ops/cc3p-2.toml"),
            inv.coordinator(),
            "secret",
        );
        assert!(env.contains(
            "KINGMAKER_DEPLOY_RESUME=\"kingmaker deploy resume --inventory /ops/cc3p-2.toml\""
        ));
        assert!(env.contains("KINGMAKER_WORKERS=\"10.0.0.11:7070,10.0.0.12:7070\""));
        assert!(env.contains("KINGMAKER_BUILD_ARGS=\"cc3p --level 1 --checkpoint-every-secs 600"));
        assert!(env.contains("KINGMAKER_TOKEN=\"secret\""));
        let w = env_file(
            &inv,
            Path::new("/ops/cc3p-2.toml"),
            inv.workers()[1],
            "secret",
        );
        assert!(w.contains("KINGMAKER_LISTEN=\"10.0.0.12:7070\""));
        assert_eq!(
            memory_dropin(inv.workers()[0]).unwrap().lines().last(),
            Some("MemoryMax=128849018880")
        );
    }
}
