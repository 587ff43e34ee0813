//! Counting and the dense ranking of placements (the scheme: docs/cc3p-notation.md, `rank.rs`).
//! 1. Stages A, B, C rank their sets' hexagon parts among the hexagon cells still free, so every
//!    table depends only on how many are free; [`Recip`] quotients replace division.
//! 2. Children are ranked from the parent ([`RankTables::parent`], `lift`, `child_hex`,
//!    `child_point`) with stair counters for popcount; `rank` is the reference they are tested on.

use crate::combinatorics::{binomial, subsets, Pascal};

/// `N_s(m)` for all stages and m in 0..=hex, in u128.
pub fn stage_sizes(hex: usize, k: usize) -> [Vec<u128>; 4] {
    let mut sizes: [Vec<u128>; 4] = Default::default();
    sizes[3] = vec![1; hex + 1];
    for s in (0..3).rev() {
        sizes[s] = (0..=hex)
            .map(|m| {
                (0..=k.min(m))
                    .map(|h| binomial(m, h) * binomial(2 * k, k - h) * sizes[s + 1][m - h])
                    .sum()
            })
            .collect();
    }
    sizes
}

/// Bounds of the fixed tables below (powers of two, so that masked indices need no bounds check).
const MAXM: usize = 64;
const MAXK: usize = 8;
/// Entries of the per-piece tables of the child ranking: t in 0..=k, so k ≤ 3 (levels 1 and 2).
const TK: usize = 4;

/// Exact division by a constant d ≥ 2 of any dividend below 2^63, by a multiplication and a shift
/// (Granlund and Montgomery, "Division by invariant integers using multiplication", 1994, thm. 4.2
/// with N = 63): with l = ⌈log2 d⌉ and m = ⌈2^(63 + l) / d⌉ < 2^64, ⌊n / d⌋ = ⌊n · m / 2^(63 + l)⌋,
/// that is the high word of the 128-bit product shifted right by l − 1.
#[derive(Copy, Clone, Default, Debug)]
pub struct Recip {
    mul: u64,
    shift: u32,
}

impl Recip {
    /// The reciprocal of `d` (2 ≤ d < 2^63).
    pub fn new(d: u64) -> Recip {
        assert!((2..1u64 << 63).contains(&d));
        let l = 64 - (d - 1).leading_zeros();
        let mul = (1u128 << (63 + l)).div_ceil(d as u128);
        Recip {
            mul: u64::try_from(mul).expect("m < 2^64 when 2^(l-1) < d"),
            shift: l - 1,
        }
    }

    /// ⌊n / d⌋ for n < 2^63.
    #[inline(always)]
    pub fn div(self, n: u64) -> u64 {
        (((n as u128 * self.mul as u128) >> 64) as u64) >> self.shift
    }
}

/// Exact division by a constant 1 ≤ d < 2^16 of dividends below 2^16 in 64-bit arithmetic (the
/// same theorem with N = 16: m = ⌈2^(16 + l) / d⌉ < 2^17).
#[derive(Copy, Clone, Default, Debug)]
pub struct SmallRecip {
    mul: u64,
    shift: u32,
}

impl SmallRecip {
    /// The reciprocal of `d` (1 ≤ d < 2^16).
    pub fn new(d: u64) -> SmallRecip {
        assert!((1..1 << 16).contains(&d));
        let l = 64 - (d - 1).leading_zeros();
        SmallRecip {
            mul: (1u64 << (16 + l)).div_ceil(d),
            shift: 16 + l,
        }
    }

    /// ⌊n / d⌋ for n < 2^16.
    #[inline(always)]
    pub fn div(self, n: u64) -> u64 {
        (n * self.mul) >> self.shift
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
    /// C(n, j) for n < MAXM, j < MAXK.
    binom: Pascal<MAXK, MAXM>,
    /// `sizes[s][m]` = N_s(m).
    sizes: [[u64; MAXM]; 4],
    /// `off[s][m][h]` for h in 0..=k+1 (the entry k+1 is the sentinel N_s(m)); `u64::MAX` above,
    /// so that h is the number of entries 1..TK at most the rank (no search; k < TK).
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
    by_pts_count: [SmallRecip; MAXK],
}

/// A placement with what its ranking went through (from [`RankTables::unrank_full`]): the basis of
/// fast ranking of the placements that differ from it by one moved piece.
#[derive(Clone, Debug)]
pub struct Unranked {
    /// A's, B's and C's cells.
    pub sets: [u64; 3],
    /// `rest[s]`: the part of the rank still to decode when stage s begins (`rest[0]` = the rank).
    rest: [u64; 3],
    /// Free hexagon cells when stage s begins.
    m: [usize; 3],
    /// Hexagon cells of stage s's set, the rank of its point part, and its hexagon part
    /// compressed to the free cells (bit i = the i-th free cell).
    h: [usize; 3],
    rp: [u64; 3],
    comp: [u64; 3],
}

/// One lane of 3 bits per hexagon cell (at most 21 cells): `LANES << 3(x + 1)` has a 1 in the lane
/// of every cell above x. A *stair* of a set of hexagon cells is the sum of that over its cells:
/// lane x counts the set's cells below x (at most 7).
const LANES: u64 = 0x1249_2492_4924_9249;

/// The number of cells of the stair's set below hexagon cell `x`.
#[inline(always)]
fn below(stair: u64, x: usize) -> usize {
    ((stair >> ((3 * x) & 63)) & 7) as usize
}

/// All ones if `b`, else zero: a term kept or dropped without a branch.
#[inline(always)]
fn mask_if(b: bool) -> u64 {
    0u64.wrapping_sub(b as u64)
}

/// The stair of a set of hexagon cells (see [`LANES`]).
#[inline(always)]
fn stair_of(mut hexcells: u64) -> u64 {
    // A fixed number of rounds (a stage has at most TK − 1 hexagon cells), so that nothing
    // branches on the count: an empty mask adds the lanes of cell 64, which is none.
    debug_assert!(hexcells.count_ones() < TK as u32);
    let mut stair = 0u64;
    for _ in 0..TK - 1 {
        let x = hexcells.trailing_zeros();
        stair = stair.wrapping_add(LANES.checked_shl(3 * x + 3).unwrap_or(0));
        hexcells &= hexcells.wrapping_sub(1);
    }
    stair
}

/// The positions of a compressed mask's cells (bit numbers, ascending).
#[inline(always)]
fn positions(mut comp: u64) -> [u8; MAXK] {
    // Fixed rounds as in `stair_of`; past the cells the position is 0.
    debug_assert!(comp.count_ones() < TK as u32);
    let mut pos = [0u8; MAXK];
    for p in pos.iter_mut().take(TK - 1) {
        *p = (comp.trailing_zeros() & 63) as u8;
        comp &= comp.wrapping_sub(1);
    }
    pos
}

/// A stage after the mover's, as a parent placement has it.
#[derive(Clone, Copy, Default)]
struct LaterStage {
    s: usize,
    m: usize,
    h: usize,
    rp: u64,
    /// Positions of its hexagon cells among its free cells, ascending.
    pos: [u8; MAXK],
    /// Its stair (0 for a stage that does not exist, with `h` = 0).
    stair: u64,
}

/// Ranking context for the placements obtained from one placement by moving one piece of player
/// `s0` (from [`RankTables::parent`]): what does not depend on the piece or on where it goes.
pub struct Parent {
    s0: usize,
    /// Rank contribution of the stages before s0; the rest after stage s0.
    base: u64,
    tail: u64,
    /// Stage s0: free hexagon cells, its hexagon cells, its point rank, its point part (at bit 0),
    /// the positions of its hexagon cells among the free ones (ascending), and its stair.
    m0: usize,
    h0: usize,
    rp0: u64,
    pts0: u64,
    pos0: [u8; MAXK],
    stair0: u64,
    /// The stair of the earlier stages' hexagon cells (a cell's position among stage s0's free
    /// cells is the cell number minus this count).
    before: u64,
    /// The stages after s0 (unused entries are empty stages that add 0).
    later: [LaterStage; 2],
    /// For moves from a hexagon cell to a hexagon cell (the free-cell counts of the later stages
    /// do not change): a later stage's rank contribution is `later_fixed[i]` plus, with uf of its
    /// cells below `from` and ut below `to`, `later_up[i][ut] − later_up[i][uf]` if uf ≤ ut, else
    /// `later_down[i][uf] − later_down[i][ut]` (its cells between the two move up, or down, one
    /// position). Cumulative sums of `hex_mul · (C(p ± 1, j + 1) − C(p, j + 1))`, wrapping.
    later_fixed: [u64; 2],
    later_up: [[u64; TK]; 2],
    later_down: [[u64; TK]; 2],
}

/// Ranking context for the moves of one piece (from [`RankTables::lift`]); a child's rank is then
/// a few lookups ([`RankTables::child_hex`], [`RankTables::child_point`]).
pub struct Lifted {
    /// Moves to a hexagon cell `to`, with t0 of the mover's other hexagon cells below `to`: the
    /// rank is `hex_base[t0] + C(pos(to), t0 + 1) · hex_mul` plus, for each later stage with t of
    /// its cells below `to`, `later_hex[i][t]`.
    hex_base: [u64; TK],
    hex_mul: u64,
    /// The stair of the mover's other hexagon cells.
    stair0: u64,
    later_hex: [[u64; TK]; 2],
    /// Moves to a point cell: `pt_base + pts_rank[pts | to] · pt_block`.
    pt_base: u64,
    pt_block: u64,
    pts: u64,
}

impl RankTables {
    /// Tables for a board with `hex` hexagon cells and `k` pieces per player; `None` if the
    /// placements do not fit in u64 or the tables' bounds.
    pub fn new(hex: usize, k: usize) -> Option<RankTables> {
        // The child ranking: 3-bit lanes for the hexagon cells (counts up to 2k ≤ 6), and tables
        // of k + 1 ≤ TK entries.
        if hex >= MAXM || k + 1 >= MAXK || hex + 6 * k > 64 || hex > 21 || k >= TK {
            return None;
        }
        let sizes128 = stage_sizes(hex, k);
        if sizes128[0][hex].checked_mul(3)? > u64::MAX as u128 {
            return None;
        }
        let binom = Pascal::<MAXK, MAXM>::new();
        let mut sizes = [[0u64; MAXM]; 4];
        for s in 0..4 {
            for m in 0..=hex {
                sizes[s][m] = sizes128[s][m] as u64;
            }
        }
        let mut pts_count = [0u64; MAXK];
        for (h, c) in pts_count.iter_mut().enumerate().take(k + 1) {
            *c = binomial(2 * k, k - h) as u64;
        }
        // The unranking divides ranks (< 2^63) by blocks (≥ 2: the later stages have at least
        // C(2k, k) ways) and the ranks inside a group by the point count (< 2^16, checked).
        let mut by_pts_count = [SmallRecip::default(); MAXK];
        for h in 0..=k {
            by_pts_count[h] = SmallRecip::new(pts_count[h]);
            if binom.c(hex, h) * pts_count[h] > 1 << 16 {
                return None;
            }
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
                            // The last stage's block is 1 and is not divided by.
                            by_block: if s < 2 {
                                Recip::new(block)
                            } else {
                                Recip::default()
                            },
                        };
                        acc += binom.c(m, h) * pts_count[h] * block;
                    }
                }
                off[s][m][k + 1] = acc;
                debug_assert_eq!(acc, sizes[s][m]);
            }
        }
        let colex = (0..=k)
            .map(|j| subsets(hex, j).map(|set| set as u64).collect())
            .collect();
        let pts_mask = (1u64 << (2 * k)) - 1;
        let pts_rank = (0..=pts_mask)
            .map(|mask| binom.colex_rank(mask as u128))
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
                rh += self.binom.c(pos, j);
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
    #[inline(always)]
    pub fn unrank_full(&self, mut r: u64) -> Unranked {
        let mut u = Unranked {
            sets: [0; 3],
            rest: [0; 3],
            m: [0; 3],
            h: [0; 3],
            rp: [0; 3],
            comp: [0; 3],
        };
        let mut free = self.hex_mask;
        let mut m = self.hex;
        for s in 0..3 {
            u.rest[s] = r;
            u.m[s] = m;
            let offs = &self.off[s][m & (MAXM - 1)];
            let mut h = 0;
            for &o in &offs[1..TK] {
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
            u.comp[s] = compressed;
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
            let count = self.binom.c(m, h) * self.pts_count[h];
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

    /// The context for ranking the placements that differ from `u` by one moved piece of player
    /// `s0`.
    #[inline(always)]
    pub fn parent(&self, u: &Unranked, s0: usize) -> Parent {
        let mut later = [LaterStage::default(); 2];
        for (l, s) in later.iter_mut().zip(s0 + 1..3) {
            *l = LaterStage {
                s,
                m: u.m[s],
                h: u.h[s],
                rp: u.rp[s],
                pos: positions(u.comp[s]),
                stair: stair_of(u.sets[s] & self.hex_mask),
            };
        }
        let mut before = 0u64;
        for set in &u.sets[..s0] {
            before = before.wrapping_add(stair_of(set & self.hex_mask));
        }
        let binom = |n: usize, j: usize| self.binom.c(n, j);
        let mut later_fixed = [0u64; 2];
        let mut later_up = [[0u64; TK]; 2];
        let mut later_down = [[0u64; TK]; 2];
        for (i, l) in later.iter().enumerate().take(2 - s0) {
            let g = &self.groups[l.s][l.m & (MAXM - 1)][l.h & (MAXK - 1)];
            let mut rh = 0u64;
            let (mut up, mut down) = (0u64, 0u64);
            for j in 0..l.h {
                let p = l.pos[j & (MAXK - 1)] as usize;
                let c = binom(p, j + 1);
                rh += c;
                // A position p of 0 never moves down (a free cell below it would be needed).
                up = up.wrapping_add((binom(p + 1, j + 1) - c).wrapping_mul(g.hex_mul));
                down = down.wrapping_add(
                    binom(p.wrapping_sub(1), j + 1)
                        .wrapping_sub(c)
                        .wrapping_mul(g.hex_mul),
                );
                later_up[i][(j + 1) & (TK - 1)] = up;
                later_down[i][(j + 1) & (TK - 1)] = down;
            }
            later_fixed[i] = g.off + rh * g.hex_mul + l.rp * g.block;
        }
        Parent {
            s0,
            base: u.rest[0] - u.rest[s0],
            tail: if s0 < 2 { u.rest[s0 + 1] } else { 0 },
            m0: u.m[s0],
            h0: u.h[s0],
            rp0: u.rp[s0],
            pts0: (u.sets[s0] >> self.pts_shift[s0]) & self.pts_mask,
            pos0: positions(u.comp[s0]),
            stair0: stair_of(u.sets[s0] & self.hex_mask),
            before,
            later,
            later_fixed,
            later_up,
            later_down,
        }
    }

    /// The context for moving the piece of player `par.s0` on cell `from` to empty lane cells:
    /// hexagon cells if `to_hex`, point cells if `to_point`.
    ///
    /// Moving a hexagon piece frees `from` for the later stages, and a move to a hexagon cell takes
    /// `to`; a later stage's cell x then stands at position pos(x) + [from < x] − [to < x] among its
    /// free cells. With t of the stage's cells below `to`, its colex rank is
    /// `Σ_{j<t} C(posF_j, j+1) + Σ_{j≥t} C(posF_j − 1, j+1)` (posF = pos + [from < x]), a table
    /// over t. The same holds for the mover's own stage with `to` inserted after t0 of its other
    /// cells: `Σ_{j<t0} C(pos_j, j+1) + C(pos(to), t0+1) + Σ_{j≥t0} C(pos_j, j+2)`.
    #[inline(always)]
    pub fn lift(&self, par: &Parent, from: usize, to_hex: bool, to_point: bool) -> Lifted {
        let s0 = par.s0;
        let fh = (from < self.hex) as usize;
        let binom = |n: usize, j: usize| self.binom.c(n, j);
        // The mover's other hexagon cells (positions among its free cells), and its point part.
        // Loops of fixed length, so that nothing branches on how many cells a stage has: the
        // positions past a stage's cells are 0, and C(0, j) = 0 for j ≥ 1.
        let skip = if fh == 1 {
            below(par.stair0, from)
        } else {
            MAXK
        };
        let mut py = [0u8; TK];
        for (j, p) in py.iter_mut().enumerate() {
            *p = par.pos0[(j + (j >= skip) as usize) & (MAXK - 1)];
        }
        // A hexagon `from` is one of the mover's hexagon cells.
        let hy = par.h0 - fh;
        let pts = if fh == 1 {
            par.pts0
        } else {
            par.pts0 & !(1u64 << (from as u32 - self.pts_shift[s0]))
        };
        let mut lifted = Lifted {
            hex_base: [0; TK],
            hex_mul: 0,
            // Stairs are sums modulo 2^64 (`stair_of` adds with wrapping): take the cell out
            // the same way.
            stair0: par
                .stair0
                .wrapping_sub(if fh == 1 { LANES << (3 * from + 3) } else { 0 }),
            later_hex: [[0; TK]; 2],
            pt_base: 0,
            pt_block: 0,
            pts,
        };
        if to_hex {
            let rp = if fh == 1 {
                par.rp0
            } else {
                self.pts_rank[pts as usize]
            };
            let g = &self.groups[s0][par.m0 & (MAXM - 1)][(hy + 1) & (MAXK - 1)];
            let mut rh: u64 = (0..TK).map(|j| binom(py[j] as usize, j + 2)).sum();
            let fixed = par.base + g.off + rp * g.block;
            // Entries for impossible t (and so impossible positions) may be garbage: wrapping.
            for (t, e) in lifted.hex_base.iter_mut().enumerate() {
                *e = fixed.wrapping_add(rh.wrapping_mul(g.hex_mul));
                let p = py[t & (TK - 1)] as usize;
                rh = rh
                    .wrapping_sub(binom(p, t + 2))
                    .wrapping_add(binom(p, t + 1));
            }
            lifted.hex_mul = g.hex_mul;
            if fh == 1 {
                // Hexagon to hexagon: the tables of the parent.
                for (i, table) in lifted.later_hex.iter_mut().enumerate() {
                    let uf = below(par.later[i].stair, from) & (TK - 1);
                    let (up, down) = (&par.later_up[i], &par.later_down[i]);
                    for (ut, e) in table.iter_mut().enumerate() {
                        let shift = if uf <= ut {
                            up[ut].wrapping_sub(up[uf])
                        } else {
                            down[uf].wrapping_sub(down[ut])
                        };
                        *e = par.later_fixed[i].wrapping_add(shift);
                    }
                }
            } else {
                // Point to hexagon: the later stages lose a free cell. A stage that does not
                // exist adds 0 (its table is masked).
                for (i, (l, table)) in par.later.iter().zip(&mut lifted.later_hex).enumerate() {
                    let exists = mask_if(i + s0 < 2);
                    let g = &self.groups[l.s][l.m.wrapping_sub(1) & (MAXM - 1)][l.h & (MAXK - 1)];
                    // Past the stage's cells pos − 1 wraps: those terms are masked.
                    let pos = |j: usize| l.pos[j & (MAXK - 1)] as usize;
                    let held = |j: usize| mask_if(j < l.h);
                    let mut rh: u64 = (0..TK - 1)
                        .map(|j| binom(pos(j).wrapping_sub(1), j + 1) & held(j))
                        .fold(0, u64::wrapping_add);
                    let fixed = g.off.wrapping_add(l.rp.wrapping_mul(g.block));
                    for (t, e) in table.iter_mut().enumerate() {
                        *e = fixed.wrapping_add(rh.wrapping_mul(g.hex_mul)) & exists;
                        rh = rh
                            .wrapping_sub(binom(pos(t).wrapping_sub(1), t + 1) & held(t))
                            .wrapping_add(binom(pos(t), t + 1));
                    }
                }
            }
        }
        if to_point {
            let g = &self.groups[s0][par.m0 & (MAXM - 1)][hy & (MAXK - 1)];
            let rh: u64 = (0..TK).map(|j| binom(py[j] as usize, j + 1)).sum();
            let later = if fh == 0 {
                // A move between point cells leaves the later stages as they were.
                par.tail
            } else {
                let mut r = 0u64;
                for (i, l) in par.later.iter().enumerate() {
                    let exists = mask_if(i + s0 < 2);
                    let g = &self.groups[l.s][(l.m + 1) & (MAXM - 1)][l.h & (MAXK - 1)];
                    let up = below(l.stair, from);
                    // Past the stage's cells the position is 0 and may become 1: masked.
                    let rh: u64 = (0..TK - 1)
                        .map(|j| {
                            let p = l.pos[j & (MAXK - 1)] as usize + (j >= up) as usize;
                            binom(p, j + 1) & mask_if(j < l.h)
                        })
                        .sum();
                    r = r.wrapping_add(
                        g.off
                            .wrapping_add(rh.wrapping_mul(g.hex_mul))
                            .wrapping_add(l.rp.wrapping_mul(g.block))
                            & exists,
                    );
                }
                r
            };
            lifted.pt_base = par.base + g.off + rh * g.hex_mul + later;
            lifted.pt_block = g.block;
        }
        lifted
    }

    /// The rank of the placement with the lifted piece on the empty hexagon cell `to`.
    #[inline(always)]
    pub fn child_hex(&self, par: &Parent, lifted: &Lifted, to: usize) -> u64 {
        let t0 = below(lifted.stair0, to);
        let p0 = to - below(par.before, to);
        lifted.hex_base[t0 & (TK - 1)]
            .wrapping_add(self.binom.c(p0, t0 + 1) * lifted.hex_mul)
            .wrapping_add(lifted.later_hex[0][below(par.later[0].stair, to) & (TK - 1)])
            .wrapping_add(lifted.later_hex[1][below(par.later[1].stair, to) & (TK - 1)])
    }

    /// The rank of the placement with the lifted piece on the empty point cell `to` of its lane.
    #[inline(always)]
    pub fn child_point(&self, par: &Parent, lifted: &Lifted, to: usize) -> u64 {
        let pts = lifted.pts | 1u64 << ((to as u32).wrapping_sub(self.pts_shift[par.s0]) & 63);
        lifted.pt_base + self.pts_rank[(pts & self.pts_mask) as usize] * lifted.pt_block
    }
}

/// Spread a compressed mask over the cells not in `taken` (a software `pdep` for few taken cells):
/// insert a zero bit at each taken position, lowest first. Shifting the bits at and above the
/// position `b` (a power of two) up by one is adding them to the mask: `mask + (mask & −b)`.
#[inline(always)]
fn expand(mut mask: u64, taken: u64) -> u64 {
    let mut t = taken;
    while t != 0 {
        let b = t & t.wrapping_neg();
        mask += mask & b.wrapping_neg();
        t ^= b;
    }
    mask
}
