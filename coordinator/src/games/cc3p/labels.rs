//! The explorer's labels of a cc3p state: its class, the twelve answers and the kingmakers, and
//! what a move changes among them.

use super::answers::{try_answers, Answers, Cc3pTables, PLAYERS};
use crate::games::view::Labels;
use kingmaker_games::cc3p::Cc3p;
use kingmaker_games::AnyGame;
use kingmaker_tablefmt::{FormatError, Lookup};
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub struct Cc3pLabels {
    game: Arc<AnyGame>,
    tables: Cc3pTables<Box<dyn Lookup>>,
}

impl Cc3pLabels {
    pub fn new(game: Arc<AnyGame>, tables: Cc3pTables<Box<dyn Lookup>>) -> Cc3pLabels {
        Cc3pLabels { game, tables }
    }
}

impl Labels for Cc3pLabels {
    fn of(&self, index: u64) -> Result<Value, FormatError> {
        let game: &Cc3p = self.game.as_any().downcast_ref().expect("a cc3p game");
        Ok(labels_json(&try_answers(game, &self.tables, index)?))
    }

    fn changes(&self, before: &Value, after: &Value) -> Vec<String> {
        let mut out = Vec::new();
        if before["class"] != after["class"] {
            out.push(format!(
                "class {} → {}",
                text(&before["class"]),
                text(&after["class"])
            ));
        }
        for p in PLAYERS {
            let (b, a) = (
                &before["solo"][p.to_string()]["value"],
                &after["solo"][p.to_string()]["value"],
            );
            if b != a {
                out.push(format!(
                    "{p}: {} → {}",
                    solo_words(text(b)),
                    solo_words(text(a))
                ));
            }
        }
        let set = |v: &Value| -> Vec<String> {
            v["kingmakers"]
                .as_array()
                .map(|k| {
                    k.iter()
                        .map(|x| format!("{} for {}", text(&x["maker"]), text(&x["for"])))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (kb, ka) = (set(before), set(after));
        for k in ka.iter().filter(|k| !kb.contains(k)) {
            out.push(format!("now kingmaker: {k}"));
        }
        for k in kb.iter().filter(|k| !ka.contains(k)) {
            out.push(format!("no longer kingmaker: {k}"));
        }
        out
    }
}

fn answer_json(value: char, depth: u16) -> Value {
    json!({"value": value.to_string(), "depth": depth})
}

/// The twelve answers as the page shows them.
fn labels_json(a: &Answers) -> Value {
    let mut solo = Map::new();
    let mut enable = Map::new();
    for (p, name) in PLAYERS.iter().enumerate() {
        solo.insert(
            name.to_string(),
            answer_json(a.solo[p].value, a.solo[p].depth),
        );
        let mut to = Map::new();
        for (q, other) in PLAYERS.iter().enumerate().filter(|&(q, _)| q != p) {
            to.insert(
                other.to_string(),
                answer_json(a.enable[p][q].value, a.enable[p][q].depth),
            );
        }
        enable.insert(name.to_string(), Value::Object(to));
    }
    let kingmakers: Vec<Value> = (0..3)
        .flat_map(|p| (0..3).map(move |q| (p, q)))
        .filter(|&(p, q)| a.kingmaker_for(p, q))
        .map(|(p, q)| json!({"maker": PLAYERS[p].to_string(), "for": PLAYERS[q].to_string()}))
        .collect();
    let with = |v: char| -> Vec<String> {
        (0..3)
            .filter(|&p| a.solo[p].value == v)
            .map(|p| PLAYERS[p].to_string())
            .collect()
    };
    json!({
        "kind": "questions",
        "class": a.class.name(),
        "solo": solo,
        "enable": enable,
        "kingmakers": kingmakers,
        "can_force_win": with('W'),
        "forced_out": with('L'),
        "can_hold_draw": with('D'),
    })
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("?")
}

fn solo_words(v: &str) -> &'static str {
    match v {
        "W" => "can force a win",
        "L" => "can be forced out",
        "D" => "can hold a draw",
        _ => "-",
    }
}
