//! The position notation `0:<cells>;1:<cells>;<mover>` (docs/cc2p-notation.md), move texts and
//! ASCII pictures of the diamond.

use super::{bit, bits, Cc2p, Cc2pError, Cells, Pos};
use crate::drawing::Drawing;
use crate::notation::Notation;
use serde_json::{json, Map, Value};

impl Cc2p {
    /// Read a position written as `0:<cells>;1:<cells>;<mover>` (see docs/cc2p-notation.md), or
    /// `start` for the start position.
    pub fn parse_position(&self, text: &str) -> Result<u64, Cc2pError> {
        if text.trim().eq_ignore_ascii_case("start") {
            return Ok(self.start_index());
        }
        let bad = |reason: String| Cc2pError::BadPosition {
            text: text.to_string(),
            reason,
            example: self.format_position(self.start_index()),
        };
        let fields: Vec<&str> = text.trim().split(';').map(str::trim).collect();
        if fields.len() != 3 {
            return Err(bad(format!(
                "expected 3 fields separated by `;`, found {}",
                fields.len()
            )));
        }
        let mut o: [Cells; 2] = [0; 2];
        for (y, field) in fields[..2].iter().enumerate() {
            let (label, list) = field
                .split_once(':')
                .ok_or_else(|| bad(format!("field {} must start with `{y}:`", y + 1)))?;
            if label.trim() != y.to_string() {
                return Err(bad(format!(
                    "field {} must start with `{y}:`, found `{}:`",
                    y + 1,
                    label.trim()
                )));
            }
            let list = list.trim();
            let items: Vec<&str> = if list.is_empty() {
                Vec::new()
            } else {
                list.split(',').map(str::trim).collect()
            };
            for item in items {
                let c: usize = item
                    .parse()
                    .map_err(|_| bad(format!("`{item}` is not a cell number")))?;
                if c >= self.n as usize {
                    return Err(bad(format!(
                        "cell {c} is off the board (cells are 0..={})",
                        self.n - 1
                    )));
                }
                if (o[0] | o[1]) & bit(c) != 0 {
                    return Err(bad(format!("cell {c} is listed twice")));
                }
                o[y] |= bit(c);
            }
            if o[y].count_ones() != self.k as u32 {
                return Err(bad(format!(
                    "player {y} has {} pieces, this game has {} per player",
                    o[y].count_ones(),
                    self.k
                )));
            }
        }
        let mover = match fields[2] {
            "0" => 0,
            "1" => 1,
            other => {
                return Err(bad(format!(
                    "the side to move must be 0 or 1, found `{other}`"
                )))
            }
        };
        Ok(self.rank(&Pos { o, mover }))
    }

    /// Write a position as `0:<cells>;1:<cells>;<mover>`, cells ascending.
    pub fn format_position(&self, index: u64) -> String {
        let p = self.unrank(index);
        let list = |m: Cells| bits(m).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
        format!("0:{};1:{};{}", list(p.o[0]), list(p.o[1]), p.mover)
    }

    /// The legal moves of a live state with their children, one per distinct child: steps
    /// `"0 12-5"`, jump chains `"0 12-26-40"` (a shortest chain), a pass `"1 pass"`. Empty for
    /// illegal and terminal states.
    pub fn moves(&self, index: u64) -> Vec<(String, u64)> {
        let p = self.unrank(index);
        let mut out = Vec::new();
        if self.illegal(&p.o, p.mover) || self.wins(&p.o, 1 - p.mover) {
            return out;
        }
        let y = p.mover;
        let all = p.o[0] | p.o[1];
        let mut any = false;
        for c in bits(p.o[y]) {
            let (dests, parent) = self.dests_with_paths(c, all & !bit(c));
            any |= dests != 0;
            for t in bits(dests) {
                let mut o = p.o;
                o[y] ^= bit(c) | bit(t);
                if self.illegal(&o, 1 - y) {
                    continue;
                }
                let mut path = vec![t];
                if self.cells[c].nb & bit(t) == 0 {
                    let mut at = t;
                    while parent[at] as usize != c {
                        at = parent[at] as usize;
                        path.push(at);
                    }
                }
                path.push(c);
                path.reverse();
                let text = path
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join("-");
                out.push((format!("{y} {text}"), self.rank(&Pos { o, mover: 1 - y })));
            }
        }
        if !any && !self.illegal(&p.o, 1 - y) {
            out.push((format!("{y} pass"), index ^ 1));
        }
        out
    }

    /// An ASCII picture of the diamond: `0` and `1` for the players' pieces, `.` for empty cells,
    /// and a last line naming the side to move.
    pub fn picture(&self, index: u64) -> String {
        let p = self.unrank(index);
        self.draw(1, |c| {
            if p.o[0] & bit(c) != 0 {
                "0".to_string()
            } else if p.o[1] & bit(c) != 0 {
                "1".to_string()
            } else {
                ".".to_string()
            }
        }) + &format!("player {} to move\n", p.mover)
    }

    /// The cell numbering as an ASCII diamond (used for docs/cc2p-notation.md).
    pub fn numbering_picture(&self) -> String {
        self.draw(2, |c| format!("{c:>2}"))
    }

    /// Draw the diamond with `label(c)` (of `cw` characters) for each cell; one x unit is `cw`
    /// columns, so neighbours in a row are `2·cw` columns apart.
    fn draw(&self, cw: usize, label: impl Fn(usize) -> String) -> String {
        let m = self.m as i32;
        let mut lines: Vec<String> = vec![String::new(); 2 * self.m as usize - 1];
        for (c, &(r, x)) in self.coords.iter().enumerate() {
            let line = &mut lines[r as usize];
            let col = (x as i32 + m - 1) as usize * cw;
            while line.len() < col {
                line.push(' ');
            }
            line.push_str(&label(c));
        }
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

impl Notation for Cc2p {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        Ok(Cc2p::parse_position(self, text)?)
    }
    fn format_position(&self, index: u64) -> String {
        Cc2p::format_position(self, index)
    }
    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        Cc2p::moves(self, index)
    }
    fn picture(&self, index: u64) -> String {
        Cc2p::picture(self, index)
    }
    fn player_name(&self, player: u8) -> String {
        format!("player {player}")
    }
    fn start_index(&self) -> Option<u64> {
        Some(Cc2p::start_index(self))
    }
    fn illegal_reason(&self, index: u64) -> Option<String> {
        let p = self.unrank(index);
        if !self.illegal(&p.o, p.mover) {
            return None;
        }
        Some(if self.wins(&p.o, p.mover) {
            format!(
                "player {} is to move, but its goal is already filled: the game ended at its \
                 last move",
                p.mover
            )
        } else {
            "a goal's tip is empty and the opponent holds the four cells that close it off (the \
             6-piece tip rule, docs/rules.md §3)"
                .to_string()
        })
    }
}

impl Drawing for Cc2p {
    fn board_drawing(&self) -> Value {
        Cc2p::board_drawing(self)
    }

    /// Each player's pieces by cell number (`{"player 0": ["0", "1"], ...}`).
    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        let p = self.unrank(index);
        let mut pieces = Map::new();
        for (y, &cells) in p.o.iter().enumerate() {
            let names: Vec<String> = bits(cells).map(|c| c.to_string()).collect();
            pieces.insert(Notation::player_name(self, y as u8), json!(names));
        }
        let mut out = Map::new();
        out.insert("pieces".into(), Value::Object(pieces));
        out
    }
}

impl Cc2p {
    /// The diamond's cells for the explorer page, as the notation numbers them: each cell's
    /// `name` (its number), `row`, `half` (the doubled x of docs/cc2p-notation.md shifted to start
    /// at 0: neighbours in a row are two apart, as in the cc3p star) and `region` (`start:PLAYER`
    /// for a start cell, which is the other player's goal; `hex` otherwise). `piece_label: cell`
    /// asks the page to write the cell number on pieces too, since moves are written by number.
    pub fn board_drawing(&self) -> Value {
        let shift = self.m as i32 - 1;
        let cells: Vec<Value> = self
            .coords
            .iter()
            .enumerate()
            .map(|(c, &(row, x))| {
                let region = match (0..2).find(|&y| self.start[y] & bit(c) != 0) {
                    Some(y) => format!("start:{}", Notation::player_name(self, y as u8)),
                    None => "hex".to_string(),
                };
                json!({"name": c.to_string(), "row": row, "half": x as i32 + shift, "region": region})
            })
            .collect();
        json!({"kind": "diamond", "size": self.m, "pieces": self.k, "piece_label": "cell", "cells": cells})
    }
}
