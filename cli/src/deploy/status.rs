//! `deploy status`: one snapshot of the run (`kingmaker status --json` on the coordinator) and of
//! every host's health, from the operator's machine; its exit status says where the run stands
//! (`cmd::status::Standing`). `--watch` takes one every N seconds, through SSH drops, until the
//! run is complete.

use super::host::{self, Health};
use super::inventory::Host;
use super::ssh::{quote, Remote};
use super::{fingerprint, human_bytes, Deployment};
use crate::cmd::status::{duration_words, exit_with, Standing};
use anyhow::{Context, Result};
use kingmaker_coordinator::rundir::DEPLOY_RESUME_ENV;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime};

/// `kingmaker status --json` of the run on the coordinator; `{"phase": "not launched"}` before
/// the run was launched.
pub fn run_status(d: &Deployment) -> Result<Value> {
    let coord = d.inv.coordinator();
    let dir = quote(&coord.run_dir(&d.inv.run.name));
    // The status names the deploy's resume command in its hints.
    let script = format!(
        "if [ ! -e {dir}/run.json ]; then echo '{{\"phase\": \"not launched\"}}'; exit 0; fi\n\
         {DEPLOY_RESUME_ENV}={} exec {}/kingmaker status --json {dir}",
        quote(&resume_command(d)),
        quote(&coord.bin_dir())
    );
    let r = d.ssh.run(coord, &script, None)?;
    // `kingmaker status` exits 3 while the run runs and 4 when it is stopped (0 from a
    // kingmaker from before those).
    let printed = [0, Standing::Running.code(), Standing::Stopped.code()].contains(&r.code);
    if !printed {
        anyhow::bail!(
            "host {}: kingmaker status failed: {}",
            coord.name,
            why_failed(&r)
        );
    }
    serde_json::from_str(&r.stdout)
        .with_context(|| format!("host {}: kingmaker status printed no JSON", coord.name))
}

/// The run's phase: not launched, running, stopped ..., complete.
pub fn run_phase(d: &Deployment) -> Result<String> {
    Ok(run_status(d)?["phase"].as_str().unwrap_or("").to_string())
}

/// Why a remote script failed, in words (ssh killed by a signal reports no exit status).
fn why_failed(r: &Remote) -> String {
    if r.code == -1 && r.stderr.trim().is_empty() {
        return "ssh ended without an exit status (it was killed by a signal, or its connection \
                dropped): try again"
            .to_string();
    }
    host::failure(r)
}

fn resume_command(d: &Deployment) -> String {
    format!("kingmaker deploy resume --inventory {}", d.inv_hint())
}

pub fn run(d: &Deployment, json_out: bool, watch: Option<u64>) -> Result<()> {
    let Some(every) = watch else {
        let snap = Snapshot::take(d);
        snap.print(d, json_out)?;
        if !snap.unreachable.is_empty() {
            eprintln!("kingmaker: error: {}", snap.unreachable.join("\n"));
        }
        exit_with(snap.standing)
    };
    // Watching: a host that cannot be reached (the very drop an operator watches through) is
    // reported and tried again at the next refresh; the run's completion ends the watch.
    let every = Duration::from_secs(every.max(1));
    loop {
        let snap = Snapshot::take(d);
        snap.print(d, json_out)?;
        if !json_out {
            for e in &snap.unreachable {
                println!(
                    "{} could not take the whole snapshot: {e}; trying again in {}",
                    snap.taken_at,
                    duration_words(every.as_secs_f64())
                );
            }
        }
        if snap.standing == Standing::Complete {
            return Ok(());
        }
        std::thread::sleep(every);
        println!();
    }
}

/// Every host's health and the run's status, read in that order: liveness first, so that a run
/// that finishes between the two reads as complete, never as stopped.
struct Snapshot<'a> {
    taken_at: String,
    healths: Vec<(&'a Host, Result<Health>)>,
    run: Value,
    standing: Standing,
    unreachable: Vec<String>,
}

impl<'a> Snapshot<'a> {
    fn take(d: &'a Deployment) -> Snapshot<'a> {
        let taken_at = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
        let mut healths = d.each(&d.all_hosts(), |h| host::probe(&d.ssh, &d.inv, h));
        let run = run_status(d);
        let coord = d.inv.coordinator();
        let coord_down = |healths: &[(&Host, Result<Health>)]| {
            healths
                .iter()
                .any(|(h, r)| h.name == coord.name && r.as_ref().is_ok_and(|hl| !hl.running()))
        };
        let mut run = match run {
            Ok(v) => v,
            Err(e) => json!({"phase": "unknown", "error": format!("{e:#}")}),
        };
        // `kingmaker status` judges by the run directory's lock; the supervisor knows better (a
        // killed coordinator left unreaped by a container's init still holds it). The probe came
        // first, so a coordinator started since reads as down: ask the supervisor again.
        if run["phase"] == "running" && coord_down(&healths) {
            let again = host::probe(&d.ssh, &d.inv, coord);
            if again.as_ref().is_ok_and(|hl| !hl.running()) {
                run["phase"] = json!(format!(
                    "stopped (the coordinator is not running: `{}`)",
                    resume_command(d)
                ));
            }
            if let Some(slot) = healths.iter_mut().find(|(h, _)| h.name == coord.name) {
                slot.1 = again;
            }
        }
        // The run's status failing on a coordinator that could not be probed says it twice.
        let coord_probed = healths
            .iter()
            .any(|(h, r)| h.name == coord.name && r.is_ok());
        let unreachable: Vec<String> = healths
            .iter()
            .filter_map(|(_, r)| r.as_ref().err().map(|e| format!("{e:#}")))
            .chain(
                run["error"]
                    .as_str()
                    .filter(|_| coord_probed)
                    .map(String::from),
            )
            .collect();
        let phase = run["phase"].as_str().unwrap_or("unknown");
        let standing = match Standing::of_phase(phase) {
            // A complete run is complete whatever its workers do now.
            Standing::Complete => Standing::Complete,
            _ if !unreachable.is_empty() => Standing::Unreachable,
            s => s,
        };
        Snapshot {
            taken_at,
            healths,
            run,
            standing,
            unreachable,
        }
    }

    fn complete(&self) -> bool {
        self.standing == Standing::Complete
    }

    /// A host's service in one word: its supervisor's, except a coordinator that ended because
    /// the run is complete, which is `finished`.
    fn service(&self, h: &Host, hl: &Health) -> String {
        if self.complete() && h.role == super::inventory::Role::Coordinator && !hl.running() {
            "finished".into()
        } else {
            hl.state.clone()
        }
    }

    fn print(&self, d: &Deployment, json_out: bool) -> Result<()> {
        let token_fp = d.token().map(|t| fingerprint(&t)).ok();
        if json_out {
            let hosts: Vec<Value> = (self.healths.iter())
                .map(|(h, r)| match r {
                    Ok(hl) => json!({
                        "name": h.name, "role": h.role.as_str(), "address": h.address,
                        "reachable": true, "service": self.service(h, hl), "health": hl,
                        "token_matches": token_fp.as_deref().map(|fp| hl.token_fp == fp),
                    }),
                    Err(e) => json!({
                        "name": h.name, "role": h.role.as_str(), "address": h.address,
                        "reachable": false, "error": format!("{e:#}"),
                    }),
                })
                .collect();
            let standing = format!("{:?}", self.standing).to_lowercase();
            let out = json!({
                "run": d.inv.run.name, "taken_at": self.taken_at, "standing": standing,
                "exit_status": self.standing.code(), "status": self.run, "hosts": hosts,
            });
            println!("{}", serde_json::to_string_pretty(&out)?);
            return Ok(());
        }
        println!("{}", self.taken_at);
        print_run(d, &self.run);
        println!(
            "{:<12} {:<12} {:<8} {:<8} {:<10} {:>8} {:>11} {:>11} {:<16} token",
            "host", "role", "ssh", "super", "service", "pid", "disk free", "mem avail", "load"
        );
        let mut tails = Vec::new();
        for (h, r) in &self.healths {
            match r {
                Ok(hl) => {
                    let service = self.service(h, hl);
                    println!(
                        "{:<12} {:<12} {:<8} {:<8} {:<10} {:>8} {:>11} {:>11} {:<16} {}",
                        h.name,
                        h.role.as_str(),
                        "ok",
                        hl.supervisor,
                        service,
                        hl.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                        human_bytes(hl.disk_free),
                        human_bytes(hl.mem_available),
                        hl.load,
                        token_word(hl, token_fp.as_deref())
                    );
                    if !hl.running() && service != "finished" {
                        tails.push(*h);
                    }
                }
                Err(e) => println!("{:<12} {:<12} UNREACHABLE: {e:#}", h.name, h.role.as_str()),
            }
        }
        for h in tails {
            let tail = host::log_tail(&d.ssh, &d.inv, h, 3);
            if !tail.trim().is_empty() {
                println!("{} (not running), last log lines:", h.name);
                for l in tail.lines() {
                    println!("    {l}");
                }
            }
        }
        Ok(())
    }
}

fn token_word(h: &Health, ours: Option<&str>) -> &'static str {
    match ours {
        None => "?",
        Some(_) if h.token_fp.is_empty() => "missing",
        Some(fp) if h.token_fp != fp => "DIFFERENT",
        Some(fp) if h.running() && !h.running_token_fp.is_empty() && h.running_token_fp != fp => {
            "STALE"
        }
        Some(_) => "ok",
    }
}

/// The run's lines: its three names (the inventory's run, the game, the run id on the workers),
/// its phase, progress, last checkpoint and what is left.
fn print_run(d: &Deployment, s: &Value) {
    let run = &d.inv.run;
    let phase = s["phase"].as_str().unwrap_or("unknown");
    println!("run {} (the inventory's run name): {phase}", run.name);
    let id = s["run_id"]
        .as_str()
        .map(|id| format!("; run id on the workers (their data directories): {id}"))
        .unwrap_or_default();
    println!("  game: {} {}{id}", run.game, run.options.join(" "));
    if let Some(e) = s["error"].as_str() {
        println!("  {e}");
    }
    let finished = s["finished"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .filter(|names| !names.is_empty())
        .unwrap_or_else(|| "none".into());
    let p = &s["progress"];
    if phase == "complete" {
        println!(
            "  every layer finished ({finished}); `kingmaker deploy fetch --inventory {}` packs and \
             downloads the release",
            d.inv_hint()
        );
        return;
    }
    if s["activity"] == "summarizing" {
        println!("  every layer solved; computing the summary's counts and classes");
    } else if let Some(w) = p["writing"]
        .as_object()
        .filter(|_| s["activity"] == "writing")
    {
        println!(
            "  writing the table of layer {}: {} {} of {}; finished layers: {finished}",
            p["layer"].as_str().unwrap_or("?"),
            w["step"].as_str().unwrap_or("?"),
            w["done"],
            w["total"]
        );
    } else if p.is_object() {
        let states = p["states"].as_f64().unwrap_or(0.0).max(1.0);
        let decided = p["decided_total"].as_f64().unwrap_or(0.0);
        // A stopped run's rate is history: say so.
        let rate = p["rate"].as_f64().unwrap_or(0.0);
        let rate = if phase == "running" {
            format!("{rate:.0} states/s")
        } else {
            format!("{rate:.0} states/s before it stopped")
        };
        println!(
            "  layer {} wave {}: {:.1}% decided, {rate}; finished layers: {finished}",
            p["layer"].as_str().unwrap_or("?"),
            p["wave"],
            100.0 * decided / states,
        );
    }
    if let Some(c) = s["checkpoint"].as_object() {
        let age = s["checkpoint_age_seconds"]
            .as_f64()
            .map(|a| format!(", {} ago", duration_words(a)))
            .unwrap_or_default();
        println!(
            "  last checkpoint: layer {} after wave {}{age}",
            c["layer"].as_str().unwrap_or("?"),
            c["last"]["wave"]
        );
    }
    if let Some(eta) = s["eta"].as_str() {
        println!("  eta: {eta}");
    }
}
