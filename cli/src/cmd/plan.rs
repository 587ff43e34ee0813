//! `kingmaker plan [GAME …] [--inventory FILE]`: the bill of a job before any server is rented,
//! and the refusal of an inventory that cannot hold it (docs/cli.md, "kingmaker plan").

use crate::deploy::inventory::{parse_bytes, Inventory, Role};
use anyhow::{bail, Context, Result};
use clap::{Args, Parser};
use kingmaker_coordinator::digits::{human_bytes, thousands};
use kingmaker_coordinator::plan::calibration::{default_path, Calibration};
use kingmaker_coordinator::plan::wire::Cadence;
use kingmaker_coordinator::plan::{plan, HostSpec, JobShape, Plan, Rates};
use kingmaker_games::{GameChoice, GameSpec};
use kingmaker_kernel::memory::{default_table_shard_size, parse_size};
use kingmaker_kernel::{Game, Placement};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PlanArgs {
    /// The game and its options, as `kingmaker build` takes them (default: the inventory's).
    #[command(subcommand)]
    pub game: Option<GameChoice>,
    /// Price the job on these servers (a deploy inventory whose hosts give `cores`, `memory`
    /// and `disk`); without it, the embedded build on this machine.
    #[arg(long, global = true)]
    pub inventory: Option<PathBuf>,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Measure the rates again (the game's moves, the kernel's overhead, the disk) and save them.
    #[arg(long, global = true)]
    pub calibrate: bool,
    /// Where the rates are kept (default: ~/.cache/kingmaker/calibration.json).
    #[arg(long, global = true)]
    pub calibration: Option<PathBuf>,
    /// Layers to solve, comma-separated (default: all; as `build --layers`).
    #[arg(long, global = true, value_delimiter = ',')]
    pub layers: Vec<String>,
    /// Without --inventory: the memory budget of this machine's build (as `build`).
    #[arg(long, global = true, value_parser = parse_size)]
    pub memory_budget: Option<u64>,
    /// Without --inventory: where the run directory would be (its disk is checked).
    #[arg(long, global = true, default_value = "runs")]
    pub out: PathBuf,
    /// Solve the whole index space, not a symmetry-reduced one (as `build --no-symmetry`).
    #[arg(long, global = true)]
    pub no_symmetry: bool,
}

/// Parses an inventory's `game` and `options` as `kingmaker build` would.
#[derive(Parser, Debug)]
struct GameWords {
    #[command(subcommand)]
    game: GameChoice,
}

pub fn run(args: PlanArgs) -> Result<()> {
    let inventory = args.inventory.as_deref().map(Inventory::load).transpose()?;
    let spec: GameSpec = match (&args.game, &inventory) {
        (Some(g), _) => g.spec(),
        (None, Some(inv)) => inventory_spec(inv)?,
        (None, None) => {
            bail!("name a game (`kingmaker plan cc2p --board 6x6 --pieces 6`) or --inventory")
        }
    };
    let hosts = match &inventory {
        Some(inv) => inventory_hosts(inv)?,
        None => vec![this_machine(&args)],
    };
    let build_args: Vec<String> = inventory
        .as_ref()
        .map(|i| i.run.coordinator_args().0)
        .unwrap_or_default();
    let layers = (!args.layers.is_empty()).then_some(args.layers.len());
    let (job, kernel_spec) = job_shape(&spec, layers, &build_args, args.no_symmetry, &hosts)?;
    let workers = hosts.iter().filter(|h| h.role == "worker").count() as u64;

    // A layer kept on its workers stays in contiguous runs (its parts); a gathered one is
    // interleaved (kingmaker_kernel::owners).
    let placement = if job.keep_layers_on_workers {
        Placement::Runs
    } else {
        Placement::Interleaved
    };
    let path = args.calibration.clone().unwrap_or_else(default_path);
    let mut calibration = Calibration::load(&path);
    let fresh = args.calibrate;
    let (moves, moves_source) = calibration.game_rates(&kernel_spec, fresh)?;
    let (overhead, overhead_source) = calibration.overhead(&kernel_spec, fresh)?;
    let (disk_rate, disk_source) = calibration.disk_rate(&path, fresh)?;
    if let Err(e) = calibration.save(&path) {
        tracing::warn!("the calibration could not be kept: {e:#}");
    }
    let rates = Rates {
        moves_ns: moves.moves_ns(),
        live: moves.live,
        predecessors: moves.predecessors,
        crossing: moves.crossing_placed(workers, placement),
        spans: moves.spans.unwrap_or(0.0),
        moves_source,
        overhead,
        overhead_source,
        disk_rate,
        disk_source,
    };
    let bill = plan(&job, &hosts, &rates);
    if args.json {
        let mut value = serde_json::to_value(&bill)?;
        value["fits"] = bill.fits().into();
        value["calibration"] = path.display().to_string().into();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print_plan(&bill, &path);
    }
    if !bill.fits() {
        let lacking: Vec<String> = bill
            .hosts
            .iter()
            .filter(|h| !h.lacks.is_empty())
            .map(|h| format!("{} ({}): {}", h.name, h.role, h.lacks.join("; ")))
            .collect();
        bail!(
            "these hosts cannot hold the job: {}. Give them more, or add hosts",
            lacking.join(" | ")
        );
    }
    Ok(())
}

/// The game of an inventory's run, as `kingmaker build` parses its `game` and `options`.
pub fn inventory_spec(inv: &Inventory) -> Result<GameSpec> {
    let words = std::iter::once("plan".to_string())
        .chain(std::iter::once(inv.run.game.clone()))
        .chain(inv.run.options.iter().cloned());
    Ok(GameWords::try_parse_from(words)
        .with_context(|| {
            format!(
                "the inventory's game {:?} with options {:?}",
                inv.run.game, inv.run.options
            )
        })?
        .game
        .spec())
}

/// What a build of `spec` with `build_args` on `hosts` solves (`layers`: as many as named, else
/// the most the game may solve), and the game its kernel solves.
pub fn job_shape(
    spec: &GameSpec,
    layers: Option<usize>,
    build_args: &[String],
    no_symmetry: bool,
    hosts: &[HostSpec],
) -> Result<(JobShape, GameSpec)> {
    let no_symmetry = no_symmetry || build_args.iter().any(|a| a == "--no-symmetry");
    let keep = build_args.iter().any(|a| a == "--keep-layers-on-workers");
    let game = spec.build()?;
    let kernel_spec = match (no_symmetry, spec.reduced()) {
        (false, Some(r)) => r,
        _ => spec.clone(),
    };
    let solved = kernel_spec.build()?.size();
    let threads = hosts.iter().map(|h| h.cores as usize).max().unwrap_or(1);
    let budget = hosts
        .iter()
        .filter(|h| h.role != "coordinator")
        .map(|h| {
            h.budget
                .unwrap_or_else(|| kingmaker_kernel::memory::default_budget_of(h.memory))
        })
        .min()
        .unwrap_or(0);
    let job = JobShape {
        game: game.name(),
        states: game.size(),
        solved_states: solved,
        layers: layers.unwrap_or_else(|| spec.most_layers()),
        shard_size: default_table_shard_size(budget, threads, solved),
        keep_layers_on_workers: keep,
        checkpoints: cadence(build_args)?,
    };
    Ok((job, kernel_spec))
}

/// The checkpoints' cadence `build_args` set (`build`'s defaults where they do not).
fn cadence(build_args: &[String]) -> Result<Cadence> {
    let mut c = Cadence::default();
    let mut words = build_args.iter();
    while let Some(w) = words.next() {
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (w.as_str(), None),
        };
        if flag != "--checkpoint-every-waves" && flag != "--checkpoint-every-secs" {
            continue;
        }
        let value = inline.or_else(|| words.next().cloned()).unwrap_or_default();
        let n: u64 = value
            .parse()
            .with_context(|| format!("the run's {flag} is {value:?}: not a whole number"))?;
        if flag == "--checkpoint-every-waves" {
            c.waves = u32::try_from(n).context("--checkpoint-every-waves is too large")?;
        } else {
            c.secs = n;
        }
    }
    Ok(c)
}

/// This machine as the one host of an embedded build.
fn this_machine(args: &PlanArgs) -> HostSpec {
    let limit = kingmaker_kernel::memory::memory_limit();
    HostSpec {
        name: "this machine".into(),
        role: "embedded".into(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()) as u64,
        memory: limit.bytes,
        disk: kingmaker_coordinator::preflight::free_disk(&args.out),
        budget: args.memory_budget,
    }
}

/// The inventory's hosts with their declared sizes; a host without them is refused.
fn inventory_hosts(inv: &Inventory) -> Result<Vec<HostSpec>> {
    let mut missing = Vec::new();
    let mut hosts = Vec::new();
    for h in &inv.hosts {
        let (Some(cores), Some(memory), Some(disk)) = (h.cores, &h.memory, &h.disk) else {
            missing.push(h.name.clone());
            continue;
        };
        hosts.push(HostSpec {
            name: h.name.clone(),
            role: match h.role {
                Role::Coordinator => "coordinator",
                Role::Worker => "worker",
            }
            .into(),
            cores: h.threads.map_or(cores, |t| t as u64),
            memory: parse_bytes(memory)?,
            disk: Some(parse_bytes(disk)?),
            budget: h.memory_budget.as_deref().map(parse_bytes).transpose()?,
        });
    }
    if !missing.is_empty() {
        bail!(
            "hosts {} give no size: add `cores`, `memory` and `disk` (the free disk of the data \
             directory) to each, as rented (deploy/inventory.example.toml)",
            missing.join(", ")
        );
    }
    Ok(hosts)
}

fn print_plan(p: &Plan, calibration: &std::path::Path) {
    let hours = |h: f64| {
        if h < 1.0 {
            format!("{:.0} CPU-s", h * 3600.0)
        } else if h < 100.0 {
            format!("{h:.1} CPU-hours")
        } else {
            format!("{} CPU-hours", thousands(h.round() as u64))
        }
    };
    let j = &p.job;
    println!(
        "plan: {} — {} states, {} solved{}, {} layer{}",
        j.game,
        thousands(j.states),
        thousands(j.solved_states),
        if j.states > j.solved_states {
            " (a symmetry-reduced game)"
        } else {
            ""
        },
        j.layers,
        if j.layers == 1 { "" } else { "s" }
    );
    let parts: Vec<String> = p
        .cpu_parts
        .iter()
        .map(|(what, h, source)| format!("{what} {} [{}]", hours(*h), source.word()))
        .collect();
    println!("CPU:     {} ({})", hours(p.cpu_hours), parts.join(", "));
    let wall = if p.wall_hours < 1.0 {
        format!("{:.0} minutes", p.wall_hours * 60.0)
    } else {
        format!("{:.1} hours", p.wall_hours)
    };
    println!(
        "wall:    {wall} on the hosts' cores, the tables written at {}/s",
        human_bytes(p.rates.disk_rate as u64)
    );
    if p.wire_bytes > 0 {
        let w = &p.wire;
        let sent_as = if p.rates.spans > 0.0 {
            format!(
                ", {:.0} % of the decided states in place of their updates",
                p.rates.spans * 100.0
            )
        } else {
            String::new()
        };
        let mut parts = vec![format!(
            "updates {} ({:.1} % of them cross{sent_as})",
            human_bytes(w.updates),
            p.rates.crossing * 100.0
        )];
        parts.push(format!(
            "replicas {} ({:.0} checkpoints a layer)",
            human_bytes(w.replicas),
            w.checkpoints_per_layer
        ));
        if w.expansion > 0 {
            parts.push(format!("expansion {}", human_bytes(w.expansion)));
        }
        if w.gathered > 0 {
            parts.push(format!("gathered {} at most", human_bytes(w.gathered)));
        }
        println!(
            "wire:    {} in all ({}), {} in the largest wave [modelled]",
            human_bytes(p.wire_bytes),
            parts.join(", "),
            human_bytes(p.wire_bytes_peak_wave)
        );
    }
    println!(
        "tables:  {} at most; the release {} at most [modelled]",
        human_bytes(p.table_bytes),
        human_bytes(p.release_bytes)
    );
    println!(
        "{:<14} {:<12} {:>11} {:<12} {:>12} {:>12}  fits",
        "host", "role", "cells", "", "peak memory", "peak disk"
    );
    for h in &p.hosts {
        println!(
            "{:<14} {:<12} {:>11} {:<12} {:>12} {:>12}  {}",
            h.name,
            h.role,
            human_bytes(h.cells_bytes),
            if h.cells_bytes == 0 {
                ""
            } else if h.in_memory {
                "in memory"
            } else {
                "out of core"
            },
            human_bytes(h.peak_memory_bytes),
            human_bytes(h.peak_disk_bytes),
            if h.lacks.is_empty() {
                "yes".to_string()
            } else {
                format!("no: {}", h.lacks.join("; "))
            }
        );
    }
    let r = &p.rates;
    println!(
        "rates:   moves {:.0} ns a solved state ({:.1} % live, {:.1} predecessors) [{}]; kernel \
         overhead {:.2}× [{}]; disk {}/s [{}]; kept in {}",
        r.moves_ns,
        r.live * 100.0,
        r.predecessors,
        r.moves_source.word(),
        r.overhead,
        r.overhead_source.word(),
        human_bytes(r.disk_rate as u64),
        r.disk_source.word(),
        calibration.display()
    );
}
