//! The dense index `((board * F + flag) * 2 + side)` (docs/go.md, "The index"): every point's
//! colour in base 3, the bookkeeping flag (F = n + 3 values: clear, pass, game over, a ko ban on
//! each point), the side to move (0 = Black; for a finished game, the player who would be next).
//! 1. So the side to move is the lowest bit, and the size is `3^n · (n + 3) · 2`; which indices are
//!    legal is [`super::legal`]'s.

use super::board::Board;

/// What the state remembers about the last move.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Flag {
    /// The last move was a stone move that set no ko ban (or no move has been made).
    Clear,
    /// The last move was a pass.
    Pass,
    /// Two passes in a row: the game is over.
    End,
    /// The last move set a ko ban on this point.
    Ko(u8),
}

/// A decoded state.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    /// The stones.
    pub board: Board,
    /// The player to move (0 = Black, 1 = White).
    pub side: u8,
    /// What the state remembers about the last move.
    pub flag: Flag,
}

/// Ranking and unranking for boards of `n` points.
#[derive(Clone, Debug)]
pub struct IndexSpace {
    n: usize,
    flags: u64,
    pow3: Vec<u64>,
    size: u64,
}

impl IndexSpace {
    /// The index space of a board of `n` points (`n <= 36`).
    pub fn new(n: usize) -> IndexSpace {
        let pow3: Vec<u64> = (0..=n as u32).map(|k| 3u64.pow(k)).collect();
        let flags = n as u64 + 3;
        IndexSpace {
            n,
            flags,
            size: pow3[n] * flags * 2,
            pow3,
        }
    }

    /// Number of indices, `3^n · (n + 3) · 2`.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Number of flag values, `n + 3`.
    pub fn flags(&self) -> u64 {
        self.flags
    }

    /// The index of a state.
    pub fn encode(&self, s: &State) -> u64 {
        let mut board = 0u64;
        let mut stones = s.board.occupied();
        while stones != 0 {
            let p = stones.trailing_zeros() as usize;
            let digit = if s.board.black >> p & 1 == 1 { 1 } else { 2 };
            board += digit * self.pow3[p];
            stones &= stones - 1;
        }
        let flag = match s.flag {
            Flag::Clear => 0,
            Flag::Pass => 1,
            Flag::End => 2,
            Flag::Ko(p) => 3 + p as u64,
        };
        (board * self.flags + flag) * 2 + s.side as u64
    }

    /// The state at an index below [`IndexSpace::size`].
    pub fn decode(&self, index: u64) -> State {
        debug_assert!(index < self.size);
        let side = (index & 1) as u8;
        let rest = index >> 1;
        let flag = match rest % self.flags {
            0 => Flag::Clear,
            1 => Flag::Pass,
            2 => Flag::End,
            f => Flag::Ko((f - 3) as u8),
        };
        let mut code = rest / self.flags;
        let mut board = Board::default();
        for p in 0..self.n {
            match code % 3 {
                1 => board.black |= 1 << p,
                2 => board.white |= 1 << p,
                _ => {}
            }
            code /= 3;
        }
        State { board, side, flag }
    }
}
