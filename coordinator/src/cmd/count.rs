//! `kingmaker count GAME ...`: the size of a game's index space, without solving.

use super::game::GameChoice;
use anyhow::Result;
use clap::Args;
use kingmaker_worker::games::cc2p::{Cc2p, TipRule};
use kingmaker_worker::games::cc3p;
use kingmaker_worker::Game;
use serde_json::json;

#[derive(Args, Debug)]
pub struct CountArgs {
    #[command(subcommand)]
    pub game: GameChoice,
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
}

pub fn run(args: CountArgs) -> Result<()> {
    let value = match &args.game {
        GameChoice::Cc3p(a) => {
            let c = cc3p::counts(a.level)?;
            json!({
                "game": "cc3p",
                "level": a.level,
                "placements": c.placements.to_string(),
                "states": c.states.to_string(),
                "illegal_placements": c.illegal_placements.to_string(),
                "illegal_states": c.illegal_states.to_string(),
            })
        }
        GameChoice::Cc2p(a) => {
            // Combinatorial (Cc2p::illegal_count): 6×6 / 6 has 2.3 trillion states.
            let game = |tip_rule| Cc2p::new(a.board, a.pieces, tip_rule);
            let (exact, shortcut) = (game(TipRule::Exact)?, game(TipRule::SolverShortcut)?);
            let chosen = if a.shortcut_tip_rule {
                &shortcut
            } else {
                &exact
            };
            let mut v = serde_json::to_value(args.game.spec())?;
            v["placements"] = json!(exact.placements().to_string());
            v["states"] = json!(exact.size().to_string());
            v["illegal_states"] = json!(chosen.illegal_count().to_string());
            v["illegal_states_exact"] = json!(exact.illegal_count().to_string());
            v["illegal_states_shortcut"] = json!(shortcut.illegal_count().to_string());
            v
        }
        other => {
            // TOPPEN has no closed formula: enumerate its 3.4 million states (a fraction of a
            // second).
            use kingmaker_worker::Node;
            use rayon::prelude::*;
            let spec = other.spec();
            let game = spec.build()?;
            let illegal = (0..game.size())
                .into_par_iter()
                .filter(|&i| game.node(i) == Node::Illegal)
                .count();
            let mut v = serde_json::to_value(&spec)?;
            v["states"] = json!(game.size().to_string());
            v["illegal_states"] = json!(illegal.to_string());
            v
        }
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        for (k, v) in value.as_object().expect("object") {
            let v = v
                .as_str()
                .map(group_digits)
                .unwrap_or_else(|| v.to_string());
            println!("{k:>23}: {v}");
        }
    }
    Ok(())
}

/// "4947100130" -> "4,947,100,130" (non-numbers unchanged).
pub fn group_digits(s: &str) -> String {
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return s.to_string();
    }
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}
