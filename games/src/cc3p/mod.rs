//! Three-player Chinese Checkers (`cc3p`), levels 1 and 2 as a dense index space (level 3 only as
//! counts): the rules of docs/rules.md §1.
//! 1. Index: `placement_rank * 3 + mover` (A = 0, B = 1, C = 2); a pass keeps `index / 3`. Methods
//!    taking an index expect `index < size()`; larger ones may panic.
//! 2. The module map, and how moves avoid division and popcount: docs/cc3p-notation.md.

pub mod answers;
mod family;
pub use family::Cc3pParams;
mod geometry;
mod jumps;
mod moves;
mod notation;
mod rank;
#[cfg(test)]
mod tests;
pub mod view;

use kingmaker_kernel::{Game, Node};

pub use geometry::cell_name_picture;
use geometry::{Geometry, Region};
use jumps::JumpTable;
use rank::RankTables;

/// Player letters.
pub const PLAYERS: [char; 3] = ['A', 'B', 'C'];

/// Errors of the cc3p module: unsupported levels and bad position texts.
#[derive(Debug, thiserror::Error)]
pub enum Cc3pError {
    /// A level other than 1, 2 and 3.
    #[error("cc3p has levels 1, 2 and 3, not {0}")]
    NoSuchLevel(u8),
    /// A level whose states (the second field) do not fit a `u64` index.
    #[error(
        "cc3p level {0} has no dense index: its {1} states do not fit in a u64 index \
         (levels 1 and 2 are indexed): `kingmaker count cc3p --level {0}` counts its states \
         without one"
    )]
    TooBig(u8, u128),
    /// A position text that cannot be read.
    #[error("bad position {text:?}: {problem}")]
    Position {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// The game of one level, with all tables for ranking and move generation.
pub struct Cc3p {
    level: u8,
    geo: Geometry,
    tables: RankTables,
    /// Cells per player's lane.
    lane: [u64; 3],
    /// Goal point of each player.
    goal: [u64; 3],
    /// Start point of each player.
    start: [u64; 3],
    /// Neighbour mask of each cell.
    step: Vec<u64>,
    /// Per cell and direction: (mask of the cell jumped over, mask of the landing cell); (0, 0) when
    /// the jump leaves the board.
    jumps: Vec<[(u64, u64); 6]>,
    /// The same jumps as table lookups (`jumps.rs`).
    jump_table: JumpTable,
    /// The rotation (x, y, z) ↦ (z, x, y) as a cell permutation.
    rot: Vec<u8>,
    /// Each cell's place among the cell names in text order (`c1` < `c10` < `c2`), and the same
    /// for the board turned by one and two seats (`name_order[k][c]` is the place of the cell
    /// that c becomes): move texts compare as the lists of their cells' places (`notation.rs`).
    name_order: [Vec<u8>; 3],
}

impl Cc3p {
    /// Levels 1 and 2 (dense ranking). Level 3 is too big for an index (u64 overflows).
    pub fn new(level: u8) -> Result<Cc3p, Cc3pError> {
        if !(1..=3).contains(&level) {
            return Err(Cc3pError::NoSuchLevel(level));
        }
        let geo = Geometry::new(level);
        let k = geo.k;
        let tables = match RankTables::new(geo.hex, k) {
            Some(t) if geo.len() <= 64 => t,
            _ => {
                let placements = rank::stage_sizes(geo.hex, k)[0][geo.hex];
                return Err(Cc3pError::TooBig(level, placements * 3));
            }
        };
        let bit = |c: usize| 1u64 << c;
        let mut lane = [0u64; 3];
        let mut goal = [0u64; 3];
        let mut start = [0u64; 3];
        for (c, cell) in geo.cells.iter().enumerate() {
            for (p, l) in lane.iter_mut().enumerate() {
                if cell.in_lane(p) {
                    *l |= bit(c);
                }
            }
            if let Region::Point(q) = cell.region {
                let p = q as usize / 2;
                if q % 2 == 0 {
                    start[p] |= bit(c);
                } else {
                    goal[p] |= bit(c);
                }
            }
        }
        let step = (0..geo.len())
            .map(|c| {
                geo.neighbours[c]
                    .iter()
                    .flatten()
                    .fold(0, |m, &nb| m | bit(nb))
            })
            .collect();
        let jumps: Vec<[(u64, u64); 6]> = (0..geo.len())
            .map(|c| {
                let mut j = [(0u64, 0u64); 6];
                for (d, e) in j.iter_mut().enumerate() {
                    if let Some((over, land)) = geo.jump(c, d) {
                        *e = (bit(over), bit(land));
                    }
                }
                j
            })
            .collect();
        let jump_table = JumpTable::new(&jumps);
        let rot = (0..geo.len()).map(|c| geo.rotate_cell(c) as u8).collect();
        let mut by_name: Vec<usize> = (0..geo.len()).collect();
        by_name.sort_by_key(|&c| geo.cells[c].name());
        let mut place = vec![0u8; geo.len()];
        for (k, &c) in by_name.iter().enumerate() {
            place[c] = k as u8;
        }
        let turned = |order: &Vec<u8>| -> Vec<u8> {
            (0..geo.len()).map(|c| order[geo.rotate_cell(c)]).collect()
        };
        let once = turned(&place);
        let twice = turned(&once);
        let name_order = [place, once, twice];
        Ok(Cc3p {
            level,
            geo,
            tables,
            lane,
            goal,
            start,
            step,
            jumps,
            jump_table,
            rot,
            name_order,
        })
    }

    /// The level: 1 or 2 (level 3 has no index).
    pub fn level(&self) -> u8 {
        self.level
    }

    /// Number of placements (554 at level 1, 4,947,100,130 at level 2).
    pub fn placements(&self) -> u64 {
        self.tables.placements()
    }

    /// Every piece on its start point, A to move.
    pub fn start_index(&self) -> u64 {
        self.index_of(&self.start, 0)
    }

    /// The C3 rotation (x, y, z) ↦ (z, x, y): A's pieces become B's, B's become C's, C's become
    /// A's, and the side to move advances A → B → C → A.
    pub fn rotate(&self, index: u64) -> u64 {
        let (sets, mover) = self.decode(index);
        let r = |set: u64| {
            let mut out = 0u64;
            let mut bits = set;
            while bits != 0 {
                out |= 1u64 << self.rot[bits.trailing_zeros() as usize];
                bits &= bits - 1;
            }
            out
        };
        let rotated = [r(sets[2]), r(sets[0]), r(sets[1])];
        self.index_of(&rotated, (mover + 1) % 3)
    }

    /// The winner of a terminal state (None for live and illegal states).
    pub fn winner(&self, index: u64) -> Option<u8> {
        match self.node(index) {
            Node::Terminal { outcome: winner } => Some(winner),
            _ => None,
        }
    }

    /// How far each player (A, B, C) is from filling its goal: the sum over its pieces of the rows
    /// still to go, counted along its axis (x for A, y for B, z for C: a player's start point is
    /// on the + side, its goal on the − side) down to the tip of its goal point. 0: every piece
    /// on the tip, which only a one-piece level reaches; the players compare on the same scale,
    /// the star being symmetric under the rotation.
    pub fn rows_to_go(&self, index: u64) -> [i64; 3] {
        let (sets, _) = self.decode(index);
        let axis = |c: &geometry::Cell, p: usize| i64::from([c.x, c.y, c.z][p]);
        std::array::from_fn(|p| {
            let tip = self.geo.cells.iter().map(|c| axis(c, p)).min().unwrap_or(0);
            (0..self.geo.len())
                .filter(|&c| c < 64 && sets[p] >> c & 1 == 1)
                .map(|c| axis(&self.geo.cells[c], p) - tip)
                .sum()
        })
    }

    /// Player `p`'s lane (the cells its pieces may stand on) as a cell mask.
    pub(crate) fn lane_mask(&self, p: usize) -> u64 {
        self.lane[p]
    }

    /// Player `p`'s goal point as a cell mask.
    pub(crate) fn goal_mask(&self, p: usize) -> u64 {
        self.goal[p]
    }

    /// Pieces per player.
    pub(crate) fn pieces(&self) -> usize {
        self.geo.k
    }

    /// The placement (A's, B's, C's cell masks) and the mover of an index.
    #[inline]
    pub(crate) fn decode(&self, index: u64) -> ([u64; 3], usize) {
        (self.tables.unrank(index / 3), (index % 3) as usize)
    }

    #[inline]
    pub(crate) fn index_of(&self, sets: &[u64; 3], mover: usize) -> u64 {
        self.tables.rank(sets) * 3 + mover as u64
    }

    /// Classify a placement: number of filled goals and the last filled goal's owner.
    #[inline]
    fn classify(&self, sets: &[u64; 3], mover: usize) -> Node {
        let mut filled = 0;
        let mut winner = 0;
        for (p, (&set, &goal)) in sets.iter().zip(&self.goal).enumerate() {
            if set & goal == goal {
                filled += 1;
                winner = p as u8;
            }
        }
        match filled {
            0 => Node::Live { mover: mover as u8 },
            1 => Node::Terminal { outcome: winner },
            _ => Node::Illegal,
        }
    }
}

impl Game for Cc3p {
    fn name(&self) -> String {
        format!("cc3p-{}", self.level)
    }

    fn players(&self) -> u8 {
        3
    }

    fn size(&self) -> u64 {
        self.placements() * 3
    }

    fn node(&self, index: u64) -> Node {
        let (sets, mover) = self.decode(index);
        self.classify(&sets, mover)
    }

    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        self.successors_into(index, out);
    }

    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        self.predecessors_into(index, out);
    }

    fn predecessors_and_count(&self, index: u64, out: &mut Vec<u64>) -> Option<(u64, usize)> {
        self.predecessors_into(index, out)
    }

    fn mover(&self, index: u64) -> u8 {
        (index % 3) as u8
    }

    fn mover_period(&self) -> Option<u8> {
        Some(3)
    }

    fn successor_count(&self, index: u64) -> usize {
        self.successor_count_of(index)
    }

    /// A state is not live when a goal is filled: its owner's pieces are all on it. So for each
    /// player p, place p's pieces on p's goal and the others anywhere in their lanes; a placement
    /// with several goals filled (illegal) is listed under its first one only.
    fn each_non_live(&self, f: &mut dyn FnMut(u64, Node)) -> bool {
        let k = self.geo.k;
        for p in 0..3 {
            let (q, r) = ((p + 1) % 3, (p + 2) % 3);
            let mut sets = [0u64; 3];
            sets[p] = self.goal[p];
            each_subset(self.lane[q] & !sets[p], k, &mut |sq| {
                sets[q] = sq;
                each_subset(self.lane[r] & !sets[p] & !sq, k, &mut |sr| {
                    sets[r] = sr;
                    if (0..p).any(|o| sets[o] & self.goal[o] == self.goal[o]) {
                        return; // listed under goal o already
                    }
                    let placement = self.tables.rank(&sets);
                    for mover in 0..3 {
                        f(placement * 3 + mover as u64, self.classify(&sets, mover));
                    }
                });
            });
        }
        true
    }
}

/// Call `f` on every subset of `k` cells of `mask`.
fn each_subset(mask: u64, k: usize, f: &mut dyn FnMut(u64)) {
    fn pick(rest: u64, k: usize, chosen: u64, f: &mut dyn FnMut(u64)) {
        if k == 0 {
            return f(chosen);
        }
        let mut rest = rest;
        while rest.count_ones() as usize >= k {
            let low = rest & rest.wrapping_neg();
            rest ^= low;
            pick(rest, k - 1, chosen | low, f);
        }
    }
    pick(mask, k, 0, f);
}

/// Exact counts of a level (label-free; illegal = two or more goals filled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cc3pCounts {
    /// Placements of the pieces, the side to move left out.
    pub placements: u128,
    /// States: placements × 3 sides to move.
    pub states: u128,
    /// Placements with two or more goals filled.
    pub illegal_placements: u128,
    /// Illegal placements × 3 sides to move.
    pub illegal_states: u128,
}

/// The counts `kingmaker count` prints (level 3 too: no game is built).
pub fn count_fields(level: u8) -> Result<serde_json::Map<String, serde_json::Value>, Cc3pError> {
    let c = counts(level)?;
    let mut out = serde_json::Map::new();
    for (k, v) in [
        ("placements", c.placements.to_string()),
        ("states", c.states.to_string()),
        ("illegal_placements", c.illegal_placements.to_string()),
        ("illegal_states", c.illegal_states.to_string()),
    ] {
        out.insert(k.into(), v.into());
    }
    Ok(out)
}

/// Exact counts for any level 1..=3, computed combinatorially.
///
/// Placements are `N_0(H)` (see `rank.rs`). A filled goal holds all k of its owner's pieces, which
/// are then off the hexagon; with two goals filled the third player may stand anywhere in its lane
/// (L = H + 2k cells), so by inclusion–exclusion the placements with ≥ 2 goals filled number
/// `3 · C(L, k) − 2`.
pub fn counts(level: u8) -> Result<Cc3pCounts, Cc3pError> {
    if !(1..=3).contains(&level) {
        return Err(Cc3pError::NoSuchLevel(level));
    }
    let n = level as usize;
    let k = n * (n + 1) / 2;
    let hex = 3 * n * (n + 1) + 1;
    let placements = rank::stage_sizes(hex, k)[0][hex];
    let illegal_placements = 3 * crate::combinatorics::binomial(hex + 2 * k, k) - 2;
    Ok(Cc3pCounts {
        placements,
        states: placements * 3,
        illegal_placements,
        illegal_states: illegal_placements * 3,
    })
}

/// Breadth-first search from the start position that does not expand terminal states: the number
/// of new states at each depth 1..=depth (up to the last depth that has any).
pub fn bfs_new_per_depth(game: &Cc3p, depth: u32) -> Vec<u64> {
    kingmaker_kernel::bfs::new_per_depth(game, game.start_index(), depth)
}
