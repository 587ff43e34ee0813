//! The race for second place: A has filled its goal, and B and C play on, in turn, until one of
//! them fills its own (docs/rules.md §1.5). A's pieces stay on A's goal, which neither lane enters.
//! 1. Index: `(rank_B · C(L, k) + rank_C) · 2 + m`: colex ranks in each player's lane of L cells,
//!    m = 0 with B to move, 1 with C. Players keep cc3p's numbers; the outcome is who came second.
//!    Overlapping placements, or both goals filled, are illegal.

use crate::cc3p::Cc3p;
use crate::combinatorics::Pascal;
use kingmaker_kernel::{Game, Node};
use std::sync::Arc;

/// The race for second place of one cc3p level, A having won.
pub struct Second {
    cc3p: Arc<Cc3p>,
    /// B's and C's lanes: their cells in order.
    lane_cells: [Vec<u8>; 2],
    /// A cell's position in B's and C's lanes (255 outside).
    position: [[u8; 64]; 2],
    pascal: Pascal<8, 64>,
    /// C(L, k): the placements of one player's pieces in its lane.
    per_player: u64,
    /// A's pieces, on A's goal.
    finished: u64,
}

impl Second {
    /// The race of `cc3p`'s level.
    pub fn new(cc3p: Arc<Cc3p>) -> Second {
        let mut lane_cells = [Vec::new(), Vec::new()];
        let mut position = [[u8::MAX; 64]; 2];
        for (s, p) in [1usize, 2].into_iter().enumerate() {
            let lane = cc3p.lane_mask(p);
            for c in (0..64).filter(|&c| lane >> c & 1 == 1) {
                position[s][c] = lane_cells[s].len() as u8;
                lane_cells[s].push(c as u8);
            }
        }
        let pascal = Pascal::new();
        let per_player = pascal.c(lane_cells[0].len(), cc3p.pieces());
        let finished = cc3p.goal_mask(0);
        Second {
            cc3p,
            lane_cells,
            position,
            pascal,
            per_player,
            finished,
        }
    }

    /// B's and C's cell masks, and the mover (1 or 2), of `index`.
    pub fn decode(&self, index: u64) -> ([u64; 2], u8) {
        let k = self.cc3p.pieces();
        let placement = index / 2;
        let ranks = [placement / self.per_player, placement % self.per_player];
        let sets = std::array::from_fn(|s| {
            let mut lane_set = self.pascal.colex_unrank(ranks[s], k);
            let mut cells = 0u64;
            while lane_set != 0 {
                cells |= 1 << self.lane_cells[s][lane_set.trailing_zeros() as usize];
                lane_set &= lane_set - 1;
            }
            cells
        });
        (sets, 1 + (index % 2) as u8)
    }

    /// The index of B's and C's cell masks `sets` with `mover` (1 or 2) to move.
    pub fn index_of(&self, sets: [u64; 2], mover: u8) -> u64 {
        let rank = |s: usize| {
            let mut lane_set = 0u128;
            let mut cells = sets[s];
            while cells != 0 {
                lane_set |= 1 << self.position[s][cells.trailing_zeros() as usize];
                cells &= cells - 1;
            }
            self.pascal.colex_rank(lane_set)
        };
        (rank(0) * self.per_player + rank(1)) * 2 + u64::from(mover - 1)
    }

    fn classify(&self, sets: [u64; 2], mover: u8) -> Node {
        if sets[0] & sets[1] != 0 {
            return Node::Illegal;
        }
        let filled = |s: usize| sets[s] & self.cc3p.goal_mask(s + 1) == self.cc3p.goal_mask(s + 1);
        match (filled(0), filled(1)) {
            (true, true) => Node::Illegal,
            (true, false) => Node::Terminal { outcome: 1 },
            (false, true) => Node::Terminal { outcome: 2 },
            (false, false) => Node::Live { mover },
        }
    }

    /// Every placement reached by one move of `player`'s pieces in `sets` (each destination
    /// once); also the placements it may have come from, steps and jump chains being
    /// reversible.
    fn moved(&self, sets: [u64; 2], player: u8, out: &mut Vec<[u64; 2]>) {
        let s = usize::from(player - 1);
        let occupied = sets[0] | sets[1] | self.finished;
        let lane = self.cc3p.lane_mask(usize::from(player));
        let mut pieces = sets[s];
        while pieces != 0 {
            let from = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let mut to = self.cc3p.destinations(from, occupied & !(1 << from), lane);
            while to != 0 {
                let mut next = sets;
                next[s] = sets[s] & !(1 << from) | 1 << to.trailing_zeros();
                out.push(next);
                to &= to - 1;
            }
        }
    }
}

/// The other racer.
fn other(player: u8) -> u8 {
    3 - player
}

impl Game for Second {
    fn name(&self) -> String {
        format!("cc3p-{}-second", self.cc3p.level())
    }

    fn players(&self) -> u8 {
        3
    }

    fn size(&self) -> u64 {
        self.per_player * self.per_player * 2
    }

    fn node(&self, index: u64) -> Node {
        let (sets, mover) = self.decode(index);
        self.classify(sets, mover)
    }

    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        let (sets, mover) = self.decode(index);
        if !matches!(self.classify(sets, mover), Node::Live { .. }) {
            return;
        }
        let mut next = Vec::new();
        self.moved(sets, mover, &mut next);
        if next.is_empty() {
            out.push(self.index_of(sets, other(mover))); // no move: a pass
        }
        out.extend(next.into_iter().map(|n| self.index_of(n, other(mover))));
    }

    /// The live states one move (or a pass) of the previous player away.
    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        let (sets, mover) = self.decode(index);
        if matches!(self.classify(sets, mover), Node::Illegal) {
            return;
        }
        let before = other(mover);
        let mut origins = Vec::new();
        self.moved(sets, before, &mut origins);
        for o in origins {
            if matches!(self.classify(o, before), Node::Live { .. }) {
                out.push(self.index_of(o, before));
            }
        }
        if matches!(self.classify(sets, before), Node::Live { .. }) {
            let mut moves = Vec::new();
            self.moved(sets, before, &mut moves);
            if moves.is_empty() {
                out.push(self.index_of(sets, before));
            }
        }
    }

    fn mover(&self, index: u64) -> u8 {
        1 + (index % 2) as u8
    }
}
