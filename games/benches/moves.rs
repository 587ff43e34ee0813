//! Move and unmove generation rates of the games, per CPU-second of one thread.
//!
//! `cargo bench -p kingmaker-games --bench moves [-- NAME]`: NAME picks the sections whose name
//! contains it (`go`, `cc3p`, `toppen`, `cc2p-full`, `cc2p-half`), all of them without it.

use cpu_time::{ProcessTime, ThreadTime};
use kingmaker_games::cc2p::reduced::Cc2pReduced;
use kingmaker_games::cc2p::{Cc2p, TipRule};
use kingmaker_games::cc3p::Cc3p;
use kingmaker_games::conformance::MoveRates;
use kingmaker_games::go::{sample, Go, Surface};
use kingmaker_games::reduction::SolvedTable;
use kingmaker_games::toppen::{Toppen, ToppenOptions};
use kingmaker_kernel::{Game, Node};
use rand::{rngs::StdRng, Rng, SeedableRng};

fn main() {
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if wants("go") {
        go();
    }
    if wants("cc3p") {
        cc3p();
    }
    if wants("toppen") {
        toppen();
    }
    if wants("cc2p-full") {
        cc2p_full();
    }
    if wants("cc2p-half") {
        cc2p_half();
    }
}

fn succ(g: &impl Game, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    g.successors(i, &mut v);
    v
}

/// Go on the 4×4 torus, over random legal states.
fn go() {
    let g = Go::new(Surface::Torus, 4, 4).expect("4x4 torus");
    let mut rng = StdRng::seed_from_u64(9);
    let states = sample::random_states(&g, &mut rng, 20_000);
    println!("{}: {}", g.name(), MoveRates::measure(&g, &states));
}

/// cc3p level 2 over 2 M random indices and 2 M states of random games.
fn cc3p() {
    let g = Cc3p::new(2).expect("level 2");
    let mut rng = StdRng::seed_from_u64(1);
    let states: Vec<u64> = (0..2_000_000).map(|_| rng.gen_range(0..g.size())).collect();
    let mut walk = Vec::new();
    let mut s = g.start_index();
    while walk.len() < 2_000_000 {
        walk.push(s);
        let c = succ(&g, s);
        s = if c.is_empty() {
            g.start_index()
        } else {
            c[rng.gen_range(0..c.len())]
        };
    }
    let mut out = Vec::new();
    let cpu = ThreadTime::now();
    let mut sum = 0u64;
    for &i in &states {
        out.clear();
        g.successors(i, &mut out);
        sum += out.len() as u64;
    }
    println!(
        "{} warm-up: {sum} children in {:.2} s CPU",
        g.name(),
        cpu.elapsed().as_secs_f64()
    );
    // The rank tables are private: `node` (unrank and classify) stands for the unranking.
    let cpu = ThreadTime::now();
    let live = states
        .iter()
        .filter(|&&i| matches!(g.node(i), Node::Live { .. }))
        .count();
    println!(
        "{} node (unrank and classify): {:.2} M states per CPU-second ({live} live)",
        g.name(),
        states.len() as f64 / cpu.elapsed().as_secs_f64() / 1e6
    );
    // The summaries read a state's layers as each player (`rotate`: unrank, turn, rank).
    let cpu = ThreadTime::now();
    let turned = states.iter().fold(0u64, |acc, &i| acc ^ g.rotate(i));
    println!(
        "{} rotations: {:.2} M per CPU-second ({turned:x})",
        g.name(),
        states.len() as f64 / cpu.elapsed().as_secs_f64() / 1e6
    );
    for (what, set) in [
        ("random indices", &states),
        ("states of random games", &walk),
    ] {
        println!("{} {what}: {}", g.name(), MoveRates::measure(&g, set));
    }
    // The preference rules order a state's children by the move texts at the state rotated to
    // A's move (the seat order): what each choice costs before its lookups.
    let live: Vec<u64> = walk
        .iter()
        .copied()
        .filter(|&i| matches!(g.node(i), Node::Live { .. }))
        .take(200_000)
        .collect();
    let cpu = ThreadTime::now();
    let ordered: usize = live
        .iter()
        .map(|&i| g.children_in_seat_order(i).len())
        .sum();
    println!(
        "{} children in seat order: {:.2} M states per CPU-second ({ordered} children of {} \
         states of random games)",
        g.name(),
        live.len() as f64 / cpu.elapsed().as_secs_f64() / 1e6,
        live.len()
    );
    // Where an unmove's time goes: without ranking the children (the successor count is the
    // unranking and the destinations), and by mover. The placement's stages are ranked A, B, C:
    // undoing a move of C (mover A) changes the last stage only, one of A (mover B) shifts the
    // cells of the two stages after it.
    let cpu = ThreadTime::now();
    let counted: usize = states.iter().map(|&i| g.successor_count(i)).sum();
    println!(
        "{} successor counts (unranking and destinations, no child ranked): {:.2} M states per \
         CPU-second ({counted} moves)",
        g.name(),
        states.len() as f64 / cpu.elapsed().as_secs_f64() / 1e6
    );
    for mover in 0..3 {
        let set: Vec<u64> = states.iter().map(|&i| i / 3 * 3 + mover).collect();
        println!(
            "{} random indices, mover {}: {}",
            g.name(),
            ["A", "B", "C"][mover as usize],
            MoveRates::measure(&g, &set)
        );
    }
}

/// TOPPEN, both adjacencies, over a slice of every class block (every 31st index).
fn toppen() {
    for diagonal in [false, true] {
        let g = Toppen::new(ToppenOptions { first: 0, diagonal }).expect("defaults are valid");
        let states: Vec<u64> = (0..g.size()).step_by(31).collect();
        println!("{}: {}", g.name(), MoveRates::measure(&g, &states));
    }
}

/// The full cc2p games: successors, predecessors and `node` over 2 M contiguous and 2 M random
/// indices.
fn cc2p_full() {
    for (m, k) in [(7, 3), (4, 6), (5, 6), (7, 6)] {
        let game = Cc2p::new(m, k, TipRule::Exact).expect("a supported board");
        let n = 2_000_000u64;
        let mut rng = StdRng::seed_from_u64(1);
        let random: Vec<u64> = (0..n).map(|_| rng.gen_range(0..game.size())).collect();
        let first = game.size() / 3;
        let contiguous: Vec<u64> = (first..first + n).collect();
        for (label, idx) in [("contiguous", &contiguous), ("random", &random)] {
            let mut out = Vec::new();
            let t = ThreadTime::now();
            let mut children = 0usize;
            for &i in idx {
                out.clear();
                game.successors(i, &mut out);
                children += out.len();
            }
            let ts = t.elapsed().as_secs_f64();
            let t = ThreadTime::now();
            let mut parents = 0usize;
            for &i in idx {
                out.clear();
                game.predecessors(i, &mut out);
                parents += out.len();
            }
            let tp = t.elapsed().as_secs_f64();
            let t = ThreadTime::now();
            let mut live = 0usize;
            for &i in idx {
                live += matches!(game.node(i), Node::Live { .. }) as usize;
            }
            let tn = t.elapsed().as_secs_f64();
            println!(
                "{m}x{m}/{k} {label}: successors {:.2} M states ({:.1} children/state), \
                 predecessors {:.2} M states ({:.1}/state), node {:.2} M states ({live} live), \
                 per CPU-second",
                n as f64 / ts / 1e6,
                children as f64 / n as f64,
                n as f64 / tp / 1e6,
                parents as f64 / n as f64,
                n as f64 / tn / 1e6,
            );
        }
    }
}

/// cc2p 7×7 / 3 through its half: the expansion of a (synthetic) quarter and half table to full
/// rows (all cores, the process's CPU), `source`, and the half game's moves against the full game's on
/// the same states (one thread).
fn cc2p_half() {
    let full = || Cc2p::new(7, 3, TipRule::Exact).expect("7x7 / 3");
    // The half with depths to 96 (two bytes a state), the quarter with the build's (below 64,
    // a byte a state).
    for (g, deepest) in [
        (Cc2pReduced::quarter(full()), 63),
        (Cc2pReduced::new(full()), 96),
    ] {
        let n = g.size() as usize;
        let hv: Vec<u8> = (0..n).map(|i| (i * 7 % 4) as u8).collect();
        let hd: Vec<u16> = (0..n)
            .map(|i| (i % (deepest as usize + 1)) as u16)
            .collect();
        let mut table = SolvedTable::with_capacity(g.size());
        table.append(&hv, &hd);
        drop((hv, hd));
        let rows = 1usize << 25;
        let (mut v, mut d) = (vec![0u8; rows], vec![0u16; rows]);
        let (t, w) = (ProcessTime::now(), std::time::Instant::now());
        let first = (g.full().size() / 3) & !1;
        g.expand_rows(first, &table, &mut v, &mut d);
        let (c, s) = (t.elapsed().as_secs_f64(), w.elapsed().as_secs_f64());
        println!(
            "expand_rows from the {}: {:.2} M rows per CPU-second, {:.1} ns CPU per row ({:.1} s \
             CPU for the 7x7/3 table), {:.2} s wall",
            Game::name(&g),
            rows as f64 / c / 1e6,
            c / rows as f64 * 1e9,
            c / rows as f64 * g.full().size() as f64,
            s
        );
    }
    let g = Cc2pReduced::new(full());
    let first = (g.full().size() / 3) & !1;
    const SOURCES: u64 = 1 << 22;
    let t = ThreadTime::now();
    let mut x = 0u64;
    for f in first..first + SOURCES {
        x = x.wrapping_add(g.source(f).0);
    }
    let c = t.elapsed().as_secs_f64();
    println!(
        "source: {:.2} M rows per CPU-second, {:.1} ns per row ({x})",
        SOURCES as f64 / c / 1e6,
        c / SOURCES as f64 * 1e9
    );
    const STATES: usize = 1 << 21;
    let mut out = Vec::new();
    let mut time = |f: &mut dyn FnMut(u64, &mut Vec<u64>)| {
        let t = ThreadTime::now();
        let mut total = 0;
        for h in (0..g.size()).step_by(97).take(STATES) {
            out.clear();
            f(h, &mut out);
            total += out.len();
        }
        let c = t.elapsed().as_secs_f64();
        format!(
            "{:.2} M states per CPU-second, {:.1} ns per state ({:.1} per state)",
            STATES as f64 / c / 1e6,
            c / STATES as f64 * 1e9,
            total as f64 / STATES as f64
        )
    };
    let full = g.full();
    println!("half successors: {}", time(&mut |h, o| g.successors(h, o)));
    println!(
        "full successors of the same states: {}",
        time(&mut |h, o| full.successors(g.full_index(h), o))
    );
    println!(
        "half predecessors: {}",
        time(&mut |h, o| g.predecessors(h, o))
    );
    println!(
        "full predecessors of the same states: {}",
        time(&mut |h, o| full.predecessors(g.full_index(h), o))
    );
}
