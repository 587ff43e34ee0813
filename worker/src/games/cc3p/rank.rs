//! Counting and the dense ranking of placements.
//!
//! A placement is three disjoint cell sets (A's, B's, C's), each of k cells inside its owner's lane.
//! A player's lane is the hexagon plus its two points, and the points of one player are in no other
//! lane, so the only interaction between the sets is inside the hexagon. The ranking works in
//! *stages* s = 0 (A), 1 (B), 2 (C): when stage s begins, `m` hexagon cells are still free (not
//! taken by earlier stages); the stage's set has `h` hexagon cells among those m and `k − h` cells
//! among its 2k point cells. Let
//!
//! ```text
//! N_3(m) = 1,   N_s(m) = Σ_h C(m, h) · C(2k, k − h) · N_{s+1}(m − h)
//! ```
//!
//! be the number of ways to place stages s..=2 when m hexagon cells are free. The placements are
//! `N_0(H)`. Inside a stage the sets are grouped by h (offsets `off[s][m][h]`), then ordered by
//! (rank of the hexagon part among the m free cells, rank of the point part), each a colex rank of a
//! bit mask, and each stage set owns a block of `N_{s+1}(m − h)` ranks for the later stages.
//! The hexagon part of stages 1 and 2 is ranked after deleting the cells taken earlier ("compressed").

/// Binomial coefficient in u128 (exact for every level we count).
pub fn binom128(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut r: u128 = 1;
    for i in 0..k {
        r = r * (n - i) as u128 / (i + 1) as u128;
    }
    r
}

/// `N_s(m)` for all stages and m in 0..=hex, in u128.
pub fn stage_sizes(hex: usize, k: usize) -> [Vec<u128>; 4] {
    let mut sizes: [Vec<u128>; 4] = Default::default();
    sizes[3] = vec![1; hex + 1];
    for s in (0..3).rev() {
        sizes[s] = (0..=hex)
            .map(|m| {
                (0..=k.min(m))
                    .map(|h| binom128(m, h) * binom128(2 * k, k - h) * sizes[s + 1][m - h])
                    .sum()
            })
            .collect();
    }
    sizes
}

/// Bounds of the fixed tables below (powers of two, so that masked indices need no bounds check).
const MAXM: usize = 64;
const MAXK: usize = 8;

/// Exact division by a constant `d` of dividends below 2^bits, by a multiplication and a shift
/// (Granlund and Montgomery, "Division by invariant integers using multiplication", 1994, §4):
/// with l = ⌈log2 d⌉ and m = ⌈2^(bits + l) / d⌉, ⌊n / d⌋ = ⌊n · m / 2^(bits + l)⌋ for n < 2^bits.
#[derive(Copy, Clone, Default, Debug)]
pub struct Recip {
    mul: u64,
    shift: u32,
}

impl Recip {
    /// The reciprocal of `d` (1 ≤ d < 2^bits, bits ≤ 63).
    pub fn new(d: u64, bits: u32) -> Recip {
        assert!(d >= 1 && bits <= 63 && (bits == 63 || d < 1u64 << bits));
        let l = 64 - (d - 1).leading_zeros();
        let shift = bits + l;
        let mul = (1u128 << shift).div_ceil(d as u128);
        assert!(mul <= u64::MAX as u128);
        Recip {
            mul: mul as u64,
            shift,
        }
    }

    /// ⌊n / d⌋ for n < 2^bits.
    #[inline(always)]
    pub fn div(self, n: u64) -> u64 {
        ((n as u128 * self.mul as u128) >> self.shift) as u64
    }
}

/// One group of a stage: the sets with h hexagon cells when m hexagon cells are free.
#[derive(Copy, Clone, Default)]
struct Group {
    /// First rank of the group (relative to the stage).
    off: u64,
    /// Ranks per hexagon-part rank: C(2k, k − h) · N_{s+1}(m − h).
    hex_mul: u64,
    /// Ranks per point-part rank: N_{s+1}(m − h).
    block: u64,
    /// Division by `block`.
    by_block: Recip,
}

/// The ranking tables of one level (levels whose index fits in u64 and whose board fits in 64 cells).
pub struct RankTables {
    pub k: usize,
    pub hex: usize,
    /// Bit position of each player's first point cell (start point, then goal point).
    pub pts_shift: [u32; 3],
    /// Mask of 2k bits.
    pub pts_mask: u64,
    /// Hexagon mask (bits 0..hex).
    pub hex_mask: u64,
    /// `binom[n][j]` for n < MAXM, j < MAXK.
    binom: [[u64; MAXK]; MAXM],
    /// `sizes[s][m]` = N_s(m).
    sizes: [[u64; MAXM]; 4],
    /// `off[s][m][h]` for h in 0..=k+1 (the entry k+1 is the sentinel N_s(m)); `u64::MAX` above,
    /// so that h is the number of entries 1..MAXK at most the rank (no search, no bound on k).
    off: [[[u64; MAXK]; MAXM]; 3],
    /// `groups[s][m][h]`.
    groups: [[[Group; MAXK]; MAXM]; 3],
    /// `colex[j]`: the masks of popcount j below 2^hex, in increasing order (= colex order).
    colex: Vec<Vec<u64>>,
    /// `pts_rank[mask]`: colex rank of a 2k-bit point mask.
    pts_rank: Vec<u64>,
    /// `pts_count[h]` = C(2k, k − h).
    pts_count: [u64; MAXK],
    /// Division by `pts_count[h]`.
    by_pts_count: [Recip; MAXK],
}

/// A placement with what its ranking went through (from [`RankTables::unrank_full`]): the basis of
/// fast ranking of the placements that differ from it by one moved piece.
#[derive(Clone, Debug)]
pub struct Unranked {
    /// A's, B's and C's cells.
    pub sets: [u64; 3],
    /// `rest[s]`: the part of the rank still to decode when stage s begins (`rest[0]` = the rank).
    rest: [u64; 3],
    /// Free hexagon cells when stage s begins, and their number.
    free: [u64; 3],
    m: [usize; 3],
    /// Hexagon cells of stage s's set and the rank of its point part.
    h: [usize; 3],
    rp: [u64; 3],
}

/// Ranking context for the placements obtained from one placement by moving one piece of player
/// `s0` (see [`RankTables::moved_rank`]).
pub struct Delta {
    sets: [u64; 3],
    s0: usize,
    /// Rank contribution of the stages before s0, and of those after s0.
    base: u64,
    tail: u64,
    m: [usize; 3],
    h: [usize; 3],
    rp: [u64; 3],
    /// `pos[s][x]`: the number of free hexagon cells (at stage s, in the original placement) below
    /// hexagon cell x. Filled for stages ≥ s0.
    pos: [[u8; 64]; 3],
}

impl RankTables {
    /// Tables for a board with `hex` hexagon cells and `k` pieces per player; `None` if the
    /// placements do not fit in u64 or the tables' bounds.
    pub fn new(hex: usize, k: usize) -> Option<RankTables> {
        if hex >= MAXM || k + 1 >= MAXK || hex + 6 * k > 64 {
            return None;
        }
        let sizes128 = stage_sizes(hex, k);
        if sizes128[0][hex].checked_mul(3)? > u64::MAX as u128 {
            return None;
        }
        let mut binom = [[0u64; MAXK]; MAXM];
        for (n, row) in binom.iter_mut().enumerate() {
            for (j, b) in row.iter_mut().enumerate() {
                *b = binom128(n, j) as u64;
            }
        }
        let mut sizes = [[0u64; MAXM]; 4];
        for s in 0..4 {
            for m in 0..=hex {
                sizes[s][m] = sizes128[s][m] as u64;
            }
        }
        let mut pts_count = [0u64; MAXK];
        for (h, c) in pts_count.iter_mut().enumerate().take(k + 1) {
            *c = binom128(2 * k, k - h) as u64;
        }
        // Every rank (and so every dividend of the unranking) is below 2^bits.
        let bits = 64 - sizes[0][hex].leading_zeros();
        let mut by_pts_count = [Recip::default(); MAXK];
        for h in 0..=k {
            by_pts_count[h] = Recip::new(pts_count[h], bits);
        }
        let mut off = [[[u64::MAX; MAXK]; MAXM]; 3];
        let mut groups = [[[Group::default(); MAXK]; MAXM]; 3];
        for s in 0..3 {
            for m in 0..=hex {
                let mut acc = 0u64;
                for h in 0..=k {
                    off[s][m][h] = acc;
                    if h <= m {
                        let block = sizes[s + 1][m - h];
                        groups[s][m][h] = Group {
                            off: acc,
                            hex_mul: pts_count[h] * block,
                            block,
                            by_block: Recip::new(block, bits),
                        };
                        acc += binom[m][h] * pts_count[h] * block;
                    }
                }
                off[s][m][k + 1] = acc;
                debug_assert_eq!(acc, sizes[s][m]);
            }
        }
        let mut colex = Vec::new();
        for j in 0..=k {
            let mut list = Vec::with_capacity(binom128(hex, j) as usize);
            if j == 0 {
                list.push(0);
            } else {
                // Gosper's hack: the next larger mask with the same popcount.
                let mut v: u64 = (1u64 << j) - 1;
                while v < (1u64 << hex) {
                    list.push(v);
                    let t = v | (v - 1);
                    v = (t + 1) | (((!t & (t + 1)) - 1) >> (v.trailing_zeros() + 1));
                }
            }
            colex.push(list);
        }
        let pts_mask = (1u64 << (2 * k)) - 1;
        let pts_rank = (0..=pts_mask)
            .map(|mask| colex_rank_with(&binom, mask))
            .collect();
        let pts_shift = [hex as u32, (hex + 2 * k) as u32, (hex + 4 * k) as u32];
        Some(RankTables {
            k,
            hex,
            pts_shift,
            pts_mask,
            hex_mask: (1u64 << hex) - 1,
            binom,
            sizes,
            off,
            groups,
            colex,
            pts_rank,
            pts_count,
            by_pts_count,
        })
    }

    /// Number of placements.
    pub fn placements(&self) -> u64 {
        self.sizes[0][self.hex]
    }

    /// The rank of a placement (the general path; the move generators use [`Self::moved_rank`]).
    pub fn rank(&self, sets: &[u64; 3]) -> u64 {
        let mut r = 0u64;
        let mut free = self.hex_mask;
        let mut m = self.hex;
        for (s, &set) in sets.iter().enumerate() {
            let hx = set & self.hex_mask;
            let h = hx.count_ones() as usize;
            let mut rh = 0u64;
            let mut bits = hx;
            let mut j = 1;
            while bits != 0 {
                let t = bits.trailing_zeros();
                let pos = (free & ((1u64 << t) - 1)).count_ones() as usize;
                rh += self.binom[pos][j];
                j += 1;
                bits &= bits - 1;
            }
            let rp = self.pts_rank[((set >> self.pts_shift[s]) & self.pts_mask) as usize];
            let g = &self.groups[s][m][h];
            r += g.off + rh * g.hex_mul + rp * g.block;
            free &= !hx;
            m -= h;
        }
        r
    }

    /// The placement of rank `r` (< placements).
    #[inline]
    pub fn unrank(&self, r: u64) -> [u64; 3] {
        self.unrank_full(r).sets
    }

    /// The placement of rank `r` (< placements), with its decoding steps. No division: the group h
    /// of each stage is the number of group offsets at most the rank, and the quotients by the
    /// group's block and by the point-part count are multiplications by reciprocals ([`Recip`]).
    #[inline]
    pub fn unrank_full(&self, mut r: u64) -> Unranked {
        let mut u = Unranked {
            sets: [0; 3],
            rest: [0; 3],
            free: [0; 3],
            m: [0; 3],
            h: [0; 3],
            rp: [0; 3],
        };
        let mut free = self.hex_mask;
        let mut m = self.hex;
        for s in 0..3 {
            u.rest[s] = r;
            u.free[s] = free;
            u.m[s] = m;
            let offs = &self.off[s][m & (MAXM - 1)];
            let mut h = 0;
            for &o in &offs[1..] {
                h += (r >= o) as usize;
            }
            let g = &self.groups[s][m & (MAXM - 1)][h & (MAXK - 1)];
            r -= g.off;
            let within = if s < 2 {
                let within = g.by_block.div(r);
                r -= within * g.block;
                within
            } else {
                // The last stage's block is 1.
                std::mem::take(&mut r)
            };
            let rh = self.by_pts_count[h & (MAXK - 1)].div(within);
            let rp = within - rh * self.pts_count[h & (MAXK - 1)];
            let compressed = self.colex[h][rh as usize];
            let hx = expand(compressed, self.hex_mask & !free);
            u.sets[s] = hx | (self.colex[self.k - h][rp as usize] << self.pts_shift[s]);
            u.h[s] = h;
            u.rp[s] = rp;
            free &= !hx;
            m -= h;
        }
        u
    }

    /// The plain unranking (a linear search for each stage's group, then divisions): the reference
    /// that [`Self::unrank_full`] is tested against.
    #[cfg(test)]
    pub fn unrank_plain(&self, mut r: u64) -> [u64; 3] {
        let mut sets = [0u64; 3];
        let mut free = self.hex_mask;
        let mut m = self.hex;
        for (s, set) in sets.iter_mut().enumerate() {
            let offs = &self.off[s][m];
            let mut h = 0;
            while h < self.k && r >= offs[h + 1] {
                h += 1;
            }
            r -= offs[h];
            let block = self.sizes[s + 1][m - h];
            let within = r / block;
            r -= within * block;
            let pc = self.pts_count[h];
            let (rh, rp) = (within / pc, within % pc);
            let hx = expand(self.colex[h][rh as usize], self.hex_mask & !free);
            *set = hx | (self.colex[self.k - h][rp as usize] << self.pts_shift[s]);
            free &= !hx;
            m -= h;
        }
        sets
    }

    /// Ranks at the edges of the groups and blocks of every stage (a few blocks per group): where
    /// an off-by-one of the unranking would show.
    #[cfg(test)]
    pub fn boundaries(&self) -> Vec<u64> {
        let mut out = Vec::new();
        self.boundaries_from(0, self.hex, 0, &mut out);
        out
    }

    #[cfg(test)]
    fn boundaries_from(&self, s: usize, m: usize, base: u64, out: &mut Vec<u64>) {
        if s == 3 {
            return;
        }
        for h in 0..=self.k.min(m) {
            let g = &self.groups[s][m][h];
            let count = self.binom[m][h] * self.pts_count[h];
            out.push(base + g.off);
            out.push(base + g.off + count * g.block - 1);
            let pc = self.pts_count[h];
            for w in [0, 1, pc - 1, pc, count - 1] {
                if w < count {
                    let b = base + g.off + w * g.block;
                    out.push(b);
                    out.push(b + g.block - 1);
                    self.boundaries_from(s + 1, m - h, b, out);
                }
            }
        }
    }

    /// The context for ranking placements that differ from `u` by one moved piece of player `s0`.
    #[inline]
    pub fn delta(&self, u: &Unranked, s0: usize) -> Delta {
        let mut d = Delta {
            sets: u.sets,
            s0,
            base: u.rest[0] - u.rest[s0],
            tail: if s0 < 2 { u.rest[s0 + 1] } else { 0 },
            m: u.m,
            h: u.h,
            rp: u.rp,
            pos: [[0; 64]; 3],
        };
        for s in s0..3 {
            let free = u.free[s];
            let mut count = 0u8;
            for (x, p) in d.pos[s].iter_mut().enumerate().take(self.hex) {
                *p = count;
                count += (free >> x) as u8 & 1;
            }
        }
        d
    }

    /// The rank of the placement of `d` with player `d.s0`'s piece moved from cell `from` to the
    /// empty lane cell `to`. No popcounts: the positions of hexagon cells among the free cells come
    /// from `d.pos`, corrected for the moved piece (a point cell's number is above every hexagon
    /// cell's, so the comparisons below only count hexagon cells).
    #[inline]
    pub fn moved_rank(&self, d: &Delta, from: usize, to: usize) -> u64 {
        let s0 = d.s0;
        let set = d.sets[s0] ^ (1u64 << from) ^ (1u64 << to);
        let from_hex = (from < self.hex) as usize;
        let to_hex = (to < self.hex) as usize;
        // The mover's own stage: its free cells are unchanged.
        let h = d.h[s0] + to_hex - from_hex;
        let m = d.m[s0];
        let mut rh = 0u64;
        let mut bits = set & self.hex_mask;
        let mut j = 1;
        let pos = &d.pos[s0];
        while bits != 0 {
            let x = bits.trailing_zeros() as usize;
            rh += self.binom[pos[x & 63] as usize & (MAXM - 1)][j & (MAXK - 1)];
            j += 1;
            bits &= bits - 1;
        }
        let rp = if from_hex & to_hex == 1 {
            d.rp[s0]
        } else {
            self.pts_rank[((set >> self.pts_shift[s0]) & self.pts_mask) as usize]
        };
        let g = &self.groups[s0][m & (MAXM - 1)][h & (MAXK - 1)];
        let mut r = d.base + g.off + rh * g.hex_mul + rp * g.block;
        if from_hex | to_hex == 0 {
            // A move between point cells leaves the later stages as they were.
            return r + d.tail;
        }
        // Later stages: their sets are unchanged, their free cells gain `from` and lose `to`.
        for s in s0 + 1..3 {
            let h = d.h[s];
            let m = d.m[s] + from_hex - to_hex;
            let pos = &d.pos[s];
            let mut rh = 0u64;
            let mut bits = d.sets[s] & self.hex_mask;
            let mut j = 1;
            while bits != 0 {
                let x = bits.trailing_zeros() as usize;
                let p = pos[x & 63] as usize + (from < x) as usize - (to < x) as usize;
                rh += self.binom[p & (MAXM - 1)][j & (MAXK - 1)];
                j += 1;
                bits &= bits - 1;
            }
            let g = &self.groups[s][m & (MAXM - 1)][h & (MAXK - 1)];
            r += g.off + rh * g.hex_mul + d.rp[s] * g.block;
        }
        r
    }
}

/// Colex rank of a bit mask: Σ C(b_i, i + 1) over its set bits b_0 < b_1 < ...
fn colex_rank_with(binom: &[[u64; MAXK]; MAXM], mask: u64) -> u64 {
    let mut r = 0;
    let mut bits = mask;
    let mut j = 1;
    while bits != 0 {
        r += binom[bits.trailing_zeros() as usize][j];
        j += 1;
        bits &= bits - 1;
    }
    r
}

/// Spread a compressed mask over the cells not in `taken` (a software `pdep` for few taken cells):
/// insert a zero bit at each taken position, lowest first.
#[inline]
fn expand(mut mask: u64, taken: u64) -> u64 {
    let mut t = taken;
    while t != 0 {
        let low = (t & t.wrapping_neg()) - 1;
        mask = (mask & low) | ((mask & !low) << 1);
        t &= t - 1;
    }
    mask
}
