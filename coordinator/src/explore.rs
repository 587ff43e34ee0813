//! The JSON that `kingmaker serve` answers with: what game a build holds, and for one position its
//! labels and, for every legal move, the labels after it and what changed.
//!
//! The page asks `/api/info` what game it is looking at and draws accordingly: cc3p gets the star
//! in SVG and the twelve forcing answers; any other game gets its ASCII picture and its one label,
//! so a game added to `AnyGame` is explorable before it gets a drawing of its own.

use crate::cc3p_view::{try_answers, Answers, Cc3pTables, PLAYERS};
use crate::line::{principal_line, value_letter, Ending};
use crate::tables::Tables;
use anyhow::Result;
use kingmaker_tablefmt::Lookup;
use kingmaker_worker::games::cc3p::cell_name_picture;
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::{Game, Node};
use serde_json::{json, Map, Value};
use std::path::Path;

/// Why a position request failed.
#[derive(Debug)]
pub enum ApiError {
    /// The client's fault (HTTP 400): the message says what is wrong with the position.
    BadRequest(String),
    /// Ours (HTTP 500): a damaged table, say.
    Internal(String),
}

impl From<kingmaker_tablefmt::FormatError> for ApiError {
    fn from(e: kingmaker_tablefmt::FormatError) -> ApiError {
        ApiError::Internal(format!(
            "reading the tables: {e}; run `kingmaker verify` on the release"
        ))
    }
}

enum Labels {
    Cc3p(Cc3pTables<Box<dyn Lookup>>),
    /// Two-player games: the `solo` layer (W = the first player wins).
    TwoPlayer(Box<dyn Lookup>),
}

/// A build opened for exploring.
pub struct Explorer {
    pub game: AnyGame,
    labels: Labels,
    info: Value,
}

/// Longest principal line shown (a decided line is as long as its depth; a drawn one stops when
/// a position repeats).
const MAX_LINE: usize = 300;

/// Longest position text accepted.
const MAX_POSITION_LEN: usize = 1000;

impl Explorer {
    pub fn open(dir: &Path) -> Result<Explorer> {
        let tables = Tables::open(dir)?;
        let game = tables.spec.build()?;
        let labels = match &game {
            AnyGame::Cc3p(_) => Labels::Cc3p(tables.cc3p()?),
            #[allow(unreachable_patterns)]
            _ => Labels::TwoPlayer(tables.layer("solo")?),
        };
        let players: Vec<String> = (0..game.players()).map(|p| game.player_name(p)).collect();
        let mut info = json!({
            "game": tables.spec.family(),
            "spec": tables.spec,
            "name": game.name(),
            "players": players,
            "states": game.size(),
            "layers": tables.layers.iter().map(|l| &l.name).collect::<Vec<_>>(),
            "source": tables.kind(),
        });
        if let Some(m) = tables.manifest() {
            info["release"] = json!({
                "format_version": m.format_version,
                "packed_at": m.provenance.packed_at,
                "kingmaker_version": m.provenance.kingmaker_version,
                "layers": m.layers.iter().map(|l| json!({
                    "name": l.name, "counts": l.counts, "digest": l.digest, "max_depth": l.max_depth,
                })).collect::<Vec<_>>(),
            });
        }
        match &game {
            AnyGame::Cc3p(g) => {
                info["start"] = json!(g.format_position(g.start_index()));
                info["board"] = cc3p_board(g.level());
            }
            #[allow(unreachable_patterns)]
            _ => {
                // The game's own start if it has one, else a classic TOPPEN start (the ring),
                // else the first live state as an example.
                let start = game
                    .start_index()
                    .or_else(|| game.parse_position("####/#..#/####:AABBABABAB:A").ok())
                    .or_else(|| {
                        (0..game.size().min(1 << 20))
                            .find(|&i| matches!(game.node(i), Node::Live { .. }))
                    });
                if let Some(i) = start {
                    info["start"] = json!(game.format_position(i));
                }
            }
        }
        Ok(Explorer { game, labels, info })
    }

    /// Short name of the game instance (`cc3p-1`).
    pub fn game_name(&self) -> String {
        self.game.name()
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
            .parse_position(text)
            .map_err(|e| ApiError::BadRequest(format!("{e:#}")))?;
        let here = self.labels(index)?;
        let mut moves = Vec::new();
        for (mv, child) in self.game.moves(index) {
            let after = self.labels(child)?;
            let changes = changes(&here, &after);
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
            "pieces": pieces(&self.game, index),
            "labels": here,
            "moves": moves,
        });
        if let Labels::TwoPlayer(t) = &self.labels {
            out["line"] = self.line(t.as_ref(), index)?;
        }
        if let AnyGame::Toppen(_) = &self.game {
            out["grid"] = toppen_grid(&self.game.format_position(index));
        }
        Ok(out)
    }

    /// A two-player game's principal line from `index`: the shortest win against the longest
    /// resistance, or for a drawn position the moves that keep the draw until they repeat (the
    /// draw cycle).
    fn line(&self, t: &dyn Lookup, index: u64) -> Result<Value, ApiError> {
        if matches!(self.game.node(index), Node::Illegal) {
            return Ok(Value::Null);
        }
        let line = principal_line(
            &self.game,
            index,
            |i| t.lookup(i).unwrap_or((u8::MAX, 0)),
            MAX_LINE,
        )
        .map_err(|e| ApiError::Internal(e.to_string()))?;
        let plies: Vec<Value> = line
            .plies
            .iter()
            .map(|p| {
                json!({
                    "move": p.mv, "position": self.game.format_position(p.index),
                    "value": value_letter(p.value).to_string(), "depth": p.depth,
                })
            })
            .collect();
        let ending = match line.ending {
            Ending::GameOver { winner } => {
                json!({"kind": "game_over", "winner": self.game.player_name(winner)})
            }
            Ending::Cycle { from } => json!({"kind": "cycle", "from": from}),
            Ending::Cut => json!({"kind": "cut"}),
        };
        Ok(json!({"plies": plies, "ending": ending}))
    }

    fn labels(&self, index: u64) -> Result<Value, ApiError> {
        match (&self.labels, &self.game) {
            (Labels::Cc3p(t), AnyGame::Cc3p(g)) => Ok(cc3p_labels(&try_answers(g, t, index)?)),
            (Labels::TwoPlayer(t), game) => {
                let (v, d) = t.lookup(index)?;
                let (a, b) = (game.player_name(0), game.player_name(1));
                let (value, says) = match v {
                    1 => ("W", format!("{a} wins")),
                    2 => ("L", format!("{b} wins")),
                    3 => ("D", "draw: neither side can force a win".to_string()),
                    _ => ("-", "illegal".to_string()),
                };
                Ok(json!({"kind": "two_player", "value": value, "depth": d, "says": says}))
            }
            #[allow(unreachable_patterns)]
            _ => Err(ApiError::Internal("tables and game disagree".into())),
        }
    }
}

fn node_json(game: &AnyGame, index: u64) -> Value {
    match game.node(index) {
        Node::Illegal => json!({"kind": "illegal", "text": "illegal: cannot arise in play"}),
        Node::Terminal { winner } => {
            let w = game.player_name(winner);
            json!({"kind": "terminal", "winner": w, "text": format!("game over: {w} has won")})
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

/// Each player's pieces, read off the canonical notation (`A:c6,c7;B:...;C:...;A`); games whose
/// notation has no such fields give an empty object.
fn pieces(game: &AnyGame, index: u64) -> Value {
    let mut out = Map::new();
    if let AnyGame::Cc3p(_) = game {
        for field in game.format_position(index).split(';') {
            if let Some((who, cells)) = field.split_once(':') {
                let cells: Vec<&str> = cells.split(',').filter(|c| !c.is_empty()).collect();
                out.insert(who.to_string(), json!(cells));
            }
        }
    }
    Value::Object(out)
}

fn answer_json(value: char, depth: u16) -> Value {
    json!({"value": value.to_string(), "depth": depth})
}

/// The twelve answers as the page shows them.
fn cc3p_labels(a: &Answers) -> Value {
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
        "kind": "cc3p",
        "class": a.class.name(),
        "solo": solo,
        "enable": enable,
        "kingmakers": kingmakers,
        "can_force_win": with('W'),
        "forced_out": with('L'),
        "can_hold_draw": with('D'),
    })
}

/// What a move changes, in words: one line per label that differs before and after.
fn changes(before: &Value, after: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if before["kind"] == "cc3p" {
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
    } else if before["value"] != after["value"] {
        out.push(format!(
            "{} → {}",
            text(&before["says"]),
            text(&after["says"])
        ));
    }
    out
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

/// A TOPPEN position's drawing as the page needs it, read off its canonical notation
/// `SPEC:STACKS:SIDE` (docs/toppen-notation.md): each `#` of the SPEC is a cell (column letter,
/// row number), holding the next stack (bottom to top) of STACKS in reading order.
fn toppen_grid(text: &str) -> Value {
    let mut parts = text.split(':');
    let (Some(spec), Some(stacks)) = (parts.next(), parts.next()) else {
        return Value::Null;
    };
    let stacks: Vec<&str> = if stacks.contains(',') {
        stacks.split(',').collect()
    } else {
        stacks.split("").filter(|s| !s.is_empty()).collect()
    };
    let mut cells = Vec::new();
    let mut k = 0;
    for (row, line) in spec.split('/').enumerate() {
        for (col, ch) in line.chars().enumerate() {
            if ch == '#' {
                let stack = stacks.get(k).copied().unwrap_or("").trim_matches('-');
                let name = format!("{}{}", (b'a' + col as u8) as char, row + 1);
                cells.push(json!({"name": name, "row": row, "col": col, "stack": stack}));
                k += 1;
            }
        }
    }
    json!({"kind": "grid", "cells": cells})
}

/// The star's cells for drawing: name, position (in half-cell steps across, rows down) and what
/// the cell is (hexagon, or a player's start or goal point), read off the notation's own picture
/// of cell names so the page and the notation cannot disagree.
fn cc3p_board(level: u8) -> Value {
    let n = level as i64;
    let mut cells = Vec::new();
    for (row, line) in cell_name_picture(level).lines().enumerate() {
        let mut col = 0usize;
        for token in line.split(' ') {
            if !token.is_empty() {
                // Two characters per half-cell step.
                let half = (col / 2) as i64;
                let z = row as i64 - 2 * n;
                let x = (half - 3 * n - z) / 2;
                let y = -x - z;
                let region = if x > n {
                    "start:A"
                } else if x < -n {
                    "goal:A"
                } else if y > n {
                    "start:B"
                } else if y < -n {
                    "goal:B"
                } else if z > n {
                    "start:C"
                } else if z < -n {
                    "goal:C"
                } else {
                    "hex"
                };
                cells.push(json!({"name": token, "row": row, "half": half, "region": region}));
            }
            col += token.len() + 1;
        }
    }
    json!({"kind": "star", "level": level, "cells": cells})
}

#[cfg(test)]
mod tests {
    use super::*;
    use kingmaker_worker::games::cc3p::Cc3p;

    #[test]
    fn board_cells_match_the_notation() {
        for level in [1u8, 2] {
            let g = Cc3p::new(level).unwrap();
            let board = cc3p_board(level);
            let cells = board["cells"].as_array().unwrap();
            assert_eq!(cells.len(), [13, 37][level as usize - 1]);
            // The start position's pieces stand on their owners' start points.
            let start = g.format_position(g.start_index());
            for field in start.split(';') {
                if let Some((who, names)) = field.split_once(':') {
                    for name in names.split(',') {
                        let cell = cells.iter().find(|c| c["name"] == name).unwrap();
                        assert_eq!(cell["region"], format!("start:{who}"), "{name}");
                    }
                }
            }
            let k = [1, 3][level as usize - 1];
            for p in ["A", "B", "C"] {
                assert_eq!(
                    cells
                        .iter()
                        .filter(|c| c["region"] == format!("goal:{p}"))
                        .count(),
                    k
                );
            }
        }
    }

    #[test]
    fn toppen_grids() {
        let g = toppen_grid("####/#..#/####:AA,-,B,B,A,B,A,B,A,B:B");
        let cells = g["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 10);
        assert_eq!(
            cells[0],
            json!({"name": "a1", "row": 0, "col": 0, "stack": "AA"})
        );
        assert_eq!(cells[1]["stack"], "");
        assert_eq!(
            cells[4],
            json!({"name": "a2", "row": 1, "col": 0, "stack": "A"})
        );
        assert_eq!(cells[5]["name"], "d2");
        let g = toppen_grid("##:AAAABBBBB,A:A");
        assert_eq!(g["cells"][0]["stack"], "AAAABBBBB");
        let g = toppen_grid("####/#..#/####:AABBABABAB:A");
        assert_eq!(g["cells"][2]["stack"], "B");
    }

    #[test]
    fn move_paths() {
        assert_eq!(move_path("A e3-c1-g2"), ["e3", "c1", "g2"]);
        assert_eq!(move_path("B pass"), Vec::<String>::new());
    }
}
