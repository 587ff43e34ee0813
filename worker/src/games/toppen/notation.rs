//! Position and move notation (docs/toppen-notation.md) and pictures.
//!
//! A position is `SPEC:STACKS[:SIDE]`:
//! - `SPEC`: grid rows separated by `/`, `#` a cell, `.` no cell;
//! - `STACKS`: one stack per `#` in reading order (rows top to bottom, left to right), bottom to top
//!   in letters `A`/`B`, separated by commas; `-` or nothing is a cell that has been emptied. When
//!   every stack is one letter (or `-`) the commas may be left out;
//! - `SIDE`: `A` or `B`, the player to move (default: the options' first player).
//!
//! Letters are case-insensitive. Indices are written on their class's representative drawing;
//! parsing that text gives the same index back. A move is `from-to` with cells named by column
//! letter (`a` leftmost) and row number (`1` the top row) of that drawing, or `pass`.

use super::catalogue::MAX_V;
use super::index::State;
use super::polyomino::{adjacency, connected, parse_cells, spec_of, Cell, TILES};
use super::{Toppen, ToppenError};
use crate::notation::Notation;
use serde_json::{json, Map, Value};

fn side_letter(p: u8) -> char {
    if p == 0 {
        'A'
    } else {
        'B'
    }
}

fn cell_name(c: Cell) -> String {
    format!("{}{}", (b'a' + c.1) as char, c.0 as usize + 1)
}

/// A stack as letters, bottom to top.
fn stack_text(s: &State, u: usize) -> String {
    (0..s.h[u])
        .map(|k| if (s.bits[u] >> k) & 1 == 1 { 'A' } else { 'B' })
        .collect()
}

impl Toppen {
    fn bad(text: &str, why: impl Into<String>) -> ToppenError {
        ToppenError::BadPosition {
            text: text.into(),
            why: why.into(),
        }
    }

    /// Parses a position (`SPEC:STACKS[:SIDE]`, see docs/toppen-notation.md) into its index.
    pub fn parse_position(&self, text: &str) -> Result<u64, ToppenError> {
        if text.trim().eq_ignore_ascii_case("start") {
            return Err(Self::bad(
                text,
                "TOPPEN has no single start: every terrain (10 edge-connected cells) has its own, \
                 one for each of its 252 colourings with the first player to move. Name one as \
                 SPEC:STACKS:SIDE, e.g. `####/#..#/####:AABBABABAB:A` on the 3×4 ring: the SPEC \
                 is the terrain's rows separated by `/` (`#` a cell, `.` none), then a tile A or \
                 B per cell in reading order, then the side to move; `kingmaker census DIR \
                 --terrain SPEC --colourings` lists a terrain's starts",
            ));
        }
        let parts: Vec<&str> = text.trim().split(':').map(str::trim).collect();
        if parts.len() < 2 || parts.len() > 3 {
            return Err(Self::bad(
                text,
                "expected SPEC:STACKS or SPEC:STACKS:SIDE, e.g. `####/#..#/####:AABBABABAB:A`",
            ));
        }
        let cells = parse_cells(parts[0]).map_err(|e| Self::bad(text, e.to_string()))?;
        let mover = match parts.get(2).map(|s| s.to_ascii_uppercase()) {
            None => self.opts.first,
            Some(s) if s == "A" => 0,
            Some(s) if s == "B" => 1,
            Some(s) => return Err(Self::bad(text, format!("side to move {s:?}: write A or B"))),
        };
        let raw = parts[1];
        let stacks: Vec<String> = if raw.contains(',') || cells.len() == 1 {
            raw.split(',').map(|s| s.trim().to_string()).collect()
        } else {
            raw.chars()
                .filter(|c| !c.is_whitespace())
                .map(|c| c.to_string())
                .collect()
        };
        if stacks.len() != cells.len() {
            return Err(Self::bad(
                text,
                format!(
                    "the SPEC has {} cells but {} stacks are given; give one stack per `#` in \
                     reading order, separated by commas",
                    cells.len(),
                    stacks.len()
                ),
            ));
        }
        let mut occupied: Vec<Cell> = Vec::new();
        let mut occ_stacks: Vec<(u8, u16)> = Vec::new();
        let mut a_tiles = 0;
        let mut tiles = 0;
        for (cell, stack) in cells.iter().zip(&stacks) {
            let stack = stack.to_ascii_uppercase();
            if stack.is_empty() || stack == "-" {
                continue;
            }
            let mut bits = 0u16;
            for (k, ch) in stack.chars().enumerate() {
                match ch {
                    'A' => {
                        bits |= 1 << k.min(15);
                        a_tiles += 1;
                    }
                    'B' => {}
                    other => {
                        return Err(Self::bad(
                            text,
                            format!(
                                "stack {stack:?} has {other:?}; stacks are letters A and B, bottom \
                                 to top (`-` for an emptied cell)"
                            ),
                        ))
                    }
                }
                tiles += 1;
            }
            occupied.push(*cell);
            occ_stacks.push((stack.len().min(TILES) as u8, bits));
        }
        if tiles != TILES || a_tiles != 5 {
            return Err(Self::bad(
                text,
                format!(
                    "{tiles} tiles ({a_tiles} A, {} B); a position has 10 tiles, 5 of each colour",
                    tiles - a_tiles
                ),
            ));
        }
        let adj = adjacency(&occupied, self.opts.diagonal);
        if !connected(&adj, (1u16 << occupied.len()) - 1) {
            return Err(Self::bad(
                text,
                format!(
                    "the occupied cells are not {}-connected, which no legal position allows",
                    if self.opts.diagonal { "8" } else { "edge" }
                ),
            ));
        }
        let (class, to_vertex) = self.cat.classify(&occupied).ok_or_else(|| {
            Self::bad(
                text,
                "the occupied cells do not fit inside any decomino, so they never arise",
            )
        })?;
        let mut s = State {
            class,
            n: occupied.len() as u8,
            h: [0; MAX_V],
            bits: [0; MAX_V],
            mover,
        };
        for (k, &(h, bits)) in occ_stacks.iter().enumerate() {
            s.h[to_vertex[k] as usize] = h;
            s.bits[to_vertex[k] as usize] = bits;
        }
        Ok(self.space.encode(&s))
    }

    /// Checks an index, panicking with a clear message when it is out of range.
    fn decode_checked(&self, index: u64) -> State {
        assert!(
            index < self.space.size(),
            "TOPPEN index {index} is out of range (size {})",
            self.space.size()
        );
        self.space.decode(index)
    }

    /// Writes a position on its class's representative drawing; `parse_position` inverts it.
    pub fn format_position(&self, index: u64) -> String {
        let s = self.decode_checked(index);
        let cls = &self.cat.classes[s.class as usize];
        let stacks: Vec<String> = cls
            .rep_vertex
            .iter()
            .map(|&v| stack_text(&s, v as usize))
            .collect();
        let joined = if s.n > 1 && stacks.iter().all(|t| t.len() == 1) {
            stacks.concat()
        } else {
            stacks.join(",")
        };
        format!("{}:{}:{}", spec_of(&cls.rep), joined, side_letter(s.mover))
    }

    /// Every legal move of the side to move as `(text, child)`, in the notation of the class's
    /// representative drawing (`b1-c1`, or `pass` when there is none). Two moves that are images of
    /// each other under an automorphism may lead to the same child; both are listed. A terminal
    /// state has no moves.
    pub fn moves(&self, index: u64) -> Vec<(String, u64)> {
        let s = self.decode_checked(index);
        let cls = &self.cat.classes[s.class as usize];
        let mut cell_of = [(0u8, 0u8); MAX_V];
        for (k, &v) in cls.rep_vertex.iter().enumerate() {
            cell_of[v as usize] = cls.rep[k];
        }
        let mut out = Vec::new();
        if s.n < 2 {
            return out;
        }
        self.for_each_move(&s, |i, j, child| {
            out.push((
                format!("{}-{}", cell_name(cell_of[i]), cell_name(cell_of[j])),
                self.space.encode(child),
            ));
        });
        if out.is_empty() {
            let mut pass = s;
            pass.mover ^= 1;
            out.push(("pass".to_string(), self.space.encode(&pass)));
        }
        out
    }

    /// The stacks drawn on the class's representative cells, with column letters, row numbers and
    /// the side to move (or the winner).
    pub fn picture(&self, index: u64) -> String {
        let s = self.decode_checked(index);
        let cls = &self.cat.classes[s.class as usize];
        let rows = cls.rep.iter().map(|c| c.0 as usize + 1).max().unwrap_or(0);
        let cols = cls.rep.iter().map(|c| c.1 as usize + 1).max().unwrap_or(0);
        let mut grid = vec![vec![".".to_string(); cols]; rows];
        for (k, &v) in cls.rep_vertex.iter().enumerate() {
            let (r, c) = cls.rep[k];
            grid[r as usize][c as usize] = stack_text(&s, v as usize);
        }
        let width = grid.iter().flatten().map(String::len).max().unwrap_or(1) + 1;
        let mut out = String::from("   ");
        for c in 0..cols {
            out.push_str(&format!("{:<width$}", (b'a' + c as u8) as char));
        }
        out = out.trim_end().to_string();
        out.push('\n');
        for (r, row) in grid.iter().enumerate() {
            let mut line = format!("{:<3}", r + 1);
            for cell in row {
                line.push_str(&format!("{cell:<width$}"));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if s.n == 1 {
            out.push_str(&format!(
                "game over: {} wins (one tower, {} on top)\n",
                side_letter(s.top(0)),
                side_letter(s.top(0))
            ));
        } else {
            out.push_str(&format!("{} to move\n", side_letter(s.mover)));
        }
        out
    }
}

impl Notation for Toppen {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        Ok(Toppen::parse_position(self, text)?)
    }
    fn format_position(&self, index: u64) -> String {
        Toppen::format_position(self, index)
    }
    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        Toppen::moves(self, index)
    }
    fn picture(&self, index: u64) -> String {
        Toppen::picture(self, index)
    }
    fn picture_names_the_mover(&self) -> bool {
        true
    }
    fn player_name(&self, player: u8) -> String {
        ["A", "B"][player as usize].to_string()
    }
    /// Every terrain and colouring is a start; none is the start.
    fn start_index(&self) -> Option<u64> {
        None
    }
    /// The classic ring.
    fn example_index(&self) -> Option<u64> {
        Toppen::parse_position(self, "####/#..#/####:AABBABABAB:A").ok()
    }
    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(
            "grid".into(),
            grid_drawing(&Toppen::format_position(self, index)),
        );
        out
    }
}

/// A position's drawing as the page needs it, read off its canonical notation `SPEC:STACKS:SIDE`
/// (docs/toppen-notation.md): each `#` of the SPEC is a cell (column letter, row number), holding
/// the next stack (bottom to top) of STACKS in reading order.
pub fn grid_drawing(text: &str) -> Value {
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

#[cfg(test)]
mod drawing_tests {
    use super::*;

    #[test]
    fn grids() {
        let g = grid_drawing("####/#..#/####:AA,-,B,B,A,B,A,B,A,B:B");
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
        let g = grid_drawing("##:AAAABBBBB,A:A");
        assert_eq!(g["cells"][0]["stack"], "AAAABBBBB");
        let g = grid_drawing("####/#..#/####:AABBABABAB:A");
        assert_eq!(g["cells"][2]["stack"], "B");
    }
}
