//! Go on five surfaces (docs/go.md): plane, cylinder, torus, Klein bottle and projective plane, on
//! small R×C boards, with exact area scores.
//! 1. The kernel solves win/loss/draw layers, so a score is one layer per threshold `k`, "Black
//!    ends with score ≥ k" ([`Go::threshold_layer`]); terminals' outcomes are `score + n`.
//! 2. Players: 0 = Black (moves first), 1 = White. The module map: docs/go.md, "Inside the code".

mod family;
pub use family::{BoardSize, GoParams};
pub mod board;
pub mod bounds;
pub mod index;
pub mod legal;
pub mod moves;
pub mod notation;
pub mod sample;
pub mod score;
pub mod search;
pub mod surface;
pub mod view;

use kingmaker_kernel::Layer;
use kingmaker_kernel::{Game, Node};
use std::ops::RangeInclusive;

pub use board::Board;
pub use index::{Flag, IndexSpace, State};
pub use surface::{Geometry, Surface};

/// Errors of the Go module: bad surfaces, sizes, thresholds and positions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoError {
    /// An unknown surface name.
    #[error("bad surface: {0}")]
    BadSurface(String),
    /// A board size that is not supported.
    #[error("bad board size: {0}")]
    BadBoard(String),
    /// A threshold outside the board's range of scores.
    #[error("bad threshold: {0}")]
    BadThreshold(String),
    /// A position text that cannot be read.
    #[error("bad position {text:?}: {why}")]
    BadPosition {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        why: String,
    },
}

/// Go on one surface and board size.
#[derive(Clone, Debug)]
pub struct Go {
    geom: Geometry,
    space: IndexSpace,
}

/// Outcomes are below 64 (a layer's objective is a 64-bit set): `score + n ≤ 2n < 64`.
pub const MAX_POINTS: usize = 31;

impl Go {
    /// The game on `surface`, `rows × cols` (1 ≤ rows ≤ cols, at most [`MAX_POINTS`] points).
    pub fn new(surface: Surface, rows: usize, cols: usize) -> Result<Go, GoError> {
        if rows * cols > MAX_POINTS {
            return Err(GoError::BadBoard(format!(
                "{rows}x{cols} has {} points; at most {MAX_POINTS} are supported",
                rows * cols
            )));
        }
        let geom = Geometry::new(surface, rows, cols)?;
        Ok(Go {
            space: IndexSpace::new(geom.n),
            geom,
        })
    }

    /// The meaningful thresholds for a board of `n` points: `−n + 1 ..= n`. (Every final score is
    /// ≥ −n, so lower thresholds are always won by Black; none is > n.)
    pub fn thresholds(n: usize) -> RangeInclusive<i32> {
        -(n as i32) + 1..=n as i32
    }

    /// The outcome a terminal state with final score `score` reports: `score + n`.
    pub fn outcome(&self, score: i32) -> u8 {
        (score + self.geom.n as i32) as u8
    }

    /// The final score of outcome `outcome`.
    pub fn outcome_score(&self, outcome: u8) -> i32 {
        outcome as i32 - self.geom.n as i32
    }

    /// The name of the layer of threshold `k`: `score_ge_3`, `score_ge_m2` (file names).
    pub fn layer_name(k: i32) -> String {
        if k < 0 {
            format!("score_ge_m{}", -k)
        } else {
            format!("score_ge_{k}")
        }
    }

    /// The threshold of a layer named by [`Go::layer_name`].
    pub fn layer_threshold(name: &str) -> Option<i32> {
        let k = name.strip_prefix("score_ge_")?;
        let k = match k.strip_prefix('m') {
            Some(m) => -m.parse::<i32>().ok()?,
            None => k.parse().ok()?,
        };
        (Self::layer_name(k) == name).then_some(k)
    }

    /// The forcing layer "Black ends the game with score ≥ `k`", `k` in [`Go::thresholds`].
    pub fn threshold_layer(&self, k: i32) -> Result<Layer, GoError> {
        let range = Self::thresholds(self.geom.n);
        if !range.contains(&k) {
            return Err(GoError::BadThreshold(format!(
                "{k} on a board of {} points: use {}..={} (score = Black's area − White's, in \
                 [−n, n])",
                self.geom.n,
                range.start(),
                range.end()
            )));
        }
        // Outcomes of scores k..=n: bits outcome(k)..=2n.
        let won = (u64::MAX >> (63 - 2 * self.geom.n)) & (u64::MAX << self.outcome(k));
        Ok(Layer::new(&Self::layer_name(k), 0b01, won))
    }

    /// The surface the board lies on.
    pub fn surface(&self) -> Surface {
        self.geom.surface
    }

    /// The board's neighbour tables and steps.
    pub fn geometry(&self) -> &Geometry {
        &self.geom
    }

    /// The dense index of the states.
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
            "go-{}-{}x{}",
            self.geom.surface.name(),
            self.geom.rows,
            self.geom.cols
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
            Node::Terminal {
                outcome: self.outcome(score::score(&self.geom, &s.board)),
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

    fn mover_period(&self) -> Option<u8> {
        Some(2)
    }

    fn successor_count(&self, index: u64) -> usize {
        self.live(index)
            .map_or(0, |s| moves::successor_count(&self.geom, &s))
    }
}

#[cfg(test)]
mod tests;
