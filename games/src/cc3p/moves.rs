//! Successors and predecessors (the kernel's hot path): bit masks over cells, no allocation beyond
//! pushing into `out`.
//! 1. Steps and jump chains (the moving piece lifted) are symmetric, so a piece's destinations,
//!    computed for the previous player, are where it may have come from: unmoves are exact.
//! 2. Jumps by table lookup (`jumps.rs`); children ranked from the parent's unranking (`rank.rs`).

use super::rank::Parent;
use super::Cc3p;

impl Cc3p {
    /// Where the piece on `c` can move to: `occ` is the occupancy without that piece, `lane` the
    /// mover's lane. Never contains `c`. The jump chains are a search over landing cells, each
    /// one's single jumps from the table of `jumps.rs`.
    #[inline]
    pub(crate) fn destinations(&self, c: usize, occ: u64, lane: u64) -> u64 {
        let open = lane & !occ;
        let steps = self.step[c] & open;
        // Breadth first, a level at a time: the lookups of one level do not wait on each other.
        let mut level = self.jump_table.from(c, occ) & open;
        let mut visited = level | (1u64 << c);
        while level != 0 {
            let mut next = 0;
            while level != 0 {
                next |= self.jump_table.from(level.trailing_zeros() as usize, occ);
                level &= level - 1;
            }
            level = next & open & !visited;
            visited |= level;
        }
        steps | (visited & !(1u64 << c))
    }

    /// [`Self::destinations`] as a plain search over the six directions of every landing cell: the
    /// reference the table-driven search is tested against.
    #[cfg(test)]
    pub(crate) fn destinations_plain(&self, c: usize, occ: u64, lane: u64) -> u64 {
        let open = lane & !occ;
        let steps = self.step[c] & open;
        let mut visited = 1u64 << c;
        let mut todo = visited;
        while todo != 0 {
            let u = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            for &(over, land) in &self.jumps[u] {
                if occ & over != 0 && open & land & !visited != 0 {
                    visited |= land;
                    todo |= land;
                }
            }
        }
        steps | (visited & !(1u64 << c))
    }

    #[inline]
    fn any_goal_filled(&self, sets: &[u64; 3]) -> bool {
        (0..3).any(|p| sets[p] & self.goal[p] == self.goal[p])
    }

    /// Append, as states with `mover` to move, the placements of `par` with its mover's piece on
    /// `c` moved to each cell of `ends` (not empty).
    #[inline(always)]
    fn push_moved(&self, par: &Parent, c: usize, ends: u64, mover: u64, out: &mut Vec<u64>) {
        let hex = self.tables.hex_mask;
        let (mut to_hex, mut to_point) = (ends & hex, ends & !hex);
        let lifted = self.tables.lift(par, c, to_hex != 0, to_point != 0);
        while to_hex != 0 {
            let to = to_hex.trailing_zeros() as usize;
            to_hex &= to_hex - 1;
            out.push(self.tables.child_hex(par, &lifted, to) * 3 + mover);
        }
        while to_point != 0 {
            let to = to_point.trailing_zeros() as usize;
            to_point &= to_point - 1;
            out.push(self.tables.child_point(par, &lifted, to) * 3 + mover);
        }
    }

    /// Append the distinct successors of `index` (none for terminal and illegal states).
    pub(crate) fn successors_into(&self, index: u64, out: &mut Vec<u64>) {
        let u = self.tables.unrank_full(index / 3);
        let sets = u.sets;
        let mover = (index % 3) as usize;
        if self.any_goal_filled(&sets) {
            return;
        }
        let next = ((mover + 1) % 3) as u64;
        let occ = sets[0] | sets[1] | sets[2];
        let lane = self.lane[mover];
        let par = self.tables.parent(&u, mover);
        let before = out.len();
        let mut pieces = sets[mover];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let dests = self.destinations(c, occ & !(1u64 << c), lane);
            if dests == 0 {
                continue;
            }
            self.push_moved(&par, c, dests, next, out);
        }
        if out.len() == before {
            // No move: the pass is the one successor.
            out.push(index / 3 * 3 + next);
        }
    }

    /// The number of successors of `index` (0 for terminal and illegal states; a pass is one):
    /// `successors_into` without ranking the children.
    pub(crate) fn successor_count_of(&self, index: u64) -> usize {
        let sets = self.tables.unrank(index / 3);
        let mover = (index % 3) as usize;
        if self.any_goal_filled(&sets) {
            return 0;
        }
        let occ = sets[0] | sets[1] | sets[2];
        let lane = self.lane[mover];
        let mut count = 0;
        let mut pieces = sets[mover];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            count += self.destinations(c, occ & !(1u64 << c), lane).count_ones() as usize;
        }
        count.max(1)
    }

    /// Append the distinct live predecessors of `index` (none for illegal states). Returns the
    /// successor count of the same placement with the previous player to move (the player whose
    /// moves are undone here), when that state is live: the origins of the unmoves are its
    /// destinations, so counting them is free
    /// ([`kingmaker_kernel::Game::predecessors_and_count`]).
    pub(crate) fn predecessors_into(&self, index: u64, out: &mut Vec<u64>) -> Option<(u64, usize)> {
        let u = self.tables.unrank_full(index / 3);
        let sets = u.sets;
        let mover = (index % 3) as usize;
        let prev = (mover + 2) % 3;
        // A filled goal of anyone but `prev` stays filled in every predecessor: none is live.
        for (p, (&set, &goal)) in sets.iter().zip(&self.goal).enumerate() {
            if p != prev && set & goal == goal {
                return None;
            }
        }
        let goal = self.goal[prev];
        let prev_won = sets[prev] & goal == goal;
        let occ = sets[0] | sets[1] | sets[2];
        let lane = self.lane[prev];
        let par = self.tables.parent(&u, prev);
        let p = prev as u64;
        // Every destination of prev's pieces, before the filter below: prev's moves from here.
        let mut moves = 0;
        let mut pieces = sets[prev];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let at = 1u64 << c;
            let mut origins = self.destinations(c, occ & !at, lane);
            moves += origins.count_ones() as usize;
            // An origin that fills prev's goal would make the predecessor terminal: only possible
            // when the other pieces hold all of the goal but one cell, that one.
            let missing = goal & !(sets[prev] ^ at);
            if missing & missing.wrapping_sub(1) == 0 {
                origins &= !missing;
            }
            if origins == 0 {
                continue;
            }
            self.push_moved(&par, c, origins, p, out);
        }
        if prev_won {
            return None; // the sibling is terminal
        }
        // prev could not move here: the same placement with prev to move passed into it.
        if moves == 0 {
            out.push(index / 3 * 3 + p);
        }
        Some((index / 3 * 3 + p, moves.max(1)))
    }
}
