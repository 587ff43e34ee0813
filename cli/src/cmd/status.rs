//! `kingmaker status RUN_DIR`: where a run stands, while it runs or after it stopped; its exit
//! status says which (complete, running, stopped: [`Standing`]), for scripts and monitors.

mod eta;
pub use eta::duration_words;

use anyhow::{Context, Result};
use clap::Args;
use kingmaker_coordinator::digits::thousands;
use kingmaker_coordinator::lock::run_holder;
use kingmaker_coordinator::rundir::{read_json, resume_hint, unix_now, RunDir};
use kingmaker_coordinator::runner::print_summary;
use kingmaker_tablefmt::release::manifest::{
    counts_in_words, release_bytes, ManifestLayer, MANIFEST, MANIFEST_SHA256,
};
use kingmaker_tablefmt::release::parts::{read_parts, PARTS};
use kingmaker_tablefmt::release::verify::held_files;
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

/// Where a run stands, as `status` and `deploy status` exit with it (docs/cli.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Every layer solved and the summary written (a release: complete or partial).
    Complete,
    /// A build or resume works on it.
    Running,
    /// Nothing works on it and it is not complete (stopped, crashed, or not started).
    Stopped,
    /// `deploy status`: a host could not be reached, so the run's standing is not known.
    Unreachable,
}

impl Standing {
    pub fn code(self) -> i32 {
        match self {
            Standing::Complete => 0,
            Standing::Running => 3,
            Standing::Stopped => 4,
            Standing::Unreachable => 5,
        }
    }

    /// The standing of a `status --json` phase (`complete`, `running`, `stopped (...)`, ...).
    pub fn of_phase(phase: &str) -> Standing {
        match phase {
            "complete" | "partial" => Standing::Complete,
            "running" => Standing::Running,
            _ => Standing::Stopped,
        }
    }
}

/// End the process with the exit status of `standing`, once stdout is written out.
pub fn exit_with(standing: Standing) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    std::process::exit(standing.code())
}

pub fn run(args: StatusArgs) -> Result<()> {
    if args.dir.join(MANIFEST).exists() || args.dir.join(MANIFEST_SHA256).exists() {
        return release_status(&args);
    }
    let standing = run_status(&args)?;
    exit_with(standing)
}

fn run_status(args: &StatusArgs) -> Result<Standing> {
    let (run, info) = RunDir::open(&args.dir)?;
    // Liveness first, completion after: a run that ends between the two reads as complete,
    // never as stopped.
    let holder = run_holder(&args.dir)?;
    let complete = run.summary_path().exists();
    let holder = holder.filter(|_| !complete);
    let state = run.state()?;
    let mut progress = run.progress()?;
    if let Some(p) = progress.as_mut().filter(|_| complete) {
        // A run that finished before progress.json said so at the end: its last wave's progress
        // (the last layer not yet among the finished, its draws not yet decided).
        if p.phase != "finished" {
            p.phase = "finished".into();
            p.layers_finished = state
                .finished
                .iter()
                .map(|f| f.layer.name.clone())
                .collect();
            p.decided_total = p.states;
            p.decided_in_wave = 0;
        }
    }
    // Running means a build or resume holds the run directory's lock: not the pid in
    // progress.json, which a crashed run leaves behind (and which the system may reuse).
    let running = holder.is_some();
    // The holder's own announcement (restoring, starting, running), if it has made one yet;
    // before that the progress is an earlier process's.
    let current = progress
        .as_ref()
        .filter(|p| holder.as_ref().is_some_and(|h| h.pid == p.pid));
    let activity = match (&holder, current) {
        (None, _) => None,
        (Some(_), Some(p)) => Some(p.phase.as_str()),
        (Some(_), None) => Some("starting"),
    };
    let phase = if complete {
        "complete".to_string()
    } else if running {
        "running".to_string()
    } else if progress.is_some() || state.current.is_some() || !state.finished.is_empty() {
        format!("stopped (resume with `{}`)", resume_hint(&args.dir, ""))
    } else {
        "not started".to_string()
    };
    let standing = Standing::of_phase(&phase);
    let finished: Vec<&str> = state
        .finished
        .iter()
        .map(|f| f.layer.name.as_str())
        .collect();
    let layers: Vec<&str> = info.layers.iter().map(|l| l.name.as_str()).collect();
    // A complete run's counts, from its summary (progress.json may predate the last layer's
    // end: runs from before progress said `finished`).
    let summary: Option<serde_json::Value> = complete
        .then(|| read_json(&run.summary_path(), "a summary.json").ok())
        .flatten();
    // What is left, from the wave history: only while something works on the run.
    let eta = (running && !complete).then(|| {
        let waves = kingmaker_tablefmt::run::read_waves(&args.dir).unwrap_or_default();
        eta::estimate(&layers, &finished, current, &waves)
    });
    let checkpoint_age = state
        .current
        .as_ref()
        .map(|c| unix_now().saturating_sub(c.at_unix));
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "run": args.dir,
                "game": info.spec,
                "run_id": info.distributed.as_ref().map(|d| &d.run_id),
                "phase": phase,
                "pid": holder.as_ref().map(|h| h.pid),
                "activity": activity,
                "layers": layers,
                "finished": finished,
                "checkpoint": state.current,
                "checkpoint_age_seconds": checkpoint_age,
                "progress": progress,
                "eta_seconds": eta.as_ref().and_then(|e| e.seconds),
                "eta": eta.as_ref().map(|e| e.words.as_str()),
                "summary": summary.as_ref().map(summary_counts),
            }))?
        );
        return Ok(standing);
    }
    let doing = match (&holder, activity) {
        (Some(h), Some("restoring")) => format!(
            " (pid {}, `{}`: restoring its last checkpoint)",
            h.pid, h.command
        ),
        (Some(h), Some("writing")) => {
            let step = current.and_then(|p| p.writing.as_ref());
            format!(
                " (pid {}, `{}`: writing the table of layer {}{})",
                h.pid,
                h.command,
                current.map_or("", |p| p.layer.as_str()),
                step.map_or(String::new(), |s| format!(
                    ": {} {} of {}",
                    s.step, s.done, s.total
                ))
            )
        }
        (Some(h), Some("summarizing")) => format!(
            " (pid {}, `{}`: every layer solved; computing the summary's counts and classes)",
            h.pid, h.command
        ),
        (Some(h), Some(a)) => format!(" (pid {}, `{}`: {a})", h.pid, h.command),
        _ => String::new(),
    };
    if complete {
        println!(
            "run {}: complete (finished: every layer solved, {} states); the counts are those of \
             {}",
            args.dir.display(),
            info.states,
            run.summary_path().display()
        );
        match &summary {
            Some(summary) => print_summary(summary),
            None => println!("  (summary.json cannot be read)"),
        }
        return Ok(standing);
    }
    println!(
        "run {}: {phase}{doing} ({} states)",
        args.dir.display(),
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
        let when = if current.is_some() || !running {
            ""
        } else {
            "before this process started: "
        };
        println!(
            "{when}layer {} wave {}: {} of {} states decided ({:.1}%), {:.0} states/s, last update {}s ago",
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
    match (&state.current, checkpoint_age) {
        (Some(c), Some(age)) => println!(
            "last checkpoint: layer {} after wave {} ({} ago)",
            c.layer,
            c.last.wave,
            duration_words(age as f64)
        ),
        _ => println!("last checkpoint: none in progress"),
    }
    if let Some(eta) = eta {
        println!("eta: {}", eta.words);
    }
    Ok(standing)
}

/// What `status --json` shows of a complete run's summary: the states, illegal states and each
/// layer's counts (the whole summary is `summary.json`).
fn summary_counts(summary: &serde_json::Value) -> serde_json::Value {
    let layers: serde_json::Map<String, serde_json::Value> = summary["layers"]
        .as_object()
        .map(|layers| {
            layers
                .iter()
                .map(|(name, l)| {
                    let counts = json!({"win": l["win"], "loss": l["loss"], "draw": l["draw"]});
                    (name.clone(), counts)
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"states": summary["states"], "illegal": summary["illegal"], "layers": layers})
}

/// `status` on a release (a directory with `manifest.json`): its game, layers and counts, from
/// the manifest (checked against `manifest.sha256`; `verify` checks the files). A release is
/// complete by construction (`pack` renames it into place whole); a copy of some of its files
/// (`fetch --layers`, `--parts`, `--values-only`: it has `parts.json`; or a manifest whose files
/// lie at URLs) is "partial", and says which layers and parts it holds, how, and which it does not.
fn release_status(args: &StatusArgs) -> Result<()> {
    let dir = &args.dir;
    let manifest = kingmaker_coordinator::tables::read_release_manifest(dir)?;
    let parts = read_parts(dir, &manifest).with_context(|| {
        format!(
            "{} is a partial copy whose {PARTS} cannot be read: `kingmaker verify {}` says more",
            dir.display(),
            dir.display()
        )
    })?;
    let held = held_files(dir, &manifest, parts.as_ref());
    // Complete only with every file of every piece here (a file at a url may not be).
    let partial = held.len() < manifest.files.len();
    let has = |f: &str| held.iter().any(|h| h == f);
    // What each layer has here, over all its pieces: values and depths, values alone, some of
    // its parts, or nothing.
    let holding = |l: &ManifestLayer| {
        let pieces = l.pieces();
        if pieces.iter().all(|p| has(p.file)) {
            "values and depths"
        } else if pieces
            .iter()
            .all(|p| has(p.file) || p.values_file.is_some_and(has))
        {
            "values only"
        } else if pieces
            .iter()
            .any(|p| has(p.file) || p.values_file.is_some_and(has))
        {
            "some parts"
        } else {
            "absent"
        }
    };
    // The parts of the layers partly here: those held (and how) and those absent.
    let (mut parts_here, mut parts_absent) = (Vec::new(), Vec::new());
    for l in manifest
        .layers
        .iter()
        .filter(|l| holding(l) == "some parts")
    {
        for p in l.pieces() {
            if has(p.file) {
                parts_here.push(format!("{} (values and depths)", p.name));
            } else if p.values_file.is_some_and(has) {
                parts_here.push(format!("{} (values only)", p.name));
            } else {
                parts_absent.push(p.name.to_string());
            }
        }
    }
    let at_urls = (manifest.files.iter())
        .filter(|f| f.url.is_some() && !has(&f.path))
        .count();
    let of = |what: &str| -> Vec<&str> {
        let layers = manifest.layers.iter().filter(|l| holding(l) == what);
        layers.map(|l| l.name.as_str()).collect()
    };
    let absent = of("absent");
    let values_only = of("values only");
    let some_parts = of("some parts");
    let present: Vec<&str> = (manifest.layers.iter())
        .filter(|l| !matches!(holding(l), "absent" | "some parts"))
        .map(|l| l.name.as_str())
        .collect();
    let (files, bytes) = if partial {
        // The files here: those held, the manifest's two and the parts list.
        let own = [MANIFEST, MANIFEST_SHA256, PARTS]
            .iter()
            .filter_map(|n| std::fs::metadata(dir.join(n)).ok())
            .collect::<Vec<_>>();
        let listed = manifest.files.iter().filter(|f| held.contains(&f.path));
        (
            held.len() + own.len(),
            own.iter().map(|m| m.len()).sum::<u64>() + listed.map(|f| f.size).sum::<u64>(),
        )
    } else {
        (manifest.files.len() + 2, release_bytes(dir, &manifest))
    };
    let names: Vec<&str> = manifest.layers.iter().map(|l| l.name.as_str()).collect();
    let p = &manifest.provenance;
    let phase = if partial { "partial" } else { "complete" };
    if args.json {
        let layers: serde_json::Map<String, serde_json::Value> = manifest
            .layers
            .iter()
            .map(|l| {
                let v = json!({
                    "win": l.counts.win, "loss": l.counts.loss, "draw": l.counts.draw,
                    "illegal": l.counts.illegal, "max_depth": l.max_depth, "digest": l.digest,
                });
                (l.name.clone(), v)
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "release": dir,
                "kind": "release",
                "phase": phase,
                "game": manifest.game,
                "name": manifest.name,
                "states": manifest.states,
                "layers": names,
                "finished": present,
                "present": present,
                "absent": absent,
                "values_only": values_only,
                "some_parts": some_parts,
                "parts_present": parts_here,
                "parts_absent": parts_absent,
                "files_at_urls": at_urls,
                "counts": layers,
                "files": files,
                "bytes": bytes,
                "packed_at": p.packed_at,
                "summary": summary_counts(&p.summary),
            }))?
        );
        return Ok(());
    }
    if partial {
        println!(
            "release {}: partial: a copy of part of the release {} ({} states; {} of its {} \
             layers here), packed {} on {} by kingmaker {}",
            dir.display(),
            manifest.name,
            thousands(manifest.states),
            present.len(),
            names.len(),
            p.packed_at,
            p.host,
            p.kingmaker_version
        );
        let here: Vec<String> = (manifest.layers.iter())
            .filter(|l| !matches!(holding(l), "absent" | "some parts"))
            .map(|l| format!("{} ({})", l.name, holding(l)))
            .collect();
        let none = |list: &[String]| {
            if list.is_empty() {
                "none".to_string()
            } else {
                list.join(", ")
            }
        };
        println!("layers here: {}", none(&here));
        if !some_parts.is_empty() {
            println!("layers in part here: {}", some_parts.join(", "));
            println!("  their parts here: {}", none(&parts_here));
            println!("  their parts absent: {}", none(&parts_absent));
        }
        let absent: Vec<String> = absent.iter().map(|s| s.to_string()).collect();
        println!("layers absent: {}", none(&absent));
        if at_urls > 0 {
            println!(
                "{at_urls} files lie at their URLs and are not here: `kingmaker fetch` brings them"
            );
        }
    } else {
        println!(
            "release {}: complete: a release of {} ({} states, every layer finished), packed {} \
             on {} by kingmaker {}",
            dir.display(),
            manifest.name,
            thousands(manifest.states),
            p.packed_at,
            p.host,
            p.kingmaker_version
        );
        println!("layers: {}", names.join(", "));
    }
    for l in (manifest.layers.iter()).filter(|l| !matches!(holding(l), "absent" | "some parts")) {
        println!(
            "  layer {:<10} {}  max depth {}  digest {}",
            l.name,
            counts_in_words(&l.counts),
            l.max_depth,
            l.digest
        );
    }
    println!(
        "{files} files, {} bytes in all; `kingmaker verify {}` checks them, `kingmaker summarize \
         {}` prints the run's summary",
        thousands(bytes),
        dir.display(),
        dir.display()
    );
    if partial {
        println!(
            "a partial copy ({PARTS} lists what was fetched): fetch the same release into {} \
             again, with or without --layers and --values-only, to add the rest",
            dir.display()
        );
    }
    Ok(())
}
