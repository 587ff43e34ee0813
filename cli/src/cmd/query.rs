//! `kingmaker query DIR POSITION`: look a position up in a built run or a packed release.

use anyhow::Result;
use clap::Args;
use kingmaker_coordinator::tables::open_tables;
use kingmaker_games::Notation;
use kingmaker_probe::{Probe, Status, Tables, Verdict};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// A run directory written by `kingmaker build`, or a release written by `kingmaker pack`:
    /// its directory, or its URL (`http://HOST:PORT/PATH/`, read there by range requests).
    pub dir: PathBuf,
    /// The position, in the game's notation (docs/cli.md, "Position notation", and each game's
    /// page), or `start` (or nothing: `''`).
    pub position: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: QueryArgs) -> Result<()> {
    let tables = open_tables(&args.dir)?;
    let game = tables.game().clone();
    let index = game.parse_or_start(super::line::start_if_empty(&args.position))?;
    // Tables without a layer the game's answers need (a release fetched with `--layers`): the
    // game's view would refuse them, so say what the layers here do, as the probing library and
    // Python's `probe` answer.
    let here = tables.probe_index(index)?;
    if let Verdict::Incomplete { missing } = &here.verdict {
        return partial(&tables, &here, missing, args.json);
    }
    game.view().query(&tables, index, args.json)
}

/// The position, the present layers' answers and what is missing, and the same for each move's
/// child (in the game's order: without every layer there is no best first).
fn partial(tables: &Tables, here: &Probe, missing: &[String], json: bool) -> Result<()> {
    let moves = tables.moves_of(here.index)?;
    if json {
        let mut out = serde_json::to_value(here)?;
        out["moves"] = serde_json::to_value(&moves)?;
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    let answers = |p: &Probe| {
        let layers: Vec<String> = p
            .layers
            .iter()
            .map(|l| format!("{}={}", l.layer, l.answer))
            .collect();
        layers.join("  ")
    };
    println!("position {}  (index {})", here.position, here.index);
    match &here.status {
        Status::Illegal => println!("illegal"),
        Status::Terminal { outcome, .. } => println!("terminal: {outcome}"),
        Status::Live { mover, .. } => println!("{mover} to move"),
    }
    println!(
        "incomplete: the game's answers need {}, which these tables lack (`kingmaker fetch \
         --layers` adds them); what the layers here say:",
        missing.join(", ")
    );
    println!("layers  {}", answers(here));
    for m in &moves {
        println!(
            "move {:<12} -> {}  {}",
            m.text,
            m.child.position,
            answers(&m.child)
        );
    }
    Ok(())
}
