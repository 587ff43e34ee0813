//! How often states of one group of `PERIOD` consecutive indices are decided in the same wave.
//! 1. That is what sharing work among them while expanding a frontier could save: in cc3p a group
//!    of 3 is one placement with its three movers (the same value class and depth: the same wave).
//! 2. `cargo bench -p kingmaker-tablefmt --bench same_wave -- LAYER.kmt [PERIOD] [BLOCKS]`

use kingmaker_tablefmt::layer::LayerFile;
use kingmaker_tablefmt::value::{LOSS, WIN};
use std::path::Path;

/// Reads `BLOCKS` (default 3000) random whole blocks (xorshift, fixed seed) and counts the decided
/// states (W or L) that an earlier state of their group, decided too, shares the depth with.
fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let Some(path) = args.first() else {
        eprintln!("usage: same_wave LAYER.kmt [PERIOD] [BLOCKS]");
        std::process::exit(2);
    };
    let period: u64 = args.get(1).map_or(3, |a| a.parse().expect("PERIOD"));
    let samples: u64 = args.get(2).map_or(3000, |a| a.parse().expect("BLOCKS"));
    let file = LayerFile::open(Path::new(path)).expect("a layer file");
    let blocks = file.blocks();
    let per_block = file.header().block_states as u64;
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let (mut decided, mut shared) = (0u64, 0u64);
    // The last block may be short: sample the full ones.
    for _ in 0..samples {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let b = seed % (blocks - 1).max(1);
        let block = file.read_block(b).expect("a readable block");
        let first = b * per_block;
        let mut j = ((period - first % period) % period) as usize; // first whole group
        while j + period as usize <= block.len() {
            let group: Vec<(u8, u16)> = (0..period as usize).map(|k| block.get(j + k)).collect();
            let is_decided = |(v, _): (u8, u16)| v == WIN || v == LOSS;
            for (k, &state) in group.iter().enumerate() {
                if is_decided(state) {
                    decided += 1;
                    let same_wave = |&e: &(u8, u16)| is_decided(e) && e.1 == state.1;
                    shared += u64::from(group[..k].iter().any(same_wave));
                }
            }
            j += period as usize;
        }
    }
    println!(
        "{decided} decided states in {samples} blocks; {shared} ({:.1} %) with an earlier state of \
         their group of {period} decided in the same wave",
        100.0 * shared as f64 / decided.max(1) as f64
    );
}
