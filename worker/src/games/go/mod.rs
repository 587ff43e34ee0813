//! Go on five surfaces (docs/go.md, issue 15 "TopoGo"): plane, cylinder, torus, Klein bottle
//! and projective plane, on small R×C boards, with exact area scores.
//!
//! Module map:
//! - [`surface`]: the gluings, the neighbour tables, the steps across glued edges.
//! - [`board`]: stones, groups, liberties, captures, the legality of a move, the ko ban.
//! - [`index`]: the dense index (every point's colour in base 3, a flag, the side to move).
//! - [`legal`]: which indices are legal states.
//! - [`moves`]: moves and exact unmoves.
//! - [`score`]: area scoring with the winding rule.
//! - [`notation`]: the position and move notation of docs/go.md.
//!
//! **Scores as forcing layers.** The kernel solves win/loss/draw layers; a score is solved as one
//! layer per threshold `k`. The game `Go::new(surface, rows, cols, k)` is the layer "Black ends the
//! game with score ≥ k", score = Black's area − White's area: its terminal states (two passes in a
//! row) report winner 0 (Black) when the final score is ≥ k and winner 1 (White) otherwise. Solve
//! each with the layer `solo` (coalition Black, objective Black: `Layer::new("solo", 1, 1)`): W at
//! a state means Black can force a final score ≥ k, L that White can force a score < k, D that
//! neither can (play may go on forever: there is no superko). Scores lie in `[−n, n]` for a board
//! of `n` points, so the thresholds `−n + 1 ..= n` ([`Go::thresholds`]) are the meaningful ones.
//! Every threshold has the same index space and the same moves; only terminal winners differ.
//!
//! Players: 0 = Black (moves first), 1 = White.

pub mod board;
pub mod index;
pub mod legal;
pub mod moves;
pub mod notation;
pub mod score;
pub mod surface;

use crate::game::{Game, Node};
use std::ops::RangeInclusive;

pub use board::Board;
pub use index::{Flag, IndexSpace, State};
pub use surface::{Geometry, Surface};

/// Errors of the Go module: bad surfaces, sizes, thresholds and positions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoError {
    #[error("bad surface: {0}")]
    BadSurface(String),
    #[error("bad board size: {0}")]
    BadBoard(String),
    #[error("bad threshold: {0}")]
    BadThreshold(String),
    #[error("bad position {text:?}: {why}")]
    BadPosition { text: String, why: String },
}

/// One forcing layer of Go on one surface and board size: "Black ends with score ≥ threshold".
#[derive(Clone, Debug)]
pub struct Go {
    geom: Geometry,
    space: IndexSpace,
    threshold: i32,
}

impl Go {
    /// The game on `surface`, `rows × cols` (1 ≤ rows ≤ cols, at most 36 points), for the layer
    /// "Black's final score ≥ `threshold`", which must lie in [`Go::thresholds`].
    pub fn new(surface: Surface, rows: usize, cols: usize, threshold: i32) -> Result<Go, GoError> {
        let geom = Geometry::new(surface, rows, cols)?;
        let range = Self::thresholds(rows * cols);
        if !range.contains(&threshold) {
            return Err(GoError::BadThreshold(format!(
                "{threshold} on a board of {} points: use {}..={} (score = Black's area − \
                 White's, in [−n, n])",
                rows * cols,
                range.start(),
                range.end()
            )));
        }
        Ok(Go {
            space: IndexSpace::new(geom.n),
            geom,
            threshold,
        })
    }

    /// The meaningful thresholds for a board of `n` points: `−n + 1 ..= n`. (Every final score is
    /// ≥ −n, so lower thresholds are always won by Black; none is > n.)
    pub fn thresholds(n: usize) -> RangeInclusive<i32> {
        -(n as i32) + 1..=n as i32
    }

    /// The same game for another threshold.
    pub fn with_threshold(&self, threshold: i32) -> Result<Go, GoError> {
        Go::new(self.geom.surface, self.geom.rows, self.geom.cols, threshold)
    }

    pub fn threshold(&self) -> i32 {
        self.threshold
    }

    pub fn surface(&self) -> Surface {
        self.geom.surface
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    pub fn space(&self) -> &IndexSpace {
        &self.space
    }

    /// The starting state: the empty board, Black to move.
    pub fn start(&self) -> u64 {
        self.space.encode(&State {
            board: Board::default(),
            side: 0,
            flag: Flag::Clear,
        })
    }

    /// Decodes an index (legal or not).
    pub fn state(&self, index: u64) -> State {
        self.space.decode(index)
    }

    /// Encodes a state.
    pub fn index(&self, state: &State) -> u64 {
        self.space.encode(state)
    }

    /// True when the index is a legal state ([`legal`]).
    pub fn is_legal(&self, index: u64) -> bool {
        legal::is_legal(&self.geom, &self.space.decode(index))
    }

    /// Black's score (area minus White's area) of the board of `index`, were the game to end now.
    pub fn score(&self, index: u64) -> i32 {
        score::score(&self.geom, &self.space.decode(index).board)
    }

    /// The decoded live legal state of `index`, or None.
    fn live(&self, index: u64) -> Option<State> {
        let s = self.space.decode(index);
        (s.flag != Flag::End && legal::is_legal(&self.geom, &s)).then_some(s)
    }
}

impl Game for Go {
    fn name(&self) -> String {
        format!(
            "go-{}-{}x{}-k{:+}",
            self.geom.surface.name(),
            self.geom.rows,
            self.geom.cols,
            self.threshold
        )
    }

    fn players(&self) -> u8 {
        2
    }

    fn size(&self) -> u64 {
        self.space.size()
    }

    fn node(&self, index: u64) -> Node {
        let s = self.space.decode(index);
        if !legal::is_legal(&self.geom, &s) {
            Node::Illegal
        } else if s.flag == Flag::End {
            let black_wins = score::score(&self.geom, &s.board) >= self.threshold;
            Node::Terminal {
                winner: if black_wins { 0 } else { 1 },
            }
        } else {
            Node::Live { mover: s.side }
        }
    }

    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        if let Some(s) = self.live(index) {
            let mut kids = Vec::with_capacity(self.geom.n + 1);
            moves::successors(&self.geom, &s, &mut kids);
            out.extend(kids.iter().map(|c| self.space.encode(c)));
        }
    }

    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        let s = self.space.decode(index);
        if legal::is_legal(&self.geom, &s) {
            let mut parents = Vec::new();
            moves::predecessors(&self.geom, &s, &mut parents);
            out.extend(parents.iter().map(|p| self.space.encode(p)));
        }
    }

    fn mover(&self, index: u64) -> u8 {
        (index & 1) as u8
    }

    fn successor_count(&self, index: u64) -> usize {
        self.live(index)
            .map_or(0, |s| moves::successor_count(&self.geom, &s))
    }
}

#[cfg(test)]
mod tests;
