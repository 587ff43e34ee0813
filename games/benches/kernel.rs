//! Kernel benchmarks, per core (`cargo bench -p kingmaker-games --bench kernel [FILTER]`).
//! 1. FILTER picks sections by name: `cc3p-2` (level-2 unrank, successors, successor counts and
//!    predecessors, and the two a wave needs per state), `cc3p-1` (the level-1 build), `toppen`,
//!    `cc2p` (7×7 / 3's quarter: moves, and solved in memory), `costing` (`cost_large_boards`).
//! 2. Last, the kernel's working set in bytes per state and the peak RSS.

use cpu_time::{ProcessTime, ThreadTime};
use kingmaker_games::cc2p::reduced::Cc2pReduced;
use kingmaker_games::cc2p::{Cc2p, TipRule};
use kingmaker_games::cc3p::Cc3p;
use kingmaker_games::toppen::{Toppen, ToppenOptions};
use kingmaker_kernel::{solve_in_memory, Layer};
use kingmaker_kernel::{Game, Node};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::sync::Arc;
use std::time::Instant;

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Live states drawn uniformly at random from the index space.
fn sample_live(game: &impl Game, count: usize, seed: u64) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let i = rng.gen_range(0..game.size());
        if matches!(game.node(i), Node::Live { .. }) {
            out.push(i);
        }
    }
    out
}

/// States per CPU-second on one thread, and generated neighbours per state.
fn rate(states: &[u64], f: impl Fn(u64, &mut Vec<u64>)) -> (f64, f64) {
    let mut out = Vec::new();
    let mut produced = 0usize;
    let t = ThreadTime::now();
    for &s in states {
        out.clear();
        f(s, &mut out);
        produced += out.len();
    }
    let secs = t.elapsed().as_secs_f64();
    (
        states.len() as f64 / secs,
        produced as f64 / states.len() as f64,
    )
}

fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));

    if wants("cc3p-2") {
        let t = Instant::now();
        let game = Cc3p::new(2).expect("level 2");
        println!(
            "cc3p level 2: tables built in {:.2}s, {} states",
            t.elapsed().as_secs_f64(),
            game.size()
        );
        let states = sample_live(&game, 2_000_000, 1);
        let (node_rate, _) = rate(&states, |s, out| {
            out.push(matches!(game.node(s), Node::Live { .. }) as u64);
        });
        println!(
            "  unranking (node: unrank and classify): {:.2} M states per CPU-second",
            node_rate / 1e6
        );
        let (succ_rate, succ_avg) = rate(&states, |s, out| game.successors(s, out));
        println!("  expansion (successors, ranked): {:.2} M states per CPU-second, {:.1} successors per state", succ_rate / 1e6, succ_avg);
        let (count_rate, _) = rate(&states, |s, out| {
            out.resize(game.successor_count(s), 0);
        });
        println!(
            "  lazy counter (successor_count, not ranked): {:.2} M states per CPU-second",
            count_rate / 1e6
        );
        let (pred_rate, pred_avg) = rate(&states, |s, out| game.predecessors(s, out));
        println!(
            "  unmoves (predecessors, ranked): {:.2} M states per CPU-second, {:.1} predecessors per state = {:.1} M predecessors per CPU-second",
            pred_rate / 1e6,
            pred_avg,
            pred_rate * pred_avg / 1e6
        );
        // The wave kernel does both for (nearly) every state of a layer: predecessors once when the
        // state is decided, successor_count once when it is first reached as a predecessor.
        println!(
            "  kernel's game work per state (predecessors + successor_count, no cell updates): {:.2} M states per CPU-second",
            1.0 / (1.0 / pred_rate + 1.0 / count_rate) / 1e6
        );
    }
    if wants("cc3p-1") {
        let game = Arc::new(Cc3p::new(1).expect("level 1"));
        let (t, cpu) = (Instant::now(), ProcessTime::now());
        for (name, c, o) in [
            ("solo", 0b001, 0b001),
            ("enable_ab", 0b011, 0b010),
            ("enable_ac", 0b101, 0b100),
        ] {
            solve_in_memory(&game, &Layer::new(name, c, o), 1);
        }
        println!(
            "cc3p level 1: three layers solved in {:.1} ms wall, {:.1} ms CPU (1 thread)",
            t.elapsed().as_secs_f64() * 1e3,
            cpu.elapsed().as_secs_f64() * 1e3
        );
    }
    if wants("toppen") {
        let t = Instant::now();
        let game = Arc::new(Toppen::new(ToppenOptions::default()).expect("toppen"));
        let built = t.elapsed().as_secs_f64();
        for threads in [1, 2] {
            let (t, cpu) = (Instant::now(), ProcessTime::now());
            let solved = solve_in_memory(&game, &Layer::new("solo", 1, 1), threads);
            let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu.elapsed().as_secs_f64());
            println!(
                "toppen: {} states, catalogue {:.2}s, solved in {:.2}s wall / {:.2}s CPU on {threads} thread(s) ({} waves): {:.2} M states per CPU-second",
                game.size(),
                built,
                secs,
                cpu,
                solved.waves,
                game.size() as f64 / cpu / 1e6
            );
        }
    }
    if wants("cc2p") {
        let full = Cc2p::new(7, 3, TipRule::Exact).expect("7x7 / 3");
        let game = Arc::new(Cc2pReduced::quarter(full.clone()));
        println!(
            "cc2p 7x7 / 3: {} states, the quarter solves {}",
            full.size(),
            game.size()
        );
        let states = sample_live(game.as_ref(), 1_000_000, 2);
        let (count_rate, _) = rate(&states, |s, out| {
            out.resize(game.successor_count(s), 0);
        });
        let (pred_rate, pred_avg) = rate(&states, |s, out| game.predecessors(s, out));
        println!(
            "  quarter: lazy counter {:.2} M states per CPU-second; unmoves {:.2} M states per CPU-second ({:.1} predecessors per state)",
            count_rate / 1e6,
            pred_rate / 1e6,
            pred_avg
        );
        for threads in [1, 2] {
            let (t, cpu) = (Instant::now(), ProcessTime::now());
            let solved = solve_in_memory(&game, &Layer::new("solo", 1, 1), threads);
            let (secs, cpu) = (t.elapsed().as_secs_f64(), cpu.elapsed().as_secs_f64());
            println!(
                "  quarter solved in {:.1}s wall / {:.1}s CPU on {threads} thread(s) ({} waves): {:.2} M states of the full game per CPU-second (before the expansion to full tables)",
                secs,
                cpu,
                solved.waves,
                full.size() as f64 / cpu / 1e6
            );
        }
    }
    if wants("costing") {
        cost_large_boards();
    }
    // The six-bit cell holds the counter or the value with its generation (the frontier); depths
    // go to per-shard wave logs on disk.
    println!(
        "working set while solving: 0.8 bytes per state (six-bit cells, five to a word); depths in wave logs on disk"
    );
    println!("peak RSS: {:.0} MiB", peak_rss_mib());
}

/// The quarter's moves per CPU-second on the large boards, against 7×7 / 3's, whose whole solve is
/// timed: the CPU per quarter state of a solve is the moves' CPU per state times the kernel's
/// overhead on top of them, measured on 7×7 / 3 and assumed the same on the larger boards.
fn cost_large_boards() {
    let mut overhead = None;
    for (m, k) in [(7u8, 3u8), (5, 6), (7, 4), (6, 6), (7, 6)] {
        let full = Cc2p::new(m, k, TipRule::Exact).expect("a supported board");
        let game = Arc::new(Cc2pReduced::quarter(full.clone()));
        let mut rng = StdRng::seed_from_u64(3);
        const PROBES: usize = 400_000;
        let live = (0..PROBES)
            .filter(|_| {
                let i = rng.gen_range(0..game.size());
                matches!(game.node(i), Node::Live { .. })
            })
            .count() as f64
            / PROBES as f64;
        let states = sample_live(game.as_ref(), 200_000, 4);
        let (count_rate, _) = rate(&states, |s, out| {
            out.resize(game.successor_count(s), 0);
        });
        let (pred_rate, pred_avg) = rate(&states, |s, out| game.predecessors(s, out));
        let moves_ns = live * (1.0 / count_rate + 1.0 / pred_rate) * 1e9;
        let quarter = game.size() as f64;
        let overhead = *overhead.get_or_insert_with(|| {
            let cpu = ProcessTime::now();
            solve_in_memory(&game, &Layer::new("solo", 1, 1), 1);
            let solve_ns = cpu.elapsed().as_secs_f64() / quarter * 1e9;
            println!(
                "cc2p {m}x{m} / {k} quarter solved on one thread: {solve_ns:.0} ns CPU per quarter state, {:.2}x its moves' CPU",
                solve_ns / moves_ns
            );
            solve_ns / moves_ns
        });
        // Routing needs the whole reduced table (made up here): up to 7×7 / 4's.
        if game.size() <= 20_000_000_000 {
            let expand_ns = expansion_cpu_per_state(&game);
            println!(
                "cc2p {m}x{m} / {k}: out-of-core expansion {expand_ns:.0} CPU-ns per full state (routing and filling, without the file), ≈ {:.1} CPU-hours for the whole table",
                full.size() as f64 * expand_ns / 1e9 / 3600.0
            );
        }
        println!(
            "cc2p {m}x{m} / {k}: {} states, quarter {}, {:.1} % live; counter {:.2} M, unmoves {:.2} M states per CPU-second ({pred_avg:.1} predecessors); moves {moves_ns:.0} ns per quarter state, solve ≈ {:.1} CPU-hours in memory",
            full.size(),
            game.size(),
            live * 100.0,
            count_rate / 1e6,
            pred_rate / 1e6,
            quarter * moves_ns * overhead / 1e9 / 3600.0
        );
    }
}

/// CPU-nanoseconds per full state of the out-of-core expansion (routing the reduced table to the
/// zones, then filling them; the routed states kept in memory instead of a file), measured on
/// the first zones of the table (about 64 M states), with the whole reduced table routed to
/// them: synthetic values made run by run, their making not timed.
fn expansion_cpu_per_state(game: &Cc2pReduced) -> f64 {
    use kingmaker_games::reduction::Reduction;
    let zones: Vec<_> = game.zones(1 << 23).into_iter().take(8).collect();
    let states: u64 = zones.iter().map(|z| z.end - z.start).sum();
    let block = Reduction::block_states(game);
    let run = (1u64 << 22).div_ceil(block) * block;
    let mut routed = vec![(Vec::new(), Vec::new()); zones.len()];
    let (mut values, mut depth) = (Vec::new(), Vec::new());
    let mut cpu = 0.0;
    for first in (0..game.size()).step_by(run as usize) {
        let n = run.min(game.size() - first) as usize;
        values.clear();
        depth.clear();
        values.extend((0..n as u64).map(|i| ((first + i) * 7 % 4) as u8));
        depth.extend((0..n as u64).map(|i| ((first + i) % 97) as u16));
        let t = ProcessTime::now();
        game.scatter(&zones, first, &values, &depth, &mut routed);
        cpu += t.elapsed().as_secs_f64();
    }
    let t = ProcessTime::now();
    for (zone, (rv, rd)) in zones.iter().zip(&routed) {
        let n = (zone.end - zone.start) as usize;
        let (mut v, mut d) = (vec![0u8; n], vec![0u16; n]);
        let mut at = 0;
        let mut read = |bv: &mut [u8], bd: &mut [u16]| {
            bv.copy_from_slice(&rv[at..at + bv.len()]);
            bd.copy_from_slice(&rd[at..at + bv.len()]);
            at += bv.len();
            Ok(())
        };
        game.expand_zone(zone.clone(), &mut read, &mut v, &mut d)
            .expect("routed in memory");
    }
    cpu += t.elapsed().as_secs_f64();
    cpu / states as f64 * 1e9
}
