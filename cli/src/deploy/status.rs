//! `deploy status`: the run's progress (`kingmaker status --json` on the coordinator) and every
//! host's health, from the operator's machine.

use super::host::{self, Health};
use super::ssh::quote;
use super::{fingerprint, human_bytes, Deployment};
use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::time::Duration;

/// `kingmaker status --json` of the run on the coordinator; Null before the run was launched.
pub fn run_status(d: &Deployment) -> Result<Value> {
    let coord = d.inv.coordinator();
    let dir = quote(&coord.run_dir(&d.inv.run.name));
    let script = format!(
        "if [ ! -e {dir}/run.json ]; then echo '{{\"phase\": \"not launched\"}}'; exit 0; fi\n\
         exec {}/kingmaker status --json {dir}",
        quote(&coord.bin_dir())
    );
    let r = d.ssh.run(coord, &script, None)?;
    if !r.ok() {
        anyhow::bail!(
            "host {}: kingmaker status failed: {}",
            coord.name,
            host::failure(&r)
        );
    }
    serde_json::from_str(&r.stdout)
        .with_context(|| format!("host {}: kingmaker status printed no JSON", coord.name))
}

/// The run's phase: not launched, running, stopped ..., complete.
pub fn run_phase(d: &Deployment) -> Result<String> {
    Ok(run_status(d)?["phase"].as_str().unwrap_or("").to_string())
}

pub fn run(d: &Deployment, json_out: bool, watch: Option<u64>) -> Result<()> {
    loop {
        once(d, json_out)?;
        match watch {
            Some(secs) => {
                std::thread::sleep(Duration::from_secs(secs.max(1)));
                println!();
            }
            None => return Ok(()),
        }
    }
}

fn once(d: &Deployment, json_out: bool) -> Result<()> {
    let token_fp = d.token().map(|t| fingerprint(&t)).ok();
    let hosts = d.all_hosts();
    let (healths, run) = std::thread::scope(|s| {
        let run = s.spawn(|| run_status(d));
        let healths = d.each(&hosts, |h| host::probe(&d.ssh, &d.inv, h));
        (
            healths,
            run.join()
                .unwrap_or_else(|_| Err(anyhow::anyhow!("status panicked"))),
        )
    });
    let mut host_json = Vec::new();
    let mut tails = Vec::new();
    for (h, r) in &healths {
        match r {
            Ok(hl) => {
                let token_ok = token_fp.as_deref().map(|fp| hl.token_fp == fp);
                host_json.push(json!({
                    "name": h.name, "role": h.role.as_str(), "address": h.address, "reachable": true,
                    "health": hl, "token_matches": token_ok,
                }));
                if !hl.running() && !json_out {
                    tails.push((h.name.clone(), host::log_tail(&d.ssh, &d.inv, h, 3)));
                }
            }
            Err(e) => host_json.push(json!({
                "name": h.name, "role": h.role.as_str(), "address": h.address, "reachable": false,
                "error": format!("{e:#}"),
            })),
        }
    }
    let mut run_json = match &run {
        Ok(v) => v.clone(),
        Err(e) => json!({"phase": "unknown", "error": format!("{e:#}")}),
    };
    // `kingmaker status` judges by the pid in progress.json; the supervisor knows better (a
    // killed coordinator left unreaped by a container's init still has a /proc entry).
    let coord = d.inv.coordinator();
    let coord_down = healths
        .iter()
        .any(|(h, r)| h.name == coord.name && r.as_ref().is_ok_and(|hl| !hl.running()));
    if run_json["phase"] == "running" && coord_down {
        run_json["phase"] =
            json!("stopped (the coordinator is not running: `kingmaker deploy resume`)");
    }
    let unreachable: Vec<String> = healths
        .iter()
        .filter_map(|(_, r)| r.as_ref().err().map(|e| format!("{e:#}")))
        .collect();
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"run": d.inv.run.name, "status": run_json, "hosts": host_json})
            )?
        );
        return loud(unreachable);
    }
    print_run(d, &run_json);
    println!(
        "{:<12} {:<12} {:<8} {:<8} {:<10} {:>8} {:>11} {:>11} {:<16} token",
        "host", "role", "ssh", "super", "service", "pid", "disk free", "mem avail", "load"
    );
    for (h, r) in &healths {
        match r {
            Ok(hl) => println!(
                "{:<12} {:<12} {:<8} {:<8} {:<10} {:>8} {:>11} {:>11} {:<16} {}",
                h.name,
                h.role.as_str(),
                "ok",
                hl.supervisor,
                hl.state,
                hl.pid.map(|p| p.to_string()).unwrap_or_else(|| "-".into()),
                human_bytes(hl.disk_free),
                human_bytes(hl.mem_available),
                hl.load,
                token_word(hl, token_fp.as_deref())
            ),
            Err(e) => println!("{:<12} {:<12} UNREACHABLE: {e:#}", h.name, h.role.as_str()),
        }
    }
    for (name, tail) in tails {
        if !tail.trim().is_empty() {
            println!("{name} (not running), last log lines:");
            for l in tail.lines() {
                println!("    {l}");
            }
        }
    }
    loud(unreachable)
}

/// After printing everything: an error (exit status 1) when a host could not be reached.
fn loud(unreachable: Vec<String>) -> Result<()> {
    if !unreachable.is_empty() {
        anyhow::bail!("{}", unreachable.join("\n"));
    }
    Ok(())
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

fn print_run(d: &Deployment, s: &Value) {
    let run = &d.inv.run;
    let phase = s["phase"].as_str().unwrap_or("unknown");
    println!(
        "run {} ({} {}): {phase}",
        run.name,
        run.game,
        run.options.join(" ")
    );
    if let Some(e) = s["error"].as_str() {
        println!("  {e}");
    }
    let p = &s["progress"];
    if s["activity"] == "summarizing" {
        println!("  every layer solved; computing the summary's counts and classes");
    } else if p.is_object() {
        let states = p["states"].as_f64().unwrap_or(0.0).max(1.0);
        let decided = p["decided_total"].as_f64().unwrap_or(0.0);
        println!(
            "  layer {} wave {}: {:.1}% decided, {:.0} states/s; finished layers: {}",
            p["layer"].as_str().unwrap_or("?"),
            p["wave"],
            100.0 * decided / states,
            p["rate"].as_f64().unwrap_or(0.0),
            s["finished"]
                .as_array()
                .map(|a| a
                    .iter()
                    .filter_map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", "))
                .filter(|names| !names.is_empty())
                .unwrap_or_else(|| "none".into())
        );
    }
    if let Some(c) = s["checkpoint"].as_object() {
        println!(
            "  last checkpoint: layer {} after wave {}",
            c["layer"].as_str().unwrap_or("?"),
            c["last"]["wave"]
        );
    }
    if let Some(eta) = s["eta_seconds"].as_f64() {
        println!("  this layer: about {:.0} s left (waves vary)", eta);
    }
}
