//! Single jumps by table lookup ("magic" multiplication, as for sliding pieces in chess programs).
//! 1. The occupied neighbours `occ & over[u]`, times a per-cell constant and shifted, index
//!    `land[u]`, the landing cells behind them: one jump is a multiply, a shift, a load and an
//!    `and` with the open cells, with no loop over directions and no data-dependent branch.
//! 2. The constants come from a deterministic search, every entry checked: docs/cc3p-notation.md.

use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;

/// Index bits per cell: a cell has at most six neighbours to jump over.
const BITS: u32 = 6;

/// The one-jump tables of a board.
pub struct JumpTable {
    /// Per cell: the neighbours it can jump over (the landing cell is on the board).
    over: [u64; 64],
    /// Per cell: the multiplier gathering `occ & over[u]` into the top `BITS` bits.
    magic: [u64; 64],
    /// `land[u << BITS | index]`: the landing cells behind the occupied neighbours.
    land: Box<[u64; 64 << BITS]>,
}

impl JumpTable {
    /// The tables for `jumps[u]` = per direction (mask of the cell jumped over, mask of the landing
    /// cell), (0, 0) where the jump leaves the board.
    pub fn new(jumps: &[[(u64, u64); 6]]) -> JumpTable {
        let mut rng = SplitMix64::seed_from_u64(0x9E37_79B9_7F4A_7C15);
        let mut next = move || rng.next_u64();
        assert!(jumps.len() <= 64);
        let mut over = [0u64; 64];
        let mut magic = [0u64; 64];
        let mut land = Box::new([0u64; 64 << BITS]);
        for (u, dirs) in jumps.iter().enumerate() {
            let mask = dirs.iter().fold(0, |m, &(o, _)| m | o);
            over[u] = mask;
            // Every subset of the neighbours with its landing cells.
            let mut subsets = Vec::new();
            let mut sub = 0u64;
            loop {
                let landing = dirs
                    .iter()
                    .filter(|&&(o, _)| o != 0 && sub & o != 0)
                    .fold(0, |m, &(_, l)| m | l);
                subsets.push((sub, landing));
                sub = sub.wrapping_sub(mask) & mask;
                if sub == 0 {
                    break;
                }
            }
            let slot = |m: u64, sub: u64| (sub.wrapping_mul(m) >> (64 - BITS)) as usize;
            let found = (0..1_000_000)
                .map(|_| next() & next() & next())
                .find(|&m| {
                    let mut table = [None; 1 << BITS];
                    subsets.iter().all(|&(sub, landing)| {
                        let e = &mut table[slot(m, sub)];
                        match *e {
                            None => {
                                *e = Some(landing);
                                true
                            }
                            Some(l) => l == landing,
                        }
                    })
                })
                .expect("a jump multiplier for every cell");
            magic[u] = found;
            for &(sub, landing) in &subsets {
                land[u << BITS | slot(found, sub)] = landing;
            }
        }
        JumpTable { over, magic, land }
    }

    /// The cells a piece on `u` reaches with one jump over the occupied cells `occ` (landing cells
    /// not yet checked for being open).
    #[inline(always)]
    pub fn from(&self, u: usize, occ: u64) -> u64 {
        let u = u & 63;
        let index = (occ & self.over[u]).wrapping_mul(self.magic[u]) >> (64 - BITS);
        self.land[u << BITS | index as usize]
    }
}
