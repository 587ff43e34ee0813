//! `kingmaker line DIR POSITION [--layer L]`: a principal line of optimal play in one forcing
//! layer of a build (a run directory or a release), printed as boards (see
//! `crate::principal_line` for how the moves are chosen). The layer is read as a two-team game,
//! its coalition against the other players: for a two-player game's `solo` that is the game
//! itself; for cc3p it is one of the questions `solo`, `enable_ab`, `enable_ac`.

use anyhow::{bail, Result};
use clap::Args;
use kingmaker_coordinator::tables::open_tables;
use kingmaker_games::view::principal_line::{principal_line, value_letter, Ending, Line};
use kingmaker_games::AnyGame;
use kingmaker_games::Notation;
use kingmaker_kernel::Layer;
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::Lookup;
use serde_json::json;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct LineArgs {
    /// A finished run directory written by `kingmaker build`, or a release written by `kingmaker
    /// pack`: its directory, or its URL (`http://HOST:PORT/PATH/`, read there by range requests).
    pub dir: PathBuf,
    /// The position, in the game's notation (docs/*-notation.md), or `start` (or nothing).
    pub position: String,
    /// The layer to follow, read as its coalition against the other players (default `solo`; for
    /// cc3p also `enable_ab` or `enable_ac`, for Go a threshold layer such as `score_ge_1`).
    #[arg(long, default_value = "solo")]
    pub layer: String,
    /// Stop the line after this many plies if it has neither ended nor repeated by then (1 or
    /// more).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_plies: u64,
    /// Print JSON: every ply's move, position, value and depth, and how the line ends.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: LineArgs) -> Result<()> {
    let tables = open_tables(&args.dir)?;
    let game = &**tables.game();
    let Some(layer) = tables
        .layers()
        .iter()
        .find(|l| l.name == args.layer)
        .map(|l| l.layer())
    else {
        let names: Vec<&str> = tables.layers().iter().map(|l| l.name.as_str()).collect();
        bail!(
            "{} has no layer {:?}; its layers are {} (choose one with --layer)",
            args.dir.display(),
            args.layer,
            names.join(", ")
        );
    };
    // A line is chosen by depth (the shortest win, the longest defence): values alone cannot
    // give it.
    if tables
        .layers()
        .iter()
        .any(|l| l.name == args.layer && l.present && !l.depths)
    {
        bail!(
            "{dir} holds layer {layer}'s values without its depths (a copy fetched with \
             --values-only): a line follows depths. Fetch the layer with them (`kingmaker fetch \
             URL {dir} --layers {layer}`)",
            dir = args.dir.display(),
            layer = args.layer
        );
    }
    let table = tables.layer(&args.layer)?;
    let start = game.parse_or_start(start_if_empty(&args.position))?;
    // An illegal position has no line: say why it is illegal, as `query` does.
    if matches!(game.node(start), Node::Illegal) {
        bail!(
            "position {} (index {start}) is illegal: {}; it cannot arise in play, so it has no \
             line",
            game.format_position(start),
            game.illegal_reason(start)
                .unwrap_or_else(|| "no game reaches it".into())
        );
    }
    let line = principal_line(
        game,
        layer.coalition,
        start,
        |i| table.lookup(i),
        usize::try_from(args.max_plies).unwrap_or(usize::MAX),
    )?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&line_json(game, &layer, &line))?
        );
    } else {
        print!("{}", line_text(game, &layer, &line));
    }
    Ok(())
}

/// A position given as nothing (`''`) is the start, as the probing library, Python's
/// `probe('')` and the HTTP API's `position=` read it.
pub fn start_if_empty(position: &str) -> &str {
    if position.trim().is_empty() {
        "start"
    } else {
        position
    }
}

fn value_and_depth(value: u8, depth: u16) -> String {
    match value_letter(value) {
        'D' => "D".to_string(),
        v => format!("{v}{depth}"),
    }
}

/// Names of the players whose bit is set in `mask`, joined with `and`.
fn names(game: &AnyGame, mask: u64) -> String {
    let names: Vec<String> = (0..game.players())
        .filter(|&p| mask >> p & 1 == 1)
        .map(|p| game.player_name(p))
        .collect();
    match names.as_slice() {
        [] => "nobody".to_string(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// What a layer of a game of three or more players asks, e.g. "A and B play for a win by B,
/// against C".
fn question(game: &AnyGame, layer: &Layer) -> String {
    let everyone = (1u64 << game.players()) - 1;
    let winners = names(game, layer.objective & everyone).replace(" and ", " or ");
    format!(
        "{} play{} for a win by {winners}, against {}",
        names(game, layer.coalition as u64),
        if layer.coalition.count_ones() == 1 {
            "s"
        } else {
            ""
        },
        names(game, everyone & !(layer.coalition as u64)),
    )
}

/// The line as JSON: `layer` (its name, `coalition` and `objective` as player names where the
/// outcomes are players), `plies` (ply, move, position, index, value, depth) and `ending`.
fn line_json(game: &AnyGame, layer: &Layer, line: &Line) -> serde_json::Value {
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
    let players = |mask: u64| -> Vec<String> {
        (0..game.players())
            .filter(|&p| mask >> p & 1 == 1)
            .map(|p| game.player_name(p))
            .collect()
    };
    let mut layer_json = json!({
        "name": layer.name,
        "coalition": players(layer.coalition as u64),
    });
    // Outcomes are players except in Go (final scores); there the objective is the layer's name.
    if game.players() > 2 {
        layer_json["objective"] = json!(players(layer.objective));
    }
    json!({"layer": layer_json, "plies": plies, "ending": ending})
}

/// The line as text: a header with the result, then every ply as a board.
fn line_text(game: &AnyGame, layer: &Layer, line: &Line) -> String {
    let first = &line.plies[0];
    let (a, b) = (game.player_name(0), game.player_name(1));
    let mut out = format!("line from {}\n", game.format_position(first.index));
    let name = &layer.name;
    let everyone = (1u64 << game.players()) - 1;
    let (us, them) = (
        names(game, layer.coalition as u64),
        names(game, everyone & !(layer.coalition as u64)),
    );
    out += &match value_letter(first.value) {
        // Three or more players: the layer's coalition against the rest.
        _ if game.players() > 2 => {
            let says = match value_letter(first.value) {
                'W' => format!("{us} force it in {} plies with best play", first.depth),
                'L' => format!("{them} prevent it in {} plies with best play", first.depth),
                _ => {
                    "neither side can force it: with best play the game goes on forever".to_string()
                }
            };
            format!(
                "value {} in layer {name} ({}): {says}\n",
                value_and_depth(first.value, first.depth),
                question(game, layer)
            )
        }
        // Another layer than "the first player wins": say what its W means.
        'W' if name != "solo" => format!(
            "value W{} in layer {name}: {a} forces it in {} plies with best play\n",
            first.depth, first.depth
        ),
        'L' if name != "solo" => format!(
            "value L{} in layer {name}: {b} prevents it in {} plies with best play\n",
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
    out += if game.players() > 2 {
        "(the side that forces the result takes the shortest way to it, the other side the longest \
         defence; in a draw both sides keep the draw)\n"
    } else {
        "(the winner takes the shortest win, the loser the longest defence; in a draw both keep \
         the draw)\n"
    };
    for (k, p) in line.plies.iter().enumerate() {
        out.push('\n');
        match &p.mv {
            None => out += &format!("ply 0: start  [{}]\n", value_and_depth(p.value, p.depth)),
            Some(mv) => {
                let mover = game.player_name(game.mover(line.plies[k - 1].index));
                // Move texts that begin with the mover (cc3p's `A b4-b3`, cc2p's `0 0-2`) are
                // shown without it: the sentence names the mover.
                let mv = mv.split_once(' ').map_or(mv.as_str(), |(_, rest)| rest);
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
    let plies = |n: usize| format!("{n} {}", if n == 1 { "ply" } else { "plies" });
    out += &match line.ending {
        Ending::GameOver { winner } => format!(
            "game over after {}: {}\n",
            plies(line.plies.len() - 1),
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
            "line cut after {}, before the game ended or a position repeated (raise \
             --max-plies)\n",
            plies(line.plies.len() - 1)
        ),
    };
    out
}
