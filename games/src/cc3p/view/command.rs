//! `kingmaker preferences DIR [--rule RULE]... [--json]`: who wins a cc3p build when every player
//! follows a preference rule (docs/rules.md §1.4): the outcome census over all states and over
//! the kingmaker states, how often the win goes to the player who moved last, and the start's
//! outcome with its line.

use kingmaker_tablefmt::release::manifest::thousands;
use super::preferences::{line, outcomes, Rule, ENDLESS, ILLEGAL};
use crate::view::Solved;
use anyhow::Result;
use clap::Args;
use crate::cc3p::Cc3p;
use kingmaker_kernel::{Game, Node};
use crate::cc3p::answers::{answers, Cc3pTables, Class, LAYERS, PLAYERS};
use serde_json::{json, Value};
use std::path::PathBuf;

/// `kingmaker preferences`'s arguments.
#[derive(Args, Debug)]
pub struct PreferencesArgs {
    /// A finished cc3p run or release (all three layers).
    pub dir: PathBuf,
    /// The rules to follow (default: every rule).
    #[arg(long, value_enum)]
    pub rule: Vec<Rule>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `kingmaker preferences`: on the tables of a cc3p run or release.
pub fn run(args: PreferencesArgs, tables: &dyn Solved) -> Result<()> {
    let game = tables.game().clone();
    // `kingmaker` checked the family before handing the tables over.
    let game: &Cc3p = game
        .as_any()
        .downcast_ref()
        .expect("`preferences` runs on the tables of its own family");
    let t = Cc3pTables {
        solo: tables.layer(LAYERS[0])?,
        enable_ab: tables.layer(LAYERS[1])?,
        enable_ac: tables.layer(LAYERS[2])?,
        depths: tables.layers().iter().all(|l| l.depths),
    };
    let rules = if args.rule.is_empty() {
        Rule::ALL.to_vec()
    } else {
        args.rule.clone()
    };
    // The class and mover of every state, once for all rules.
    let classes: Vec<(Class, Option<u8>)> = (0..game.size())
        .map(|s| {
            let mover = match game.node(s) {
                Node::Live { mover } => Some(mover),
                _ => None,
            };
            Ok((answers(game, &t, s)?.class, mover))
        })
        .collect::<Result<_>>()?;
    let start = game.start_index();
    let mut out = Vec::new();
    for rule in rules {
        let o = outcomes(game, &t, rule)?;
        let mut all = [0u64; 4];
        let mut kingmaker = [0u64; 4];
        let mut to_last_mover = 0u64;
        for (s, &w) in o.outcome.iter().enumerate() {
            if w == ILLEGAL {
                continue;
            }
            all[usize::from(w)] += 1;
            if let (Class::Kingmaker, Some(mover)) = classes[s] {
                kingmaker[usize::from(w)] += 1;
                to_last_mover += u64::from(w == (mover + 2) % 3);
            }
        }
        let (plies, cycle) = line(game, &o, start);
        let km_total: u64 = kingmaker.iter().sum();
        out.push(json!({
            "rule": rule.name(),
            "all": census_json(&all),
            "kingmaker": census_json(&kingmaker),
            "kingmaker_to_last_mover": to_last_mover,
            "kingmaker_to_last_mover_share": to_last_mover as f64 / km_total.max(1) as f64,
            "start": {
                "outcome": outcome_name(o.outcome[start as usize]),
                "plies": o.plies[start as usize],
                "line": plies.iter().map(|(m, _)| m).collect::<Vec<_>>(),
                "cycle_from": cycle,
                "end": plies.last().map(|(_, c)| game.format_position(*c)),
            },
        }));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{}: outcomes when every player follows the rule (A, B, C wins; endless: play cycles)",
        game.name()
    );
    for r in &out {
        let row = |c: &Value| {
            ["A", "B", "C", "endless"]
                .iter()
                .map(|k| format!("{k} {}", thousands(c[k].as_u64().unwrap_or(0))))
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!("\n{}", r["rule"].as_str().unwrap_or(""));
        println!("  all legal states  {}", row(&r["all"]));
        println!("  kingmaker states  {}", row(&r["kingmaker"]));
        println!(
            "  kingmaker states won by the player who moved last: {} ({:.1} %)",
            thousands(r["kingmaker_to_last_mover"].as_u64().unwrap_or(0)),
            100.0 * r["kingmaker_to_last_mover_share"].as_f64().unwrap_or(0.0)
        );
        let s = &r["start"];
        let moves: Vec<&str> = s["line"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let ending = match s["cycle_from"].as_u64() {
            Some(k) => format!("then the moves from ply {k} repeat for ever"),
            None => format!("{} plies", s["plies"]),
        };
        println!(
            "  the start: {} ({ending}): {}",
            s["outcome"].as_str().unwrap_or(""),
            moves.join(", ")
        );
    }
    Ok(())
}

fn census_json(c: &[u64; 4]) -> Value {
    json!({"A": c[0], "B": c[1], "C": c[2], "endless": c[3]})
}

fn outcome_name(o: u8) -> String {
    match o {
        ENDLESS => "endless".into(),
        ILLEGAL => "illegal".into(),
        w => format!("{} wins", PLAYERS[usize::from(w)]),
    }
}
