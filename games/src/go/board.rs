//! Stones, groups, liberties, captures and the legality of a move.
//!
//! A board is two bit masks over the points (`black`, `white`). Colours are player numbers:
//! 0 = Black, 1 = White.

use super::surface::Geometry;

/// The stones on the board.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Board {
    /// Black's stones, one bit per point.
    pub black: u64,
    /// White's stones, one bit per point.
    pub white: u64,
}

/// The result of a stone move: the new board and the point banned by the ko rule, if any.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Played {
    /// The board after the move.
    pub board: Board,
    /// The point banned by the ko rule, if any.
    pub ko: Option<u8>,
}

impl Board {
    /// The stones of `colour` (0 = Black, 1 = White).
    #[inline]
    pub fn stones(&self, colour: u8) -> u64 {
        if colour == 0 {
            self.black
        } else {
            self.white
        }
    }

    #[inline]
    fn stones_mut(&mut self, colour: u8) -> &mut u64 {
        if colour == 0 {
            &mut self.black
        } else {
            &mut self.white
        }
    }

    /// Every occupied point.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.black | self.white
    }

    /// The empty points of a board on `g`.
    #[inline]
    pub fn empty(&self, g: &Geometry) -> u64 {
        g.all & !self.occupied()
    }

    /// The colour of the stone on `p`, if any.
    pub fn at(&self, p: usize) -> Option<u8> {
        if self.black >> p & 1 == 1 {
            Some(0)
        } else if self.white >> p & 1 == 1 {
            Some(1)
        } else {
            None
        }
    }

    /// Puts a stone of `colour` on every point of `set`, or empties them (`None`).
    pub fn set(&mut self, set: u64, colour: Option<u8>) {
        self.black &= !set;
        self.white &= !set;
        if let Some(c) = colour {
            *self.stones_mut(c) |= set;
        }
    }

    /// True when every group (of either colour) has at least one liberty.
    pub fn all_groups_breathe(&self, g: &Geometry) -> bool {
        let empty = self.empty(g);
        for stones in [self.black, self.white] {
            let mut rest = stones;
            while rest != 0 {
                let group = g.component(stones, rest.trailing_zeros() as usize);
                if g.spread(group) & empty == 0 {
                    return false;
                }
                rest &= !group;
            }
        }
        true
    }

    /// `mover` puts a stone on the empty point `x`: opposing groups left without liberties are
    /// removed, then the move is illegal (None) if its own group has no liberty (no suicide). The
    /// ko ban of the result: when the new stone is a single stone that captured exactly one stone
    /// and has exactly one liberty, that liberty (the captured point) is banned for the next move.
    /// The caller checks that `x` is empty and not itself banned.
    pub fn play(&self, g: &Geometry, mover: u8, x: usize) -> Option<Played> {
        debug_assert!(self.occupied() >> x & 1 == 0);
        let mut b = *self;
        *b.stones_mut(mover) |= 1 << x;
        let opp = 1 - mover;
        let empty = b.empty(g);
        let theirs = b.stones(opp);
        let mut captured = 0u64;
        let mut touching = g.nbr[x] & theirs;
        while touching != 0 {
            let group = g.component(theirs, touching.trailing_zeros() as usize);
            if g.spread(group) & empty == 0 {
                captured |= group;
            }
            touching &= !group;
        }
        *b.stones_mut(opp) &= !captured;
        let empty = b.empty(g);
        let own = g.component(b.stones(mover), x);
        let liberties = g.spread(own) & empty;
        if liberties == 0 {
            return None;
        }
        let ko = (captured.count_ones() == 1 && own == 1 << x && liberties.count_ones() == 1)
            .then(|| captured.trailing_zeros() as u8);
        Some(Played { board: b, ko })
    }
}
