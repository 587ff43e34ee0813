//! Release reader and writer speeds: warm lookup latency, pack and check throughput, bits/state.
//! 1. `cargo bench -p kingmaker-tablefmt --bench release [-- RELEASE_DIR [--lookups-only]]`: with
//!    no release, a synthetic 16 M-state layer; else `verify` the release, then time its lookups.
//! 2. Times are wall-clock and the thread's CPU time: on a shared machine a preempted lookup waits
//!    a scheduler tick (4 ms) in wall-clock time, which the CPU time leaves out.

use cpu_time::ThreadTime;
use kingmaker_tablefmt::release::manifest::read_manifest;
use kingmaker_tablefmt::release::verify::verify_release;
use kingmaker_tablefmt::release::{
    file_sha256, layer_file_name, write_layer, LayerFile, LayerIdentity, PackOptions,
};
use std::path::Path;
use std::time::Instant;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Time `f` in wall-clock and thread CPU nanoseconds.
fn timed<T>(wall: &mut Vec<u64>, cpu: &mut Vec<u64>, f: impl FnOnce() -> T) -> T {
    let (w, c) = (Instant::now(), ThreadTime::now());
    let out = f();
    cpu.push(c.elapsed().as_nanos() as u64);
    wall.push(w.elapsed().as_nanos() as u64);
    out
}

/// Percentiles of a sample of durations in nanoseconds.
fn report(what: &str, mut ns: Vec<u64>) {
    ns.sort_unstable();
    let at = |q: f64| ns[((ns.len() as f64 * q) as usize).min(ns.len() - 1)] as f64 / 1000.0;
    println!(
        "  {what:<34} n={:>7}  p50 {:>8.2} µs  p99 {:>8.2} µs  p99.9 {:>8.2} µs  max {:>8.2} µs",
        ns.len(),
        at(0.5),
        at(0.99),
        at(0.999),
        at(1.0)
    );
}

/// Lookup latency of one layer file, warm: the file is read once into the page cache first. The
/// reader's own cache holds 256 decompressed blocks, so random lookups over a large layer mostly
/// decompress a block and lookups near the previous one mostly do not: both are reported.
fn lookups(path: &Path) {
    let file = LayerFile::open(path).unwrap();
    let _ = file_sha256(path); // into the page cache
    let states = file.states();
    println!(
        "{}: {} states, {} blocks of {}, {} bytes ({:.3} bits/state), depth code modulus {}",
        path.display(),
        states,
        file.blocks(),
        file.header().block_states,
        std::fs::metadata(path).unwrap().len(),
        std::fs::metadata(path).unwrap().len() as f64 * 8.0 / states as f64,
        file.header().depth_code.modulus
    );
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let n = 20_000.min(20 * states as usize).max(1000);
    // Warm-up: touch every block once.
    for b in 0..file.blocks() {
        file.read_block(b).unwrap();
    }
    let (mut wall, mut cpu) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let i = rng.next() % states;
        std::hint::black_box(timed(&mut wall, &mut cpu, || file.get(i).unwrap()));
    }
    report("random state, wall", wall);
    report("random state, CPU", cpu);
    let (mut wall, mut cpu) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut i = rng.next() % states;
    for _ in 0..n {
        i = (i + rng.next() % 64) % states;
        std::hint::black_box(timed(&mut wall, &mut cpu, || file.get(i).unwrap()));
    }
    report("nearby state (cache hit), wall", wall);
    report("nearby state (cache hit), CPU", cpu);
    let (mut wall, mut cpu) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n.min(2000) {
        let b = rng.next() % file.blocks();
        std::hint::black_box(timed(&mut wall, &mut cpu, || file.read_block(b).unwrap()));
    }
    report("read+check+decompress a block, wall", wall);
    report("read+check+decompress a block, CPU", cpu);
}

/// A 3-player-like synthetic layer: runs of values, depths that follow the mover (index % 3).
fn synthetic(states: u64) {
    let dir = std::env::temp_dir().join(format!("kingmaker-release-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(layer_file_name("synthetic"));
    let _ = std::fs::remove_file(&path);
    let gen = |i: u64| -> (u8, u16) {
        let mut r = Rng((i / 37 * 0x9E37_79B9_7F4A_7C15) | 1);
        let x = r.next();
        let v = [1u8, 1, 2, 2, 2, 3, 0][(x % 7) as usize];
        let d = match v {
            1 | 2 => {
                (1 + (x >> 8) % 30) as u16 * 3
                    + if v == 1 {
                        (1 + 3 - i % 3) as u16 % 3
                    } else {
                        0
                    }
            }
            _ => 0,
        };
        (v, d)
    };
    for level in [3, 19] {
        let _ = std::fs::remove_file(&path);
        let t = Instant::now();
        let w = write_layer(
            &path,
            &LayerIdentity::new(serde_json::json!({"game": "bench"}), "solo"),
            states,
            &PackOptions {
                zstd_level: level,
                ..Default::default()
            },
            |first, v, d| {
                for k in 0..v.len() {
                    (v[k], d[k]) = gen(first + k as u64);
                }
                Ok(())
            },
        )
        .unwrap();
        let secs = t.elapsed().as_secs_f64();
        println!(
            "pack (zstd {level}): {states} states in {secs:.2}s = {:.1} M states/s; {} bytes, {:.3} bits/state, depth modulus {}",
            states as f64 / secs / 1e6,
            w.size,
            w.size as f64 * 8.0 / states as f64,
            w.depth_modulus
        );
    }
    let t = Instant::now();
    let file = LayerFile::open(&path).unwrap();
    for b in 0..file.blocks() {
        file.read_block(b).unwrap();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "check every block: {:.1} M states/s",
        states as f64 / secs / 1e6
    );
    lookups(&path);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    match args.first() {
        None => synthetic(1 << 24),
        Some(dir) => {
            let dir = Path::new(dir);
            if std::env::args().any(|a| a == "--lookups-only") {
                for layer in read_manifest(dir).unwrap().layers {
                    lookups(&dir.join(&layer.file));
                }
                return;
            }
            let t = Instant::now();
            let report_v = verify_release(dir);
            assert!(report_v.ok(), "{:?}", report_v.problems);
            let secs = t.elapsed().as_secs_f64();
            println!(
                "verify {}: {} bytes, {} states in {secs:.3}s = {:.1} MB/s, {:.1} M states/s",
                dir.display(),
                report_v.bytes,
                report_v.states,
                report_v.bytes as f64 / secs / 1e6,
                report_v.states as f64 / secs / 1e6
            );
            for layer in read_manifest(dir).unwrap().layers {
                lookups(&dir.join(&layer.file));
            }
        }
    }
}
