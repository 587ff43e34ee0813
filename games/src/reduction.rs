//! A game the kernel solves in place of a larger one (a symmetry quotient, such as cc2p's
//! colour-swap half), and how its solved table becomes the full game's, byte-identical to a full
//! solve's: in memory ([`Reduction::expand_rows`]) or out of core, zone by zone.
//! 1. Out of core, the reduced table is read once and the full table written twice whatever the
//!    number of zones, in a zone per thread: docs/games-internals.md, `games/src/reduction.rs`.

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
/// state, packed with the value in the top two bits of a byte while every depth is below 64, of a
/// u16 while below 2^14, else in two arrays. The expansion reads it at random, so it asks for huge
/// pages (fewer TLB misses); the packing cuts the cache misses and the memory.
pub struct SolvedTable {
    store: Store,
    capacity: usize,
}

enum Store {
    Byte(Vec<u8>),
    Packed(Vec<u16>),
    Wide(Vec<u8>, Vec<u16>),
}

const BYTE_DEPTH_BITS: u32 = 6;
const DEPTH_BITS: u32 = 14;

impl SolvedTable {
    /// An empty table for `len` states (appended in index order with [`SolvedTable::append`]),
    /// in the narrowest store that holds depths up to `deepest` (a deeper one widens it).
    pub fn with_capacity(len: u64, deepest: u32) -> SolvedTable {
        let capacity = len as usize;
        let store = match Self::bytes_per_state(deepest) {
            1 => Store::Byte(huge_vec(capacity)),
            2 => Store::Packed(huge_vec(capacity)),
            _ => Store::Wide(huge_vec(capacity), huge_vec(capacity)),
        };
        SolvedTable { store, capacity }
    }

    /// Bytes per state of the narrowest store that holds depths up to `deepest`.
    fn bytes_per_state(deepest: u32) -> u64 {
        match deepest {
            d if d >> BYTE_DEPTH_BITS == 0 => 1,
            d if d >> DEPTH_BITS == 0 => 2,
            _ => 3,
        }
    }

    /// Append the next run of states.
    pub fn append(&mut self, values: &[u8], depth: &[u16]) {
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        debug_assert!(values
            .iter()
            .all(|&v| v <= kingmaker_tablefmt::value::MAX_CODE));
        let deepest = depth.iter().copied().max().unwrap_or(0) as u32;
        while Self::bytes_per_state(deepest) > self.bytes_per_stored_state() {
            self.widen();
        }
        let pairs = values.iter().zip(depth);
        match &mut self.store {
            Store::Byte(b) => b.extend(pairs.map(|(&v, &d)| v << BYTE_DEPTH_BITS | d as u8)),
            Store::Packed(p) => p.extend(pairs.map(|(&v, &d)| (v as u16) << DEPTH_BITS | d)),
            Store::Wide(v, d) => {
                v.extend_from_slice(values);
                d.extend_from_slice(depth);
            }
        }
    }

    fn bytes_per_stored_state(&self) -> u64 {
        match self.store {
            Store::Byte(_) => 1,
            Store::Packed(_) => 2,
            Store::Wide(..) => 3,
        }
    }

    /// Move to the next wider store (a depth did not fit).
    fn widen(&mut self) {
        self.store = match &self.store {
            Store::Byte(_) => {
                let mut p = huge_vec(self.capacity);
                p.extend((0..self.len()).map(|i| {
                    let (v, d) = self.get(i);
                    (v as u16) << DEPTH_BITS | d
                }));
                Store::Packed(p)
            }
            Store::Packed(_) => {
                let (mut v, mut d) = (huge_vec(self.capacity), huge_vec(self.capacity));
                for i in 0..self.len() {
                    let (value, depth) = self.get(i);
                    v.push(value);
                    d.push(depth);
                }
                Store::Wide(v, d)
            }
            Store::Wide(..) => unreachable!("the widest store holds every depth"),
        };
    }

    /// The number of states appended so far.
    pub fn len(&self) -> u64 {
        match &self.store {
            Store::Byte(b) => b.len() as u64,
            Store::Packed(p) => p.len() as u64,
            Store::Wide(v, _) => v.len() as u64,
        }
    }

    /// Whether no state has been appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (value, depth) of state `i`.
    #[inline]
    pub fn get(&self, i: u64) -> (u8, u16) {
        match &self.store {
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

/// An empty vector with room for `len` elements, on transparent huge pages where the system
/// offers them on request (a hint: without them it works the same, with more TLB misses).
fn huge_vec<T>(len: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(len);
    const HUGE: usize = 2 << 20;
    let (start, bytes) = (v.as_ptr() as usize, len * std::mem::size_of::<T>());
    let aligned = start.next_multiple_of(HUGE);
    if bytes >= HUGE && start + bytes > aligned {
        // SAFETY: advice on memory this vector owns; it changes no contents.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                start + bytes - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::SolvedTable;

    /// Depths that outgrow the store chosen at the start widen it, and every state reads back.
    #[test]
    fn a_solved_table_widens_for_deeper_states_and_keeps_every_state() {
        let runs: [(u16, u16); 3] = [(0, 64), (64, 300), (300, 20_000)];
        for deepest in [0, 63, 64, 1 << 14] {
            let mut table = SolvedTable::with_capacity(3 * 1000, deepest);
            let mut want = Vec::new();
            for (low, high) in runs {
                let depth: Vec<u16> = (0..1000).map(|i| low + i * 7 % (high - low)).collect();
                let values: Vec<u8> = (0..1000).map(|i| (i * 5 % 4) as u8).collect();
                table.append(&values, &depth);
                want.extend(values.into_iter().zip(depth));
                for (i, &pair) in want.iter().enumerate() {
                    assert_eq!(table.get(i as u64), pair, "state {i}, deepest {deepest}");
                }
            }
            assert_eq!(table.len(), 3000);
        }
    }
}
