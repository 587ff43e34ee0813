//! cc3p_race as it is shown: every player's four answers in `query` and on the explorer page (the
//! mover's `top2` as its value), and in `summary.json` what second place changes: over all legal
//! and all reachable states, first place's control classes (from `solo`, as in cc3p) and, among
//! the kingmaker states, whether some player can still secure second place or make a deal (hand
//! the win to one opponent and keep second place).

use super::Cc3pRace;
use crate::view::{GameView, Labels, Solved};
use crate::AnyGame;
use anyhow::Result;
use kingmaker_kernel::reach::reachable;
use kingmaker_kernel::{Game, Node, DRAW, LOSS, WIN};
use crate::reading::Answer;
use crate::Notation;
use kingmaker_tablefmt::layer::{LayerTable, ValuesPlane};
use kingmaker_tablefmt::FormatError;
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The layers, in the order of [`super::Cc3pRaceParams::layers`].
const LAYERS: [&str; 4] = ["solo", "top2", "deal_ab", "deal_ac"];

/// cc3p_race's view.
pub struct RaceView {
    game: Arc<AnyGame>,
}

impl RaceView {
    /// The view of a cc3p_race game.
    pub fn new(game: &Arc<AnyGame>) -> RaceView {
        RaceView { game: game.clone() }
    }
}

/// What is counted, by state.
#[derive(Clone, Copy, Default)]
struct Counts {
    /// terminal, solo win, spoiler draw, kingmaker (first place, as in cc3p).
    classes: [u64; 4],
    /// Kingmaker states where some player can force at least second place alone.
    kingmaker_secure_second: u64,
    /// Kingmaker states where the other two can push every player down to third place.
    kingmaker_all_to_third: u64,
    /// Kingmaker states where some player can hand the win to an opponent and keep second.
    kingmaker_deal: u64,
    /// Live states where the mover can force at least second place.
    mover_secures_second: u64,
    /// Live states.
    live: u64,
}

impl Counts {
    fn add(&mut self, game: &Cc3pRace, planes: &[ValuesPlane; 4], s: u64) {
        let Node::Live { mover } = game.node(s) else {
            self.classes[0] += 1;
            return;
        };
        let g = game.cc3p();
        let r1 = g.rotate(s);
        let r2 = g.rotate(r1);
        let as_a = [s, r2, r1]; // the state in which player P plays A's role
        let of = |layer: usize| as_a.map(|i| planes[layer].get(i));
        let (solo, top2, deal_next, deal_prev) = (of(0), of(1), of(2), of(3));
        self.live += 1;
        self.mover_secures_second += u64::from(top2[usize::from(mover)] == WIN);
        let class = if solo.contains(&WIN) {
            1
        } else if solo.contains(&DRAW) {
            2
        } else {
            3
        };
        self.classes[class] += 1;
        if class == 3 {
            self.kingmaker_secure_second += u64::from(top2.contains(&WIN));
            self.kingmaker_all_to_third += u64::from(top2.iter().all(|&v| v == LOSS));
            self.kingmaker_deal +=
                u64::from(deal_next.contains(&WIN) || deal_prev.contains(&WIN));
        }
    }

    fn merge(mut self, o: Counts) -> Counts {
        for k in 0..4 {
            self.classes[k] += o.classes[k];
        }
        self.kingmaker_secure_second += o.kingmaker_secure_second;
        self.kingmaker_all_to_third += o.kingmaker_all_to_third;
        self.kingmaker_deal += o.kingmaker_deal;
        self.mover_secures_second += o.mover_secures_second;
        self.live += o.live;
        self
    }

    fn json(&self) -> Value {
        json!({
            "classes": {
                "terminal": self.classes[0],
                "solo_win": self.classes[1],
                "spoiler_draw": self.classes[2],
                "kingmaker": self.classes[3],
            },
            "kingmaker_secure_second": self.kingmaker_secure_second,
            "kingmaker_all_to_third": self.kingmaker_all_to_third,
            "kingmaker_deal": self.kingmaker_deal,
            "live": self.live,
            "mover_secures_second": self.mover_secures_second,
        })
    }
}

/// Every player's answers at `s`: (first, top2, deal with the next player, deal with the one
/// before), each as `Answer` text, read by rotation.
fn answers(game: &Cc3pRace, files: &[Arc<LayerTable>], s: u64) -> Result<Vec<[String; 4]>> {
    let g = game.cc3p();
    let r1 = g.rotate(s);
    let r2 = g.rotate(r1);
    [s, r2, r1]
        .iter()
        .map(|&i| {
            let read = |k: usize| -> Result<String> {
                Ok(Answer::read(&*files[k], i, files[k].has_depths())?.text())
            };
            Ok([read(0)?, read(1)?, read(2)?, read(3)?])
        })
        .collect()
}

/// The explorer's labels: the mover's `top2` (can it force at least second place?) as the value,
/// and every player's four answers in words.
struct RaceLabels {
    game: Arc<AnyGame>,
    files: Vec<Arc<LayerTable>>,
}

impl Labels for RaceLabels {
    fn of(&self, index: u64) -> Result<Value, FormatError> {
        let game: &Cc3pRace = self.game.as_any().downcast_ref().expect("a cc3p_race game");
        let Node::Live { mover } = game.node(index) else {
            let says = match game.node(index) {
                Node::Terminal { outcome } => game.outcome_text(outcome),
                _ => "illegal".to_string(),
            };
            return Ok(json!({"kind": "race", "value": "-", "depth": 0, "says": says}));
        };
        let a = answers(game, &self.files, index).map_err(|e| FormatError::Corrupt(format!("{e:#}")))?;
        let g = game.cc3p();
        let as_a = [index, g.rotate(g.rotate(index)), g.rotate(index)];
        let top2 = &self.files[1];
        let mine = Answer::read(&**top2, as_a[usize::from(mover)], top2.has_depths())?;
        let says = (0..3u8)
            .map(|p| {
                let [first, top2, next, prev] = &a[usize::from(p)];
                let name = |x: u8| game.player_name(x);
                format!(
                    "{}: first {first}, top 2 {top2}, deal with {} {next}, with {} {prev}",
                    name(p),
                    name((p + 1) % 3),
                    name((p + 2) % 3)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        Ok(json!({
            "kind": "race",
            "value": mine.value.as_str(),
            "depth": mine.depth,
            "says": format!("{} to move can {}force at least second place. {says}", game.player_name(mover), if mine.value == crate::reading::Value::Win { "" } else { "not " }),
        }))
    }

    fn changes(&self, before: &Value, after: &Value) -> Vec<String> {
        if before["says"] == after["says"] {
            return Vec::new();
        }
        vec![after["says"].as_str().unwrap_or("").to_string()]
    }
}

impl RaceView {
    fn race(&self) -> &Cc3pRace {
        self.game
            .as_any()
            .downcast_ref()
            .expect("a cc3p_race view holds a cc3p_race game")
    }
}

impl GameView for RaceView {
    /// For the position and after each move, every player's four answers.
    fn query(&self, tables: &dyn Solved, index: u64, json: bool) -> Result<()> {
        let game = self.race();
        let files = LAYERS
            .iter()
            .map(|l| tables.layer(l))
            .collect::<Result<Vec<_>>>()?;
        let rows = |s: u64| -> Result<Value> {
            let a = answers(game, &files, s)?;
            Ok(Value::Object(
                (0..3u8)
                    .map(|p| {
                        let [first, top2, next, prev] = &a[usize::from(p)];
                        let (q, r) = ((p + 1) % 3, (p + 2) % 3);
                        let name = |x: u8| game.player_name(x);
                        (
                            name(p),
                            json!({
                                "first": first,
                                "top2": top2,
                                format!("deal_{}", name(q)): next,
                                format!("deal_{}", name(r)): prev,
                            }),
                        )
                    })
                    .collect(),
            ))
        };
        let status = match game.node(index) {
            Node::Illegal => "illegal: two or more goals are filled".to_string(),
            Node::Terminal { outcome } => format!("terminal: {}", game.outcome_text(outcome)),
            Node::Live { mover } => format!("{} to move", game.player_name(mover)),
        };
        let moves = game
            .moves(index)
            .into_iter()
            .map(|(text, child)| {
                Ok(json!({"move": text, "position": game.format_position(child), "answers": rows(child)?}))
            })
            .collect::<Result<Vec<_>>>()?;
        let out = json!({
            "position": game.format_position(index),
            "index": index,
            "node": status,
            "answers": rows(index)?,
            "moves": moves,
        });
        if json {
            println!("{}", serde_json::to_string_pretty(&out)?);
            return Ok(());
        }
        let line = |answers: &Value| -> String {
            answers
                .as_object()
                .into_iter()
                .flatten()
                .map(|(p, a)| {
                    let fields: Vec<String> = a
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or("")))
                        .collect();
                    format!("{p}: {}", fields.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        println!("position {}  (index {index})", out["position"].as_str().unwrap_or(""));
        println!("{}", game.picture(index));
        println!("{status}");
        println!("  {}", line(&out["answers"]));
        for m in moves {
            println!("move {:<16} -> {}", m["move"].as_str().unwrap_or(""), m["position"].as_str().unwrap_or(""));
            println!("    {}", line(&m["answers"]));
        }
        Ok(())
    }

    fn labels(&self, tables: &dyn Solved) -> Result<Box<dyn Labels>> {
        Ok(Box::new(RaceLabels {
            game: self.game.clone(),
            files: LAYERS
                .iter()
                .map(|l| tables.layer(l))
                .collect::<Result<_>>()?,
        }))
    }

    fn legend(&self) -> String {
        "Outcomes are rankings. solo: A comes first; top2: A comes first or second; deal_ab: A and B together make B first and A second; deal_ac: the same with C. W = forces it, L = the others force the opposite, D = neither.".into()
    }

    /// The `second_place` block, once every layer is solved: over all legal states and, with
    /// `reach`, over the states reachable from the start.
    fn summarize(
        &self,
        tables: &dyn Solved,
        reach: bool,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        if !LAYERS
            .iter()
            .all(|l| tables.layers().iter().any(|f| f.name == *l))
        {
            return Ok(());
        }
        let game = self.race();
        let planes: [ValuesPlane; 4] = [
            tables.layer(LAYERS[0])?.values_plane()?,
            tables.layer(LAYERS[1])?.values_plane()?,
            tables.layer(LAYERS[2])?.values_plane()?,
            tables.layer(LAYERS[3])?.values_plane()?,
        ];
        let all = (0..game.size())
            .into_par_iter()
            .filter(|&s| !matches!(game.node(s), Node::Illegal))
            .fold(Counts::default, |mut acc, s| {
                acc.add(game, &planes, s);
                acc
            })
            .reduce(Counts::default, Counts::merge);
        let mut block = Map::new();
        block.insert("all".into(), all.json());
        if reach {
            let start = game.cc3p().start_index();
            let (reached, _) = reachable(game.cc3p(), start, |_, _| {});
            let counts = reached.par_fold(
                Counts::default,
                |acc, s| acc.add(game, &planes, s),
                Counts::merge,
            );
            block.insert("reachable".into(), counts.json());
        }
        let race = game.race();
        let mut race_counts = [0u64; 3];
        for i in 0..race.size() {
            if let Node::Live { .. } = race.node(i) {
                match game.race_value(i) {
                    WIN => race_counts[0] += 1,
                    LOSS => race_counts[1] += 1,
                    _ => race_counts[2] += 1,
                }
            }
        }
        block.insert(
            "race".into(),
            json!({
                "states": race.size(),
                "live": race_counts.iter().sum::<u64>(),
                "b_second": race_counts[0],
                "c_second": race_counts[1],
                "nobody": race_counts[2],
            }),
        );
        out.insert("second_place".into(), Value::Object(block));
        Ok(())
    }
}
