//! `kingmaker line DIR POSITION`: a principal line of optimal play in a built two-player run,
//! printed as boards (see `crate::line` for how the moves are chosen).

use crate::principal_line::{principal_line, value_letter, Ending, Line};
use crate::tables::Tables;
use anyhow::{bail, Result};
use clap::Args;
use kingmaker_tablefmt::Lookup;
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::Game;
use kingmaker_worker::Notation;
use serde_json::json;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct LineArgs {
    /// A finished run directory written by `kingmaker build`, or a release written by `kingmaker
    /// pack` (a two-player game).
    pub dir: PathBuf,
    /// The position, in the game's notation (docs/*-notation.md).
    pub position: String,
    /// The layer to follow (default `solo`; for Go a threshold layer such as `score_ge_1`).
    #[arg(long, default_value = "solo")]
    pub layer: String,
    /// Stop a drawn line after this many plies if no state has repeated by then.
    #[arg(long, default_value_t = 10_000)]
    pub max_plies: usize,
    /// Print JSON: every ply's move, position, value and depth, and how the line ends.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: LineArgs) -> Result<()> {
    let tables = Tables::open(&args.dir)?;
    let game = tables.spec.build()?;
    if game.players() != 2 {
        bail!(
            "`line` needs a two-player game; {} holds {} ({} players). Use `kingmaker query` instead",
            args.dir.display(),
            game.name(),
            game.players()
        );
    }
    if !tables.layers.iter().any(|l| l.name == args.layer) {
        let names: Vec<&str> = tables.layers.iter().map(|l| l.name.as_str()).collect();
        bail!(
            "{} has no layer {:?}; its layers are {} (choose one with --layer)",
            args.dir.display(),
            args.layer,
            names.join(", ")
        );
    }
    let table = tables.layer(&args.layer)?;
    let start = game.parse_or_start(&args.position)?;
    let line = principal_line(&game, start, |i| table.lookup(i), args.max_plies)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&line_json(&game, &line))?
        );
    } else {
        print!("{}", line_text(&game, &args.layer, &line));
    }
    Ok(())
}

fn value_and_depth(value: u8, depth: u16) -> String {
    match value_letter(value) {
        'D' => "D".to_string(),
        v => format!("{v}{depth}"),
    }
}

/// The line as JSON: `plies` (ply, move, position, index, value, depth) and `ending`.
fn line_json(game: &AnyGame, line: &Line) -> serde_json::Value {
    let plies: Vec<_> = line
        .plies
        .iter()
        .enumerate()
        .map(|(k, p)| {
            json!({
                "ply": k,
                "move": p.mv,
                "position": game.format_position(p.index),
                "index": p.index,
                "value": value_letter(p.value).to_string(),
                "depth": p.depth,
            })
        })
        .collect();
    let ending = match line.ending {
        Ending::GameOver { winner } => {
            json!({
                "kind": "game_over",
                "winner": game.outcome_winner(winner).map(|p| game.player_name(p)),
                "outcome": game.outcome_text(winner),
            })
        }
        Ending::Cycle { from } => json!({
            "kind": "cycle",
            "from": from,
            "to": line.plies.len() - 1,
            "length": line.plies.len() - 1 - from,
        }),
        Ending::Cut => json!({"kind": "cut", "plies": line.plies.len() - 1}),
    };
    json!({"plies": plies, "ending": ending})
}

/// The line as text: a header with the result, then every ply as a board.
fn line_text(game: &AnyGame, layer: &str, line: &Line) -> String {
    let first = &line.plies[0];
    let (a, b) = (game.player_name(0), game.player_name(1));
    let mut out = format!("line from {}\n", game.format_position(first.index));
    out += &match value_letter(first.value) {
        // Another layer than "the first player wins": say what its W means.
        'W' if layer != "solo" => format!(
            "value W{} in layer {layer}: {a} forces it in {} plies with best play\n",
            first.depth, first.depth
        ),
        'L' if layer != "solo" => format!(
            "value L{} in layer {layer}: {b} prevents it in {} plies with best play\n",
            first.depth, first.depth
        ),
        'W' => format!(
            "value W{}: {a} wins in {} plies with best play\n",
            first.depth, first.depth
        ),
        'L' => format!(
            "value L{}: {b} wins in {} plies with best play\n",
            first.depth, first.depth
        ),
        _ => "value D: a draw, neither side can force a win\n".to_string(),
    };
    out += "(the winner takes the shortest win, the loser the longest defence; in a draw both \
            keep the draw)\n";
    for (k, p) in line.plies.iter().enumerate() {
        out.push('\n');
        match &p.mv {
            None => out += &format!("ply 0: start  [{}]\n", value_and_depth(p.value, p.depth)),
            Some(mv) => {
                let mover = game.player_name(game.mover(line.plies[k - 1].index));
                let what = if mv == "pass" {
                    format!("{mover} passes")
                } else {
                    format!("{mover} plays {mv}")
                };
                out += &format!("ply {k}: {what}  [{}]\n", value_and_depth(p.value, p.depth));
            }
        }
        out += &format!("{}\n", game.format_position(p.index));
        out += game.picture(p.index).trim_end();
        out.push('\n');
    }
    out.push('\n');
    out += &match line.ending {
        Ending::GameOver { winner } => format!(
            "game over after {} plies: {}\n",
            line.plies.len() - 1,
            game.outcome_text(winner)
        ),
        Ending::Cycle { from } => {
            let last = line.plies.len() - 1;
            let moves: Vec<&str> = line.plies[from + 1..]
                .iter()
                .filter_map(|p| p.mv.as_deref())
                .collect();
            format!(
                "draw record: ply {last} repeats ply {from}; the cycle of {} plies ({}) repeats \
                 forever, so the game is drawn\n",
                last - from,
                moves.join(" ")
            )
        }
        Ending::Cut => format!(
            "line cut after {} plies without a repetition (raise --max-plies)\n",
            line.plies.len() - 1
        ),
    };
    out
}
