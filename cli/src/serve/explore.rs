//! The JSON of the explorer page's routes, `/api/info` and `/api/position` (docs/api.md, "Routes").
//! 1. The page draws what `/api/info` gives (the game's board drawing if it has one, else its
//!    ASCII picture, and its view's labels), so a game added to the registry is explorable before
//!    it gets a drawing of its own.

use anyhow::Result;
use kingmaker_coordinator::tables::open_tables;
use kingmaker_coordinator::tables::Tables;
use kingmaker_games::view::Labels;
use kingmaker_games::AnyGame;
use kingmaker_games::Drawing;
use kingmaker_games::Notation;
use kingmaker_kernel::{Game, Node};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::Arc;

pub use kingmaker_games::view::ApiError;

/// A build opened for exploring.
pub struct Explorer {
    pub game: Arc<AnyGame>,
    labels: Box<dyn Labels>,
    info: Value,
    tables: Tables,
}

/// Longest position text accepted.
const MAX_POSITION_LEN: usize = 1000;

impl Explorer {
    pub fn open(dir: &Path) -> Result<Explorer> {
        let tables = open_tables(dir)?;
        let game = tables.game().clone();
        let view = game.view();
        let labels = view.labels(&tables).map_err(|e| {
            // A partial copy: say what the explorer lacks, not only which file it missed.
            let absent: Vec<&str> = tables
                .layers()
                .iter()
                .filter(|l| !l.present)
                .map(|l| l.name.as_str())
                .collect();
            if absent.is_empty() {
                return e;
            }
            e.context(format!(
                "{} is a partial copy without layer{} {}, which the explorer of {} reads: fetch \
                 {} too (`kingmaker fetch URL {} --layers {}`)",
                dir.display(),
                if absent.len() == 1 { "" } else { "s" },
                absent.join(", "),
                game.name(),
                if absent.len() == 1 { "it" } else { "them" },
                dir.display(),
                absent.join(",")
            ))
        })?;
        let players: Vec<String> = (0..game.players()).map(|p| game.player_name(p)).collect();
        let order = view.layer_order(tables.layers());
        let rank = |name: &str| order.iter().position(|n| n == name);
        let mut info = json!({
            "game": tables.spec().family(),
            "spec": tables.spec(),
            "name": game.name(),
            "players": players,
            "states": game.size(),
            "layers": order,
            "source": kingmaker_coordinator::tables::kind_name(&tables),
            "legend": view.legend(),
            // False for values-only tables: no depths, no lines, no computer play.
            "depths": tables.layers().iter().all(|l| !l.present || l.depths),
        });
        if let Some(m) = tables.manifest() {
            let mut layers: Vec<_> = m.layers.iter().collect();
            layers.sort_by_key(|l| rank(&l.name));
            info["release"] = json!({
                "format_version": m.format_version,
                "packed_at": m.provenance.packed_at,
                "kingmaker_version": m.provenance.kingmaker_version,
                "layers": layers.iter().map(|l| json!({
                    "name": l.name, "counts": l.counts, "digest": l.digest, "max_depth": l.max_depth,
                })).collect::<Vec<_>>(),
            });
        }
        let board = game.board_drawing();
        if !board.is_null() {
            info["board"] = board;
        }
        // The game's start or example, else the first live state.
        let start = game.example_index().or_else(|| {
            (0..game.size().min(1 << 20)).find(|&i| matches!(game.node(i), Node::Live { .. }))
        });
        if let Some(i) = start {
            info["start"] = json!(game.format_position(i));
        }
        Ok(Explorer {
            game,
            labels,
            info,
            tables,
        })
    }

    /// Short name of the game instance (as in run names).
    pub fn game_name(&self) -> String {
        self.game.name()
    }

    /// The tables, for the versioned API ([`crate::serve::api`]).
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// `/api/info`.
    pub fn info(&self) -> &Value {
        &self.info
    }

    /// `/api/position?p=TEXT`: the position, its labels, and every move with the labels after it.
    pub fn position(&self, text: &str) -> Result<Value, ApiError> {
        if text.len() > MAX_POSITION_LEN {
            return Err(ApiError::BadRequest(format!(
                "position text longer than {MAX_POSITION_LEN} characters"
            )));
        }
        let index = self
            .game
            .parse_or_start(text)
            .map_err(|e| ApiError::BadRequest(format!("{e:#}")))?;
        let here = self.labels(index)?;
        let mut moves = Vec::new();
        for (mv, child) in self.game.moves(index) {
            let after = self.labels(child)?;
            let changes = self.labels.changes(&here, &after);
            moves.push(json!({
                "move": mv,
                "path": move_path(&mv),
                "position": self.game.format_position(child),
                "index": child,
                "node": node_json(&self.game, child),
                "labels": after,
                "changes": changes,
            }));
        }
        let mut out = json!({
            "position": self.game.format_position(index),
            "index": index,
            "node": node_json(&self.game, index),
            "picture": self.game.picture(index),
            "pieces": {},
            "labels": here,
            "moves": moves,
        });
        for (k, v) in self.game.position_drawing(index) {
            out[k] = v;
        }
        if let Some(line) = self.labels.line(index) {
            out["line"] = line?;
        }
        Ok(out)
    }

    fn labels(&self, index: u64) -> Result<Value, ApiError> {
        Ok(self.labels.of(index)?)
    }
}

fn node_json(game: &AnyGame, index: u64) -> Value {
    match game.node(index) {
        Node::Illegal => json!({"kind": "illegal", "text": "illegal: cannot arise in play"}),
        Node::Terminal { outcome: winner } => {
            let text = game.outcome_text(winner);
            // `winner` names a player only in games whose outcomes are players: Go's are final
            // scores (its player_name would index past its two players), so there it is null.
            let w = (winner < game.players())
                .then(|| game.player_name(winner))
                .filter(|name| text == format!("{name} has won"));
            json!({"kind": "terminal", "winner": w, "text": format!("game over: {text}")})
        }
        Node::Live { mover } => {
            let m = game.player_name(mover);
            json!({"kind": "live", "mover": m, "text": format!("{m} to move")})
        }
    }
}

/// The cells a move text passes through: `A e3-c1-g2` → [e3, c1, g2]; `A pass` → [].
fn move_path(mv: &str) -> Vec<String> {
    let rest = mv.split_once(' ').map_or(mv, |(_, r)| r);
    if rest == "pass" || !rest.contains('-') {
        return Vec::new();
    }
    rest.split('-').map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_paths() {
        assert_eq!(move_path("A e3-c1-g2"), ["e3", "c1", "g2"]);
        assert_eq!(move_path("B pass"), Vec::<String>::new());
    }
}
