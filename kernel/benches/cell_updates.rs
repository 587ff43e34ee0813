//! Benchmark: what one predecessor update costs the memory system (docs/kernel.md, cells.rs):
//! random updates as the kernel applies them (prefetched 32 ahead, then compare-and-swap), against
//! a batch of 256 prefetched first, plain loads and stores, and updates grouped by zone first.
//! `cargo bench -p kingmaker-kernel --bench cell_updates -- [CELLS] [UPDATES]` (defaults 2^32
//! cells, 2 × 10^8 updates: about 10 GB). Times are the thread's CPU time.

use cpu_time::ThreadTime;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// xorshift64: reproducible and fast enough not to matter.
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// A counter update as the kernel makes it (decided cells, above 248, are left alone).
fn next(cell: u8) -> Option<u8> {
    match cell {
        0..=1 => Some(250),
        2..=248 => Some(cell - 1),
        _ => None,
    }
}

fn prefetch(cells: &[AtomicU8], i: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch(
            cells.as_ptr().add(i) as *const i8,
            std::arch::x86_64::_MM_HINT_T0,
        )
    };
}

/// CPU seconds to apply `updates` as the kernel did before 2026-12-06: prefetch every cell of 256
/// updates, then `update` each.
fn prefetched(cells: &[AtomicU8], updates: &[u64], update: impl Fn(&AtomicU8)) -> f64 {
    let t = ThreadTime::now();
    for batch in updates.chunks(256) {
        batch.iter().for_each(|&u| prefetch(cells, u as usize));
        batch.iter().for_each(|&u| update(&cells[u as usize]));
    }
    t.elapsed().as_secs_f64()
}

/// CPU seconds to apply `updates` as the kernel applies them (`each_prefetched` in cells.rs):
/// in batches of 1024, each cell prefetched `ahead` updates before it is updated.
fn prefetched_ahead(
    cells: &[AtomicU8],
    updates: &[u64],
    ahead: usize,
    update: impl Fn(&AtomicU8),
) -> f64 {
    let t = ThreadTime::now();
    for batch in updates.chunks(1024) {
        batch
            .iter()
            .take(ahead)
            .for_each(|&u| prefetch(cells, u as usize));
        for (i, &u) in batch.iter().enumerate() {
            if let Some(&later) = batch.get(i + ahead) {
                prefetch(cells, later as usize);
            }
            update(&cells[u as usize]);
        }
    }
    t.elapsed().as_secs_f64()
}

/// The kernel's update of a cell: load, then compare-and-swap until it holds.
fn compare_and_swap(cell: &AtomicU8) {
    let mut cur = cell.load(Relaxed);
    while let Some(new) = next(cur) {
        match cell.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
            Ok(_) => break,
            Err(seen) => cur = seen,
        }
    }
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(1 << 32) as usize;
    let m = args.get(1).copied().unwrap_or(200_000_000) as usize;
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    // Half decided, half counters of 1..=20.
    let init: Vec<u8> = (0..n)
        .map(|_| {
            let r = xorshift(&mut seed);
            if r & 1 == 0 {
                249 + (r >> 8) as u8 % 6
            } else {
                1 + (r >> 8) as u8 % 20
            }
        })
        .collect();
    let updates: Vec<u64> = (0..m).map(|_| xorshift(&mut seed) % n as u64).collect();
    let fresh = || -> Vec<AtomicU8> { init.iter().map(|&v| AtomicU8::new(v)).collect() };
    let report = |what: &str, secs: f64, cells: &[AtomicU8]| {
        let sum: u64 = cells.iter().map(|c| c.load(Relaxed) as u64).sum();
        println!(
            "{what}: {:.1} ns per update (checksum {sum})",
            secs / m as f64 * 1e9
        );
    };

    for ahead in [16, 32, 64] {
        let cells = fresh();
        let secs = prefetched_ahead(&cells, &updates, ahead, compare_and_swap);
        let what = format!("compare-and-swap, each cell prefetched {ahead} updates ahead");
        report(&what, secs, &cells);
    }
    let cells = fresh();
    let secs = prefetched(&cells, &updates, compare_and_swap);
    report("compare-and-swap after prefetching 256", secs, &cells);
    drop(cells);
    let cells = fresh();
    let secs = prefetched(&cells, &updates, |cell| {
        if let Some(new) = next(cell.load(Relaxed)) {
            cell.store(new, Relaxed);
        }
    });
    report("plain load and store after prefetching 256", secs, &cells);
    drop(cells);

    for zone_bits in [20u32, 24] {
        let cells = fresh();
        let t = ThreadTime::now();
        let mut zones: Vec<Vec<u32>> = vec![Vec::new(); (n >> zone_bits) + 1];
        for chunk in updates.chunks(1 << 24) {
            for &u in chunk {
                zones[(u >> zone_bits) as usize].push((u & ((1 << zone_bits) - 1)) as u32);
            }
            for (z, offsets) in zones.iter_mut().enumerate() {
                for &o in offsets.iter() {
                    let cell = &cells[(z << zone_bits) + o as usize];
                    if let Some(new) = next(cell.load(Relaxed)) {
                        cell.store(new, Relaxed);
                    }
                }
                offsets.clear();
            }
        }
        let what = format!("grouped by zones of 2^{zone_bits} cells, plain load and store");
        report(&what, t.elapsed().as_secs_f64(), &cells);
    }
}
