//! The dense index: one contiguous block per graph class, ranked by the stack heights, the colour
//! sequence and the side to move (docs/games-internals.md, `games/src/toppen/index.rs`).
//! 1. `index = (block_start[class] + heights_rank) * 504 + colour_rank * 2 + mover`, a class of `v`
//!    vertices owning C(9, v-1) blocks of 504: every block is even, so the mover is the lowest bit.

use super::catalogue::{Catalogue, MAX_V};
use crate::combinatorics::{binomial, subsets};

/// Colourings of the 10 tiles (5 of each colour).
pub const COLOURINGS: u64 = 252;
/// States per (class, heights) block: colourings times the side to move.
pub const BLOCK: u64 = COLOURINGS * 2;

/// One decoded state: per canonical vertex, the stack height and its colours (bit `k` of
/// `bits[u]` set when the `k`-th tile from the bottom is A's).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct State {
    /// The graph class, numbered as in the catalogue.
    pub class: u32,
    /// The class's number of vertices.
    pub n: u8,
    /// `h[u]`: the stack height of vertex `u`.
    pub h: [u8; MAX_V],
    /// `bits[u]`: the colours of vertex `u`'s stack.
    pub bits: [u16; MAX_V],
    /// The side to move (0 = A, 1 = B).
    pub mover: u8,
}

impl State {
    /// The colour (player) of the top tile of vertex `u`: 0 = A, 1 = B.
    #[inline]
    pub fn top(&self, u: usize) -> u8 {
        ((self.bits[u] >> (self.h[u] - 1)) & 1 == 0) as u8
    }

    /// Takes the top tile off vertex `u` and returns its bit (1 = A).
    #[inline]
    pub fn pop(&mut self, u: usize) -> u16 {
        self.h[u] -= 1;
        let b = (self.bits[u] >> self.h[u]) & 1;
        self.bits[u] &= !(1 << self.h[u]);
        b
    }

    /// Puts a tile (bit 1 = A) on top of vertex `u`.
    #[inline]
    pub fn push(&mut self, u: usize, b: u16) {
        self.bits[u] |= b << self.h[u];
        self.h[u] += 1;
    }
}

/// The ranking tables and the block layout of one catalogue.
#[derive(Clone, Debug)]
pub struct IndexSpace {
    colour_rank: Vec<u8>,
    colour_unrank: Vec<u16>,
    comp_rank: Vec<u16>,
    /// `comp_unrank[v]`: the cut masks of compositions into `v` parts, in rank order.
    comp_unrank: Vec<Vec<u16>>,
    /// First block of each class (one extra entry: the total number of blocks).
    block_start: Vec<u64>,
    /// The class owning each block.
    block_class: Vec<u32>,
    /// Vertex count of each class.
    class_n: Vec<u8>,
}

/// Number of compositions of 10 into `v` positive parts: C(9, v-1).
pub fn compositions(v: usize) -> u64 {
    binomial(9, v - 1) as u64
}

impl IndexSpace {
    /// The tables and blocks for the classes of `cat`.
    pub fn new(cat: &Catalogue) -> IndexSpace {
        // Increasing mask order among masks of one popcount is colex order.
        let colour_unrank: Vec<u16> = subsets(MAX_V, 5).map(|set| set as u16).collect();
        let mut colour_rank = vec![u8::MAX; 1 << MAX_V];
        for (rank, &set) in colour_unrank.iter().enumerate() {
            colour_rank[set as usize] = rank as u8;
        }
        let comp_unrank: Vec<Vec<u16>> = (0..=MAX_V)
            .map(|v| match v {
                0 => Vec::new(),
                _ => subsets(MAX_V - 1, v - 1).map(|set| set as u16).collect(),
            })
            .collect();
        let mut comp_rank = vec![0u16; 1 << (MAX_V - 1)];
        for sets in &comp_unrank {
            for (rank, &set) in sets.iter().enumerate() {
                comp_rank[set as usize] = rank as u16;
            }
        }
        let mut block_start = Vec::with_capacity(cat.classes.len() + 1);
        let mut block_class = Vec::new();
        let mut class_n = Vec::with_capacity(cat.classes.len());
        for (id, c) in cat.classes.iter().enumerate() {
            block_start.push(block_class.len() as u64);
            for _ in 0..compositions(c.n as usize) {
                block_class.push(id as u32);
            }
            class_n.push(c.n);
        }
        block_start.push(block_class.len() as u64);
        IndexSpace {
            colour_rank,
            colour_unrank,
            comp_rank,
            comp_unrank,
            block_start,
            block_class,
            class_n,
        }
    }

    /// Size of the index space.
    pub fn size(&self) -> u64 {
        self.block_class.len() as u64 * BLOCK
    }

    /// First index of a class's block range.
    pub fn offset(&self, class: u32) -> u64 {
        self.block_start[class as usize] * BLOCK
    }

    /// The class of an index.
    #[inline]
    pub fn class_of(&self, index: u64) -> u32 {
        self.block_class[(index / BLOCK) as usize]
    }

    /// Number of vertices of the class of an index.
    #[inline]
    pub fn vertices_of(&self, index: u64) -> u8 {
        self.class_n[self.class_of(index) as usize]
    }

    /// Decodes an index (which must be below `size()`).
    #[inline]
    pub fn decode(&self, index: u64) -> State {
        let block = index / BLOCK;
        let class = self.block_class[block as usize];
        let n = self.class_n[class as usize];
        let heights_rank = block - self.block_start[class as usize];
        let within = index % BLOCK;
        let mover = (within & 1) as u8;
        let seq = self.colour_unrank[(within >> 1) as usize];
        let cuts = self.comp_unrank[n as usize][heights_rank as usize];
        let mut h = [0u8; MAX_V];
        let mut bits = [0u16; MAX_V];
        let mut start = 0u32;
        let mut u = 0usize;
        for pos in 1..=MAX_V as u32 {
            // A stack ends after tile `pos - 1` at a cut point or at the end.
            if pos == MAX_V as u32 || cuts & (1 << (pos - 1)) != 0 {
                let len = pos - start;
                h[u] = len as u8;
                bits[u] = (seq >> start) & ((1 << len) - 1);
                start = pos;
                u += 1;
            }
        }
        debug_assert_eq!(u, n as usize);
        State {
            class,
            n,
            h,
            bits,
            mover,
        }
    }

    /// Encodes a state (heights positive and summing to 10, five A tiles).
    #[inline]
    pub fn encode(&self, s: &State) -> u64 {
        let mut cuts = 0u16;
        let mut seq = 0u16;
        let mut pos = 0u32;
        for u in 0..s.n as usize {
            seq |= s.bits[u] << pos;
            pos += s.h[u] as u32;
            if u + 1 < s.n as usize {
                cuts |= 1 << (pos - 1);
            }
        }
        debug_assert_eq!(pos as usize, MAX_V);
        debug_assert_eq!(seq.count_ones(), 5);
        let block = self.block_start[s.class as usize] + self.comp_rank[cuts as usize] as u64;
        block * BLOCK + self.colour_rank[seq as usize] as u64 * 2 + s.mover as u64
    }
}
