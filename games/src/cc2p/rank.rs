//! The dense index `(rank0 · C(N−k, k) + rank1) · 2 + mover` (docs/cc2p-notation.md, "Index"):
//! colex ranking and unranking of cell sets, and the colour swap on ranks.
//! 1. Unranking starts each element's search at a table entry keyed by the rank's [`bucket`] (its
//!    value below 16, else its bit length and next three bits): a step or two per element instead
//!    of a search from the top.

use super::{above, all_cells, bit, bits, Cc2p, Cells, Expanded, Pos, K_MAX, MAX_CELLS};
use crate::combinatorics::Pascal;

/// A placement as two ranks: player 0's set, and player 1's cells among the `N − k` that set
/// leaves free; the placement is `set · C(N − k, k) + free`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ranks {
    /// Player 0's set (the block).
    pub set: u64,
    /// Player 1's rank within the block.
    pub free: u64,
}

/// Buckets of the unrank lookup: 0..16 exactly, then 8 per binary order of magnitude.
pub(super) const BUCKETS: usize = 16 + 60 * 8;

/// The bucket of a rank: its value below 16, else its bit length and next three bits.
#[inline]
pub(super) fn bucket(r: u64) -> usize {
    if r < 16 {
        r as usize
    } else {
        let b = 63 - r.leading_zeros() as usize;
        16 + ((b - 4) << 3) + ((r >> (b - 3)) as usize & 7)
    }
}

/// The smallest rank in a bucket.
pub(super) fn bucket_floor(key: usize) -> u64 {
    if key < 16 {
        key as u64
    } else {
        let (b, top) = (4 + (key - 16) / 8, 8 + (key - 16) % 8);
        (top as u64) << (b - 3)
    }
}

/// `unrank_start[i][bucket(r)]`: the largest a with C(a, i) ≤ the smallest r of the bucket.
pub(super) fn unrank_starts(choose: &Pascal<8, 128>) -> [[u8; BUCKETS]; 8] {
    let mut unrank_start = [[0u8; BUCKETS]; 8];
    for (i, row) in unrank_start.iter_mut().enumerate().skip(1) {
        for (key, slot) in row.iter_mut().enumerate() {
            let least = bucket_floor(key);
            *slot = (0..=MAX_CELLS)
                .rev()
                .find(|&a| choose.c(a, i) <= least)
                .unwrap() as u8;
        }
    }
    unrank_start
}

impl Cc2p {
    /// Colour swap: board flipped (cell c ↦ N−1−c), players exchanged, side to move exchanged.
    /// An involution that commutes with moves and maps a win of one player to a win of the other.
    pub fn swap_colours(&self, index: u64) -> u64 {
        let p = self.unrank(index);
        self.rank(&Pos {
            o: [self.turn(p.o[1]), self.turn(p.o[0])],
            mover: 1 - p.mover,
        })
    }

    /// The point reflection (a half turn) of a set of cells: cell c ↦ N−1−c.
    #[inline]
    pub(super) fn turn(&self, m: Cells) -> Cells {
        m.reverse_bits() >> (Cells::BITS - self.n as u32)
    }

    /// Colex unrank of `r` (below C(n, k)) as a k-subset of `0..n`, ascending into `out[..k]`:
    /// element i is the largest a with C(a, i) ≤ what is left of r.
    #[inline]
    pub(super) fn unrank_set(&self, mut r: u64, out: &mut [u8; K_MAX]) {
        for i in (2..=self.k as usize).rev() {
            let col = self.choose.column(i);
            let mut a = self.unrank_start[i & 7][bucket(r)] as usize;
            while col[(a + 1) & 127] <= r {
                a += 1;
            }
            r -= col[a & 127];
            out[i - 1] = a as u8;
        }
        out[0] = r as u8;
    }

    /// Unrank an index into both players' sorted cells (and player 1's compressed positions,
    /// which the successor and predecessor ranking reuse).
    #[inline]
    pub(super) fn expand(&self, index: u64) -> Expanded {
        debug_assert!(index < self.size, "index {index} out of range");
        self.expand_ranks(self.ranks(index >> 1), (index & 1) as usize)
    }

    /// [`Cc2p::expand`] of the placement with ranks `r` and side to move `mover`.
    #[inline]
    pub(super) fn expand_ranks(&self, r: Ranks, mover: usize) -> Expanded {
        let k = self.k as usize;
        let (r0, r1) = (r.set, r.free);
        debug_assert!(r0 < self.sets0 && r1 < self.sets1);
        let mut e = Expanded {
            pos: Pos { o: [0, 0], mover },
            a: [0; K_MAX],
            b: [0; K_MAX],
            q: [0; K_MAX],
            qmask: 0,
            r0,
        };
        self.unrank_set(r0, &mut e.a);
        for &c in &e.a[..k] {
            e.pos.o[0] |= bit(c as usize);
        }
        self.unrank_set(r1, &mut e.q);
        for j in 0..k {
            // The q-th free cell: skip over player 0's cells, ascending.
            let q = e.q[j] as usize;
            let mut c = q;
            for &x in &e.a[..k] {
                c += (x as usize <= c) as usize;
            }
            e.b[j] = c as u8;
            e.pos.o[1] |= bit(c);
            e.qmask |= bit(q);
        }
        e
    }

    /// The colex rank of the player-0 set of the colour-swapped twin of the placement with ranks
    /// `r` (the `r0` of [`Cc2p::expand_swapped`]: the mirror of player 1's cells), without the
    /// rest of the expansion.
    pub(super) fn swapped_set_rank(&self, r: Ranks) -> u64 {
        let (k, n) = (self.k as usize, self.n as usize);
        let (mut a, mut q) = ([0u8; K_MAX], [0u8; K_MAX]);
        self.unrank_set(r.set, &mut a);
        self.unrank_set(r.free, &mut q);
        let mut r0 = 0;
        for (j, &q) in q[..k].iter().enumerate() {
            let mut c = q as usize;
            for &x in &a[..k] {
                c += (x as usize <= c) as usize;
            }
            // Player 1's j-th cell, ascending, is the twin's (k - 1 - j)-th, mirrored.
            r0 += self.choose.c(n - 1 - c, k - j);
        }
        r0
    }

    /// A position expanded as [`Cc2p::expand`] would expand its index, from its cell masks.
    #[inline]
    pub(super) fn expanded_of(&self, pos: &Pos) -> Expanded {
        let mut e = Expanded {
            pos: *pos,
            a: [0; K_MAX],
            b: [0; K_MAX],
            q: [0; K_MAX],
            qmask: 0,
            r0: self.colex(pos.o[0]),
        };
        for (i, c) in bits(pos.o[0]).enumerate() {
            e.a[i] = c as u8;
        }
        for (j, c) in bits(pos.o[1]).enumerate() {
            let q = c - (pos.o[0] & (bit(c) - 1)).count_ones() as usize;
            e.b[j] = c as u8;
            e.q[j] = q as u8;
            e.qmask |= bit(q);
        }
        e
    }

    #[inline]
    pub(super) fn unrank(&self, index: u64) -> Pos {
        self.expand(index).pos
    }

    /// Colex rank of a cell set: the sum of C(i-th lowest cell, i), i from 1.
    #[inline]
    pub(super) fn colex(&self, set: Cells) -> u64 {
        self.choose.colex_rank(set)
    }

    #[inline]
    pub(super) fn rank(&self, p: &Pos) -> u64 {
        let k = self.k as usize;
        let mut a = [u8::MAX; K_MAX];
        for (i, c) in bits(p.o[0]).enumerate() {
            a[i] = c as u8;
        }
        let mut r1 = 0;
        for (i, c) in bits(p.o[1]).enumerate() {
            let below: usize = a[..k].iter().map(|&x| ((x as usize) < c) as usize).sum();
            r1 += self.choose.c(c - below, i + 1);
        }
        ((self.colex(p.o[0]) * self.sets1 + r1) << 1) | p.mover as u64
    }

    /// Player 1's rank among the cells player 0 leaves free, from the two players' cells.
    #[inline]
    pub(super) fn rank1(&self, o: &[Cells; 2]) -> u64 {
        bits(o[1])
            .enumerate()
            .map(|(i, c)| {
                let q = c - (o[0] & (bit(c) - 1)).count_ones() as usize;
                self.choose.c(q, i + 1)
            })
            .sum()
    }

    /// The placement rank (index without the mover bit) of an expanded state.
    #[inline]
    pub(super) fn placement(&self, e: &Expanded) -> u64 {
        e.r0 * self.sets1 + self.colex(e.qmask)
    }

    /// The ranks of a placement.
    #[inline]
    pub(crate) fn ranks(&self, placement: u64) -> Ranks {
        Ranks {
            set: placement / self.sets1,
            free: placement % self.sets1,
        }
    }

    /// Every placement `first .. first + count` in order: `f(i, cells, own, twin)` with its two
    /// players' cells, its ranks and its colour-swapped twin's (ranks, not placements: their
    /// users would divide them back). One sweep: player 1's compressed cells are enumerated in
    /// colex order instead of unranked, and the free cells around player 0's are looked up, so
    /// each costs a few table lookups (this is what expanding a reduced table to the full one
    /// spends its arithmetic on).
    pub(crate) fn each_placement_with_twin(
        &self,
        first: u64,
        count: usize,
        f: impl FnMut(usize, [Cells; 2], Ranks, Ranks),
    ) {
        self.sweep::<true>(first, count, f)
    }

    /// Every placement `first .. first + count` in order: `f(i, cells)` with its two players'
    /// cells (the sweep of [`Cc2p::each_placement_with_twin`] without the twin).
    pub(crate) fn each_placement(
        &self,
        first: u64,
        count: usize,
        mut f: impl FnMut(usize, [Cells; 2]),
    ) {
        self.sweep::<false>(first, count, |i, cells, _, _| f(i, cells))
    }

    /// The sweep of both: with `TWIN`, the twin's ranks are computed (else 0).
    #[inline(always)]
    fn sweep<const TWIN: bool>(
        &self,
        first: u64,
        count: usize,
        mut f: impl FnMut(usize, [Cells; 2], Ranks, Ranks),
    ) {
        let k = self.k as usize;
        let n = self.n as usize;
        let Ranks {
            set: mut r0,
            free: mut r1,
        } = self.ranks(first);
        let mut done = 0;
        while done < count {
            // Player 0's cells a (ascending) and the free cells around them.
            let mut a = [0u8; K_MAX];
            self.unrank_set(r0, &mut a);
            let mask0: Cells = a[..k].iter().map(|&c| bit(c as usize)).sum();
            let mut free = [0u8; MAX_CELLS];
            for (j, c) in bits(!mask0 & all_cells(n)).enumerate() {
                free[j] = c as u8;
            }
            // The twin's player 1 is the mirror of player 0: cells n-1-a, ascending.
            let mut ma = [0usize; K_MAX];
            for j in 0..k {
                ma[j] = n - 1 - a[k - 1 - j] as usize;
            }
            let mut q = [0u8; K_MAX];
            self.unrank_set(r1, &mut q);
            let run = ((self.sets1 - r1) as usize).min(count - done);
            for i in done..done + run {
                // Player 1's cells b, ascending; the twin's player 0 is their mirror.
                let mut twin0 = 0u64;
                let mut mask1: Cells = 0;
                for j in 0..k {
                    let b = free[q[j] as usize] as usize;
                    mask1 |= bit(b);
                    if TWIN {
                        twin0 += self.choose.c(n - 1 - b, k - j);
                    }
                }
                // Mirror cell n-1-a_j has as many twin player-0 cells below it as b above a_j.
                let mut twin1 = 0u64;
                if TWIN {
                    for (j, &m) in ma[..k].iter().enumerate() {
                        let higher = above(mask1, n - 1 - m).count_ones() as usize;
                        twin1 += self.choose.c(m - higher, j + 1);
                    }
                }
                let own = Ranks {
                    set: r0,
                    free: r1 + (i - done) as u64,
                };
                let twin = Ranks {
                    set: twin0,
                    free: twin1,
                };
                f(i, [mask0, mask1], own, twin);
                // The next k-subset of 0..n-k in colex order.
                let mut i = 0;
                while i + 1 < k && q[i] + 1 == q[i + 1] {
                    q[i] = i as u8;
                    i += 1;
                }
                q[i] += 1;
            }
            done += run;
            r0 += 1;
            r1 = 0;
        }
    }

    /// The colour-swapped twin of the placement with ranks `r` and side to move `mover`,
    /// expanded: the board flipped, the players exchanged, the side to move exchanged
    /// (`swap_colours` of its index).
    #[inline]
    pub(super) fn expand_swapped(&self, r: Ranks, mover: usize) -> Expanded {
        let e = self.expand_ranks(r, mover);
        let (k, n) = (self.k as usize, self.n as usize);
        let mut s = Expanded {
            pos: Pos {
                o: [0, 0],
                mover: 1 - e.pos.mover,
            },
            a: [0; K_MAX],
            b: [0; K_MAX],
            q: [0; K_MAX],
            qmask: 0,
            r0: 0,
        };
        // Player 0 of the twin: the mirror of player 1's cells, ascending.
        for i in 0..k {
            let c = n - 1 - e.b[k - 1 - i] as usize;
            s.a[i] = c as u8;
            s.pos.o[0] |= bit(c);
            s.r0 += self.choose.c(c, i + 1);
        }
        // Player 1 of the twin: the mirror of player 0's cells; below mirror cell n-1-a lie the
        // mirrors of the old player 1's cells above a.
        for j in 0..k {
            let a = e.a[k - 1 - j] as usize;
            let c = n - 1 - a;
            let q = c - above(e.pos.o[1], a).count_ones() as usize;
            s.b[j] = c as u8;
            s.q[j] = q as u8;
            s.pos.o[1] |= bit(c);
            s.qmask |= bit(q);
        }
        s
    }
}
