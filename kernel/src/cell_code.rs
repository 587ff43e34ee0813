//! A cell: six bits per state while a layer is solved, five cells to a 32-bit word (docs/kernel.md).
//! 1. The codes keep the generations two apart, so closing a wave is a subtraction ([`age_words`]).
//! 2. Five cells share a word, so a concurrent update is a compare-and-swap of the word that
//!    changes one field ([`Cell::compare_exchange`]); counts above [`CELL_MAX_COUNTER`] live in
//!    `kernel/src/overflow.rs`.

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Cells per 32-bit word (bits 30 and 31 are always 0).
pub const CELLS_PER_WORD: usize = 5;
/// Bits per cell.
const CELL_BITS: u32 = 6;
const FIELD: u32 = (1 << CELL_BITS) - 1;

/// Undecided, no child decided yet: successors not counted.
pub const CELL_UNCOUNTED: u8 = 0;
/// The largest successor count a cell holds; codes 1 to this are the number of successors not
/// yet known to be bad for the mover.
pub const CELL_MAX_COUNTER: u8 = 55;
/// Undecided, with more successors left than a cell counts: the count is in
/// `OverflowCounts` (`kernel/src/overflow.rs`).
pub const CELL_OVERFLOW: u8 = 56;
/// W, decided before the previous wave.
pub const CELL_WIN_OLD: u8 = 57;
/// L, decided before the previous wave.
pub const CELL_LOSS_OLD: u8 = 58;
/// W, decided in the previous wave: the frontier the running wave expands.
pub const CELL_WIN_CUR: u8 = 59;
/// L, decided in the previous wave.
pub const CELL_LOSS_CUR: u8 = 60;
/// W, decided in the running wave.
pub const CELL_WIN_NEW: u8 = 61;
/// L, decided in the running wave.
pub const CELL_LOSS_NEW: u8 = 62;
/// A state that cannot arise in play.
pub const CELL_ILLEGAL: u8 = 63;

// Aging a cell at the close of a wave subtracts 2: the generations are two apart.
const _: () = assert!(CELL_WIN_CUR == CELL_WIN_OLD + 2 && CELL_WIN_NEW == CELL_WIN_CUR + 2);
const _: () = assert!(CELL_LOSS_CUR == CELL_LOSS_OLD + 2 && CELL_LOSS_NEW == CELL_LOSS_CUR + 2);
const _: () = assert!(CELL_LOSS_OLD == CELL_WIN_OLD + 1 && CELL_LOSS_NEW + 1 == CELL_ILLEGAL);
const _: () = assert!(CELL_ILLEGAL as u32 == FIELD && CELL_OVERFLOW == CELL_MAX_COUNTER + 1);

/// Is the state undecided (uncounted, counting, or counting in the overflow table)?
#[inline]
pub const fn cell_is_undecided(cell: u8) -> bool {
    cell <= CELL_OVERFLOW
}

/// Is this cell a decided W (any generation)?
pub const fn cell_is_win(cell: u8) -> bool {
    matches!(cell, CELL_WIN_OLD | CELL_WIN_CUR | CELL_WIN_NEW)
}

/// Words that hold `cells` cells.
pub const fn words_for(cells: u64) -> u64 {
    cells.div_ceil(CELLS_PER_WORD as u64)
}

/// Bytes of memory (or file) that `cells` cells take.
pub const fn cell_bytes(cells: u64) -> u64 {
    4 * words_for(cells)
}

/// The word and the bit shift of cell `i`.
#[inline(always)]
pub fn locate(i: usize) -> (usize, u32) {
    (i / CELLS_PER_WORD, CELL_BITS * (i % CELLS_PER_WORD) as u32)
}

/// The cell at bit `shift` of `word`.
#[inline(always)]
pub fn field(word: u32, shift: u32) -> u8 {
    (word >> shift & FIELD) as u8
}

/// `word` with the cell at bit `shift` set to `code`.
#[inline(always)]
fn with_field(word: u32, shift: u32, code: u8) -> u32 {
    word & !(FIELD << shift) | (code as u32) << shift
}

/// Cell `i` of packed words, read.
#[inline]
pub fn code_at(words: &[u32], i: usize) -> u8 {
    let (w, shift) = locate(i);
    field(words[w], shift)
}

/// Cell `i` of packed words, set (at a barrier or by the words' only writer).
#[inline]
pub fn set_code(words: &mut [u32], i: usize, code: u8) {
    let (w, shift) = locate(i);
    words[w] = with_field(words[w], shift, code);
}

/// One cell in a word it shares with four others.
#[derive(Clone, Copy)]
pub struct Cell<'a> {
    word: &'a AtomicU32,
    shift: u32,
}

impl<'a> Cell<'a> {
    /// Cell `i` of `words`.
    #[inline(always)]
    pub fn of(words: &'a [AtomicU32], i: usize) -> Cell<'a> {
        let (w, shift) = locate(i);
        Cell {
            word: &words[w],
            shift,
        }
    }

    /// Cell `i` counted from the word at `base`.
    ///
    /// # Safety
    /// `base` must point to live words that hold cell `i`, for as long as `'a`.
    #[inline(always)]
    pub unsafe fn at(base: *const AtomicU32, i: usize) -> Cell<'a> {
        let (w, shift) = locate(i);
        Cell {
            // SAFETY: the caller guarantees that word `w` of `base` is live for 'a.
            word: unsafe { &*base.add(w) },
            shift,
        }
    }

    /// The cell's code.
    #[inline(always)]
    pub fn load(self) -> u8 {
        field(self.word.load(Relaxed), self.shift)
    }

    /// Set the cell to `new` if it is `current`; otherwise the code it holds. The other four
    /// cells of the word may change meanwhile: that only retries.
    #[inline]
    pub fn compare_exchange(self, current: u8, new: u8) -> Result<(), u8> {
        let mut word = self.word.load(Relaxed);
        loop {
            let code = field(word, self.shift);
            if code != current {
                return Err(code);
            }
            match self.word.compare_exchange_weak(
                word,
                with_field(word, self.shift, new),
                Relaxed,
                Relaxed,
            ) {
                Ok(_) => return Ok(()),
                Err(seen) => word = seen,
            }
        }
    }

    /// Set the cell where no other thread writes the word meanwhile: a plain load and store.
    #[inline(always)]
    pub fn store_exclusive(self, new: u8) {
        let word = self.word.load(Relaxed);
        self.word.store(with_field(word, self.shift, new), Relaxed);
    }

    /// Set the cell whatever other threads do to the word's other cells.
    pub fn store(self, new: u8) {
        let _ = self
            .word
            .fetch_update(Relaxed, Relaxed, |w| Some(with_field(w, self.shift, new)));
    }

    /// The cell's address, for a prefetch.
    #[inline(always)]
    pub fn word_ptr(self) -> *const u32 {
        self.word.as_ptr()
    }
}

/// Fields 0, 2 and 4 of two words (bits 0, 12, 24, 32, 44, 56), each with at least the bit above
/// it free: room to add up to 64 to every field at once without a carry between them.
const EVEN: u64 = 0x3F03F03F_3F03F03F;
/// Fields 1 and 3 of two words, shifted down six bits to the slots of fields 0 and 2.
const ODD: u64 = 0x0003F03F_0003F03F;
/// Bit 6 of every slot of [`EVEN`].
const SIXTH: u64 = 0x40040040_40040040;
/// `k` in every slot.
const fn every_slot(k: u64) -> u64 {
    k * 0x01001001_01001001
}
const _: () = assert!(every_slot(1) & EVEN == every_slot(1) && every_slot(64) == SIXTH);

/// Age the fields of [`EVEN`] slots at once: the aged slots, and bit 6 of each slot that was new.
/// A field x is current or new when x + (64 − 59) reaches 64 but x + 1 does not, and new when
/// x + 3 does.
#[inline(always)]
fn age_slots(x: u64) -> (u64, u64) {
    let at_most_62 = !(x + every_slot(1)) & SIXTH;
    let active = (x + every_slot(64 - CELL_WIN_CUR as u64)) & at_most_62;
    let new = (x + every_slot(64 - CELL_WIN_NEW as u64)) & at_most_62;
    // Subtract 2 (bit 6 shifted down 5) from each active field, all at least 59.
    (x - (active >> 5), new)
}

/// Age two words at once (ten cells): the aged words and the ten bits of their cells that were
/// new, in cell order.
#[inline]
fn age_pair(pair: u64) -> (u64, u64) {
    let (even, new_even) = age_slots(pair & EVEN);
    let (odd, new_odd) = age_slots(pair >> 6 & ODD);
    let aged = even | odd << 6;
    if new_even | new_odd == 0 {
        return (aged, 0);
    }
    // Slot bit 6 of field j: even fields at bits 6, 18, 30 (+32), odd ones the same in `odd`.
    let mut bits = 0;
    for (k, at) in [6u32, 18, 30, 38, 50, 62].into_iter().enumerate() {
        let cell = 2 * k - if k >= 3 { 1 } else { 0 }; // 0, 2, 4, 5, 7, 9
        bits |= (new_even >> at & 1) << cell;
        if k % 3 != 2 {
            bits |= (new_odd >> at & 1) << (cell + 1); // 1, 3, 6, 8
        }
    }
    (aged, bits)
}

/// Close a wave on a run of words that starts at a cell that is a multiple of 64 and of five
/// (a block) and holds `cells` cells: the frontier becomes old and the cells decided in the wave
/// become the next frontier, whose bits are written to `bits` (bit `j` of word `w`: cell
/// `64 w + j`). Returns whether any bit is set.
pub fn age_words(words: &mut [u32], cells: usize, bits: &mut [u64]) -> bool {
    debug_assert_eq!(words.len(), cells.div_ceil(CELLS_PER_WORD));
    debug_assert_eq!(bits.len(), cells.div_ceil(64));
    bits.fill(0);
    let mut any = 0;
    let mut put = |at: usize, new: u64| {
        bits[at / 64] |= new << (at % 64);
        // Ten cells may straddle two bitmap words (only real cells are new).
        if at % 64 > 64 - 2 * CELLS_PER_WORD && new >> (64 - at % 64) != 0 {
            bits[at / 64 + 1] |= new >> (64 - at % 64);
        }
    };
    let mut pairs = words.chunks_exact_mut(2);
    for (p, pair) in (&mut pairs).enumerate() {
        let (aged, new) = age_pair(pair[0] as u64 | (pair[1] as u64) << 32);
        (pair[0], pair[1]) = (aged as u32, (aged >> 32) as u32);
        if new != 0 {
            put(p * 2 * CELLS_PER_WORD, new);
            any |= new;
        }
    }
    if let [last] = pairs.into_remainder() {
        let (aged, new) = age_pair(*last as u64);
        *last = aged as u32;
        if new != 0 {
            put((words.len() - 1) * CELLS_PER_WORD, new);
            any |= new;
        }
    }
    any != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The close of a wave, one cell at a time: what `age_words` must do.
    fn age_one(cell: u8) -> (u8, bool) {
        match cell {
            CELL_WIN_CUR => (CELL_WIN_OLD, false),
            CELL_LOSS_CUR => (CELL_LOSS_OLD, false),
            CELL_WIN_NEW => (CELL_WIN_CUR, true),
            CELL_LOSS_NEW => (CELL_LOSS_CUR, true),
            other => (other, false),
        }
    }

    fn packed(codes: &[u8]) -> Vec<u32> {
        let mut words = vec![0; codes.len().div_ceil(CELLS_PER_WORD)];
        for (i, &c) in codes.iter().enumerate() {
            set_code(&mut words, i, c);
        }
        words
    }

    proptest! {
        /// Every code, in runs that do and do not fill whole words and bitmap words.
        #[test]
        fn aging_words_matches_the_rule_cell_by_cell(
            codes in prop::collection::vec(0u8..=CELL_ILLEGAL, 0..700),
        ) {
            let mut words = packed(&codes);
            let mut bits = vec![u64::MAX; codes.len().div_ceil(64)];
            let any = age_words(&mut words, codes.len(), &mut bits);
            for (i, &cell) in codes.iter().enumerate() {
                let (want, frontier) = age_one(cell);
                prop_assert_eq!(code_at(&words, i), want, "cell {} was {}", i, cell);
                prop_assert_eq!(bits[i / 64] >> (i % 64) & 1 == 1, frontier, "bit {}", i);
            }
            let tail = codes.len() % 64;
            if tail != 0 {
                prop_assert_eq!(bits[bits.len() - 1] >> tail, 0, "bits past the last cell");
            }
            prop_assert!(words.iter().all(|w| w >> 30 == 0), "the two spare bits stay clear");
            prop_assert_eq!(any, codes.iter().any(|&c| age_one(c).1));
        }

        /// A field written through any of the three ways reads back, and leaves the other four.
        #[test]
        fn a_cell_changes_alone(
            codes in prop::collection::vec(0u8..=CELL_ILLEGAL, 1..40),
            i in 0usize..40,
            new in 0u8..=CELL_ILLEGAL,
            how in 0u8..3,
        ) {
            let i = i % codes.len();
            let words: Vec<AtomicU32> = packed(&codes).into_iter().map(AtomicU32::new).collect();
            let cell = Cell::of(&words, i);
            prop_assert_eq!(cell.load(), codes[i]);
            match how {
                0 => prop_assert_eq!(cell.compare_exchange(codes[i], new), Ok(())),
                1 => cell.store_exclusive(new),
                _ => cell.store(new),
            }
            if new != codes[i] {
                prop_assert_eq!(cell.compare_exchange(codes[i], 0), Err(new));
            }
            let after: Vec<u32> = words.iter().map(|w| w.load(Relaxed)).collect();
            for (j, &c) in codes.iter().enumerate() {
                prop_assert_eq!(code_at(&after, j), if j == i { new } else { c });
            }
        }
    }

    /// Threads updating neighbouring cells of the same words lose no update.
    #[test]
    fn neighbours_in_one_word_update_concurrently() {
        let words: Vec<AtomicU32> = (0..8).map(|_| AtomicU32::new(0)).collect();
        std::thread::scope(|s| {
            for i in 0..40 {
                let words = &words;
                s.spawn(move || {
                    for step in 0..CELL_MAX_COUNTER {
                        Cell::of(words, i).compare_exchange(step, step + 1).unwrap();
                    }
                });
            }
        });
        let after: Vec<u32> = words.iter().map(|w| w.load(Relaxed)).collect();
        assert!((0..40).all(|i| code_at(&after, i) == CELL_MAX_COUNTER));
    }
}
