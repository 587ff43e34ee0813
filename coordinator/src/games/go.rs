//! Go as the coordinator shows it: a position's value at every solved threshold ("Black's final
//! score ≥ k") and the score bounds they give (exact when no threshold is a draw), in `query`, on
//! the explorer page, and for the start in `summary.json`.

use super::view::{GameView, Labels};
use crate::rundir::RunDir;
use crate::tables::Tables;
use anyhow::{bail, Result};
use kingmaker_tablefmt::{FormatError, Lookup, Value as Outcome};
use kingmaker_worker::games::go::search::{bounds, ScoreBounds};
use kingmaker_worker::games::go::Go;
use kingmaker_worker::kernel::Layer;
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::{Game, Node, Notation};
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub struct GoView {
    game: Arc<AnyGame>,
}

impl GoView {
    /// The view of `game` if it is a Go game.
    pub fn of(game: &Arc<AnyGame>) -> Option<Box<dyn GameView>> {
        game.as_any().downcast_ref::<Go>()?;
        Some(Box::new(GoView { game: game.clone() }))
    }

    fn go(&self) -> &Go {
        self.game
            .as_any()
            .downcast_ref()
            .expect("a Go view holds a Go game")
    }
}

/// A state's value and depth at each solved threshold.
type AtThresholds = Vec<(i32, u8, u16)>;

/// The solved threshold layers, by threshold.
struct Thresholds {
    n: usize,
    layers: Vec<(i32, Box<dyn Lookup>)>,
}

impl Thresholds {
    fn open(go: &Go, tables: &Tables) -> Result<Thresholds> {
        let mut layers = Vec::new();
        for layer in &tables.layers {
            if let Some(k) = Go::layer_threshold(&layer.name) {
                layers.push((k, tables.layer(&layer.name)?));
            }
        }
        if layers.is_empty() {
            bail!("{} holds no threshold layer", tables.dir.display());
        }
        layers.sort_by_key(|l| l.0);
        Ok(Thresholds {
            n: go.geometry().n,
            layers,
        })
    }

    /// Every threshold's (value, depth) at `index`, and the score bounds they give.
    fn at(&self, index: u64) -> Result<(AtThresholds, ScoreBounds), FormatError> {
        let values: AtThresholds = self
            .layers
            .iter()
            .map(|(k, t)| t.lookup(index).map(|(v, d)| (*k, v, d)))
            .collect::<Result<_, _>>()?;
        let solved: Vec<(i32, u8)> = values.iter().map(|&(k, v, _)| (k, v)).collect();
        Ok((values, bounds(self.n, &solved)))
    }
}

/// "+2", or "−1..+3" for an interval.
fn short(b: ScoreBounds) -> String {
    if b.min == b.max {
        format!("{:+}", b.min)
    } else {
        format!("{:+}..{:+}", b.min, b.max)
    }
}

/// The bounds in words.
fn says(b: ScoreBounds) -> String {
    if b.min == b.max {
        format!("Black's optimal score is {:+}", b.min)
    } else {
        format!(
            "Black forces a score ≥ {:+}, White one ≤ {:+} (no exact value: a draw by repetition, or thresholds not solved)",
            b.min, b.max
        )
    }
}

fn letter(v: u8) -> String {
    Outcome::from_code(v)
        .map_or('-', |v| v.letter())
        .to_string()
}

fn labels_json(values: &[(i32, u8, u16)], b: ScoreBounds) -> Value {
    json!({
        "kind": "score",
        "score_min": b.min,
        "score_max": b.max,
        "short": short(b),
        "says": says(b),
        "thresholds": values.iter().map(|&(k, v, d)| json!({"k": k, "value": letter(v), "depth": d})).collect::<Vec<_>>(),
    })
}

impl GameView for GoView {
    fn query(&self, tables: &Tables, index: u64, json: bool) -> Result<()> {
        let go = self.go();
        let t = Thresholds::open(go, tables)?;
        let (here, b) = t.at(index)?;
        let moves = Notation::moves(go, index);
        let node = match go.node(index) {
            Node::Illegal => "illegal".to_string(),
            Node::Terminal { winner } => format!("game over: {}", go.outcome_text(winner)),
            Node::Live { mover } => format!("{} to move", go.player_name(mover)),
        };
        if json {
            let mut out = json!({
                "position": go.format_position(index),
                "index": index,
                "node": node,
                "labels": labels_json(&here, b),
            });
            let mut list = Vec::new();
            for (text, child) in &moves {
                let (v, b) = t.at(*child)?;
                list.push(json!({"move": text, "position": go.format_position(*child), "index": child, "labels": labels_json(&v, b)}));
            }
            out["moves"] = json!(list);
            println!("{}", serde_json::to_string_pretty(&out)?);
            return Ok(());
        }
        println!("position {}  (index {index})", go.format_position(index));
        print!("{}", Notation::picture(go, index));
        println!("{node}");
        println!("score {}: {}", short(b), says(b));
        let cells: Vec<String> = here
            .iter()
            .map(|&(k, v, d)| match letter(v).as_str() {
                "D" => format!("≥{k:+}:D"),
                l => format!("≥{k:+}:{l}{d}"),
            })
            .collect();
        println!(
            "thresholds {}   (W = Black forces a score ≥ k, L = White keeps it below, D = neither; digits = depth)",
            cells.join("  ")
        );
        for (text, child) in &moves {
            let (_, b) = t.at(*child)?;
            println!(
                "move {text:<6} -> score {:<8} {}",
                short(b),
                go.format_position(*child)
            );
        }
        Ok(())
    }

    fn labels(&self, tables: &Tables) -> Result<Box<dyn Labels>> {
        Ok(Box::new(GoLabels(Thresholds::open(self.go(), tables)?)))
    }

    fn legend(&self) -> String {
        "The score is Black's area minus White's with best play (an interval when play can cycle forever). At each threshold k: W = Black forces a final score ≥ k, L = White keeps it below k, D = neither; the number is the depth (plies to the end). Click an empty point to play there.".into()
    }

    /// `start`: Black's optimal score from the empty board (`score`, or `score_min`/`score_max`),
    /// and the start's value at every solved threshold.
    fn summarize(
        &self,
        run: &RunDir,
        finished: &[Layer],
        _reach: bool,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        let go = self.go();
        let start = go.start();
        let mut solved = Vec::new();
        let mut at = Map::new();
        for layer in finished {
            if let Some(k) = Go::layer_threshold(&layer.name) {
                let (v, d) = run.table(&layer.name)?.get(start)?;
                solved.push((k, v));
                at.insert(format!("{k}"), json!({"value": letter(v), "depth": d}));
            }
        }
        let b = bounds(go.geometry().n, &solved);
        let mut start_json = if b.min == b.max {
            json!({"score": b.min})
        } else {
            json!({"score_min": b.min, "score_max": b.max})
        };
        start_json["thresholds"] = Value::Object(at);
        out.insert("start".into(), start_json);
        Ok(())
    }
}

struct GoLabels(Thresholds);

impl Labels for GoLabels {
    fn of(&self, index: u64) -> Result<Value, FormatError> {
        let (values, b) = self.0.at(index)?;
        Ok(labels_json(&values, b))
    }

    fn changes(&self, before: &Value, after: &Value) -> Vec<String> {
        if before["short"] == after["short"] {
            return Vec::new();
        }
        vec![format!(
            "score {} → {}",
            before["short"].as_str().unwrap_or("?"),
            after["short"].as_str().unwrap_or("?")
        )]
    }
}
