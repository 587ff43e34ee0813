//! Breadth-first search from one position over a game's moves, counting the new states at each
//! depth, with a hash set of the states seen: for the first plies of any game, however large its
//! index space (`kingmaker bfs`). For all reachable states of a large game the coordinator uses
//! a bitmap instead.

use crate::game::Game;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// A small, fast hasher for u64 keys (multiplicative; fine for BFS sets of indices).
#[derive(Default)]
struct IndexHasher(u64);

impl Hasher for IndexHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        let h = (self.0 ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 29);
    }
}

type IndexSet = HashSet<u64, BuildHasherDefault<IndexHasher>>;

/// The number of new states at each depth 1..=depth from `start`, ending early at the last depth
/// that has any: the result is shorter than `depth` when the search found every state reachable
/// from `start` before it. Terminal states are reached but not expanded (they have no successors).
pub fn new_per_depth(game: &(impl Game + ?Sized), start: u64, depth: u32) -> Vec<u64> {
    let mut seen = IndexSet::default();
    seen.insert(start);
    let mut frontier = vec![start];
    let mut children = Vec::new();
    let mut result = Vec::with_capacity(depth.min(1024) as usize);
    for _ in 0..depth {
        let mut next = Vec::new();
        for &s in &frontier {
            children.clear();
            game.successors(s, &mut children);
            for &c in &children {
                if seen.insert(c) {
                    next.push(c);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        result.push(next.len() as u64);
        frontier = next;
    }
    result
}
