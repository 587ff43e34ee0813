//! Go as it is shown: a position's value at every solved threshold ("Black's final score ≥ k") and
//! the score bounds they prove, in `query` and on the explorer page (with a principal line at every
//! threshold), and for the start in `summary.json`.
//! 1. Only what the solved thresholds prove at the position: the build chose them for the start, so
//!    elsewhere (after a pass, say) a bound may stay open. A finished game shows its final score.

use crate::go::bounds::ScoreBounds;
use crate::go::search::bounds;
use crate::go::Go;
use crate::reading::LayerInfo;
use crate::view::two_player::line_json;
use crate::view::ApiError;
use crate::view::Solved;
use crate::view::{GameView, Labels};
use crate::AnyGame;
use crate::Notation;
use anyhow::{bail, Result};
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::{FormatError, Lookup, Value as Outcome};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Go's view: the thresholds and the score bounds they prove.
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
        go_of(&self.game)
    }
}

/// A state's value and depth at each solved threshold.
type AtThresholds = Vec<(i32, u8, u16)>;

/// The solved threshold layers, by threshold.
struct Thresholds {
    game: Arc<AnyGame>,
    layers: Vec<(i32, Box<dyn Lookup>)>,
}

/// What the solved thresholds prove about a position's score.
type Proven = ScoreBounds;

/// The bounds `values` (threshold, value, depth) prove.
fn proven(values: &[(i32, u8, u16)]) -> Proven {
    ScoreBounds::proven(values.iter().map(|v| {
        (
            v.0,
            crate::reading::Value::from_code(v.1).unwrap_or(crate::reading::Value::Illegal),
        )
    }))
}

impl Thresholds {
    fn open(game: &Arc<AnyGame>, tables: &dyn Solved) -> Result<Thresholds> {
        let mut layers = Vec::new();
        for layer in tables.layers() {
            if let Some(k) = Go::layer_threshold(&layer.name) {
                layers.push((k, Box::new(tables.layer(&layer.name)?) as Box<dyn Lookup>));
            }
        }
        if layers.is_empty() {
            bail!("{} holds no threshold layer", tables.dir().display());
        }
        layers.sort_by_key(|l| l.0);
        Ok(Thresholds {
            game: game.clone(),
            layers,
        })
    }

    /// Every threshold's (value, depth) at `index`, and the score bounds they prove (a
    /// finished game's: its final score).
    fn at(&self, index: u64) -> Result<(AtThresholds, Proven), FormatError> {
        let values: AtThresholds = self
            .layers
            .iter()
            .map(|(k, t)| t.lookup(index).map(|(v, d)| (*k, v, d)))
            .collect::<Result<_, _>>()?;
        let proven = match self.game.node(index) {
            Node::Terminal { outcome: winner } => {
                Proven::exact(go_of(&self.game).outcome_score(winner))
            }
            _ => proven(&values),
        };
        Ok((values, proven))
    }
}

fn go_of(game: &AnyGame) -> &Go {
    game.as_any()
        .downcast_ref()
        .expect("a Go view holds a Go game")
}

/// "+2", "−1..+3" for an interval, "≥ +1" or "≤ −1" for one bound, "?" for none.
fn short(b: Proven) -> String {
    b.text()
}

/// The bounds in words.
fn says(b: Proven) -> String {
    match (b.min, b.max) {
        (Some(lo), Some(hi)) if lo == hi => format!("Black's optimal score is {lo:+}"),
        (Some(lo), Some(hi)) => format!(
            "Black forces a score ≥ {lo:+}, White one ≤ {hi:+} (no exact value: a draw by \
             repetition, or the thresholds between not solved)"
        ),
        (Some(lo), None) => {
            format!("Black forces a score ≥ {lo:+}; no solved threshold bounds it from above")
        }
        (None, Some(hi)) => {
            format!("White keeps Black's score ≤ {hi:+}; no solved threshold bounds it from below")
        }
        (None, None) => {
            "no bound: every solved threshold is a draw (play can go on forever)".to_string()
        }
    }
}

fn letter(v: u8) -> String {
    Outcome::from_code(v)
        .map_or('-', |v| v.letter())
        .to_string()
}

fn labels_json(values: &[(i32, u8, u16)], b: Proven) -> Value {
    json!({
        "kind": "score",
        "score_min": b.min,
        "score_max": b.max,
        "short": short(b),
        "says": says(b),
        "thresholds": values.iter().map(|&(k, v, d)| json!({"k": k, "value": letter(v), "depth": d})).collect::<Vec<_>>(),
    })
}

/// The labels as `query --json` prints them: an illegal state's value is `"illegal"` (the
/// explorer's API keeps `"-"`).
fn query_json(values: &[(i32, u8, u16)], b: Proven) -> Value {
    let mut labels = labels_json(values, b);
    if let Some(list) = labels["thresholds"].as_array_mut() {
        for t in list.iter_mut().filter(|t| t["value"] == "-") {
            t["value"] = json!("illegal");
        }
    }
    labels
}

impl GameView for GoView {
    /// The start at each solved threshold, and the bounds they prove.
    fn report(
        &self,
        _tables: &dyn Solved,
        summary: &Value,
    ) -> Result<Vec<crate::view::report::Section>> {
        use crate::view::report::{Part, Section};
        let start = &summary["start"];
        let mut ks: Vec<(i64, &Value)> = start["thresholds"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.parse().ok()?, v)))
                    .collect()
            })
            .unwrap_or_default();
        ks.sort_by_key(|k| k.0);
        let bound = |k: &str| {
            start[k]
                .as_i64()
                .map_or("open".to_string(), |v| format!("{v:+}"))
        };
        Ok(vec![Section {
            title: "The start at each threshold".into(),
            parts: vec![
                Part::Text(format!(
                    "Black's final score with best play is proven ≥ {} and ≤ {}.",
                    bound("score_min"),
                    bound("score_max")
                )),
                Part::Table {
                    head: vec!["threshold".into(), "value".into(), "depth".into()],
                    rows: ks
                        .iter()
                        .map(|(k, v)| {
                            vec![
                                format!("score ≥ {k:+}"),
                                v["value"].as_str().unwrap_or("?").to_string(),
                                v["depth"].to_string(),
                            ]
                        })
                        .collect(),
                    row_heads: true,
                    folded: false,
                },
            ],
        }])
    }

    fn query(&self, tables: &dyn Solved, index: u64, json: bool) -> Result<()> {
        let go = self.go();
        let t = Thresholds::open(&self.game, tables)?;
        let (here, b) = t.at(index)?;
        let moves = Notation::moves(go, index);
        let node = match go.node(index) {
            Node::Illegal => "illegal".to_string(),
            Node::Terminal { outcome: winner } => format!("game over: {}", go.outcome_text(winner)),
            Node::Live { mover } => format!("{} to move", go.player_name(mover)),
        };
        if json {
            let mut out = json!({
                "position": go.format_position(index),
                "index": index,
                "node": node,
                "labels": query_json(&here, b),
            });
            let mut list = Vec::new();
            for (text, child) in &moves {
                let (v, b) = t.at(*child)?;
                list.push(json!({"move": text, "position": go.format_position(*child), "index": child, "labels": query_json(&v, b)}));
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
                "-" => format!("≥{k:+}:illegal"),
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

    fn labels(&self, tables: &dyn Solved) -> Result<Box<dyn Labels>> {
        Ok(Box::new(GoLabels(Thresholds::open(&self.game, tables)?)))
    }

    /// By threshold (the build solves them in the order its search asks them).
    fn layer_order(&self, layers: &[LayerInfo]) -> Vec<String> {
        let mut names: Vec<&LayerInfo> = layers.iter().collect();
        names.sort_by_key(|l| Go::layer_threshold(&l.name).unwrap_or(i32::MAX));
        names.iter().map(|l| l.name.clone()).collect()
    }

    fn legend(&self) -> String {
        "The score is Black's area minus White's with best play (an interval when play can cycle forever). At each threshold k: W = Black forces a final score ≥ k, L = White keeps it below k, D = neither; the number is the depth (plies to the end). Click an empty point to play there.".into()
    }

    /// `start`: Black's optimal score from the empty board (`score`, or `score_min`/`score_max`),
    /// and the start's value at every solved threshold.
    fn summarize(
        &self,
        tables: &dyn Solved,
        _reach: bool,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        let go = self.go();
        let start = go.start();
        let mut solved = Vec::new();
        let mut at = Map::new();
        for layer in tables.layers() {
            if let Some(k) = Go::layer_threshold(&layer.name) {
                let (v, d) = tables.layer(&layer.name)?.get(start)?;
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

impl GoLabels {
    fn lines(&self, index: u64) -> Result<Value, ApiError> {
        let t = &self.0;
        let mut lines = Vec::new();
        for (k, layer) in &t.layers {
            let (value, _) = layer.lookup(index)?;
            // Every threshold layer: coalition Black.
            let mut line = line_json(&t.game, 0b01, &**layer, &**layer, index)?;
            if line.is_null() {
                return Ok(Value::Null);
            }
            line["k"] = json!(k);
            line["value"] = json!(letter(value));
            lines.push(line);
        }
        let pick = lines
            .iter()
            .rev()
            .find(|l| l["value"] == "W")
            .or_else(|| lines.iter().find(|l| l["value"] == "L"))
            .or(lines.first());
        let Some(pick) = pick else {
            return Ok(Value::Null);
        };
        let mut out = json!({"k": pick["k"], "plies": pick["plies"], "ending": pick["ending"]});
        out["thresholds"] = Value::Array(lines);
        Ok(out)
    }
}

impl Labels for GoLabels {
    fn of(&self, index: u64) -> Result<Value, FormatError> {
        let (values, b) = self.0.at(index)?;
        Ok(labels_json(&values, b))
    }

    /// A principal line at every solved threshold (the layer read as Black against White), and
    /// as `plies`/`ending` the one the page shows first: at the highest threshold Black forces
    /// (its best proven score), else the lowest White keeps Black below, else the first (a draw
    /// cycle).
    fn line(&self, index: u64) -> Option<Result<Value, ApiError>> {
        Some(self.lines(index))
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
