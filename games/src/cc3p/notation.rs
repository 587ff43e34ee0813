//! The position notation (docs/cc3p-notation.md), move texts and pictures.
//!
//! Rows are lettered from the top (z = −2n is row `a`), cells in a row numbered from 1 at the left
//! (increasing x). A position is `A:<cells>;B:<cells>;C:<cells>;<mover>`, e.g.
//! `A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,i1;A` (the start of level 2, also written `start`).

use super::{cell_name_picture, Cc3p, Cc3pError, PLAYERS};
use crate::drawing::Drawing;
use crate::notation::Notation;
use kingmaker_kernel::{Game, Node};
use serde_json::{json, Map, Value};

impl Cc3p {
    fn bad(&self, text: &str, problem: impl Into<String>) -> Cc3pError {
        Cc3pError::Position {
            text: text.to_string(),
            problem: problem.into(),
        }
    }

    fn player_of(letter: &str) -> Option<usize> {
        match letter {
            "A" | "a" => Some(0),
            "B" | "b" => Some(1),
            "C" | "c" => Some(2),
            _ => None,
        }
    }

    /// Parse the position notation (or `start`). Illegal placements (two goals filled) parse fine.
    pub fn parse_position(&self, text: &str) -> Result<u64, Cc3pError> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("start") {
            return Ok(self.start_index());
        }
        let mut parts: Vec<&str> = trimmed.split(';').map(str::trim).collect();
        if parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
        let mut sets: [Option<u64>; 3] = [None; 3];
        let mut mover = None;
        let mut occupied = 0u64;
        for part in parts {
            if part.is_empty() {
                return Err(self.bad(text, "empty field between ';' separators"));
            }
            let Some((who, cells)) = part.split_once(':') else {
                if mover.is_some() {
                    return Err(self.bad(text, format!("a second side to move {part:?}")));
                }
                mover = Some(Self::player_of(part).ok_or_else(|| {
                    self.bad(
                        text,
                        format!("{part:?} is neither a side to move (A, B, C) nor a player's cells (like A:e3,f4,g1)"),
                    )
                })?);
                continue;
            };
            let who = who.trim();
            let p = Self::player_of(who).ok_or_else(|| {
                self.bad(
                    text,
                    format!("unknown player {who:?} (players are A, B, C)"),
                )
            })?;
            if sets[p].is_some() {
                return Err(self.bad(text, format!("player {} is listed twice", PLAYERS[p])));
            }
            let mut set = 0u64;
            let mut count = 0;
            for name in cells.split(',').map(str::trim) {
                if name.is_empty() {
                    return Err(
                        self.bad(text, format!("empty cell name in {}'s cells", PLAYERS[p]))
                    );
                }
                let c = self.geo.by_name(name).ok_or_else(|| {
                    self.bad(
                        text,
                        format!("unknown cell {name:?} (level {} has rows a..{} numbered from 1 at the left)",
                            self.level, (b'a' + 4 * self.level) as char),
                    )
                })?;
                let bit = 1u64 << c;
                if self.lane[p] & bit == 0 {
                    return Err(self.bad(
                        text,
                        format!("{}'s piece on {name} is off its lane (the hexagon and its own start and goal points)",
                            PLAYERS[p]),
                    ));
                }
                if occupied & bit != 0 {
                    return Err(self.bad(text, format!("two pieces on {name}")));
                }
                occupied |= bit;
                set |= bit;
                count += 1;
            }
            if count != self.geo.k {
                return Err(self.bad(
                    text,
                    format!(
                        "{} has {count} pieces; level {} has {} per player",
                        PLAYERS[p], self.level, self.geo.k
                    ),
                ));
            }
            sets[p] = Some(set);
        }
        let mut placement = [0u64; 3];
        for p in 0..3 {
            placement[p] = sets[p].ok_or_else(|| {
                self.bad(
                    text,
                    format!(
                        "missing {}'s cells (like {}:e3,f4,g1)",
                        PLAYERS[p], PLAYERS[p]
                    ),
                )
            })?;
        }
        let mover =
            mover.ok_or_else(|| self.bad(text, "missing side to move (end with ;A, ;B or ;C)"))?;
        Ok(self.index_of(&placement, mover))
    }

    /// Names of the cells of a mask, in canonical (reading) order.
    pub(crate) fn cell_names(&self, mask: u64) -> Vec<String> {
        let mut cells: Vec<usize> = (0..self.geo.len())
            .filter(|&c| mask >> c & 1 == 1)
            .collect();
        cells.sort_by_key(|&c| (self.geo.cells[c].row, self.geo.cells[c].col));
        cells.iter().map(|&c| self.geo.cells[c].name()).collect()
    }

    /// The canonical notation of a state: `parse_position(format_position(i)) == i`.
    pub fn format_position(&self, index: u64) -> String {
        let (sets, mover) = self.decode(index);
        let mut out = String::new();
        for p in 0..3 {
            out.push(PLAYERS[p]);
            out.push(':');
            out.push_str(&self.cell_names(sets[p]).join(","));
            out.push(';');
        }
        out.push(PLAYERS[mover]);
        out
    }

    /// Every jump chain from `c` (the piece lifted): for each landing cell, the best chain (fewest
    /// jumps, then smallest text) as the list of cells landed on. Texts are compared as lists of
    /// the cells' places in `name_order`, which orders them as the texts themselves.
    fn jump_chains(&self, c: usize, occ: u64, lane: u64) -> Vec<(usize, Vec<usize>)> {
        #[allow(clippy::too_many_arguments)]
        fn walk(
            game: &Cc3p,
            order: &[u8],
            u: usize,
            occ: u64,
            open: u64,
            visited: u64,
            path: &mut Vec<usize>,
            best: &mut Vec<Option<Vec<usize>>>,
        ) {
            for &(over, land) in &game.jumps[u] {
                if occ & over != 0 && open & land & !visited != 0 {
                    let t = land.trailing_zeros() as usize;
                    path.push(t);
                    let better = best[t].as_ref().is_none_or(|old| {
                        let places = |p: &[usize]| p.iter().map(|&x| order[x]).collect();
                        let (mine, theirs): (Vec<u8>, Vec<u8>) = (places(path), places(old));
                        (mine.len(), mine) < (theirs.len(), theirs)
                    });
                    if better {
                        best[t] = Some(path.clone());
                    }
                    walk(game, order, t, occ, open, visited | land, path, best);
                    path.pop();
                }
            }
        }
        let mut best = vec![None; self.geo.len()];
        let mut path = Vec::new();
        walk(
            self,
            &self.name_order[0],
            c,
            occ,
            lane & !occ,
            1u64 << c,
            &mut path,
            &mut best,
        );
        best.into_iter()
            .enumerate()
            .filter_map(|(t, b)| b.map(|p| (t, p)))
            .collect()
    }

    /// What the move lists of a live state start from (None for a terminal or illegal one).
    fn live_moves(&self, index: u64) -> Option<LiveMoves> {
        let (sets, mover) = self.decode(index);
        let Node::Live { .. } = self.node(index) else {
            return None;
        };
        Some(LiveMoves {
            sets,
            mover,
            occ: sets[0] | sets[1] | sets[2],
            lane: self.lane[mover],
            next: ((mover + 1) % 3) as u64,
        })
    }

    /// The child where `mover`'s piece on `c` of the placement `sets` moves to `t`.
    fn child_of(&self, sets: &[u64; 3], mover: usize, c: usize, t: usize) -> u64 {
        let mut child = *sets;
        child[mover] ^= (1u64 << c) | (1u64 << t);
        self.tables.rank(&child) * 3 + ((mover + 1) % 3) as u64
    }

    /// Every legal move of a live state, unsorted: `f(from, cells landed on, child)` for each
    /// step and each jump chain (the best one per landing cell, [`Cc3p::jump_chains`]), or
    /// `f(from, [], child)` once for a pass (`from` is then meaningless). Terminal and illegal
    /// states have none.
    fn each_move(&self, index: u64, mut f: impl FnMut(usize, &[usize], u64)) {
        let Some(live) = self.live_moves(index) else {
            return;
        };
        let LiveMoves {
            sets,
            mover,
            occ,
            lane,
            next,
        } = live;
        let child_of = |c: usize, t: usize| self.child_of(&sets, mover, c, t);
        let mut any = false;
        let mut pieces = sets[mover];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let without = occ & !(1u64 << c);
            let mut steps = self.step[c] & lane & !occ;
            while steps != 0 {
                let t = steps.trailing_zeros() as usize;
                steps &= steps - 1;
                f(c, &[t], child_of(c, t));
                any = true;
            }
            for (t, chain) in self.jump_chains(c, without, lane) {
                f(c, &chain, child_of(c, t));
                any = true;
            }
        }
        if !any {
            f(0, &[], index / 3 * 3 + next);
        }
    }

    /// Every legal move of a live state as (text, child index), one per distinct child, sorted by
    /// text: `A e3-c3` (a step or one jump), `A e3-c1-g2` (a jump chain: the cells landed on),
    /// `B pass`. Terminal and illegal states have none.
    pub fn moves(&self, index: u64) -> Vec<(String, u64)> {
        let mover = (index % 3) as usize;
        let name = |c: usize| self.geo.cells[c].name();
        let mut out = Vec::new();
        self.each_move(index, |from, landed, child| {
            let text = if landed.is_empty() {
                format!("{} pass", PLAYERS[mover])
            } else {
                let mut text = format!("{} {}", PLAYERS[mover], name(from));
                for &x in landed {
                    text.push('-');
                    text.push_str(&name(x));
                }
                text
            };
            out.push((text, child));
        });
        out.sort();
        out
    }

    /// The children of [`Cc3p::moves`] in its order, without writing the texts.
    pub fn children_in_move_order(&self, index: u64) -> Vec<u64> {
        self.children_ordered(index, 0)
    }

    /// The children of a live state in the order that breaks the preference rules' ties (the seat
    /// order, docs/rules.md §1.4): the order of [`Cc3p::moves`] at the state rotated until A
    /// moves. So a rule treats the seats alike: its choice at the rotated state is the rotated
    /// choice (the game's own move order, an order of the board, favoured C). The rotation is
    /// applied to the cells' names, not to the states.
    pub fn children_in_seat_order(&self, index: u64) -> Vec<u64> {
        self.children_ordered(index, ((3 - index % 3) % 3) as usize)
    }

    /// The children of `index` in the order of the move texts at the state turned by `turns`
    /// seats. Each move's key is its cells' places in `name_order[turns]` plus one, a byte each
    /// from the most significant (the lifted cell, then the cells landed on), zeros after the last:
    /// keys order as texts, and a jump chain's best text per landing cell is its least
    /// (jumps, key). Nothing is allocated but the result.
    fn children_ordered(&self, index: u64, turns: usize) -> Vec<u64> {
        let Some(live) = self.live_moves(index) else {
            return Vec::new();
        };
        let LiveMoves {
            sets,
            mover,
            occ,
            lane,
            next,
        } = live;
        let order = &self.name_order[turns];
        let place = |c: usize, byte: usize| (u128::from(order[c]) + 1) << (8 * byte);
        let child_of = |c: usize, t: usize| self.child_of(&sets, mover, c, t);
        let mut keyed: Vec<(u128, u64)> = Vec::new();
        let mut pieces = sets[mover];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let lifted = place(c, 15);
            let mut steps = self.step[c] & lane & !occ;
            while steps != 0 {
                let t = steps.trailing_zeros() as usize;
                steps &= steps - 1;
                keyed.push((lifted | place(t, 14), child_of(c, t)));
            }
            let without = occ & !(1u64 << c);
            let mut best = [None; 64];
            if !self.chain_keys(
                c,
                without,
                lane & !without,
                1u64 << c,
                order,
                0,
                0,
                &mut best,
            ) {
                // A chain of more than 15 jumps (never seen at levels 1 and 2): by the texts.
                return self.children_ordered_by_texts(index, turns);
            }
            for (t, b) in best.iter().enumerate() {
                if let Some((_, key)) = b {
                    keyed.push((lifted | key, child_of(c, t)));
                }
            }
        }
        if keyed.is_empty() {
            return vec![index / 3 * 3 + next];
        }
        keyed.sort_unstable();
        keyed.into_iter().map(|k| k.1).collect()
    }

    /// The jump chains on from `u` (the chain so far: `jumps` jumps, `key` its landings' bytes,
    /// as in [`Cc3p::children_ordered`]): into `best[t]`, the least (jumps, key) landing on `t`.
    /// False if a chain has more than 15 jumps, whose key would not fit.
    #[allow(clippy::too_many_arguments)]
    fn chain_keys(
        &self,
        u: usize,
        occ: u64,
        open: u64,
        visited: u64,
        order: &[u8],
        jumps: usize,
        key: u128,
        best: &mut [Option<(usize, u128)>; 64],
    ) -> bool {
        let mut fits = true;
        for &(over, land) in &self.jumps[u] {
            if occ & over == 0 || open & land & !visited == 0 {
                continue;
            }
            if jumps == 15 {
                fits = false;
                continue;
            }
            let t = land.trailing_zeros() as usize;
            let key = key | (u128::from(order[t]) + 1) << (8 * (14 - jumps));
            let chain = (jumps + 1, key);
            if best[t].is_none_or(|b| chain < b) {
                best[t] = Some(chain);
            }
            fits &= self.chain_keys(t, occ, open, visited | land, order, jumps + 1, key, best);
        }
        fits
    }

    /// [`Cc3p::children_ordered`] by writing the texts: the state turned, its moves, each child
    /// turned back.
    pub(super) fn children_ordered_by_texts(&self, index: u64, turns: usize) -> Vec<u64> {
        let turn = |mut i: u64, times: usize| {
            for _ in 0..times {
                i = self.rotate(i);
            }
            i
        };
        self.moves(turn(index, turns))
            .into_iter()
            .map(|(_, c)| turn(c, (3 - turns) % 3))
            .collect()
    }

    /// An ASCII picture of the star with the pieces (A, B, C; '.' for empty cells), each row
    /// starting with its letter.
    pub fn picture(&self, index: u64) -> String {
        let (sets, _) = self.decode(index);
        self.geo.draw(1, true, |c| {
            let bit = 1u64 << c;
            (0..3)
                .find(|&p| sets[p] & bit != 0)
                .map_or(".".to_string(), |p| PLAYERS[p].to_string())
        })
    }
}

impl Notation for Cc3p {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        Ok(Cc3p::parse_position(self, text)?)
    }
    fn format_position(&self, index: u64) -> String {
        Cc3p::format_position(self, index)
    }
    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        Cc3p::moves(self, index)
    }
    fn picture(&self, index: u64) -> String {
        Cc3p::picture(self, index)
    }
    fn player_name(&self, player: u8) -> String {
        PLAYERS[player as usize].to_string()
    }
    fn start_index(&self) -> Option<u64> {
        Some(Cc3p::start_index(self))
    }
    fn illegal_reason(&self, index: u64) -> Option<String> {
        matches!(Game::node(self, index), Node::Illegal).then(|| ILLEGAL_REASON.to_string())
    }
}

/// Why a cc3p state is illegal: the game ends when the first goal is filled.
pub const ILLEGAL_REASON: &str = "two or more goals are filled";

impl Drawing for Cc3p {
    fn board_drawing(&self) -> Value {
        star_drawing(self.level())
    }

    /// Each player's pieces, read off the canonical notation (`A:c6,c7;B:...;C:...;A`).
    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        let mut pieces = Map::new();
        for field in Cc3p::format_position(self, index).split(';') {
            if let Some((who, cells)) = field.split_once(':') {
                let cells: Vec<&str> = cells.split(',').filter(|c| !c.is_empty()).collect();
                pieces.insert(who.to_string(), json!(cells));
            }
        }
        let mut out = Map::new();
        out.insert("pieces".into(), Value::Object(pieces));
        out
    }
}

/// The star's cells for drawing: name, position (in half-cell steps across, rows down) and what
/// the cell is (hexagon, or a player's start or goal point), read off the notation's own picture
/// of cell names so the page and the notation cannot disagree.
pub fn star_drawing(level: u8) -> Value {
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

/// A live state as its move lists read it: the placement, the mover, the occupied cells, the
/// mover's lane and the next mover.
struct LiveMoves {
    sets: [u64; 3],
    mover: usize,
    occ: u64,
    lane: u64,
    next: u64,
}

#[cfg(test)]
mod drawing_tests {
    use super::*;

    #[test]
    fn star_cells_match_the_notation() {
        for level in [1u8, 2] {
            let g = Cc3p::new(level).unwrap();
            let board = star_drawing(level);
            let cells = board["cells"].as_array().unwrap();
            assert_eq!(cells.len(), [13, 37][level as usize - 1]);
            // The start position's pieces stand on their owners' start points.
            let start = Cc3p::format_position(&g, Cc3p::start_index(&g));
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
}
