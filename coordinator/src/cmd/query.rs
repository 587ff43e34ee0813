//! `kingmaker query DIR POSITION`: look a position up in a built run or a packed release.

use crate::cc3p_view::{try_answers, Answers, PLAYERS};
use crate::tables::Tables;
use anyhow::Result;
use clap::Args;
use kingmaker_tablefmt::Lookup;
use kingmaker_worker::kernel::{DRAW, LOSS, WIN};
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::{Game, Node};
use serde_json::json;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// A run directory written by `kingmaker build`, or a release written by `kingmaker pack`.
    pub dir: PathBuf,
    /// The position, in the game's notation (see the README), or `start`.
    pub position: String,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: QueryArgs) -> Result<()> {
    let tables = Tables::open(&args.dir)?;
    let game = tables.spec.build()?;
    match &game {
        AnyGame::Cc3p(g) => query_cc3p(&tables, g, &args),
        _ => query_two_player(&tables, &game, &args),
    }
}

/// A two-player game: one layer, `solo` = "player 0 (the first colour) wins".
fn query_two_player(tables: &Tables, game: &AnyGame, args: &QueryArgs) -> Result<()> {
    let table = tables.layer("solo")?;
    let index = game.parse_position(&args.position)?;
    // Every label this query shows, read once (a release read can fail: a damaged block).
    let mut labels = std::collections::HashMap::new();
    for i in std::iter::once(index).chain(game.moves(index).into_iter().map(|m| m.1)) {
        labels.insert(i, table.lookup(i)?);
    }
    let label = |i: u64| {
        let (v, d) = labels[&i];
        let value = match v {
            WIN => "W",
            LOSS => "L",
            DRAW => "D",
            _ => "-",
        };
        (value, d)
    };
    let node = |i: u64| match game.node(i) {
        Node::Illegal => "illegal".to_string(),
        Node::Terminal { winner } => format!("terminal: {} has won", game.player_name(winner)),
        Node::Live { mover } => format!("{} to move", game.player_name(mover)),
    };
    let moves = game.moves(index);
    if args.json {
        let (v, d) = label(index);
        let out = json!({
            "position": game.format_position(index),
            "index": index,
            "node": node(index),
            "value": v,
            "depth": d,
            "moves": moves.iter().map(|(text, child)| {
                let (v, d) = label(*child);
                json!({"move": text, "position": game.format_position(*child), "index": child, "value": v, "depth": d})
            }).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    // A draw has no depth worth showing.
    let value_text = |i: u64| match label(i) {
        ("D", _) => "D".to_string(),
        (v, d) => format!("{v}{d}"),
    };
    println!("position {}  (index {index})", game.format_position(index));
    println!("{}", game.picture(index).trim_end());
    // TOPPEN's picture already ends with the side to move (or the winner).
    if !matches!(game, AnyGame::Toppen(_)) {
        println!("{}", node(index));
    }
    println!(
        "value {}   W = {} wins, L = {} wins, D = draw; digits = depth (plies to the end with best play)",
        value_text(index),
        game.player_name(0),
        game.player_name(1)
    );
    if moves.is_empty() {
        println!("no moves");
    }
    for (text, child) in &moves {
        println!(
            "move {text:<12} -> {:<5} {}",
            value_text(*child),
            game.format_position(*child)
        );
    }
    Ok(())
}

fn query_cc3p(
    tables: &Tables,
    g: &kingmaker_worker::games::cc3p::Cc3p,
    args: &QueryArgs,
) -> Result<()> {
    let tables = tables.cc3p()?;
    let index = g.parse_position(&args.position)?;
    let here = try_answers(g, &tables, index)?;
    let moves: Vec<(String, u64, Answers)> = g
        .moves(index)
        .into_iter()
        .map(|(text, child)| Ok((text, child, try_answers(g, &tables, child)?)))
        .collect::<Result<_>>()?;
    if args.json {
        let out = json!({
            "position": g.format_position(index),
            "index": index,
            "node": node_text(g.node(index)),
            "answers": here,
            "moves": moves.iter().map(|(text, child, a)| json!({
                "move": text, "position": g.format_position(*child), "index": child, "answers": a
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("position {}  (index {index})", g.format_position(index));
    println!("{}", g.picture(index));
    println!("{}", node_text(g.node(index)));
    print_answers(&here, "");
    if moves.is_empty() {
        println!("no moves");
    }
    for (text, child, a) in &moves {
        println!("move {text:<16} -> {}", g.format_position(*child));
        print_answers(a, "    ");
    }
    Ok(())
}

fn node_text(node: Node) -> String {
    match node {
        Node::Illegal => "illegal: two or more goals are filled".into(),
        Node::Terminal { winner } => format!("terminal: {} has won", PLAYERS[winner as usize]),
        Node::Live { mover } => format!("{} to move", PLAYERS[mover as usize]),
    }
}

/// Class, the three solo answers, the three pairouts, the six enables, each with its depth.
fn print_answers(a: &Answers, indent: &str) {
    let solo: Vec<String> = (0..3)
        .map(|p| format!("{}={}{}", PLAYERS[p], a.solo[p].value, a.solo[p].depth))
        .collect();
    let pairout: Vec<String> = (0..3)
        .map(|p| {
            let yes = if a.solo[p].value == 'L' { "yes" } else { "no" };
            format!("{}={yes}", PLAYERS[p])
        })
        .collect();
    let mut enable = Vec::new();
    for (p, row) in a.enable.iter().enumerate() {
        for q in (0..3).filter(|&q| q != p) {
            enable.push(format!(
                "{}>{}={}{}",
                PLAYERS[p], PLAYERS[q], row[q].value, row[q].depth
            ));
        }
    }
    let kingmakers: Vec<String> = (0..3)
        .flat_map(|p| (0..3).map(move |q| (p, q)))
        .filter(|&(p, q)| a.kingmaker_for(p, q))
        .map(|(p, q)| format!("{} for {}", PLAYERS[p], PLAYERS[q]))
        .collect();
    println!("{indent}class {}", a.class.name());
    println!(
        "{indent}solo    {}   (W = forces a win, L = forced out, D = holds a draw; digits = depth)",
        solo.join("  ")
    );
    println!("{indent}pairout {}", pairout.join("  "));
    println!("{indent}enable  {}", enable.join("  "));
    if !kingmakers.is_empty() {
        println!("{indent}kingmaker {}", kingmakers.join(", "));
    }
}
