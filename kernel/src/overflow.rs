//! Successor counts too large for a cell, kept by state for the cells marked [`CELL_OVERFLOW`]: few
//! states need them, so a map is cheaper than wider cells; it is saved with the cells. A cell enters
//! and leaves [`CELL_OVERFLOW`] only under its part's lock, so count and cell cannot disagree (a
//! favourable child may still decide the cell without the lock; its entry is then never read).

use super::cell_code::{Cell, CELL_OVERFLOW, CELL_UNCOUNTED};
use std::collections::HashMap;
use std::sync::Mutex;

/// Locks, so that threads updating different states rarely wait for each other.
const PARTS: usize = 64;

/// What an unfavourable update did to a cell whose count is here.
#[derive(Debug, PartialEq, Eq)]
pub enum Counted {
    /// Successors remain.
    Remaining,
    /// That was the last: the cell was set to the value bad for its mover.
    Decided,
    /// The cell was decided meanwhile (by a favourable child): nothing to do.
    AlreadyDecided,
}

/// The remaining successor counts of overflowing cells, by state index.
pub struct OverflowCounts {
    parts: Vec<Mutex<HashMap<u64, u32>>>,
}

impl Default for OverflowCounts {
    fn default() -> Self {
        OverflowCounts {
            parts: (0..PARTS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl OverflowCounts {
    fn part(&self, index: u64) -> std::sync::MutexGuard<'_, HashMap<u64, u32>> {
        self.parts[(index % PARTS as u64) as usize]
            .lock()
            .expect("overflow counts")
    }

    /// An unfavourable child reached `cell`, the cell of state `index`, which is
    /// [`CELL_UNCOUNTED`] with `count` (more than a cell holds) successors, or [`CELL_OVERFLOW`].
    /// One successor fewer remains; at none the cell becomes `bad_for_mover`.
    pub fn decrement(
        &self,
        index: u64,
        cell: Cell,
        count: impl FnOnce() -> u32,
        bad_for_mover: u8,
    ) -> Counted {
        let mut part = self.part(index);
        loop {
            let remaining = match cell.load() {
                CELL_OVERFLOW => {
                    let n = part
                        .get_mut(&index)
                        .expect("an overflowing cell has a count");
                    *n -= 1;
                    *n
                }
                CELL_UNCOUNTED => {
                    // Only under this lock does a cell with this many successors leave
                    // CELL_UNCOUNTED for CELL_OVERFLOW; a favourable child may decide it first.
                    if cell
                        .compare_exchange(CELL_UNCOUNTED, CELL_OVERFLOW)
                        .is_err()
                    {
                        continue;
                    }
                    let n = count() - 1;
                    part.insert(index, n);
                    n
                }
                _ => return Counted::AlreadyDecided,
            };
            if remaining > 0 {
                return Counted::Remaining;
            }
            part.remove(&index);
            return match cell.compare_exchange(CELL_OVERFLOW, bad_for_mover) {
                Ok(()) => Counted::Decided,
                Err(_) => Counted::AlreadyDecided,
            };
        }
    }

    /// The counts of the states in `range` whose cell still overflows (by `still`), as
    /// `(index − range.start, count)` in index order: what a checkpoint saves.
    pub fn in_range(
        &self,
        range: std::ops::Range<u64>,
        still: impl Fn(u64) -> bool,
    ) -> Vec<(u64, u32)> {
        let mut out: Vec<(u64, u32)> = self
            .parts
            .iter()
            .flat_map(|p| {
                p.lock()
                    .expect("overflow counts")
                    .iter()
                    .filter(|(i, _)| range.contains(i) && still(**i))
                    .map(|(&i, &n)| (i - range.start, n))
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Forget the counts of the states in `range` (the shard is restored or started again).
    pub fn clear_range(&self, range: std::ops::Range<u64>) {
        for p in &self.parts {
            p.lock()
                .expect("overflow counts")
                .retain(|i, _| !range.contains(i));
        }
    }

    /// Keep `count` for state `index` (restoring a checkpoint).
    pub fn insert(&self, index: u64, count: u32) {
        self.part(index).insert(index, count);
    }

    /// The number of counts held (stale ones included).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.parts
            .iter()
            .map(|p| p.lock().expect("overflow counts").len())
            .sum()
    }

    /// Whether no count is held.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_code::{CELL_LOSS_NEW, CELL_WIN_NEW};
    use std::sync::atomic::AtomicU32;

    #[test]
    fn a_count_runs_down_to_the_bad_value() {
        let words = [AtomicU32::new(0)];
        let counts = OverflowCounts::default();
        let cell = Cell::of(&words, 3);
        let steps: Vec<Counted> = (0..70)
            .map(|_| counts.decrement(7, cell, || 70, CELL_LOSS_NEW))
            .collect();
        assert!(steps[..69].iter().all(|s| *s == Counted::Remaining));
        assert_eq!(steps[69], Counted::Decided);
        assert_eq!(cell.load(), CELL_LOSS_NEW);
        assert!(counts.is_empty());
        assert_eq!(
            counts.decrement(7, cell, || 70, CELL_LOSS_NEW),
            Counted::AlreadyDecided
        );
    }

    #[test]
    fn a_favourable_child_leaves_a_stale_count_that_is_not_saved() {
        let words = [AtomicU32::new(0)];
        let counts = OverflowCounts::default();
        let cell = Cell::of(&words, 0);
        counts.decrement(100, cell, || 60, CELL_WIN_NEW);
        assert_eq!(counts.in_range(0..1000, |_| true), vec![(100, 59)]);
        cell.compare_exchange(CELL_OVERFLOW, CELL_LOSS_NEW).unwrap();
        assert_eq!(
            counts.decrement(100, cell, || 60, CELL_WIN_NEW),
            Counted::AlreadyDecided
        );
        assert!(counts.in_range(0..1000, |_| false).is_empty());
        counts.clear_range(0..1000);
        assert!(counts.is_empty());
    }

    /// Many threads counting down cells of shared words: each cell is decided exactly once,
    /// by its last successor.
    #[test]
    fn concurrent_countdowns_decide_each_cell_once() {
        let words: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        let counts = OverflowCounts::default();
        let decided = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..100 {
                        for i in 0..20 {
                            let cell = Cell::of(&words, i);
                            // 20 cells × 800 decrements: 800 successors each.
                            if counts.decrement(i as u64, cell, || 800, CELL_LOSS_NEW)
                                == Counted::Decided
                            {
                                decided.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(decided.into_inner(), 20);
        assert!((0..20).all(|i| Cell::of(&words, i).load() == CELL_LOSS_NEW));
    }
}
