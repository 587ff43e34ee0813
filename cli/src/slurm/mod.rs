//! `kingmaker slurm`: a distributed build as a chain of SLURM batch jobs (docs/operators.md,
//! "SLURM clusters"). SLURM hosts are not reached over SSH: the batch script is the unit, so this
//! writes one readable script (script.rs), submits it (submit.rs), and reads back SLURM's state
//! beside the run's progress (status.rs); cancel.rs stops a job after a checkpoint.

mod cancel;
mod config;
mod script;
mod status;
mod submit;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SlurmArgs {
    #[command(subcommand)]
    pub action: Action,
    /// The inventory: its `[run]` section (what to build) and its `[slurm]` section (the job); see
    /// docs/operators.md, "SLURM clusters".
    #[arg(long, short = 'i', global = true, env = "KINGMAKER_INVENTORY")]
    pub inventory: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Action {
    /// Write the batch script into the `[slurm]` dir and submit it with sbatch. The job builds, or
    /// resumes the run from its last checkpoint, and chains or requeues itself until it is done.
    Submit {
        /// Write the script and print the sbatch command, but submit nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// SLURM's state of the run's jobs (pending, running, requeued, ...) beside the run's progress.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop the run: cancel its pending jobs, and have the running one checkpoint and end (no
    /// next job). `submit` continues it later.
    Cancel {
        /// Seconds to wait for the running job to checkpoint and end (0: do not wait).
        #[arg(long, default_value_t = 600)]
        wait_secs: u64,
    },
}

pub fn run(args: SlurmArgs) -> Result<()> {
    let path = args.inventory.context(
        "--inventory FILE is required (or KINGMAKER_INVENTORY); see docs/operators.md, \"SLURM clusters\"",
    )?;
    let inv = config::SlurmInventory::load(&path)?;
    match args.action {
        Action::Submit { dry_run } => submit::run(&inv, dry_run),
        Action::Status { json } => status::run(&inv, json),
        Action::Cancel { wait_secs } => cancel::run(&inv, wait_secs),
    }
}
