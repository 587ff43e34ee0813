//! The states reachable from a start position, as a bitmap: a breadth-first search over the
//! game's successors (terminal states are reached but have no successors), level by level, on all
//! cores. One bit per state, three bitmaps while searching (seen, this level, the next): 5.6 GB
//! for 14.8 billion states, where a hash set of indices would need
//! hundreds of gigabytes.

use crate::Game;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// States per chunk of a level bitmap: the search visits only chunks that hold some of the level.
const CHUNK_STATES: u64 = 1 << 22;
const CHUNK_WORDS: usize = (CHUNK_STATES / 64) as usize;

/// A set of states `0..len` as bits, shareable between threads.
pub struct Bitmap {
    words: Vec<AtomicU64>,
}

impl Bitmap {
    /// The empty set of `0..len`.
    pub fn new(len: u64) -> Bitmap {
        Bitmap {
            words: (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Set bit `i`; true if it was not set before.
    #[inline]
    pub fn insert(&self, i: u64) -> bool {
        let bit = 1u64 << (i % 64);
        self.words[(i / 64) as usize].fetch_or(bit, Ordering::Relaxed) & bit == 0
    }

    #[inline]
    /// Whether `i` is in the set.
    pub fn contains(&self, i: u64) -> bool {
        self.words[(i / 64) as usize].load(Ordering::Relaxed) >> (i % 64) & 1 == 1
    }

    /// How many states are in the set.
    pub fn count(&self) -> u64 {
        self.words
            .par_iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as u64)
            .sum()
    }

    /// The set states of word range `words`, in increasing order.
    fn each_in(&self, words: std::ops::Range<usize>, mut f: impl FnMut(u64)) {
        for w in words {
            let mut bits = self.words[w].load(Ordering::Relaxed);
            while bits != 0 {
                f(w as u64 * 64 + bits.trailing_zeros() as u64);
                bits &= bits - 1;
            }
        }
    }

    /// Fold over the set states in parallel (each chunk of states in increasing order).
    pub fn par_fold<T: Send>(
        &self,
        init: impl Fn() -> T + Sync + Send,
        f: impl Fn(&mut T, u64) + Sync + Send,
        merge: impl Fn(T, T) -> T + Sync + Send,
    ) -> T {
        let chunks = self.words.len().div_ceil(CHUNK_WORDS);
        (0..chunks)
            .into_par_iter()
            .fold(&init, |mut acc, c| {
                let words = c * CHUNK_WORDS..((c + 1) * CHUNK_WORDS).min(self.words.len());
                self.each_in(words, |i| f(&mut acc, i));
                acc
            })
            .reduce(&init, merge)
    }

    /// The first set state, in index order, for which `f` holds.
    pub fn first_where(&self, f: impl Fn(u64) -> bool) -> Option<u64> {
        let mut found = None;
        for w in 0..self.words.len() {
            self.each_in(w..w + 1, |i| {
                if found.is_none() && f(i) {
                    found = Some(i);
                }
            });
            if found.is_some() {
                break;
            }
        }
        found
    }

    fn clear_chunk(&self, c: usize) {
        let end = ((c + 1) * CHUNK_WORDS).min(self.words.len());
        for w in &self.words[c * CHUNK_WORDS..end] {
            w.store(0, Ordering::Relaxed);
        }
    }
}

/// One level of the search: its states and which chunks hold any.
struct Level {
    bits: Bitmap,
    busy: Vec<AtomicBool>,
}

impl Level {
    fn new(len: u64) -> Level {
        let bits = Bitmap::new(len);
        let chunks = bits.words.len().div_ceil(CHUNK_WORDS);
        Level {
            bits,
            busy: (0..chunks).map(|_| AtomicBool::new(false)).collect(),
        }
    }

    fn insert(&self, i: u64) {
        self.bits.insert(i);
        self.busy[(i / CHUNK_STATES) as usize].store(true, Ordering::Relaxed);
    }

    fn busy_chunks(&self) -> Vec<usize> {
        (0..self.busy.len())
            .filter(|&c| self.busy[c].load(Ordering::Relaxed))
            .collect()
    }

    fn clear(&self) {
        self.busy_chunks().into_par_iter().for_each(|c| {
            self.bits.clear_chunk(c);
            self.busy[c].store(false, Ordering::Relaxed);
        });
    }
}

/// Every state reachable from `start`, with the number of new states at each depth (depth 0 is
/// the start itself). `on_level(depth, states)` sees each level's bitmap before the next is built.
pub fn reachable(
    game: &(impl Game + ?Sized),
    start: u64,
    mut on_level: impl FnMut(u32, &Bitmap),
) -> (Bitmap, Vec<u64>) {
    let size = game.size();
    let seen = Bitmap::new(size);
    let (mut now, mut next) = (Level::new(size), Level::new(size));
    seen.insert(start);
    now.insert(start);
    let mut per_depth = vec![1u64];
    for depth in 0.. {
        on_level(depth, &now.bits);
        let found: u64 = now
            .busy_chunks()
            .into_par_iter()
            .map(|c| {
                let mut children = Vec::new();
                let mut found = 0u64;
                let words = c * CHUNK_WORDS..((c + 1) * CHUNK_WORDS).min(now.bits.words.len());
                now.bits.each_in(words, |s| {
                    children.clear();
                    game.successors(s, &mut children);
                    for &child in &children {
                        if seen.insert(child) {
                            next.insert(child);
                            found += 1;
                        }
                    }
                });
                found
            })
            .sum();
        if found == 0 {
            break;
        }
        tracing::info!("reachable states: {found} new at depth {}", depth + 1);
        per_depth.push(found);
        now.clear();
        std::mem::swap(&mut now, &mut next);
    }
    (seen, per_depth)
}
