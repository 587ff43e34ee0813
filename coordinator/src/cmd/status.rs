//! `kingmaker status RUN_DIR`: where a run stands, while it runs or after it stopped.

use crate::rundir::{unix_now, RunDir};
use anyhow::Result;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Is the process that last wrote progress.json still alive (on this machine)? A zombie (killed,
/// not yet reaped by its parent) is not.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the command name in parentheses.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

pub fn run(args: StatusArgs) -> Result<()> {
    let (run, info) = RunDir::open(&args.dir)?;
    let state = run.state()?;
    let progress = run.progress()?;
    let complete = run.summary_path().exists();
    let running = !complete && progress.as_ref().is_some_and(|p| alive(p.pid));
    let phase = if complete {
        "complete"
    } else if running {
        "running"
    } else if progress.is_some() {
        "stopped (resume with `kingmaker resume`)"
    } else {
        "not started"
    };
    let finished: Vec<&str> = state
        .finished
        .iter()
        .map(|f| f.layer.name.as_str())
        .collect();
    let layers: Vec<&str> = info.layers.iter().map(|l| l.name.as_str()).collect();
    let eta = progress
        .as_ref()
        .filter(|p| running && p.rate > 0.0)
        .map(|p| {
            // States left in this layer over the layer's average rate (a rough guide: waves vary).
            (p.states.saturating_sub(p.decided_total)) as f64 / p.rate
        });
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "run": args.dir,
                "game": info.spec,
                "phase": phase,
                "layers": layers,
                "finished": finished,
                "checkpoint": state.current,
                "progress": progress,
                "eta_seconds": eta,
            }))?
        );
        return Ok(());
    }
    println!(
        "run {}: {} ({} states)",
        args.dir.display(),
        phase,
        info.states
    );
    println!(
        "layers: {} — finished: {}",
        layers.join(", "),
        if finished.is_empty() {
            "none".into()
        } else {
            finished.join(", ")
        }
    );
    if let Some(p) = &progress {
        println!(
            "layer {} wave {}: {} of {} states decided ({:.1}%), {:.0} states/s, last update {}s ago",
            p.layer,
            p.wave,
            p.decided_total,
            p.states,
            100.0 * p.decided_total as f64 / p.states.max(1) as f64,
            p.rate,
            unix_now().saturating_sub(p.updated_unix)
        );
        println!("workers: {}", p.workers.join(", "));
    }
    match &state.current {
        Some(c) => println!(
            "last checkpoint: layer {} after wave {} ({}s ago)",
            c.layer,
            c.last.wave,
            unix_now().saturating_sub(c.at_unix)
        ),
        None => println!("last checkpoint: none in progress"),
    }
    if let Some(eta) = eta {
        println!("eta for this layer: at most about {:.0}s (waves vary)", eta);
    }
    Ok(())
}
