//! A game the kernel solves in place of a larger one (a symmetry quotient, such as cc2p's
//! colour-swap half), and how its solved table becomes the full game's, byte-identical to a full
//! solve's: in memory ([`Reduction::expand_rows`]) or out of core, zone by zone.
//! 1. Out of core, the reduced table is read once and the full table written twice whatever the
//!    number of zones, in a zone per thread: docs/games-internals.md, `games/src/reduction.rs`.

use crate::huge::huge_vec;
use kingmaker_tablefmt::value::{DRAW, ILLEGAL, LOSS, WIN};
use std::ops::Range;

/// The states routed to a zone, read back in order: fills both buffers with the next ones.
pub type ReadRouted<'a> = dyn FnMut(&mut [u8], &mut [u16]) -> anyhow::Result<()> + 'a;

/// A game solved in place of a larger one.
pub trait Reduction: Sync {
    /// The number of states of the full game.
    fn full_size(&self) -> u64;
    /// The full game's name.
    fn full_name(&self) -> String;
    /// Rows `first .. first + values.len()` of the full game's table from the solved reduced
    /// table (whole rows as the game needs them: see the game's documentation).
    fn expand_rows(&self, first: u64, solved: &SolvedTable, values: &mut [u8], depth: &mut [u16]);
    /// The full table cut into consecutive zones of at most `states` states each (but at least
    /// one of the game's rows), in index order.
    fn zones(&self, states: u64) -> Vec<Range<u64>>;
    /// The reduced table is routed in runs of whole blocks of this many states.
    fn block_states(&self) -> u64;
    /// Route the reduced states `first .. first + values.len()` (whole blocks, the runs handed
    /// over in index order) to `zones`: `out[z]` gets, appended, the values and depths of the
    /// states of zone `z` they answer, in the order [`Reduction::expand_zone`] reads them. Over
    /// the whole reduced table every full state is routed exactly once.
    fn scatter(
        &self,
        zones: &[Range<u64>],
        first: u64,
        values: &[u8],
        depth: &[u16],
        out: &mut [(Vec<u8>, Vec<u16>)],
    );
    /// The full table's states `zone` (one of [`Reduction::zones`]) from the states routed to
    /// it, read in order with `read`.
    fn expand_zone(
        &self,
        zone: Range<u64>,
        read: &mut ReadRouted,
        values: &mut [u8],
        depth: &mut [u16],
    ) -> anyhow::Result<()>;
}

/// Values and depths of consecutive states.
pub type Rows = (Vec<u8>, Vec<u16>);

/// One zone of the full table (one of [`Reduction::zones`]) from the states routed to it, which
/// `next` hands over in order, a batch at a time, `None` after the last; fewer or more states
/// than the zone needs is an error.
pub fn fill_zone(
    reduction: &dyn Reduction,
    zone: Range<u64>,
    mut next: impl FnMut() -> anyhow::Result<Option<Rows>>,
) -> anyhow::Result<Rows> {
    let n = (zone.end - zone.start) as usize;
    let (mut values, mut depth) = (vec![0u8; n], vec![0u16; n]);
    let (mut batch, mut at): (Rows, usize) = (Default::default(), 0);
    {
        let mut read = |v: &mut [u8], d: &mut [u16]| -> anyhow::Result<()> {
            let mut done = 0;
            while done < v.len() {
                if at == batch.0.len() {
                    batch = next()?.ok_or_else(|| {
                        anyhow::anyhow!("fewer states were routed to the zone than it needs")
                    })?;
                    at = 0;
                }
                let k = (v.len() - done).min(batch.0.len() - at);
                v[done..done + k].copy_from_slice(&batch.0[at..at + k]);
                d[done..done + k].copy_from_slice(&batch.1[at..at + k]);
                (done, at) = (done + k, at + k);
            }
            Ok(())
        };
        reduction.expand_zone(zone.clone(), &mut read, &mut values, &mut depth)?;
    }
    anyhow::ensure!(
        at == batch.0.len() && next()?.is_none(),
        "more states were routed to zone {zone:?} than it needs"
    );
    Ok((values, depth))
}

/// A solved table in memory, as [`Reduction::expand_rows`] reads it: the value and depth of every
/// state, in the narrowest of these stores that holds every state appended so far (one that does
/// not fit widens it):
/// 1. Six bits a state, four states in three bytes (state `i` in bits `6 * (i % 4)` of the
///    little-endian 24 bits at byte `3 * (i / 4)`): 0 illegal, 1 drawn, `2 + d` decided at depth
///    `d <= 60`, won if `d` is odd and lost if even, as in a game that alternates sides; 63 a
///    state that does not fit, whose value and depth are listed apart (cc2p 5×5 / 6 has 1,850 of
///    2.4 × 10⁹ deeper than 60). A quarter less memory than a byte a state, an eighth of two bytes
///    with escapes, for the peak of a build that expands in memory; the parity is checked on every
///    state appended, not assumed. More escapes than [`ESCAPES_PER`] widen it.
/// 2. A byte, the value in its top two bits, while every depth is below 64.
/// 3. A u16, the value in its top two bits, while every depth is below 2^14.
/// 4. Two arrays.
///
/// The expansion reads it at random, so it asks for huge pages (fewer TLB misses), the packing
/// cuts the cache misses and the memory, and [`SolvedTable::prefetch`] keeps misses in flight.
pub struct SolvedTable {
    store: Store,
    capacity: usize,
    /// The six-bit store's states that do not fit it, in index order.
    escaped: Vec<Escaped>,
}

/// A state of the six-bit store listed apart.
#[derive(Clone, Copy)]
struct Escaped {
    index: u64,
    value: u8,
    depth: u16,
}

/// The six-bit store lists apart at most one state in this many (and 4,096 more):
/// a quarter of a byte a state at most, before a wider store is cheaper.
pub const ESCAPES_PER: usize = 64;
const ESCAPES_FREE: usize = 4096;

enum Store {
    /// The packed codes, then a zero byte of padding (so that a state's group reads as one
    /// unaligned u32), and the number of states.
    Six(Vec<u8>, usize),
    Byte(Vec<u8>),
    Packed(Vec<u16>),
    Wide(Vec<u8>, Vec<u16>),
}

const SIX_BITS: u32 = 6;
/// The deepest decided state of the six-bit store.
const SIX_DEEPEST: u16 = (1 << SIX_BITS) - 4;
/// The six-bit code of a state listed apart.
const SIX_ESCAPE: u32 = (1 << SIX_BITS) - 1;
const BYTE_DEPTH_BITS: u32 = 6;
const DEPTH_BITS: u32 = 14;

/// Whether a state fits the six-bit store (see [`SolvedTable`]): branch-free, for a pass over a
/// whole run.
#[inline(always)]
fn fits_six(value: u8, depth: u16) -> bool {
    let decided = (value == WIN) | (value == LOSS);
    let odd = depth & 1 == 1;
    (decided & (depth <= SIX_DEEPEST) & (odd == (value == WIN))) | (!decided & (depth == 0))
}

/// The six-bit code of a state: [`SIX_ESCAPE`] for one that does not fit.
#[inline(always)]
fn six_code(value: u8, depth: u16) -> u32 {
    let code = match value {
        ILLEGAL => 0,
        DRAW => 1,
        _ => 2 + depth as u32,
    };
    if fits_six(value, depth) {
        code
    } else {
        SIX_ESCAPE
    }
}

/// The value of each six-bit code.
const SIX_VALUES: [u8; 1 << SIX_BITS] = {
    let mut values = [WIN; 1 << SIX_BITS];
    (values[0], values[1]) = (ILLEGAL, DRAW);
    let mut code = 2;
    while code < values.len() {
        values[code] = LOSS;
        code += 2;
    }
    values
};

/// Up to four states' six-bit codes as the three bytes of their group.
#[inline(always)]
fn six_group(values: &[u8], depth: &[u16]) -> [u8; 3] {
    let mut w = 0;
    for (k, (&v, &d)) in values.iter().zip(depth).enumerate() {
        w |= six_code(v, d) << (SIX_BITS * k as u32);
    }
    let [a, b, c, _] = w.to_le_bytes();
    [a, b, c]
}

impl SolvedTable {
    /// An empty table for `len` states (appended in index order with [`SolvedTable::append`]),
    /// in six bits a state (states that do not fit are listed apart, and too many widen it).
    pub fn with_capacity(len: u64) -> SolvedTable {
        Self::empty(len as usize, SIX_BITS)
    }

    /// An empty table for `capacity` states in the store of `bits` bits a state.
    fn empty(capacity: usize, bits: u32) -> SolvedTable {
        let store = match bits {
            SIX_BITS => {
                let mut b = huge_vec(3 * capacity.div_ceil(4) + 1);
                b.push(0);
                Store::Six(b, 0)
            }
            8 => Store::Byte(huge_vec(capacity)),
            16 => Store::Packed(huge_vec(capacity)),
            _ => Store::Wide(huge_vec(capacity), huge_vec(capacity)),
        };
        SolvedTable {
            store,
            capacity,
            escaped: Vec::new(),
        }
    }

    /// Bits per state of the narrowest store past the six-bit one that holds depths up to
    /// `deepest`.
    fn bits_per_depth(deepest: u32) -> u32 {
        match deepest {
            d if d >> BYTE_DEPTH_BITS == 0 => 8,
            d if d >> DEPTH_BITS == 0 => 16,
            _ => 24,
        }
    }

    /// Append the next run of states.
    pub fn append(&mut self, values: &[u8], depth: &[u16]) {
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        debug_assert!(values
            .iter()
            .all(|&v| v <= kingmaker_tablefmt::value::MAX_CODE));
        let stored = self.bits_per_stored_state();
        let fits = stored == SIX_BITS
            && values
                .iter()
                .zip(depth)
                .fold(true, |fits, (&v, &d)| fits & fits_six(v, d));
        if !fits {
            let deepest = depth.iter().copied().max().unwrap_or(0);
            if stored != SIX_BITS {
                let bits = Self::bits_per_depth(deepest as u32);
                if bits > stored {
                    self.widen(bits);
                }
            } else {
                let misfits = values
                    .iter()
                    .zip(depth)
                    .filter(|(&v, &d)| !fits_six(v, d))
                    .count();
                if self.escaped.len() + misfits > self.capacity / ESCAPES_PER + ESCAPES_FREE {
                    let listed = self.escaped.iter().map(|e| e.depth).max().unwrap_or(0);
                    self.widen(Self::bits_per_depth(deepest.max(listed) as u32));
                } else {
                    let first = self.len();
                    let all = values.iter().zip(depth).enumerate();
                    self.escaped
                        .extend(all.filter(|(_, (&v, &d))| !fits_six(v, d)).map(
                            |(k, (&value, &depth))| Escaped {
                                index: first + k as u64,
                                value,
                                depth,
                            },
                        ));
                }
            }
        }
        let pairs = values.iter().zip(depth);
        match &mut self.store {
            Store::Six(b, len) => {
                // The padding byte goes, then the last group if part full, refilled with the
                // run's first states; then whole groups; then the rest in a last group.
                b.pop();
                let mut at = 0;
                let part = *len % 4;
                if part != 0 && !values.is_empty() {
                    at = (4 - part).min(values.len());
                    let last = b.len() - 3;
                    let mut w = u32::from_le_bytes([b[last], b[last + 1], b[last + 2], 0]);
                    let first = values.iter().zip(depth).take(at);
                    for (k, (&v, &d)) in first.enumerate() {
                        w |= six_code(v, d) << (SIX_BITS * (part + k) as u32);
                    }
                    b[last..].copy_from_slice(&w.to_le_bytes()[..3]);
                }
                let (values, depth) = (&values[at..], &depth[at..]);
                let start = b.len();
                b.resize(start + 3 * values.len().div_ceil(4), 0);
                let (v4, d4) = (values.chunks_exact(4), depth.chunks_exact(4));
                let rest = (v4.remainder(), d4.remainder());
                for (group, (v, d)) in b[start..].chunks_exact_mut(3).zip(v4.zip(d4)) {
                    group.copy_from_slice(&six_group(v, d));
                }
                if !rest.0.is_empty() {
                    let last = b.len() - 3;
                    b[last..].copy_from_slice(&six_group(rest.0, rest.1));
                }
                b.push(0);
                *len += at + values.len();
            }
            Store::Byte(b) => b.extend(pairs.map(|(&v, &d)| v << BYTE_DEPTH_BITS | d as u8)),
            Store::Packed(p) => p.extend(pairs.map(|(&v, &d)| (v as u16) << DEPTH_BITS | d)),
            Store::Wide(v, d) => {
                v.extend_from_slice(values);
                d.extend_from_slice(depth);
            }
        }
    }

    /// Bits per state of the store in use.
    fn bits_per_stored_state(&self) -> u32 {
        match self.store {
            Store::Six(..) => SIX_BITS,
            Store::Byte(_) => 8,
            Store::Packed(_) => 16,
            Store::Wide(..) => 24,
        }
    }

    /// Move to the wider store of `bits` bits a state (a state did not fit), with every state.
    fn widen(&mut self, bits: u32) {
        let mut wider = Self::empty(self.capacity, bits);
        const RUN: u64 = 1 << 16;
        let (mut values, mut depth) = (Vec::new(), Vec::new());
        for first in (0..self.len()).step_by(RUN as usize) {
            values.clear();
            depth.clear();
            for i in first..(first + RUN).min(self.len()) {
                let (v, d) = self.get(i);
                values.push(v);
                depth.push(d);
            }
            wider.append(&values, &depth);
        }
        debug_assert_eq!(wider.bits_per_stored_state(), bits);
        *self = wider;
    }

    /// The number of states appended so far.
    pub fn len(&self) -> u64 {
        match &self.store {
            Store::Six(_, len) => *len as u64,
            Store::Byte(b) => b.len() as u64,
            Store::Packed(p) => p.len() as u64,
            Store::Wide(v, _) => v.len() as u64,
        }
    }

    /// Whether no state has been appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ask for state `i`'s cache line ahead of [`SolvedTable::get`]: a loop that reads at random
    /// keeps more misses in flight this way than its reorder window holds (the six-bit store's
    /// decoding makes that window short). A hint, no more: `i` may be out of range.
    #[inline(always)]
    pub fn prefetch(&self, i: u64) {
        let at: *const u8 = match &self.store {
            Store::Six(b, _) => b.as_ptr().wrapping_add((i as usize / 4).wrapping_mul(3)),
            Store::Byte(b) => b.as_ptr().wrapping_add(i as usize),
            Store::Packed(p) => p.as_ptr().wrapping_add(i as usize).cast(),
            Store::Wide(v, _) => v.as_ptr().wrapping_add(i as usize),
        };
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing the program sees and faults on no address.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(at.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }

    /// (value, depth) of state `i`.
    #[inline(always)]
    pub fn get(&self, i: u64) -> (u8, u16) {
        match &self.store {
            Store::Six(b, len) => {
                if i >= *len as u64 {
                    out_of_range(i, *len);
                }
                let at = 3 * (i as usize / 4);
                let group = u32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes"));
                let code = (group >> (SIX_BITS * (i as u32 % 4))) & ((1 << SIX_BITS) - 1);
                if code == SIX_ESCAPE {
                    return self.escaped(i);
                }
                (SIX_VALUES[code as usize], code.saturating_sub(2) as u16)
            }
            Store::Byte(b) => {
                let x = b[i as usize];
                (
                    x >> BYTE_DEPTH_BITS,
                    (x & ((1 << BYTE_DEPTH_BITS) - 1)) as u16,
                )
            }
            Store::Packed(p) => {
                let x = p[i as usize];
                ((x >> DEPTH_BITS) as u8, x & ((1 << DEPTH_BITS) - 1))
            }
            Store::Wide(v, d) => (v[i as usize], d[i as usize]),
        }
    }
}

impl SolvedTable {
    /// A state listed apart, out of [`SolvedTable::get`]'s way.
    #[cold]
    #[inline(never)]
    fn escaped(&self, i: u64) -> (u8, u16) {
        let at = self
            .escaped
            .binary_search_by_key(&i, |e| e.index)
            .expect("a state coded as listed apart is listed");
        (self.escaped[at].value, self.escaped[at].depth)
    }

    /// States listed apart from the six-bit store.
    pub fn escapes(&self) -> usize {
        self.escaped.len()
    }
}

/// The panic of [`SolvedTable::get`] past the last state, out of its way.
#[cold]
#[inline(never)]
fn out_of_range(i: u64, len: usize) -> ! {
    panic!("state {i} of a table of {len}")
}

#[cfg(test)]
mod tests {
    use super::SolvedTable;
    use kingmaker_tablefmt::value::{DRAW, ILLEGAL, LOSS, WIN};
    use proptest::prelude::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// Every state of `want` reads back from `table`, which holds no more.
    fn reads_back(table: &SolvedTable, want: &[(u8, u16)]) {
        assert_eq!(table.len(), want.len() as u64);
        for (i, &pair) in want.iter().enumerate() {
            assert_eq!(table.get(i as u64), pair, "state {i} of {}", want.len());
        }
    }

    /// A state as a game that alternates sides has it: a win at an odd depth, a loss at an even
    /// one, illegal and drawn states at depth 0; up to depth 61 (past 60 listed apart).
    fn alternating(value: u8, half_depth: u16) -> (u8, u16) {
        match value {
            WIN => (WIN, 2 * (half_depth % 31) + 1),
            LOSS => (LOSS, 2 * (half_depth % 31)),
            other => (other, 0),
        }
    }

    fn random_alternating(rng: &mut StdRng, n: usize) -> Vec<(u8, u16)> {
        (0..n)
            .map(|_| alternating(rng.gen_range(0..4), rng.gen_range(0..30)))
            .collect()
    }

    fn append(table: &mut SolvedTable, states: &[(u8, u16)]) {
        let (values, depth): (Vec<u8>, Vec<u16>) = states.iter().copied().unzip();
        table.append(&values, &depth);
    }

    /// States that do not fit six bits, past the share listed apart, widen the table to the store
    /// of the deepest, and every state reads back.
    #[test]
    fn a_solved_table_widens_for_many_deeper_states_and_keeps_every_state() {
        let runs: [(u16, u16); 3] = [(0, 64), (64, 300), (300, 20_000)];
        let capacity = 64 * 1000;
        let limit = capacity / super::ESCAPES_PER + super::ESCAPES_FREE;
        let mut table = SolvedTable::with_capacity(capacity as u64);
        let mut want = Vec::new();
        for ((low, high), bits) in runs.into_iter().zip([8, 16, 24]) {
            // Each a won state at an even depth: none fits six bits.
            let n = limit as u16 + 1;
            let depth: Vec<u16> = (0..n)
                .map(|i| (low + (u32::from(i) * 14 % u32::from(high - low)) as u16) & !1)
                .collect();
            let values = vec![WIN; n as usize];
            table.append(&values, &depth);
            want.extend(values.into_iter().zip(depth));
            reads_back(&table, &want);
            assert_eq!(table.bits_per_stored_state(), bits);
            assert_eq!(table.escapes(), 0);
        }
    }

    /// A table starts in six bits a state.
    #[test]
    fn a_solved_table_starts_in_six_bits() {
        let table = SolvedTable::with_capacity(1000);
        assert_eq!(table.bits_per_stored_state(), 6);
        assert!(table.is_empty());
        // A hint, anywhere.
        for i in [0, 999, 1 << 40, u64::MAX] {
            table.prefetch(i);
        }
    }

    /// The states of a game that alternates sides, appended in runs of every length (part
    /// groups of four included, past the capacity too), stay in six bits a state and read back.
    #[test]
    fn a_solved_table_of_alternating_sides_keeps_six_bits_a_state() {
        let mut rng = StdRng::seed_from_u64(6);
        for capacity in [0, 1000, 6000] {
            let mut table = SolvedTable::with_capacity(capacity);
            let mut want = Vec::new();
            let random: Vec<usize> = (0..60).map(|_| rng.gen_range(0..40)).collect();
            let lengths = (0..9).chain([1000, 1, 2, 3, 4097]).chain(random);
            for n in lengths {
                let run = random_alternating(&mut rng, n);
                append(&mut table, &run);
                want.extend(run);
                reads_back(&table, &want);
                assert_eq!(table.bits_per_stored_state(), 6);
            }
            // Every code.
            let run: Vec<_> = (0..4)
                .flat_map(|v| (0..31).map(move |h| alternating(v, h)))
                .collect();
            append(&mut table, &run);
            want.extend(run);
            reads_back(&table, &want);
            assert_eq!(table.bits_per_stored_state(), 6);
        }
    }

    /// One state that does not fit six bits, amid ones that do, is listed apart: the table stays
    /// in six bits, with every state before and after it.
    #[test]
    fn a_state_out_of_parity_or_too_deep_is_listed_apart() {
        let mut rng = StdRng::seed_from_u64(7);
        let odd = [
            (WIN, 4),
            (WIN, 0),
            (LOSS, 3),
            (DRAW, 2),
            (ILLEGAL, 1),
            (WIN, 61),
            (WIN, 63),
            (LOSS, 62),
            (WIN, 62),
            (LOSS, 64),
            (WIN, 20_001),
        ];
        for state in odd {
            for (before, at) in [(0, 0), (7, 3), (4099, 10), (4100, 0)] {
                let mut table = SolvedTable::with_capacity(10_000);
                let mut want = random_alternating(&mut rng, before);
                append(&mut table, &want);
                let mut run = random_alternating(&mut rng, 21);
                run.insert(at, state);
                append(&mut table, &run);
                want.extend(run);
                reads_back(&table, &want);
                let after = random_alternating(&mut rng, 1003);
                append(&mut table, &after);
                want.extend(after);
                assert_eq!(table.bits_per_stored_state(), 6, "{state:?}");
                assert_eq!(table.escapes(), 1, "{state:?}");
                reads_back(&table, &want);
            }
        }
    }

    /// A state as a game that alternates sides has it, mostly, and any state else.
    fn state() -> impl Strategy<Value = (u8, u16)> {
        prop_oneof![
            30 => (0..4u8, 0..31u16).prop_map(|(v, h)| alternating(v, h)),
            1 => (0..4u8, 0..70u16),
            1 => (0..4u8, any::<u16>()),
        ]
    }

    proptest! {
        /// Runs of any states read back; those that do not fit six bits are listed apart.
        #[test]
        fn a_solved_table_reads_back_every_run(
            runs in prop::collection::vec(prop::collection::vec(state(), 0..40), 0..10),
        ) {
            let mut table = SolvedTable::with_capacity(100);
            let mut want = Vec::new();
            let mut misfits = 0;
            for run in runs {
                append(&mut table, &run);
                misfits += run
                    .iter()
                    .filter(|&&s| s != alternating(s.0, s.1 / 2) || s.1 > 60)
                    .count();
                want.extend(run);
                prop_assert_eq!(table.bits_per_stored_state(), 6);
                prop_assert_eq!(table.escapes(), misfits);
                reads_back(&table, &want);
            }
        }
    }
}
