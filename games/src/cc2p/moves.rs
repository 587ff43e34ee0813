//! Successors and predecessors (the kernel's hot path): a piece's destinations are its empty
//! neighbours plus the jump-connected landings with the piece lifted (`jumps.rs`), which is
//! symmetric, so the same fill from a piece's current cell gives the cells it may have come from.
//! Children are ranked from the parent's unranking (`Expanded`), without re-ranking both players.

use super::jumps::Occupancy;
use super::{bit, bits, Cc2p, Cells, Expanded, K_MAX, MAX_CELLS};

impl Cc2p {
    /// Every move of player `y`'s pieces in the placement `e` (piece c → t), whatever the side
    /// to move: calls `emit` with the placement rank (index without the mover bit) of each
    /// resulting placement `o` that `keep(o)` accepts. Returns whether y had any move at all.
    #[inline(always)]
    pub(super) fn each_move(
        &self,
        e: &Expanded,
        y: usize,
        keep: impl Fn(&[Cells; 2]) -> bool,
        mut emit: impl FnMut(u64),
    ) -> bool {
        let k = self.k as usize;
        let all = e.pos.o[0] | e.pos.o[1];
        let mut occupancy = None;
        let mut any = false;
        for j in 0..k {
            let c = if y == 0 { e.a[j] } else { e.b[j] } as usize;
            let d = self.dests(c, all, &mut occupancy, || self.occupancy(e));
            any |= d != 0;
            if d == 0 {
                continue;
            }
            let lifted = if y == 1 { self.lifted(e, j) } else { Lifted::default() };
            for t in bits(d) {
                let mut o = e.pos.o;
                o[y] ^= bit(c) | bit(t);
                if !keep(&o) {
                    continue;
                }
                let placement = if y == 0 {
                    // Player 1's cells keep their order; each one's compressed position moves up
                    // by one if c was below it and down by one if t is.
                    let mut r1 = 0;
                    for i in 0..k {
                        let b = e.b[i] as usize;
                        let q = e.q[i] as usize + (c < b) as usize - (t < b) as usize;
                        r1 += self.choose.c(q, i + 1);
                    }
                    self.colex(o[0]) * self.sets1 + r1
                } else {
                    let below = (e.pos.o[0] & (bit(t) - 1)).count_ones() as usize;
                    e.r0 * self.sets1 + lifted.rank_with(self, t - below)
                };
                emit(placement);
            }
        }
        any
    }

    /// The number of successors of an expanded state ([`Cc2p::each_successor`] counted without
    /// ranking a child): a move can only lead into an illegal state by completing the goal of
    /// the player to move next (or, with 6 pieces, through the tip rule), so only destinations in
    /// that goal are tested one by one.
    #[inline]
    pub(super) fn successor_count_of(&self, e: &Expanded) -> usize {
        let (o, y) = (&e.pos.o, e.pos.mover);
        if self.illegal(o, y) || self.wins(o, 1 - y) {
            return 0;
        }
        let risky = if self.k == 6 { !0 } else { self.goal[1 - y] };
        let all = o[0] | o[1];
        let mut occupancy = None;
        let (mut count, mut any) = (0, false);
        for c in bits(o[y]) {
            let d = self.dests(c, all, &mut occupancy, || self.occupancy(e));
            any |= d != 0;
            count += (d & !risky).count_ones() as usize;
            for t in bits(d & risky) {
                let mut after = *o;
                after[y] ^= bit(c) | bit(t);
                count += !self.illegal(&after, 1 - y) as usize;
            }
        }
        if !any && !self.illegal(o, 1 - y) {
            count = 1;
        }
        count
    }

    /// Player 1's compressed positions with piece `j` lifted, ready to rank with it put back
    /// anywhere ([`Lifted::rank_with`]).
    #[inline(always)]
    fn lifted(&self, e: &Expanded, j: usize) -> Lifted {
        let k = self.k as usize;
        let mut l = Lifted {
            rest: e.qmask ^ bit(e.q[j] as usize),
            sums: [0; K_MAX],
        };
        // The others, ascending: r_i is element i below the lifted piece, i + 1 above it.
        // sums[s] = Σ_{i<s} C(r_i, i + 1) + Σ_{i≥s} C(r_i, i + 2).
        let others = (0..k).filter(|&i| i != j).map(|i| e.q[i] as usize);
        let mut above: u64 = others.clone().enumerate().map(|(i, r)| self.choose.c(r, i + 2)).sum();
        let mut below = 0;
        for (s, r) in others.enumerate() {
            l.sums[s] = below + above;
            below += self.choose.c(r, s + 1);
            above -= self.choose.c(r, s + 2);
        }
        l.sums[k - 1] = below;
        l
    }

    /// Every cell the piece on `c` can move to, `all` being the occupied cells (its own included):
    /// its empty neighbours, and when it has a neighbour to jump over, the landings of its jump
    /// chains, from the jump masks in `occupancy` (made by `make` the first time they are needed).
    /// Symmetric: `t ∈ dests(c)` iff `c ∈ dests(t)` with the piece moved.
    #[inline(always)]
    pub(super) fn dests(
        &self,
        c: usize,
        all: Cells,
        occupancy: &mut Option<Occupancy>,
        make: impl FnOnce() -> Occupancy,
    ) -> Cells {
        let nb = self.cells[c].nb;
        let steps = nb & !all;
        if nb & all == 0 {
            return steps;
        }
        let o = occupancy.get_or_insert_with(make);
        steps | self.rh.cells(self.rh.landings(o, c))
    }

    /// The jump masks of an expanded state, for [`Cc2p::dests`].
    #[inline(always)]
    fn occupancy(&self, e: &Expanded) -> Occupancy {
        let k = self.k as usize;
        let cells = e.a[..k].iter().chain(&e.b[..k]);
        self.rh.occupancy(cells.map(|&c| c as usize))
    }

    /// Every cell a piece at `from` can move to (steps and jump chains), `all` being the occupied
    /// cells with that piece lifted, with the breadth-first jump tree (`parent[t]` is the landing
    /// before `t`): a search cell by cell, for the notation (the moves use `jumps.rs`).
    pub(super) fn dests_with_paths(&self, from: usize, all: Cells) -> (Cells, [u8; MAX_CELLS]) {
        let steps = self.cells[from].nb & !all;
        let mut parent = [u8::MAX; MAX_CELLS];
        let mut seen = bit(from);
        let mut queue = vec![from];
        let mut head = 0;
        while head < queue.len() {
            let at = queue[head];
            head += 1;
            let cell = &self.cells[at];
            for &(over, land) in &cell.jumps[..cell.nj as usize] {
                let lb = bit(land as usize);
                if all & bit(over as usize) != 0 && (all | seen) & lb == 0 {
                    seen |= lb;
                    parent[land as usize] = at as u8;
                    queue.push(land as usize);
                }
            }
        }
        (steps | (seen & !bit(from)), parent)
    }

    /// The successors of an expanded state, as placements (the side to move after any move is
    /// the other player): every legal move, or the pass of a player with no move at all.
    #[inline(always)]
    pub(super) fn each_successor(&self, e: &Expanded, mut emit: impl FnMut(u64)) {
        let (o, y) = (&e.pos.o, e.pos.mover);
        if self.illegal(o, y) || self.wins(o, 1 - y) {
            return;
        }
        let any = self.each_move(e, y, |o| !self.illegal(o, 1 - y), &mut emit);
        if !any && !self.illegal(o, 1 - y) {
            emit(self.placement(e));
        }
    }

    /// The predecessors of an expanded state, as placements (the other player was to move in
    /// every one of them).
    #[inline(always)]
    pub(super) fn each_predecessor(&self, e: &Expanded, mut emit: impl FnMut(u64)) {
        let (o, x) = (&e.pos.o, e.pos.mover);
        if self.illegal(o, x) {
            return;
        }
        // y just moved; a predecessor is (placement before y's move, y to move), and it must be
        // live: not illegal, not already won by x. It has the legal move to this state, so it is
        // not lost for lack of legal moves.
        let y = 1 - x;
        let any = self.each_move(e, y, |o| !self.illegal(o, y) && !self.wins(o, x), &mut emit);
        // y passed: y had no move at all in this very placement. (x's win condition does not hold
        // here, since this state is legal with x to move.)
        if !any && !self.illegal(o, y) {
            emit(self.placement(e));
        }
    }
}

/// Player 1's compressed positions with one piece lifted: the colex rank of the set with the
/// piece put back at q is one table entry plus a sum made once per piece.
#[derive(Copy, Clone, Default)]
struct Lifted {
    rest: Cells,
    sums: [u64; K_MAX],
}

impl Lifted {
    /// The colex rank of the set with the lifted piece at compressed position `q`: the `s`
    /// others below it keep their places, those above move up one.
    #[inline(always)]
    fn rank_with(&self, game: &Cc2p, q: usize) -> u64 {
        let s = (self.rest & (bit(q) - 1)).count_ones() as usize;
        self.sums[s] + game.choose.c(q, s + 1)
    }
}
