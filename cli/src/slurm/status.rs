//! `kingmaker slurm status`: SLURM's state of the run's jobs (`scontrol show job`, or `sacct` once
//! slurmctld has forgotten a job) beside the run's progress (`kingmaker status RUN_DIR`).

use super::config::SlurmInventory;
use anyhow::{bail, Context, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// One job as SLURM reports it.
#[derive(Debug, Serialize)]
pub struct Job {
    pub id: String,
    /// PENDING, RUNNING, REQUEUED, COMPLETED, CANCELLED, TIMEOUT, FAILED, NODE_FAIL, ...
    pub state: String,
    pub reason: String,
    pub run_time: String,
    pub time_limit: String,
    pub nodes: String,
    /// How many times SLURM (or the job itself) requeued it.
    pub restarts: u32,
    pub dependency: String,
    pub exit_code: String,
}

impl Job {
    pub fn active(&self) -> bool {
        matches!(
            self.state.as_str(),
            "PENDING"
                | "RUNNING"
                | "REQUEUED"
                | "CONFIGURING"
                | "COMPLETING"
                | "SUSPENDED"
                | "REQUEUE_HOLD"
                | "REQUEUE_FED"
                | "RESIZING"
                | "SIGNALING"
                | "STAGE_OUT"
        )
    }
}

/// Run a SLURM client command; its stdout, or an error naming it and what it said.
pub fn slurm_command(program: &str, args: &[&str]) -> Result<String> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        anyhow::anyhow!(
            "cannot run `{program}` ({e}): run kingmaker slurm on a host of the cluster (a login node) \
             where SLURM's commands are on PATH"
        )
    })?;
    if !out.status.success() {
        bail!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The run's jobs that SLURM still queues or runs (this user's jobs named after the run).
pub fn jobs_of(inv: &SlurmInventory) -> Result<Vec<Job>> {
    let name = format!("--name={}", inv.job_name());
    let ids = slurm_command("squeue", &["--noheader", "--me", &name, "--format=%i"])?;
    let mut jobs = Vec::new();
    for id in ids.split_whitespace() {
        if let Some(job) = show_job(id)? {
            if job.active() {
                jobs.push(job);
            }
        }
    }
    Ok(jobs)
}

/// `scontrol show job -o ID`, parsed; `None` when slurmctld no longer knows the job.
pub fn show_job(id: &str) -> Result<Option<Job>> {
    let out = Command::new("scontrol")
        .args(["show", "job", "-o", id])
        .output()
        .context("cannot run `scontrol`: run kingmaker slurm where SLURM's commands are on PATH")?;
    if !out.status.success() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(line) = text.lines().next() else {
        return Ok(None);
    };
    let fields: BTreeMap<&str, &str> = line
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let get = |k: &str| fields.get(k).copied().unwrap_or("").to_string();
    Ok(Some(Job {
        id: get("JobId"),
        state: get("JobState"),
        reason: get("Reason"),
        run_time: get("RunTime"),
        time_limit: get("TimeLimit"),
        nodes: get("NodeList"),
        restarts: get("Restarts").parse().unwrap_or(0),
        dependency: get("Dependency"),
        exit_code: get("ExitCode"),
    }))
}

/// A job slurmctld has forgotten, from accounting (`sacct`), where the cluster keeps it.
fn accounted_job(id: &str) -> Option<Job> {
    let out = Command::new("sacct")
        .args([
            "-n",
            "-P",
            "-X",
            "-j",
            id,
            "-o",
            "JobID,State,Elapsed,Timelimit,NodeList,ExitCode",
        ])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<&str> = text.lines().next()?.split('|').collect();
    if !out.status.success() || f.len() < 6 {
        return None;
    }
    Some(Job {
        id: f[0].into(),
        state: f[1].split_whitespace().next().unwrap_or("").into(),
        reason: String::new(),
        run_time: f[2].into(),
        time_limit: f[3].into(),
        nodes: f[4].into(),
        restarts: 0,
        dependency: String::new(),
        exit_code: f[5].into(),
    })
}

/// The ids `submit` and the chain recorded, oldest first.
pub fn recorded_ids(inv: &SlurmInventory) -> Vec<String> {
    std::fs::read_to_string(inv.jobs_file())
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Every job to show: those SLURM queues or runs, and the last one recorded.
fn jobs_to_show(inv: &SlurmInventory) -> Result<Vec<Job>> {
    let mut jobs = jobs_of(inv)?;
    if let Some(last) = recorded_ids(inv).last() {
        if !jobs.iter().any(|j| &j.id == last) {
            let job = show_job(last)?
                .or_else(|| accounted_job(last))
                .unwrap_or(Job {
                    id: last.clone(),
                    state: "UNKNOWN".into(),
                    reason: "SLURM no longer lists it (MinJobAge) and keeps no accounting".into(),
                    run_time: String::new(),
                    time_limit: String::new(),
                    nodes: String::new(),
                    restarts: 0,
                    dependency: String::new(),
                    exit_code: String::new(),
                });
            jobs.insert(0, job);
        }
    }
    jobs.sort_by_key(|j| j.id.parse::<u64>().unwrap_or(u64::MAX));
    Ok(jobs)
}

/// The run's progress: `kingmaker status RUN_DIR [--json]` by this same binary (its exit status
/// says complete, running or stopped; the text is what matters here).
fn progress(run_dir: &str, json: bool) -> Result<Option<String>> {
    if !Path::new(run_dir).join("run.json").exists() {
        return Ok(None);
    }
    let exe = std::env::current_exe().context("finding this kingmaker")?;
    let mut cmd = Command::new(exe);
    cmd.args(["status", run_dir]);
    if json {
        cmd.arg("--json");
    }
    let out = cmd.output().context("running kingmaker status")?;
    Ok(Some(String::from_utf8_lossy(&out.stdout).into_owned()))
}

pub fn run(inv: &SlurmInventory, json: bool) -> Result<()> {
    let jobs = jobs_to_show(inv)?;
    let run_dir = inv.run_dir();
    let progress = progress(&run_dir, json)?;
    if json {
        let progress: serde_json::Value = match &progress {
            Some(text) => serde_json::from_str(text).unwrap_or(serde_json::Value::Null),
            None => serde_json::Value::Null,
        };
        let v = serde_json::json!({
            "run": inv.job_name(),
            "run_dir": run_dir,
            "jobs": jobs,
            "progress": progress,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("run {} (SLURM jobs named {0})", inv.job_name());
    if jobs.is_empty() {
        println!(
            "  no job: `kingmaker slurm submit --inventory {}` starts one",
            inv.path.display()
        );
    }
    for j in &jobs {
        let mut line = format!("  job {} {}", j.id, j.state);
        if j.restarts > 0 {
            line.push_str(&format!(" (requeued {} time(s))", j.restarts));
        }
        if !j.run_time.is_empty() {
            line.push_str(&format!(", ran {} of {}", j.run_time, j.time_limit));
        }
        if !j.nodes.is_empty() && j.nodes != "(null)" {
            line.push_str(&format!(", nodes {}", j.nodes));
        }
        if !j.reason.is_empty() && j.reason != "None" {
            line.push_str(&format!(", reason {}", j.reason));
        }
        if !j.dependency.is_empty() && j.dependency != "(null)" {
            line.push_str(&format!(", after {}", j.dependency));
        }
        if !j.active() && !j.exit_code.is_empty() {
            line.push_str(&format!(", exit code {}", j.exit_code));
        }
        println!("{line}");
    }
    match progress {
        Some(text) => {
            println!("the run ({run_dir}):");
            for l in text.lines() {
                println!("  {l}");
            }
        }
        None => println!("the run ({run_dir}): not started yet"),
    }
    Ok(())
}
