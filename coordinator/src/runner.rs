//! What `build` and `resume` share: checking their options, choosing layers, and solving what is
//! left of a run (embedded or on remote workers) up to its summary; and printing a summary
//! (`summarize` too).

use crate::cluster::Cluster;
use crate::rundir::{write_json_atomically, Progress, RunDir, RunInfo};
use crate::solve::{
    adaptive_schedule, embedded_workers, signals_end_at_once, solve_distributed, solve_layers,
    stop_on_signals, Ending, SolveOptions, Solvers,
};
use crate::summary::{kept_summary, summarize};
use anyhow::{Context, Result};
use kingmaker_games::{AnyGame, GameSpec};
use kingmaker_kernel::options;
use kingmaker_kernel::Game;
use kingmaker_kernel::Layer;
use kingmaker_tablefmt::Value;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Check the size and count options shared by `build` and `resume` (before anything is written)
/// and set up the compute threads.
pub fn check_options(
    threads: Option<usize>,
    local_workers: usize,
    checkpoint_every_secs: u64,
    memory_budget: Option<u64>,
    worker_timeout: f64,
) -> Result<()> {
    let threads = threads.map(options::check_threads).transpose();
    let threads = threads.map_err(anyhow::Error::msg)?;
    options::check_local_workers(local_workers).map_err(anyhow::Error::msg)?;
    options::check_checkpoint_secs(checkpoint_every_secs).map_err(anyhow::Error::msg)?;
    options::check_worker_timeout(worker_timeout).map_err(anyhow::Error::msg)?;
    if let Some(bytes) = memory_budget {
        options::check_memory_budget(bytes).map_err(anyhow::Error::msg)?;
        if let Some(warning) = options::memory_budget_warning(bytes) {
            tracing::warn!("{warning}");
        }
    }
    if let Some(t) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build_global()
            .context("setting up threads")?;
    }
    Ok(())
}

/// The layers of `spec` named in `names`, in the order given; an unknown name is an error that
/// lists the game's layers, and so is a name given twice.
pub fn select_layers(spec: &GameSpec, names: &[String]) -> Result<Vec<Layer>> {
    if let Some((_, name)) = names
        .iter()
        .enumerate()
        .find(|(i, n)| names[..*i].contains(n))
    {
        anyhow::bail!("--layers names {name:?} twice; list each layer once");
    }
    let all_layers = spec.layers();
    names
        .iter()
        .map(|name| {
            all_layers
                .iter()
                .find(|l| &l.name == name)
                .cloned()
                .with_context(|| {
                    let names: Vec<_> = all_layers.iter().map(|l| l.name.as_str()).collect();
                    format!(
                        "{} has no layer {name:?}; its layers are {}",
                        spec.family(),
                        names.join(", ")
                    )
                })
        })
        .collect()
}

/// Solve what is left of a run, on the remote workers of `cluster` when it is given (else in
/// process), then write and print its summary. Shared by `build` and `resume`.
pub fn solve_run_with(
    run: &RunDir,
    info: &RunInfo,
    game: &Arc<AnyGame>,
    opts: &SolveOptions,
    cluster: Option<Cluster>,
    reach: bool,
    json: bool,
) -> Result<()> {
    let stop = stop_on_signals()?;
    let mut state = run.state()?;
    // Before anything is read: a run.json edited since the manifest was written is refused, and
    // the manifest records the game from now on.
    run.check_state(&state, info)?;
    state.belongs_to(
        serde_json::to_value(&info.spec)?,
        info.solved_as
            .as_ref()
            .map(serde_json::to_value)
            .transpose()?,
    );
    // Nothing is built on a finished layer before it is read back and checked.
    for (layer, problem) in run.recheck_finished(&mut state) {
        tracing::error!("layer {layer}: {problem}");
        run.set_aside(&layer);
        tracing::warn!("layer {layer} is solved again (its file is kept as {layer}.kmt.damaged)");
    }
    // The game the kernel solves: `game` itself, or its symmetry-reduced form.
    let kernel = match &info.solved_as {
        Some(spec) => {
            let kernel = Arc::new(spec.build()?);
            tracing::info!(
                "solving {} ({} states, a symmetry-reduced {}) and expanding its tables",
                kernel.name(),
                kernel.size(),
                game.name()
            );
            kernel
        }
        None => game.clone(),
    };
    // Announce this process at once (`kingmaker status`: restoring or starting, then running).
    let workers = cluster.as_ref().map(|c| c.addrs()).unwrap_or_default();
    let starting = Progress::starting(&info.layers, kernel.size(), &state, &workers);
    if let Err(e) = run.write_progress(&starting) {
        tracing::warn!("could not write progress.json: {e:#}");
    }
    let next_layer = adaptive_schedule(run, info, game);
    let ending = match cluster {
        None => solve_layers(
            run,
            &kernel,
            &info.layers,
            opts,
            &mut state,
            &stop,
            &Solvers {
                make_workers: &embedded_workers(run, &kernel, info, opts)?,
                keep_layer: None,
                next_layer: &next_layer,
            },
        )?,
        Some(cluster) => solve_distributed(
            run,
            info,
            &kernel,
            opts,
            cluster,
            &mut state,
            &stop,
            &next_layer,
        )?,
    };
    // Every layer is written: a signal from now on ends the process at once, and a stop asked
    // for while the last layer was written ends it here (in that order, so that no signal falls
    // between the two). `resume` writes the summary.
    signals_end_at_once();
    let tables = match ending {
        Ending::Finished(_) if stop.load(Ordering::SeqCst) => {
            println!(
                "stopped; every layer is written: `{}` writes the summary",
                crate::rundir::resume_hint(&run.path, "")
            );
            return Ok(());
        }
        Ending::Finished(tables) => tables,
        Ending::Stopped => {
            println!(
                "stopped; the run is checkpointed: `{}` continues it",
                crate::rundir::resume_hint(&run.path, "")
            );
            return Ok(());
        }
    };
    let last = run.progress().ok().flatten();
    if let Some(last) = &last {
        // `status` says what the process does now, instead of an estimate for a finished wave.
        if let Err(e) = run.write_progress(&Progress::summarizing(last)) {
            tracing::warn!("could not write progress.json: {e:#}");
        }
    }
    // Layers kept on the workers are not read back here: the coordinator stays small whatever
    // the table's size, and the readers compute the rest from the parts.
    let summary = if tables.iter().any(|(l, _)| run.is_elsewhere(&l.name)) {
        kept_summary(info, game, &tables)
    } else {
        summarize(run, info, game, &tables, reach, None)?
    };
    write_json_atomically(&run.summary_path(), &summary)?;
    let names = tables.iter().map(|(l, _)| l.name.clone()).collect();
    let done = Progress::finished(names, kernel.size(), last.as_ref(), &workers);
    if let Err(e) = run.write_progress(&done) {
        tracing::warn!("could not write progress.json: {e:#}");
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print_summary(&summary);
        println!("tables and summary.json written to {}", run.path.display());
    }
    Ok(())
}

/// A short human-readable account of a summary.
pub fn print_summary(s: &serde_json::Value) {
    println!(
        "{}: {} states, {} illegal",
        s["game"].as_str().unwrap_or("?"),
        s["states"],
        s["illegal"]
    );
    if let Some(layers) = s["layers"].as_object() {
        for (name, l) in layers {
            println!(
                "  layer {name:<10} W {:>12}  L {:>12}  D {:>10}  digest {}",
                l["win"],
                l["loss"],
                l["draw"],
                l["digest"].as_str().unwrap_or("")
            );
        }
    }
    for (title, block) in [
        ("all states", &s["classes"]),
        ("reachable", &s["reachable"]["classes"]),
    ] {
        if let Some(c) = block.as_object() {
            let parts: Vec<String> = c.iter().map(|(k, v)| format!("{k} {v}")).collect();
            println!("  classes over {title}: {}", parts.join(", "));
        }
    }
    if let Some(v) = s["start"]["value"].as_str() {
        let meaning = match v.parse().ok().and_then(Value::from_letter) {
            Some(Value::Win) => "a first-player win",
            Some(Value::Loss) => "a second-player win",
            _ => "a draw",
        };
        match meaning {
            "a draw" => println!("  start position: {v} ({meaning})"),
            _ => println!(
                "  start position: {v} ({meaning}) in {} plies",
                s["start"]["depth"]
            ),
        }
    }
    if let Some(n) = s["reachable"]["states"].as_u64() {
        println!("  reachable from the start: {n} states");
    }
}
