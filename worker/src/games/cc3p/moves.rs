//! Successors and predecessors (the kernel's hot path): bit masks over cells, no allocation beyond
//! pushing into `out`.
//!
//! A piece's destinations are the empty lane cells one step away plus every cell reachable by a
//! chain of jumps, with the moving piece lifted off the board (its start cell is empty while it
//! jumps). Steps and jump chains are symmetric, so the same set, computed for a piece of the
//! previous player, is the set of cells the piece may have come from: unmoves are exact inverses.

use super::Cc3p;

impl Cc3p {
    /// Where the piece on `c` can move to: `occ` is the occupancy without that piece, `lane` the
    /// mover's lane. Never contains `c`. The jump chains are a search over landing cells, each
    /// one's single jumps from the table of `jumps.rs`.
    #[inline]
    pub(crate) fn destinations(&self, c: usize, occ: u64, lane: u64) -> u64 {
        let open = lane & !occ;
        let steps = self.step[c] & open;
        let mut todo = self.jump_table.from(c, occ) & open;
        let mut visited = todo | (1u64 << c);
        while todo != 0 {
            let u = todo.trailing_zeros() as usize;
            todo &= todo - 1;
            let new = self.jump_table.from(u, occ) & open & !visited;
            visited |= new;
            todo |= new;
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

    /// Does `player` have a move in the placement `sets`?
    #[inline]
    pub(crate) fn has_move(&self, sets: &[u64; 3], player: usize) -> bool {
        let occ = sets[0] | sets[1] | sets[2];
        let lane = self.lane[player];
        let mut pieces = sets[player];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            // A step is the cheap test; jumps only when no piece can step.
            if self.step[c] & lane & !occ != 0 {
                return true;
            }
        }
        let mut pieces = sets[player];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            if self.destinations(c, occ & !(1u64 << c), lane) != 0 {
                return true;
            }
        }
        false
    }

    #[inline]
    fn any_goal_filled(&self, sets: &[u64; 3]) -> bool {
        (0..3).any(|p| sets[p] & self.goal[p] == self.goal[p])
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
        let delta = self.tables.delta(&u, mover);
        let before = out.len();
        let mut pieces = sets[mover];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let from = 1u64 << c;
            let mut dests = self.destinations(c, occ & !from, lane);
            while dests != 0 {
                let to = dests.trailing_zeros() as usize;
                dests &= dests - 1;
                out.push(self.tables.moved_rank(&delta, c, to) * 3 + next);
            }
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

    /// Append the distinct live predecessors of `index` (none for illegal states).
    pub(crate) fn predecessors_into(&self, index: u64, out: &mut Vec<u64>) {
        let u = self.tables.unrank_full(index / 3);
        let sets = u.sets;
        let mover = (index % 3) as usize;
        let prev = (mover + 2) % 3;
        // A filled goal of anyone but `prev` stays filled in every predecessor: none is live.
        for (p, (&set, &goal)) in sets.iter().zip(&self.goal).enumerate() {
            if p != prev && set & goal == goal {
                return;
            }
        }
        let goal = self.goal[prev];
        let prev_won = sets[prev] & goal == goal;
        let occ = sets[0] | sets[1] | sets[2];
        let lane = self.lane[prev];
        let delta = self.tables.delta(&u, prev);
        let p = prev as u64;
        let mut pieces = sets[prev];
        while pieces != 0 {
            let c = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let at = 1u64 << c;
            let mut origins = self.destinations(c, occ & !at, lane);
            while origins != 0 {
                let from = origins.trailing_zeros() as usize;
                origins &= origins - 1;
                if (sets[prev] ^ at ^ (1u64 << from)) & goal == goal {
                    continue; // the predecessor would be terminal (prev's goal filled)
                }
                out.push(self.tables.moved_rank(&delta, c, from) * 3 + p);
            }
        }
        if !prev_won && !self.has_move(&sets, prev) {
            out.push(index / 3 * 3 + p);
        }
    }
}
