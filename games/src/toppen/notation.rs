//! Position and move notation (docs/toppen-notation.md) and pictures: a position is
//! `SPEC:STACKS[:SIDE]`, a stack per `#` in reading order, bottom to top in `A`/`B`.
//! 1. Indices are written on their class's representative drawing, so parsing that text gives the
//!    same index back; a move is `from-to` in that drawing's cell names (`a1` top left), or `pass`.

use super::catalogue::MAX_V;
use super::index::State;
use super::polyomino::{adjacency, connected, parse_cells, spec_of, Cell, TILES};
use super::{Toppen, ToppenError};
use crate::drawing::Drawing;
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

/// A position on one fixed drawing: the occupied cells, each one's stack (letters bottom to top)
/// and the side to move.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Drawn {
    cells: Vec<Cell>,
    stacks: Vec<String>,
    mover: u8,
}

impl Toppen {
    /// A state on its class's representative drawing (the drawing `format_position` writes).
    fn drawn(&self, index: u64) -> Drawn {
        let s = self.decode_checked(index);
        let cls = &self.cat.classes[s.class as usize];
        Drawn {
            cells: cls.rep.clone(),
            stacks: cls
                .rep_vertex
                .iter()
                .map(|&v| stack_text(&s, v as usize))
                .collect(),
            mover: s.mover,
        }
    }

    /// Every legal move of a drawn position, named by its cells on that drawing (the rules of
    /// docs/rules.md §2, as `moves` plays them on states), with the drawn position after it.
    fn drawn_moves(&self, d: &Drawn) -> Vec<(String, Drawn)> {
        let mut out = Vec::new();
        if d.cells.len() < 2 {
            return out;
        }
        let adj = adjacency(&d.cells, self.opts.diagonal);
        let mine = side_letter(d.mover);
        for u in 0..d.cells.len() {
            if !d.stacks[u].ends_with(mine) {
                continue;
            }
            for v in (0..d.cells.len()).filter(|&v| adj[u] >> v & 1 == 1) {
                let mut cells = d.cells.clone();
                let mut stacks = d.stacks.clone();
                let tile = stacks[u].pop().expect("a stack with a top tile");
                stacks[v].push(tile);
                if stacks[u].is_empty() {
                    cells.remove(u);
                    stacks.remove(u);
                    let after = adjacency(&cells, self.opts.diagonal);
                    if !connected(&after, (1u16 << cells.len()) - 1) {
                        continue;
                    }
                }
                let name = format!("{}-{}", cell_name(d.cells[u]), cell_name(d.cells[v]));
                out.push((
                    name,
                    Drawn {
                        cells,
                        stacks,
                        mover: 1 - d.mover,
                    },
                ));
            }
        }
        if out.is_empty() {
            let mut pass = d.clone();
            pass.mover ^= 1;
            out.push(("pass".to_string(), pass));
        }
        out
    }

    /// Whether two drawn positions are the same state: the same side to move and a one-to-one
    /// map of their cells that keeps every stack and which cells touch.
    fn same_state(&self, a: &Drawn, b: &Drawn) -> bool {
        if a.mover != b.mover || a.cells.len() != b.cells.len() {
            return false;
        }
        let (adj_a, adj_b) = (
            adjacency(&a.cells, self.opts.diagonal),
            adjacency(&b.cells, self.opts.diagonal),
        );
        // Map a's cells in order, each onto an unused cell of b with the same stack, the same
        // number of neighbours and the same adjacency to the cells mapped so far.
        fn extend(a: &Drawn, b: &Drawn, adj: (&[u16], &[u16]), map: &mut Vec<usize>) -> bool {
            let i = map.len();
            if i == a.cells.len() {
                return true;
            }
            for j in 0..b.cells.len() {
                let fits = !map.contains(&j)
                    && a.stacks[i] == b.stacks[j]
                    && adj.0[i].count_ones() == adj.1[j].count_ones()
                    && map
                        .iter()
                        .enumerate()
                        .all(|(k, &m)| (adj.0[i] >> k & 1) == (adj.1[j] >> m & 1));
                if fits {
                    map.push(j);
                    if extend(a, b, adj, map) {
                        return true;
                    }
                    map.pop();
                }
            }
            false
        }
        extend(a, b, (&adj_a, &adj_b), &mut Vec::new())
    }

    /// The moves of a line of play (each state a child of the one before) named on the drawing
    /// of its first state: the board the page shows for it. `moves` names a state's moves on that
    /// state's own drawing, and each position of a line is drawn afresh (on its class's drawing),
    /// so the cells of a later move need not exist on the first board; here the tiles are moved
    /// on the first board instead, and each move is the one that gives the next state (up to the
    /// symmetries of the board, which do not change a state). None if some step of the line is
    /// not a move.
    pub fn line_moves_on_first_drawing(&self, line: &[u64]) -> Option<Vec<String>> {
        let mut here = self.drawn(*line.first()?);
        let mut out = Vec::new();
        for &next in &line[1..] {
            let target = self.drawn(next);
            let (name, after) = self
                .drawn_moves(&here)
                .into_iter()
                .find(|(_, d)| self.same_state(d, &target))?;
            out.push(name);
            here = after;
        }
        Some(out)
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
}

impl Drawing for Toppen {
    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        let mut out = Map::new();
        out.insert(
            "grid".into(),
            grid_drawing(&Toppen::format_position(self, index)),
        );
        out
    }

    fn line_moves(&self, line: &[u64]) -> Option<Vec<String>> {
        self.line_moves_on_first_drawing(line)
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
    // As `parse_position` reads them: commas between stacks, optional when every stack is one
    // letter; a position of one cell (the finished tower) is its one stack, commas or not.
    let stacks: Vec<&str> = if stacks.contains(',') || spec.matches('#').count() == 1 {
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
        // The finished tower: one cell, all ten tiles (as format_position writes it).
        let g = grid_drawing("#:AAAAABBBBB:A");
        assert_eq!(g["cells"].as_array().unwrap().len(), 1);
        assert_eq!(g["cells"][0]["stack"], "AAAAABBBBB");
    }

    /// Moves played on a fixed drawing follow the rules as `moves` plays them on states: the
    /// same number of moves from every state tried, and each one's result the state of a move
    /// of `moves`.
    #[test]
    fn moves_on_a_drawing_are_the_games_moves() {
        let g = crate::toppen::shared(false);
        let size = kingmaker_kernel::Game::size(g);
        for k in 0..2000u64 {
            let index = k * 7919 % size;
            let here = g.drawn(index);
            let drawn = g.drawn_moves(&here);
            let moves = Toppen::moves(g, index);
            if here.cells.len() == 1 {
                assert!(drawn.is_empty() && moves.is_empty());
                continue;
            }
            assert_eq!(drawn.len(), moves.len(), "{}", g.format_position(index));
            for (name, d) in &drawn {
                assert!(
                    moves
                        .iter()
                        .any(|(_, child)| g.same_state(d, &g.drawn(*child))),
                    "{name} from {}",
                    g.format_position(index)
                );
            }
        }
    }

    /// A line's moves named on its first board: every cell named is a cell of that board, and
    /// playing the named moves there gives the line's states.
    #[test]
    fn a_lines_moves_name_the_first_board() {
        let g = crate::toppen::shared(false);
        let start = g.parse_position("####/#..#/####:ABABBAABAB:A").unwrap();
        // Follow the first move of every position for a while.
        let mut line = vec![start];
        for _ in 0..12 {
            let here = *line.last().unwrap();
            match Toppen::moves(g, here).first() {
                Some(&(_, child)) => line.push(child),
                None => break,
            }
        }
        let names = g.line_moves_on_first_drawing(&line).unwrap();
        assert_eq!(names.len(), line.len() - 1);
        let board: Vec<String> = g.drawn(start).cells.iter().map(|&c| cell_name(c)).collect();
        let mut here = g.drawn(start);
        for (name, &next) in names.iter().zip(&line[1..]) {
            if name != "pass" {
                for cell in name.split('-') {
                    assert!(board.contains(&cell.to_string()), "{name} on {board:?}");
                }
            }
            let (_, after) = g
                .drawn_moves(&here)
                .into_iter()
                .find(|(n, _)| n == name)
                .unwrap();
            assert!(g.same_state(&after, &g.drawn(next)), "{name}");
            here = after;
        }
    }
}
