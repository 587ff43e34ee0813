//! The rules on placements (docs/rules.md §3): the win condition, the 6-piece tip rule, illegal
//! states and the classification of a state.

use super::{bit, bits, Cc2p, Cells, Pos, TipRule};
use kingmaker_kernel::Node;

impl Cc2p {
    /// The number of illegal states (both sides to move), without enumerating the index space:
    /// legality only looks at the 2k start-area cells (the goals, and for k = 6 the tips and the
    /// cells that block them), so each way to fill those cells is tested once and multiplied by
    /// the ways to place the remaining pieces on the other cells. 3^(2k) ≤ 531,441 tests.
    pub fn illegal_count(&self) -> u64 {
        let k = self.k as usize;
        let special: Vec<usize> = bits(self.start[0] | self.start[1]).collect();
        let rest = self.n as usize - special.len();
        let mut total = 0u64;
        for code in 0..3usize.pow(special.len() as u32) {
            let mut o: [Cells; 2] = [0; 2];
            let mut t = code;
            for &c in &special {
                match t % 3 {
                    1 => o[0] |= bit(c),
                    2 => o[1] |= bit(c),
                    _ => {}
                }
                t /= 3;
            }
            let (a0, a1) = (o[0].count_ones() as usize, o[1].count_ones() as usize);
            if a0 > k || a1 > k || rest < k - a0 {
                continue;
            }
            let ways = self.choose.c(rest, k - a0) * self.choose.c(rest - (k - a0), k - a1);
            for mover in 0..2 {
                if self.illegal(&o, mover) {
                    total += ways;
                }
            }
        }
        total
    }

    /// Player y's win condition on a placement (ignoring whose turn it is).
    #[inline]
    pub(super) fn wins(&self, o: &[Cells; 2], y: usize) -> bool {
        let g = self.goal[y];
        (o[0] | o[1]) & g == g && o[y] & g != 0
    }

    /// The 6-piece tip rule: some goal's tip is empty and the opponent holds the four cells around it.
    #[inline]
    pub(super) fn tip_blocked(&self, o: &[Cells; 2]) -> bool {
        if self.k != 6 {
            return false;
        }
        let all = o[0] | o[1];
        (all & self.tip[0] == 0 && o[1] & self.block[0] == self.block[0])
            || (all & self.tip[1] == 0 && o[0] & self.block[1] == self.block[1])
    }

    #[inline]
    pub(super) fn illegal(&self, o: &[Cells; 2], mover: usize) -> bool {
        if self.wins(o, mover) {
            return true;
        }
        if !self.tip_blocked(o) {
            return false;
        }
        match self.tip_rule {
            TipRule::Exact => true,
            TipRule::SolverShortcut => o[mover] & (self.start[mover] | self.goal[mover]) != 0,
        }
    }

    /// Whether the mover of a legal, non-terminal position has a move into a legal state (a pass
    /// counts as a move).
    fn has_legal_move(&self, p: &Pos) -> bool {
        let y = p.mover;
        let all = p.o[0] | p.o[1];
        // Steps first: most states have a legal one, found without the jump masks.
        for c in bits(p.o[y]) {
            for t in bits(self.cells[c].nb & !all) {
                let mut o = p.o;
                o[y] ^= bit(c) | bit(t);
                if !self.illegal(&o, 1 - y) {
                    return true;
                }
            }
        }
        let mut occupancy = None;
        let mut any = false;
        for c in bits(p.o[y]) {
            let d = self.dests(c, all, &mut occupancy, || self.rh.occupancy(bits(all)));
            any |= d != 0;
            // The steps among them were tried above.
            for t in bits(d & !self.cells[c].nb) {
                let mut o = p.o;
                o[y] ^= bit(c) | bit(t);
                if !self.illegal(&o, 1 - y) {
                    return true;
                }
            }
        }
        !any && !self.illegal(&p.o, 1 - y)
    }

    pub(super) fn classify(&self, p: &Pos) -> Node {
        let y = p.mover;
        if self.illegal(&p.o, y) {
            Node::Illegal
        } else if self.wins(&p.o, 1 - y) || !self.has_legal_move(p) {
            Node::Terminal {
                outcome: 1 - y as u8,
            }
        } else {
            Node::Live { mover: y as u8 }
        }
    }
}
