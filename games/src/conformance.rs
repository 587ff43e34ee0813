//! The one test every game passes: the kernel's contract ([`Game`]'s), the notation's round trips,
//! and a small solve against an independent solver, run by `games/tests/conformance.rs` on every
//! family's [`GameFamily::examples`](crate::family::GameFamily::examples).
//! 1. So a game's own tests keep only what is particular to it (published counts, its symmetries,
//!    its rules against an independent implementation).

use crate::notation::Notation;
use kingmaker_kernel::check::reference_solve;
use kingmaker_kernel::{solve_in_memory, Layer};
use kingmaker_kernel::{Game, Node};
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Index spaces up to this size are checked state by state, and solved twice (kernel and
/// reference); larger ones are sampled.
pub const EXHAUSTIVE_UP_TO: u64 = 1 << 20;

/// States a sampled check visits: half uniformly random indices, half along random games.
pub const SAMPLES: usize = 20_000;

/// Check `game` and its `layers`: every state of a small game, a sample of a large one.
pub fn check_game<G: Game + Notation + 'static>(game: &Arc<G>, layers: &[Layer]) {
    let g = &**game;
    check_start(g);
    if g.size() <= EXHAUSTIVE_UP_TO {
        for i in 0..g.size() {
            check_state(g, i);
        }
        check_non_live_listing(g);
        check_node_sweeps(g, &[(0, g.size())]);
        for layer in layers {
            check_solve(game, layer);
        }
    } else {
        for i in sample(g, SAMPLES, 0x5eed) {
            check_state(g, i);
        }
        let runs: Vec<(u64, u64)> = sample(g, 64, 0x5ee9)
            .into_iter()
            .map(|i| (i, (g.size() - i).min(1 + i % 40_000)))
            .collect();
        check_node_sweeps(g, &runs);
    }
}

/// [`Game::nodes`] agrees with [`Game::node`] over each run `(first, len)`, swept whole and in
/// pieces of awkward lengths (a game's sweep restarts at each piece).
pub fn check_node_sweeps<G: Game>(g: &G, runs: &[(u64, u64)]) {
    for &(first, len) in runs {
        let expected: Vec<Node> = (first..first + len).map(|i| g.node(i)).collect();
        for piece in [len.max(1), 1, 7, 4093] {
            let mut swept = vec![Node::Illegal; len as usize];
            for (c, out) in swept.chunks_mut(piece as usize).enumerate() {
                g.nodes(first + c as u64 * piece, out);
            }
            if let Some(i) = (0..len as usize).find(|&i| swept[i] != expected[i]) {
                panic!(
                    "{}: nodes() of state {} in pieces of {piece} gives {:?}, node() {:?}",
                    g.name(),
                    first + i as u64,
                    swept[i],
                    expected[i]
                );
            }
        }
    }
}

fn children<G: Game>(g: &G, i: u64) -> Vec<u64> {
    let mut out = Vec::new();
    g.successors(i, &mut out);
    out
}

fn parents<G: Game>(g: &G, i: u64) -> Vec<u64> {
    let mut out = Vec::new();
    g.predecessors(i, &mut out);
    out
}

/// The contract of [`Game`] and [`Notation`] at one state: moves and unmoves are exact inverses,
/// edge for edge; the kernel's shortcuts agree with the plain methods; a position's text
/// parses back to it; the notation's moves lead to the successors and to nothing else.
pub fn check_state<G: Game + Notation>(g: &G, i: u64) {
    let name = || format!("{} state {i} ({})", g.name(), g.format_position(i));
    let node = g.node(i);
    let kids = children(g, i);
    let ups = parents(g, i);
    match node {
        Node::Illegal => {
            assert!(
                kids.is_empty() && ups.is_empty(),
                "{}: illegal but linked",
                name()
            );
            return;
        }
        Node::Terminal { outcome: winner } => {
            assert!(kids.is_empty(), "{}: terminal with children", name());
            assert!(winner < 64, "{}: outcome {winner} is 64 or more", name());
        }
        Node::Live { mover } => {
            assert_eq!(mover, g.mover(i), "{}: node and mover disagree", name());
            assert!(mover < g.players(), "{}: no such player", name());
            assert!(
                !kids.is_empty(),
                "{}: live without a move (a pass is one)",
                name()
            );
            assert_eq!(
                g.successor_count(i),
                kids.len(),
                "{}: successor_count",
                name()
            );
            if g.alternates_sides() {
                assert_eq!(mover, 0, "{}: an alternating game's mover is 0", name());
            }
            if let Some(n) = g.mover_period() {
                let expected = i % u64::from(n);
                assert_eq!(u64::from(mover), expected, "{}: mover_period", name());
            }
        }
    }
    // One entry per edge: a child listed m times lists `i` m times among its parents.
    let times = |list: &[u64], x: u64| list.iter().filter(|&&y| y == x).count();
    for &c in &kids {
        assert!(c < g.size(), "{}: successor {c} out of range", name());
        assert_ne!(
            g.node(c),
            Node::Illegal,
            "{}: illegal successor {c}",
            name()
        );
        assert_eq!(
            times(&parents(g, c), i),
            times(&kids, c),
            "{}: the move to {} is not undone as often as it is made",
            name(),
            g.format_position(c)
        );
    }
    for &p in &ups {
        assert!(p < g.size(), "{}: predecessor {p} out of range", name());
        assert!(
            matches!(g.node(p), Node::Live { .. }),
            "{}: predecessor {p} is not live",
            name()
        );
        assert_eq!(
            times(&children(g, p), i),
            times(&ups, p),
            "{}: the unmove to {} is not made as often as it is undone",
            name(),
            g.format_position(p)
        );
    }
    let mut again = Vec::new();
    if let Some((other, count)) = g.predecessors_and_count(i, &mut again) {
        assert!(
            matches!(g.node(other), Node::Live { .. }),
            "{}: a count learned for a state that is not live",
            name()
        );
        assert_eq!(count, children(g, other).len(), "{}: learned count", name());
    }
    assert_eq!(
        again,
        ups,
        "{}: predecessors_and_count's predecessors",
        name()
    );

    let text = g.format_position(i);
    let back = g.parse_position(&text);
    assert!(
        matches!(back, Ok(j) if j == i),
        "{}: {text:?} parses to {back:?}",
        name()
    );
    let moves = g.moves(i);
    let texts: HashSet<&str> = moves.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(
        texts.len(),
        moves.len(),
        "{}: two moves with one text",
        name()
    );
    // Two moves may lead to one state (TOPPEN: two tiles whose moves give the same graph; the
    // quarter of cc2p lists such a child once per move).
    let mut by_move: Vec<u64> = moves.iter().map(|m| m.1).collect();
    let mut sorted = kids.clone();
    by_move.sort_unstable();
    by_move.dedup();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(by_move, sorted, "{}: the notation's moves", name());
}

/// The start (where the game has one) is live, and `start` names it.
pub fn check_start<G: Game + Notation>(g: &G) {
    if let Some(start) = g.start_index() {
        assert!(
            matches!(g.node(start), Node::Live { .. }),
            "{}: the start is not live",
            g.name()
        );
        assert_eq!(g.parse_or_start("start").unwrap(), start);
    }
    if let Some(example) = g.example_index() {
        assert!(example < g.size(), "{}: example out of range", g.name());
    }
}

/// [`Game::each_non_live`] lists exactly the states that are not live, each once (every index).
pub fn check_non_live_listing<G: Game>(g: &G) {
    let mut listed = HashMap::new();
    if !g.each_non_live(&mut |i, node| {
        assert!(
            listed.insert(i, node).is_none(),
            "{}: {i} listed twice",
            g.name()
        );
    }) {
        return;
    }
    for i in 0..g.size() {
        match g.node(i) {
            Node::Live { .. } => assert!(!listed.contains_key(&i), "{}: live {i} listed", g.name()),
            node => assert_eq!(listed.get(&i), Some(&node), "{}: state {i}", g.name()),
        }
    }
}

/// The kernel's values and depths of `layer` equal the reference solver's (synchronous rounds
/// over successors only: no predecessors, no counters, no shards).
pub fn check_solve<G: Game + 'static>(game: &Arc<G>, layer: &Layer) {
    let solved = solve_in_memory(game, layer, 2);
    let (values, depth) = reference_solve(&**game, layer);
    assert!(
        solved.values == values,
        "{} {}: values differ from the reference",
        game.name(),
        layer.name
    );
    assert!(
        solved.depth == depth,
        "{} {}: depths differ from the reference",
        game.name(),
        layer.name
    );
}

/// `n` states of `g` that are not illegal: uniformly random indices, and states along random
/// games from the start (or the example), which reach the positions play actually meets.
pub fn sample<G: Game + Notation>(g: &G, n: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::seed_from_u64(seed);
    let mut next = move || rng.next_u64();
    let mut out = Vec::with_capacity(n);
    let mut tries = 0;
    while out.len() < n / 2 && tries < 100 * n {
        tries += 1;
        let i = next() % g.size();
        if g.node(i) != Node::Illegal {
            out.push(i);
        }
    }
    let Some(origin) = g.start_index().or(g.example_index()) else {
        return out;
    };
    let mut at = origin;
    let mut plies = 0;
    while out.len() < n {
        out.push(at);
        let kids = children(g, at);
        plies += 1;
        at = if kids.is_empty() || plies > 500 {
            plies = 0;
            origin
        } else {
            kids[(next() % kids.len() as u64) as usize]
        };
    }
    out
}

/// How fast a game generates moves and unmoves, measured on one core over given states: what
/// `cargo bench -p kingmaker-games --bench moves` prints for each game (record figures in
/// docs/benchmarks/kernel.md).
#[derive(Clone, Copy, Debug)]
pub struct MoveRates {
    /// States whose successors were generated per CPU-second.
    pub successors_per_second: f64,
    /// Children per state.
    pub children_per_state: f64,
    /// States whose predecessors were generated per CPU-second.
    pub predecessors_per_second: f64,
    /// Parents per state.
    pub parents_per_state: f64,
}

impl MoveRates {
    /// Time successor and then predecessor generation over `states`, in this thread's CPU time
    /// (so that a rate is per core even on a busy machine).
    pub fn measure<G: Game>(g: &G, states: &[u64]) -> MoveRates {
        let mut out = Vec::with_capacity(256);
        let mut time = |f: &mut dyn FnMut(u64, &mut Vec<u64>)| {
            let cpu = cpu_time::ThreadTime::now();
            let mut total = 0usize;
            for &i in states {
                out.clear();
                f(i, &mut out);
                total += out.len();
            }
            let secs = cpu.elapsed().as_secs_f64();
            let n = states.len().max(1) as f64;
            (n / secs, total as f64 / n)
        };
        let (successors_per_second, children_per_state) = time(&mut |i, o| g.successors(i, o));
        let (predecessors_per_second, parents_per_state) = time(&mut |i, o| g.predecessors(i, o));
        MoveRates {
            successors_per_second,
            children_per_state,
            predecessors_per_second,
            parents_per_state,
        }
    }
}

impl std::fmt::Display for MoveRates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "successors {:.2} M states/s ({:.1} children each), predecessors {:.2} M states/s \
             ({:.1} parents each), per CPU-second",
            self.successors_per_second / 1e6,
            self.children_per_state,
            self.predecessors_per_second / 1e6,
            self.parents_per_state
        )
    }
}

#[cfg(test)]
mod tests {
    use rand_xoshiro::rand_core::{RngCore, SeedableRng};
    use rand_xoshiro::SplitMix64;

    /// Samples, cc3p's magic multipliers and the preference census draw from SplitMix64 seeded
    /// with the state itself: the reference outputs of Vigna's splitmix64.c for state 0.
    #[test]
    fn the_sample_generator_is_the_reference_splitmix64() {
        let mut rng = SplitMix64::seed_from_u64(0);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                0xe220_a839_7b1d_cdaf,
                0x6e78_9e6a_a1b9_65f4,
                0x06c4_5d18_8009_454f
            ]
        );
    }
}
