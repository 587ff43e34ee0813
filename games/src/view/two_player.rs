//! The view every two-player game shares: `solo` = "player 0 (the first colour) wins", shown as
//! W / L / D with its depth, and the principal line of best play. A game whose games can end
//! drawn by the rules also solves `second` = "player 1 wins": then L is a state W there, and D
//! one W in neither.

use crate::view::principal_line::{principal_line, value_letter, Ending, LineError};
use crate::view::ApiError;
use crate::view::Solved;
use crate::view::{GameView, Labels};
use crate::AnyGame;
use crate::Drawing;
use crate::Notation;
use anyhow::Result;
use kingmaker_kernel::{Game, Node};
use kingmaker_kernel::{Value as Outcome, DRAW, LOSS, WIN};
use kingmaker_tablefmt::{FormatError, Lookup};
use serde_json::{json, Value};
use std::sync::Arc;

/// Longest principal line shown (a decided line is as long as its depth; a drawn one stops when
/// a position repeats).
const MAX_LINE: usize = 300;

/// The view every two-player game shares: W/L/D with depths, and the principal line.
pub struct TwoPlayerView {
    game: Arc<AnyGame>,
}

impl TwoPlayerView {
    /// The view of `game`.
    pub fn new(game: Arc<AnyGame>) -> TwoPlayerView {
        TwoPlayerView { game }
    }
}

/// A two-player game's tables: `solo`, and `second` where the game solves it.
struct Outcomes {
    solo: Box<dyn Lookup>,
    second: Option<Box<dyn Lookup>>,
}

impl Outcomes {
    fn of(tables: &dyn Solved) -> Result<Outcomes> {
        let second = tables
            .layers()
            .iter()
            .any(|l| l.name == "second")
            .then(|| {
                tables
                    .layer("second")
                    .map(|t| Box::new(t) as Box<dyn Lookup>)
            })
            .transpose()?;
        Ok(Outcomes {
            solo: Box::new(tables.layer("solo")?),
            second,
        })
    }

    /// W (player 0 wins), L (player 1 wins), D or ILLEGAL, with the depth.
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        let solo = self.solo.lookup(index)?;
        match &self.second {
            Some(second) if solo.0 == LOSS => Ok(combined(solo, Some(second.lookup(index)?))),
            _ => Ok(solo),
        }
    }
}

pub use crate::reading::two_player::combined_codes as combined;

impl Lookup for Outcomes {
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        Outcomes::lookup(self, index)
    }
    fn states(&self) -> u64 {
        self.solo.states()
    }
}

impl GameView for TwoPlayerView {
    fn query(&self, tables: &dyn Solved, index: u64, json: bool) -> Result<()> {
        let game = &*self.game;
        let table = Outcomes::of(tables)?;
        let moves = game.moves(index);
        // Every label this query shows, read once (a release read can fail: a damaged block).
        let mut labels = std::collections::HashMap::new();
        for i in std::iter::once(index).chain(moves.iter().map(|m| m.1)) {
            labels.insert(i, table.lookup(i)?);
        }
        let label = |i: u64| {
            let (v, d) = labels[&i];
            (Outcome::letter_of(v), d)
        };
        let node = |i: u64| match game.node(i) {
            Node::Illegal => "illegal".to_string(),
            Node::Terminal { outcome: winner } => {
                format!("terminal: {}", game.outcome_text(winner))
            }
            Node::Live { mover } => format!("{} to move", game.player_name(mover)),
        };
        // In JSON a value is "W", "L", "D" or "illegal".
        let value_json = |v: char| match v {
            '-' => "illegal".to_string(),
            v => v.to_string(),
        };
        if json {
            let (v, d) = label(index);
            let v = value_json(v);
            let out = json!({
                "position": game.format_position(index),
                "index": index,
                "node": node(index),
                "value": v,
                "depth": d,
                "moves": moves.iter().map(|(text, child)| {
                    let (v, d) = label(*child);
                    let v = value_json(v);
                    json!({"move": text, "position": game.format_position(*child), "index": child, "value": v, "depth": d})
                }).collect::<Vec<_>>(),
            });
            println!("{}", serde_json::to_string_pretty(&out)?);
            return Ok(());
        }
        // A draw has no depth worth showing, an illegal state no value.
        let value_text = |i: u64| match label(i) {
            ('D', _) => "D".to_string(),
            ('-', _) => "illegal".to_string(),
            (v, d) => format!("{v}{d}"),
        };
        println!("position {}  (index {index})", game.format_position(index));
        let picture = game.picture(index);
        println!("{}", picture.trim_end());
        // A picture whose last line says whose turn it is already (cc2p's) is not followed by
        // the same line again.
        let said = picture.trim_end().lines().last() == Some(node(index).as_str());
        if !game.picture_names_the_mover() && !said {
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

    fn labels(&self, tables: &dyn Solved) -> Result<Box<dyn Labels>> {
        Ok(Box::new(TwoPlayerLabels {
            game: self.game.clone(),
            outcomes: Outcomes::of(tables)?,
        }))
    }

    /// In the players' names, as the labels and the status line write them.
    fn legend(&self) -> String {
        let (a, b) = (self.game.player_name(0), self.game.player_name(1));
        format!(
            "W: {a} wins with best play, L: {b} wins, D: a draw (neither can force a win); the \
             number is the depth (plies to the end with best play)."
        )
    }
}

struct TwoPlayerLabels {
    game: Arc<AnyGame>,
    outcomes: Outcomes,
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("?")
}

impl Labels for TwoPlayerLabels {
    fn of(&self, index: u64) -> Result<Value, FormatError> {
        let (v, d) = self.outcomes.lookup(index)?;
        let (a, b) = (self.game.player_name(0), self.game.player_name(1));
        let (value, says) = match v {
            WIN => ("W", format!("{a} wins")),
            LOSS => ("L", format!("{b} wins")),
            DRAW => ("D", "draw: neither side can force a win".to_string()),
            _ => ("-", "illegal".to_string()),
        };
        Ok(json!({"kind": "two_player", "value": value, "depth": d, "says": says}))
    }

    fn changes(&self, before: &Value, after: &Value) -> Vec<String> {
        if before["value"] == after["value"] {
            return Vec::new();
        }
        vec![format!(
            "{} → {}",
            text(&before["says"]),
            text(&after["says"])
        )]
    }

    /// The shortest win against the longest resistance, or for a drawn position the moves that
    /// keep the draw until they repeat (the draw cycle).
    fn line(&self, index: u64) -> Option<Result<Value, ApiError>> {
        // A win for player 1 is played out in `second` (coalition {player 1}), anything else in
        // `solo` (coalition {player 0}); the plies are labelled with the view's values.
        let outcomes = &self.outcomes;
        let in_second = match (&outcomes.second, outcomes.lookup(index)) {
            (Some(_), Ok((LOSS, _))) => true,
            (_, Err(e)) => return Some(Err(e.into())),
            _ => false,
        };
        Some(match (&outcomes.second, in_second) {
            (Some(second), true) => line_json(&self.game, 0b10, &**second, outcomes, index),
            _ => line_json(&self.game, 0b01, &*outcomes.solo, outcomes, index),
        })
    }
}

/// The principal line from `index` in one layer of a two-player game (`coalition` its
/// coalition), its plies labelled by `labels`, as the page shows it: `plies` (`move`, `position`, `value`, `depth`) and
/// `ending` (`game_over` with `winner`, or null on a tie, and `outcome`; `cycle` with `from`;
/// `cut`). Null for an illegal position.
pub(crate) fn line_json(
    game: &AnyGame,
    coalition: u8,
    layer: &dyn Lookup,
    labels: &dyn Lookup,
    index: u64,
) -> Result<Value, ApiError> {
    if matches!(game.node(index), Node::Illegal) {
        return Ok(Value::Null);
    }
    let line = match principal_line(game, coalition, index, |i| layer.lookup(i), MAX_LINE) {
        Ok(line) => line,
        Err(LineError::Read(e)) => return Err(e.into()),
        Err(e) => return Err(ApiError::Internal(e.to_string())),
    };
    // The moves named on this position's board where the game draws each position afresh
    // (TOPPEN), else as the game writes them.
    let indices: Vec<u64> = line.plies.iter().map(|p| p.index).collect();
    let on_board = game.line_moves(&indices);
    let plies: Vec<Value> = line
        .plies
        .iter()
        .enumerate()
        .map(|(k, p)| -> Result<Value, ApiError> {
            let mv = match (&on_board, k) {
                (_, 0) => None,
                (Some(names), k) => Some(names[k - 1].clone()),
                (None, _) => p.mv.clone(),
            };
            let (value, depth) = labels.lookup(p.index)?;
            Ok(json!({
                "move": mv, "position": game.format_position(p.index),
                "value": value_letter(value).to_string(), "depth": depth,
            }))
        })
        .collect::<Result<_, _>>()?;
    let ending = match line.ending {
        Ending::GameOver { winner } => json!({
            "kind": "game_over",
            "winner": game.outcome_winner(winner).map(|p| game.player_name(p)),
            "outcome": game.outcome_text(winner),
        }),
        Ending::Cycle { from } => json!({"kind": "cycle", "from": from}),
        Ending::Cut => json!({"kind": "cut"}),
    };
    Ok(json!({"plies": plies, "ending": ending}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kingmaker_kernel::ILLEGAL;

    /// `solo` alone is read as before; with `second`, a state neither side wins is a draw.
    #[test]
    fn two_layers_tell_a_loss_from_a_draw() {
        assert_eq!(combined((WIN, 7), None), (WIN, 7));
        assert_eq!(combined((LOSS, 9), None), (LOSS, 9));
        assert_eq!(combined((WIN, 7), Some((LOSS, 8))), (WIN, 7));
        assert_eq!(combined((LOSS, 16), Some((WIN, 24))), (LOSS, 24));
        assert_eq!(combined((LOSS, 16), Some((LOSS, 16))), (DRAW, 0));
        assert_eq!(combined((ILLEGAL, 0), Some((ILLEGAL, 0))), (ILLEGAL, 0));
    }
}
