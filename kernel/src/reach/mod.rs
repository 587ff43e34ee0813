//! The states reachable from a start position, as a bitmap: a breadth-first search over the
//! game's successors (terminal states have none), level by level, on all cores. One bit per
//! state, three bitmaps while searching (seen, this level, the next): 5.6 GB for 14.8 billion
//! states. A search can checkpoint itself between levels and resume (`kingmaker_tablefmt::reach`
//! has the files).

mod checkpoint;

pub use checkpoint::{ReachCheckpoints, StopRequest};

use crate::{Game, KernelError};
use checkpoint::{cp_path, restore, save, Armed, Search};
use kingmaker_tablefmt::reach as format;
use kingmaker_tablefmt::FormatError;
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

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

    /// The words of chunk `c` of the checkpoint files ([`format::CHUNK_STATES`] states each).
    fn file_words(&self, c: usize) -> std::ops::Range<usize> {
        let per = (format::CHUNK_STATES / 64) as usize;
        c * per..((c + 1) * per).min(self.words.len())
    }

    /// The bits of checkpoint chunk `c`, little-endian words.
    fn chunk_bytes(&self, c: usize) -> Vec<u8> {
        self.words[self.file_words(c)]
            .iter()
            .flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes())
            .collect()
    }

    /// Set the words of checkpoint chunk `c` from its bytes (checked to fit by the caller).
    fn load_chunk(&self, c: usize, bytes: &[u8]) {
        for (w, b) in self.words[self.file_words(c)]
            .iter()
            .zip(bytes.chunks_exact(8))
        {
            w.store(
                u64::from_le_bytes(b.try_into().expect("8 bytes")),
                Ordering::Relaxed,
            );
        }
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

    /// Mark the chunks that hold any of the level (after its bits were loaded from a file).
    fn find_busy_chunks(&self) {
        self.busy.par_iter().enumerate().for_each(|(c, busy)| {
            let words = c * CHUNK_WORDS..((c + 1) * CHUNK_WORDS).min(self.bits.words.len());
            let any = self.bits.words[words]
                .iter()
                .any(|w| w.load(Ordering::Relaxed) != 0);
            busy.store(any, Ordering::Relaxed);
        });
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
    reachable_resumable(game, start, "", None, &mut (), |(), d, level| {
        on_level(d, level)
    })
    .expect("a search without checkpoints reads and writes no file")
    .expect("a search without checkpoints is never stopped")
}

/// [`reachable`], checkpointed: what `on_level` counts goes into `counted`, which is saved with
/// each checkpoint and restored with it. A checkpoint in `checkpoints.dir` is resumed when it is
/// of the same `purpose`, game size and start (else the error says so); it is removed when the
/// search is done. `None` when `checkpoints.stop` stopped the search (checkpointed, unless
/// nothing was done since the start or the restore); the request is armed from the restore to
/// the end of the search.
pub fn reachable_resumable<T: Serialize + DeserializeOwned>(
    game: &(impl Game + ?Sized),
    start: u64,
    purpose: &str,
    checkpoints: Option<&ReachCheckpoints>,
    counted: &mut T,
    mut on_level: impl FnMut(&mut T, u32, &Bitmap),
) -> Result<Option<(Bitmap, Vec<u64>)>, KernelError> {
    let size = game.size();
    let restored = match checkpoints {
        Some(cp) => restore(cp, purpose, size, start)?,
        None => None,
    };
    let (seen, mut now, first, mut per_depth, mut saved) = match restored {
        Some((manifest, seen, now)) => {
            *counted = serde_json::from_value(manifest.counted.clone()).map_err(|e| {
                FormatError::Corrupt(format!(
                    "{}: the counts saved with it do not parse: {e}",
                    cp_path(checkpoints)
                ))
            })?;
            tracing::info!(
                "reachable states: resumed at depth {} from {}",
                manifest.depth,
                cp_path(checkpoints)
            );
            (
                seen,
                now,
                manifest.depth,
                manifest.per_depth.clone(),
                Some(manifest),
            )
        }
        None => {
            let (seen, now) = (Bitmap::new(size), Level::new(size));
            seen.insert(start);
            now.insert(start);
            (seen, now, 0, vec![1u64], None)
        }
    };
    let mut next = Level::new(size);
    let mut last_save = Instant::now();
    let _armed = Armed::new(checkpoints.and_then(|cp| cp.stop.as_deref()));
    for depth in first.. {
        if let Some(cp) = checkpoints {
            let stopping = cp.stop.as_ref().is_some_and(|s| s.requested());
            if depth > first && (stopping || last_save.elapsed() >= cp.every) {
                let took = Instant::now();
                let search = Search {
                    purpose,
                    size,
                    start,
                    depth,
                    per_depth: &per_depth,
                    seen: &seen,
                    level: &now.bits,
                };
                let counted = serde_json::to_value(&*counted).expect("counts serialise");
                saved = Some(save(cp, &search, counted, saved.as_ref())?);
                tracing::info!(
                    "reachable states: checkpoint at depth {depth} written to {} in {:.1}s",
                    cp.dir.display(),
                    took.elapsed().as_secs_f64()
                );
                last_save = Instant::now();
            }
            if stopping {
                return Ok(None);
            }
        }
        on_level(counted, depth, &now.bits);
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
    if let Some(cp) = checkpoints {
        match std::fs::remove_dir_all(&cp.dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(KernelError::io(&cp.dir, e))
            }
            _ => {}
        }
    }
    Ok(Some((seen, per_depth)))
}
