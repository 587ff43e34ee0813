//! `kingmaker summarize RUN_DIR [--reachable]`: write a finished run's `summary.json` again from
//! its finished layers — e.g. to add the counts over the states reachable from the start, which
//! `build` leaves out by default on large tables (at 14.8 billion states the bitmap search holds
//! 5.6 GB and visits every reachable state once, for an hour of this machine: so it checkpoints).

use anyhow::{bail, Result};
use clap::Args;
use kingmaker_coordinator::lock::lock_run;
use kingmaker_coordinator::rundir::{write_json_atomically, RunDir, RunInfo};
use kingmaker_coordinator::runner::print_summary;
use kingmaker_coordinator::summary::summarize;
use kingmaker_kernel::reach::{ReachCheckpoints, StopRequest};
use kingmaker_tablefmt::release::manifest::{MANIFEST, MANIFEST_SHA256};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct SummarizeArgs {
    /// A run directory whose layers are all finished.
    pub dir: PathBuf,
    /// Also count over the states reachable from the start (classes, layers, players).
    #[arg(long)]
    pub reachable: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// With --reachable: checkpoint the search at most this many seconds apart (in RUN_DIR/reach,
    /// removed when it is done). SIGTERM or SIGINT during the search checkpoint it at the end of
    /// the running ply and stop; the same command goes on from there. A second signal, or one
    /// before the search begins, stops at once.
    #[arg(long, default_value_t = 900, value_name = "SECS")]
    pub checkpoint_every_secs: u64,
}

pub fn run(args: SummarizeArgs) -> Result<()> {
    if args.dir.join(MANIFEST).exists() || args.dir.join(MANIFEST_SHA256).exists() {
        return release_summary(&args);
    }
    let (run, info) = RunDir::open(&args.dir)?;
    // Refused while a build or resume works on the run (it writes summary.json itself).
    let _lock = lock_run(&args.dir, "kingmaker summarize")?;
    let checkpoints = if args.reachable {
        Some(ReachCheckpoints {
            dir: run.path.join(REACH_DIR),
            every: Duration::from_secs(args.checkpoint_every_secs),
            stop: Some(stop_on_signals()?),
            game: serde_json::to_value(&info.spec)?,
        })
    } else {
        None
    };
    let summary = compute_summary(&run, &info, args.reachable, checkpoints)?;
    // A game whose view counts nothing over the reachable states: --reachable would write the
    // same summary and say nothing, so refuse, writing nothing.
    if args.reachable && !has_key(&summary, "reachable") {
        bail!(
            "{} has no census over the states reachable from the start: --reachable adds \
             nothing to its summary, so nothing was written (`kingmaker summarize {}` writes \
             summary.json again without it)",
            info.spec.family(),
            args.dir.display()
        );
    }
    write_json_atomically(&run.summary_path(), &summary)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_summary(&summary);
        println!("summary.json written to {}", run.path.display());
    }
    Ok(())
}

/// The directory of a run where the search of its reachable states keeps its checkpoint.
const REACH_DIR: &str = "reach";

/// SIGINT and SIGTERM: while the search runs, the first asks it to checkpoint at the end of its
/// ply and stop; a second, or any before or after the search (nothing to save then), exits at
/// once (the last checkpoint still stands).
fn stop_on_signals() -> Result<Arc<StopRequest>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let stop = Arc::new(StopRequest::default());
    for sig in [SIGINT, SIGTERM] {
        let stop = stop.clone();
        let handler = move || {
            if !stop.armed() || stop.request() {
                signal_hook::low_level::exit(130);
            }
        };
        // SAFETY: the handler only touches atomics and calls _exit, both async-signal-safe.
        unsafe { signal_hook::low_level::register(sig, handler) }?;
    }
    Ok(stop)
}

/// Write `summary.json` of a finished run again from its layers (each checked against its record
/// first); the caller holds the run's lock. The search of the reachable states checkpoints itself
/// as `checkpoints` says.
pub fn write_summary(
    run: &RunDir,
    info: &RunInfo,
    reachable: bool,
    checkpoints: Option<ReachCheckpoints>,
) -> Result<Value> {
    let summary = compute_summary(run, info, reachable, checkpoints)?;
    write_json_atomically(&run.summary_path(), &summary)?;
    Ok(summary)
}

/// The summary of a finished run computed from its layers (each checked against its record
/// first), read where they are: here, or kept on the workers (with the run's token).
pub fn compute_summary(
    run: &RunDir,
    info: &RunInfo,
    reachable: bool,
    checkpoints: Option<ReachCheckpoints>,
) -> Result<Value> {
    let dir = &run.path;
    let mut state = run.state()?;
    let damaged = run.recheck_finished(&mut state);
    if !damaged.is_empty() {
        let lines: Vec<String> = damaged
            .iter()
            .map(|(layer, problem)| format!("layer {layer}: {problem}"))
            .collect();
        bail!(
            "{}; `kingmaker resume {}` solves {} again",
            lines.join("; "),
            dir.display(),
            if damaged.len() == 1 { "it" } else { "them" }
        );
    }
    let mut tables = Vec::new();
    for layer in &info.layers {
        let Some(t) = state.finished(&layer.name) else {
            bail!(
                "layer {} of {} is not finished; `kingmaker resume {}` first",
                layer.name,
                dir.display(),
                dir.display()
            );
        };
        tables.push((layer.clone(), t.clone()));
    }
    let game = std::sync::Arc::new(info.spec.build()?);
    summarize(run, info, &game, &tables, reachable, checkpoints)
}

/// `summarize` on a release: its summary is the run's, fixed in the manifest when it was packed;
/// printed, nothing written. `--reachable` needs the run directory.
fn release_summary(args: &SummarizeArgs) -> Result<()> {
    let dir = &args.dir;
    let manifest = kingmaker_coordinator::tables::read_release_manifest(dir)?;
    let summary = &manifest.provenance.summary;
    if args.reachable && !has_key(summary, "reachable") {
        bail!(
            "{} is a release: its summary was fixed when it was packed, without the counts over \
             the reachable states. Run `kingmaker summarize RUN_DIR --reachable` on the run it was \
             packed from, then pack it again",
            dir.display()
        );
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(summary)?);
    } else {
        print_summary(summary);
        println!(
            "the summary of the release {} (its manifest's copy of the run's summary.json; \
             nothing written)",
            dir.display()
        );
    }
    Ok(())
}

/// Whether `key` names a field of `value` at any depth (cc3p's `reachable` block is at the top,
/// the race's inside `second_place`).
fn has_key(value: &serde_json::Value, key: &str) -> bool {
    match value {
        serde_json::Value::Object(fields) => {
            fields.iter().any(|(k, v)| k == key || has_key(v, key))
        }
        serde_json::Value::Array(items) => items.iter().any(|v| has_key(v, key)),
        _ => false,
    }
}
