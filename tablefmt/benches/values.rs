//! How compressible a layer's values are, against the bounds that their own statistics set.
//! 1. `cargo bench -p kingmaker-tablefmt --bench values -- LAYER.kmt [WINDOWS] [LEVEL]`
//! 2. The conditional entropies are what an adaptive context-model coder would reach, near enough,
//!    on data like this; zstd is measured in index order and grouped by index residue.

use kingmaker_tablefmt::layer::{pack_values, LayerFile};
use std::path::Path;

const WINDOW: u64 = 1 << 20;

/// Entropy, in bits per symbol, of the values given the `order` values before each (the first
/// `order` of every window are not counted).
fn conditional_entropy(windows: &[Vec<u8>], order: usize) -> f64 {
    let contexts = 1usize << (2 * order);
    let mut counts = vec![[0u64; 4]; contexts];
    for w in windows {
        let mut ctx = 0usize;
        for (j, &v) in w.iter().enumerate() {
            if j >= order {
                counts[ctx][v as usize] += 1;
            }
            ctx = ((ctx << 2) | v as usize) & (contexts - 1);
        }
    }
    let total: u64 = counts.iter().flatten().sum();
    let mut bits = 0.0;
    for c in &counts {
        let n: u64 = c.iter().sum();
        for &k in c.iter().filter(|&&k| k > 0) {
            bits -= k as f64 * (k as f64 / n as f64).log2();
        }
    }
    bits / total as f64
}

/// `values` reordered: the states whose position is ≡ 0 (mod `stride`) first, then ≡ 1, ...
fn grouped(values: &[u8], stride: usize) -> Vec<u8> {
    (0..stride)
        .flat_map(|r| values.iter().skip(r).step_by(stride).copied())
        .collect()
}

/// Reads `WINDOWS` (default 64) windows of 2^20 states spread evenly over the layer, each starting
/// at a multiple of 12 (so every window starts with the same index residues), and reports in bits
/// per state:
/// - the empirical entropy of the values (order 0), and conditioned on the values of the three
///   states before (order 3) and of the six before (order 6);
/// - zstd at `LEVEL` (default 15) on values packed four to a byte, in blocks of 2^16, 2^18 and
///   2^20 states, in index order and grouped by index residue modulo 2, 3 and 4 (states whose
///   indices agree modulo the stride next to each other: in cc3p, `index mod 3` is the mover).
fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let Some(path) = args.first() else {
        eprintln!("usage: cargo bench -p kingmaker-tablefmt --bench values -- LAYER.kmt [WINDOWS] [LEVEL]");
        return;
    };
    let count: u64 = args.get(1).map_or(64, |a| a.parse().expect("WINDOWS"));
    let level: i32 = args.get(2).map_or(15, |a| a.parse().expect("LEVEL"));
    let file = LayerFile::open(Path::new(path)).expect("a layer file");
    let states = file.states();
    let bs = file.header().block_states as u64;
    let span = states / count.max(1);
    let mut windows = Vec::new();
    for k in 0..count {
        let start = k * span / 12 * 12;
        let end = (start + WINDOW).min(states);
        let mut w = Vec::with_capacity((end - start) as usize);
        let mut i = start;
        while i < end {
            let block = file.read_block(i / bs).expect("a readable block");
            let (first, n) = (block.first, block.len() as u64);
            for j in (i - first)..n.min(end - first) {
                w.push(block.value(j as usize));
            }
            i = first + n;
        }
        windows.push(w);
    }
    let sampled: usize = windows.iter().map(Vec::len).sum();
    let mut counts = [0u64; 4];
    for &v in windows.iter().flatten() {
        counts[v as usize] += 1;
    }
    println!(
        "{path}: {states} states; {count} windows, {sampled} states sampled; illegal/W/L/D {counts:?}"
    );
    for order in [0, 3, 6] {
        println!(
            "  entropy given the {order} states before: {:.4} bits per state",
            conditional_entropy(&windows, order)
        );
    }
    for block in [1usize << 16, 1 << 18, 1 << 20] {
        for stride in [1, 2, 3, 4] {
            let mut bytes = 0usize;
            for w in &windows {
                for chunk in w.chunks(block) {
                    let mut packed = Vec::new();
                    pack_values(&grouped(chunk, stride), &mut packed);
                    bytes += zstd::bulk::compress(&packed, level).expect("zstd").len();
                }
            }
            let bits = bytes as f64 * 8.0 / sampled as f64;
            println!(
                "  zstd {level}, blocks of {block:>7}, grouped modulo {stride}: {bits:.4} bits per state = {:.0} MB for the layer",
                bits * states as f64 / 8e6
            );
        }
    }
}
