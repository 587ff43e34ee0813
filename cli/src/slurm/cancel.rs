//! `kingmaker slurm cancel`: cancel the run's pending jobs and have the running one checkpoint and
//! end. USR2 reaches the batch shell only, which stops the coordinator with SIGTERM (a checkpoint)
//! and submits no next job; plain `scancel` would give the coordinator only KillWait to do so.

use super::config::SlurmInventory;
use super::status::{jobs_of, show_job, slurm_command};
use anyhow::{bail, Result};
use std::time::{Duration, Instant};

pub fn run(inv: &SlurmInventory, wait_secs: u64) -> Result<()> {
    let jobs = jobs_of(inv)?;
    if jobs.is_empty() {
        println!("run {}: no job is queued or running", inv.job_name());
        return Ok(());
    }
    cancel_pending(inv)?;
    // A job ending already (COMPLETING) needs nothing more.
    let running: Vec<String> = jobs
        .iter()
        .filter(|j| j.state == "RUNNING")
        .map(|j| j.id.clone())
        .collect();
    for id in &running {
        slurm_command("scancel", &["--batch", "--signal=USR2", id])?;
        println!("job {id}: asked to checkpoint and stop");
    }
    if running.is_empty() || wait_secs == 0 {
        return Ok(());
    }
    let deadline = Instant::now() + Duration::from_secs(wait_secs);
    for id in &running {
        loop {
            match show_job(id)? {
                Some(j) if j.active() => {}
                Some(j) => {
                    println!("job {id}: {} (exit code {})", j.state, j.exit_code);
                    break;
                }
                None => break,
            }
            if Instant::now() > deadline {
                bail!(
                    "job {id} still runs after {wait_secs}s: its coordinator finishes the wave it is in before \
                     it checkpoints; wait longer (`kingmaker slurm status`), or `scancel {id}` to end it now \
                     (the coordinator then has KillWait to checkpoint)"
                );
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    // A job stopped by the time limit just before may have submitted its next one.
    cancel_pending(inv)?;
    println!(
        "run {} stopped at its last checkpoint: `kingmaker slurm submit --inventory {}` continues it",
        inv.job_name(),
        inv.path.display()
    );
    Ok(())
}

fn cancel_pending(inv: &SlurmInventory) -> Result<()> {
    // A requeued job waits as PENDING (REQUEUE_HOLD when held).
    for j in jobs_of(inv)?
        .iter()
        .filter(|j| matches!(j.state.as_str(), "PENDING" | "REQUEUED" | "REQUEUE_HOLD"))
    {
        slurm_command("scancel", &[&j.id])?;
        println!("job {}: {}, cancelled", j.id, j.state.to_lowercase());
    }
    Ok(())
}
