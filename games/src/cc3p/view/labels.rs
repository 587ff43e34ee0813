//! The explorer's labels of a cc3p state: its class, the twelve answers and the kingmakers, what a
//! move changes among them, and a line of play: where a player can win alone, its shortest win
//! against the longest resistance; where one can hold a draw alone, the cycle that holds it.

use super::preferences::{all_at_hand, choices_json, outcomes_json, Outcomes, Rule};
use crate::cc3p::answers::Class;
use crate::cc3p::answers::{answers as try_answers, Answers, Cc3pTables, PLAYERS};
use crate::cc3p::Cc3p;
use crate::reading::{Answer, Value as Outcome};
use crate::view::two_player::line_json;
use crate::view::ApiError;
use crate::view::Labels;
use crate::AnyGame;
use kingmaker_tablefmt::{FormatError, Lookup};
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub struct Cc3pLabels {
    game: Arc<AnyGame>,
    tables: Cc3pTables<Box<dyn Lookup>>,
    /// Every preference rule's outcomes, for a game small enough (docs/rules.md §1.4).
    rules: Option<Vec<(Rule, Outcomes)>>,
}

impl Cc3pLabels {
    pub fn new(
        game: Arc<AnyGame>,
        tables: Cc3pTables<Box<dyn Lookup>>,
    ) -> Result<Cc3pLabels, FormatError> {
        let cc3p: &Cc3p = game.as_any().downcast_ref().expect("a cc3p game");
        let rules = all_at_hand(cc3p, &tables)?;
        Ok(Cc3pLabels {
            game,
            tables,
            rules,
        })
    }
}

/// Player P's `solo` layer: A's, read at the state rotated so that P plays A's role.
struct AsPlayer<'a> {
    game: &'a Cc3p,
    solo: &'a dyn Lookup,
    player: usize,
}

impl Lookup for AsPlayer<'_> {
    fn states(&self) -> u64 {
        self.solo.states()
    }
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        // P's questions at s are A's at R^(3-P)(s) (crate::cc3p::answers::answers).
        let mut i = index;
        for _ in 0..(3 - self.player) % 3 {
            i = self.game.rotate(i);
        }
        self.solo.lookup(i)
    }
}

impl Cc3pLabels {
    fn cc3p(&self) -> &Cc3p {
        self.game.as_any().downcast_ref().expect("a cc3p game")
    }
}

impl Labels for Cc3pLabels {
    fn of(&self, index: u64) -> Result<Value, FormatError> {
        let mut labels = labels_json(&try_answers(self.cc3p(), &self.tables, index)?);
        if let Some(rules) = &self.rules {
            labels["rules"] = outcomes_json(rules, index);
        }
        if self.tables.depths {
            labels["choices"] = choices_json(self.cc3p(), &self.tables, index)?;
        }
        Ok(labels)
    }

    /// A player who can win alone: its shortest win against the longest resistance. A player who
    /// can hold a draw alone: the moves that keep the draw until a position repeats (the others
    /// keep it from winning, it keeps them from winning). Other classes have no line of one
    /// player's.
    fn line(&self, index: u64) -> Option<Result<Value, ApiError>> {
        // A line is followed by depth (a draw's line too: its moves are read with their
        // depths), which values-only tables do not keep.
        if !self.tables.depths {
            return None;
        }
        let answers = match try_answers(self.cc3p(), &self.tables, index) {
            Ok(a) => a,
            Err(e) => return Some(Err(e.into())),
        };
        let wanted = match answers.class {
            Class::SoloWin => Outcome::Win,
            Class::SpoilerDraw => Outcome::Draw,
            _ => return None,
        };
        let player = (0..3).find(|&p| answers.solo[p].value == wanted)?;
        let solo = AsPlayer {
            game: self.cc3p(),
            solo: &*self.tables.solo,
            player,
        };
        Some(
            line_json(&self.game, 1 << player, &solo, &solo, index).map(|mut line| {
                if line.is_object() {
                    line["player"] = json!(PLAYERS[player].to_string());
                }
                line
            }),
        )
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

/// An answer as the page reads it: an illegal state's value is `-`; the depth is null where the
/// tables hold values alone.
fn answer_json(a: Answer) -> Value {
    let value = match a.value {
        Outcome::Illegal => "-",
        v => v.as_str(),
    };
    json!({"value": value, "depth": a.depth})
}

/// The twelve answers as the page shows them.
fn labels_json(a: &Answers) -> Value {
    let mut solo = Map::new();
    let mut enable = Map::new();
    for (p, name) in PLAYERS.iter().enumerate() {
        solo.insert(name.to_string(), answer_json(a.solo[p]));
        let mut to = Map::new();
        for (q, other) in PLAYERS.iter().enumerate().filter(|&(q, _)| q != p) {
            to.insert(other.to_string(), answer_json(a.enable[p][q]));
        }
        enable.insert(name.to_string(), Value::Object(to));
    }
    let kingmakers: Vec<Value> = (0..3)
        .flat_map(|p| (0..3).map(move |q| (p, q)))
        .filter(|&(p, q)| a.kingmaker_for(p, q))
        .map(|(p, q)| json!({"maker": PLAYERS[p].to_string(), "for": PLAYERS[q].to_string()}))
        .collect();
    let with = |v: Outcome| -> Vec<String> {
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
        "can_force_win": with(Outcome::Win),
        "forced_out": with(Outcome::Loss),
        "can_hold_draw": with(Outcome::Draw),
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
