//! `kingmaker query` on a cc3p build: the class, the three solo answers, the pairouts, the six
//! enables and the kingmakers of a position and of every move, and the position's outcome under
//! each preference rule (docs/rules.md §1.4): from every state's outcomes on a small enough game
//! (level 1), else by following each rule from the position.

use super::preferences::{all_at_hand, followed_json, outcomes_json};
use crate::cc3p::answers::{answers as try_answers, Answers, Cc3pTables, PLAYERS};
use crate::cc3p::Cc3p;
use crate::reading::Value;
use anyhow::Result;
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::Lookup;
use serde_json::json;

pub fn print<T: Lookup + Sync>(
    g: &Cc3p,
    tables: &Cc3pTables<T>,
    index: u64,
    json: bool,
) -> Result<()> {
    let here = try_answers(g, tables, index)?;
    let rules = match all_at_hand(g, tables)? {
        Some(rules) => Some(outcomes_json(&rules, index)),
        None if tables.depths => Some(followed_json(g, tables, index)?),
        None => None,
    };
    let moves: Vec<(String, u64, Answers)> = g
        .moves(index)
        .into_iter()
        .map(|(text, child)| Ok((text, child, try_answers(g, tables, child)?)))
        .collect::<Result<_>>()?;
    if json {
        let mut out = json!({
            "position": g.format_position(index),
            "index": index,
            "node": node_text(g.node(index)),
            "answers": here,
            "moves": moves.iter().map(|(text, child, a)| json!({
                "move": text, "position": g.format_position(*child), "index": child, "answers": a
            })).collect::<Vec<_>>(),
        });
        if let Some(rules) = rules {
            out["rules"] = rules;
        }
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("position {}  (index {index})", g.format_position(index));
    println!("{}", g.picture(index));
    println!("{}", node_text(g.node(index)));
    print_answers(&here, "");
    if let Some(rules) = &rules {
        let words: Vec<String> = rules
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                let (rule, outcome) = (r["rule"].as_str(), r["outcome"].as_str());
                match outcome {
                    Some("endless") => format!("{} endless", rule.unwrap_or("")),
                    _ => format!(
                        "{} {} ({} plies)",
                        rule.unwrap_or(""),
                        outcome.unwrap_or(""),
                        r["plies"]
                    ),
                }
            })
            .collect();
        println!("rules   {}", words.join(", "));
    }
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
        Node::Illegal => format!("illegal: {}", crate::cc3p::notation::ILLEGAL_REASON),
        Node::Terminal { outcome: winner } => {
            format!("terminal: {} has won", PLAYERS[winner as usize])
        }
        Node::Live { mover } => format!("{} to move", PLAYERS[mover as usize]),
    }
}

/// Class, the three solo answers, the three pairouts, the six enables, each with its depth.
fn print_answers(a: &Answers, indent: &str) {
    let solo: Vec<String> = (0..3)
        .map(|p| format!("{}={}", PLAYERS[p], a.solo[p].text()))
        .collect();
    let pairout: Vec<String> = (0..3)
        .map(|p| {
            let yes = match a.solo[p].value {
                Value::Loss => "yes",
                Value::Illegal => "illegal",
                _ => "no",
            };
            format!("{}={yes}", PLAYERS[p])
        })
        .collect();
    let mut enable = Vec::new();
    for (p, row) in a.enable.iter().enumerate() {
        for q in (0..3).filter(|&q| q != p) {
            enable.push(format!("{}>{}={}", PLAYERS[p], PLAYERS[q], row[q].text()));
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
