//! Two-player Chinese Checkers on Sturtevant's m×m diamond boards (`cc2p`), docs/rules.md §3.
//! 1. Index: `(rank0 · C(N−k, k) + rank1) · 2 + mover`, the colex ranks of player 0's cells and of
//!    player 1's among the cells player 0 leaves free (`rank.rs`).
//! 2. The board, the classification, the moves and the module map: docs/cc2p-notation.md,
//!    "Inside the code", `games/src/cc2p/mod.rs`.

use kingmaker_kernel::{Game, Node};

mod family;
pub use family::{Cc2pParams, Cc2pReducedParams};
mod board;
mod count;
mod jumps;
mod mirror;
mod moves;
mod notation;
mod rank;
pub mod reduced;
mod rules;
#[cfg(test)]
mod tests;
mod zones;

use crate::combinatorics::Pascal;
use board::Cell;
pub use count::count_fields;
use jumps::Rhombus;
use rank::BUCKETS;

/// Smallest supported board side.
pub const MIN_BOARD: u8 = 4;
/// Largest supported board side: N = 64 cells, one machine word per cell mask.
pub const MAX_BOARD: u8 = 8;
/// Largest supported number of pieces per player (the start areas are defined for 1..=6).
pub const MAX_PIECES: u8 = 6;

const MAX_CELLS: usize = (MAX_BOARD as usize) * (MAX_BOARD as usize);
const K_MAX: usize = MAX_PIECES as usize;

/// A set of cells, bit c for cell c. One machine word: masks of 128 bits (which 9×9 boards
/// would need) cost the move generator and the ranking a third of their speed on every board.
pub(crate) type Cells = u64;

/// Errors from constructing a game or reading a position.
#[derive(Debug, thiserror::Error)]
pub enum Cc2pError {
    /// The board side is not one of the supported sizes.
    #[error("board size {0} is out of range: cc2p supports m×m boards with m = {MIN_BOARD}..={MAX_BOARD}")]
    BoardOutOfRange(u8),
    /// The number of pieces per player is not one of the supported values.
    #[error("{0} pieces per player is out of range: cc2p supports 1..=6 pieces per player")]
    PiecesOutOfRange(u8),
    /// A position text could not be read.
    #[error(
        "cannot read cc2p position {text:?}: {reason} \
         (expected `0:<cells>;1:<cells>;<mover>`, e.g. this board's start `{example}`)"
    )]
    BadPosition {
        /// The text as given.
        text: String,
        /// What was wrong with it.
        reason: String,
        /// A position of the board in hand (its start), for the message.
        example: String,
    },
}

/// How the 6-piece tip rule (docs/rules.md §3, illegal states) is applied.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum TipRule {
    /// The rule as stated: a blocked empty tip is illegal whoever is to move.
    #[default]
    Exact,
    /// The published solver's shortcut: the tip rule is only tested when the player to move has a
    /// piece in its own start or goal area (reproduces the published 5×5/6 and 6×6/6 illegal counts).
    SolverShortcut,
}

/// An unranked state with what ranking its neighbours needs: both players' cells ascending
/// (`a`, `b`), player 1's compressed positions (`q`: ranks among the cells player 0 leaves free)
/// as a list and a mask, and player 0's rank.
#[derive(Copy, Clone, Debug)]
struct Expanded {
    pos: Pos,
    a: [u8; K_MAX],
    b: [u8; K_MAX],
    q: [u8; K_MAX],
    qmask: Cells,
    r0: u64,
}

/// An unranked state: the two players' cell masks and the side to move.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Pos {
    o: [Cells; 2],
    mover: usize,
}

/// Two-player Chinese Checkers on an m×m board with k pieces per player.
#[derive(Clone, Debug)]
pub struct Cc2p {
    m: u8,
    k: u8,
    n: u8,
    tip_rule: TipRule,
    cells: Vec<Cell>,
    /// (row, doubled x) of every cell.
    coords: Vec<(u8, i8)>,
    /// The rhombus numbering in which the moves are found.
    rh: Rhombus,
    /// C(a, i) for i < 8, a < 128.
    choose: Pascal<8, 128>,
    /// `unrank_start[i][bucket(r)]`: the largest a with C(a, i) ≤ the smallest r of the bucket.
    unrank_start: [[u8; BUCKETS]; 8],
    start: [Cells; 2],
    goal: [Cells; 2],
    /// `tip[y]`: the tip cell of y's goal; `block[y]`: the cells the opponent holds to block it.
    tip: [Cells; 2],
    block: [Cells; 2],
    /// C(N, k) and C(N − k, k).
    sets0: u64,
    sets1: u64,
    size: u64,
}

#[inline]
fn bit(c: usize) -> Cells {
    1 << c
}

/// The cells of `m` above cell `c`: two shifts, since one of 64 bits (c = 63) is not defined.
#[inline]
fn above(m: Cells, c: usize) -> Cells {
    (m >> c) >> 1
}

/// Every cell of a board of `n` cells (1 ≤ n ≤ 64).
#[inline]
fn all_cells(n: usize) -> Cells {
    Cells::MAX >> (Cells::BITS as usize - n)
}

/// Iterate the set bits of a mask, lowest first.
#[inline]
fn bits(mut m: Cells) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let c = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(c)
        }
    })
}

impl Cc2p {
    /// A game on the `board`×`board` diamond with `pieces` pieces per player.
    pub fn new(board: u8, pieces: u8, tip_rule: TipRule) -> Result<Cc2p, Cc2pError> {
        if !(MIN_BOARD..=MAX_BOARD).contains(&board) {
            return Err(Cc2pError::BoardOutOfRange(board));
        }
        if !(1..=MAX_PIECES).contains(&pieces) {
            return Err(Cc2pError::PiecesOutOfRange(pieces));
        }
        let m = board as usize;
        let n = m * m;
        let (coords, cells) = board::layout(m);
        let choose = Pascal::new();
        let unrank_start = rank::unrank_starts(&choose);
        let k = pieces as usize;
        let start0: &[usize] = match pieces {
            1 => &[0],
            2 => &[0, 1],
            3 => &[0, 1, 2],
            4 => &[0, 1, 2, 4],
            5 => &[1, 2, 3, 4, 5],
            _ => &[0, 1, 2, 3, 4, 5],
        };
        let s0: Cells = start0.iter().map(|&c| bit(c)).sum();
        let s1: Cells = start0.iter().map(|&c| bit(n - 1 - c)).sum();
        // Player 0's goal is player 1's start: tip N-1, blocked by player 1 on N-2, N-3, N-4, N-6.
        let block0: Cells = [2, 3, 4, 6].iter().map(|&d| bit(n - d)).sum();
        let block1: Cells = [1, 2, 3, 5].iter().map(|&c| bit(c)).sum();
        let sets0 = choose.c(n, k);
        let sets1 = choose.c(n - k, k);
        let rh = Rhombus::new(m, &coords, &cells);
        Ok(Cc2p {
            m: board,
            k: pieces,
            n: n as u8,
            tip_rule,
            cells,
            coords,
            rh,
            choose,
            unrank_start,
            start: [s0, s1],
            goal: [s1, s0],
            tip: [bit(n - 1), bit(0)],
            block: [block0, block1],
            sets0,
            sets1,
            size: 2 * sets0 * sets1,
        })
    }

    /// The board side m.
    pub fn board(&self) -> u8 {
        self.m
    }

    /// Pieces per player k.
    pub fn pieces(&self) -> u8 {
        self.k
    }

    /// Number of cells N = m².
    pub fn cells(&self) -> u8 {
        self.n
    }

    /// The tip-rule convention this game was built with.
    pub fn tip_rule(&self) -> TipRule {
        self.tip_rule
    }

    /// Placements: player 0's k cells and player 1's k cells, disjoint: C(N, k) · C(N − k, k).
    pub fn placements(&self) -> u64 {
        self.sets0 * self.sets1
    }

    /// The start position: both players on their start areas, player 0 to move.
    pub fn start_index(&self) -> u64 {
        self.rank(&Pos {
            o: self.start,
            mover: 0,
        })
    }
}

impl Game for Cc2p {
    /// `cc2p-7x7-3`; the solver-shortcut tip rule adds `-shortcut` (its tables differ with 6
    /// pieces, so the two must not share a default run directory).
    fn name(&self) -> String {
        let variant = match self.tip_rule {
            TipRule::Exact => "",
            TipRule::SolverShortcut => "-shortcut",
        };
        format!("cc2p-{m}x{m}-{k}{variant}", m = self.m, k = self.k)
    }

    fn players(&self) -> u8 {
        2
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn node(&self, index: u64) -> Node {
        self.classify(&self.unrank(index))
    }

    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        let e = self.expand(index);
        let child_mover = 1 - (index & 1);
        self.each_successor(&e, |placement| out.push((placement << 1) | child_mover));
    }

    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        let e = self.expand(index);
        let parent_mover = 1 - (index & 1);
        self.each_predecessor(&e, |placement| out.push((placement << 1) | parent_mover));
    }

    fn mover(&self, index: u64) -> u8 {
        (index & 1) as u8
    }

    fn mover_period(&self) -> Option<u8> {
        Some(2)
    }

    fn successor_count(&self, index: u64) -> usize {
        self.successor_count_of(&self.expand(index))
    }
}
