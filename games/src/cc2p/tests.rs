use super::rank::{bucket_floor, BUCKETS};
use super::*;
use proptest::prelude::*;
use std::collections::{HashSet, VecDeque};

fn g(m: u8, k: u8) -> Cc2p {
    Cc2p::new(m, k, TipRule::Exact).unwrap()
}

#[test]
fn state_counts() {
    assert_eq!(g(7, 1).size(), 4_704);
    assert_eq!(g(7, 2).size(), 2_542_512);
    assert_eq!(g(7, 3).size(), 559_352_640);
    assert_eq!(g(4, 6).size(), 3_363_360);
    assert_eq!(g(5, 6).size(), 9_610_154_400);
    assert_eq!(g(6, 6).size(), 2_313_100_389_600);
    assert_eq!(g(7, 3).name(), "cc2p-7x7-3");
    let shortcut = Cc2p::new(5, 6, TipRule::SolverShortcut).unwrap();
    assert_eq!(shortcut.name(), "cc2p-5x5-6-shortcut");
    assert_eq!(g(7, 3).players(), 2);
    // The largest space (8×8 / 6) fits the index type.
    assert_eq!(g(8, 6).size(), 6_069_228_771_247_488);
}

#[test]
fn constructor_rejects_out_of_range() {
    for (m, k) in [(3, 1), (9, 1), (0, 3), (7, 0), (7, 7), (4, 255)] {
        let e = Cc2p::new(m, k, TipRule::Exact).unwrap_err();
        assert!(!e.to_string().is_empty());
    }
    assert!(matches!(
        Cc2p::new(3, 1, TipRule::Exact),
        Err(Cc2pError::BoardOutOfRange(3))
    ));
    assert!(matches!(
        Cc2p::new(7, 7, TipRule::Exact),
        Err(Cc2pError::PiecesOutOfRange(7))
    ));
    // One bit per cell in a 64-bit word: 8×8 is the largest board, and the error says so.
    let too_big = Cc2p::new(MAX_BOARD + 1, 1, TipRule::Exact).unwrap_err();
    assert!(too_big.to_string().contains("m = 4..=8"), "{too_big}");
}

#[test]
fn geometry() {
    for m in MIN_BOARD..=MAX_BOARD {
        let game = g(m, 1);
        let m = m as u32;
        let n = (m * m) as usize;
        let degree: u32 = game.cells.iter().map(|c| c.nb.count_ones()).sum();
        // Two directions with m(m-1) edges each, one with (m-1)².
        assert_eq!(degree / 2, 2 * m * (m - 1) + (m - 1) * (m - 1));
        // The acute corners (the tips) have 2 neighbours, the obtuse ones 3.
        assert_eq!(game.cells[0].nb, bit(1) | bit(2));
        assert_eq!(game.cells[n - 1].nb, bit(n - 2) | bit(n - 3));
        for c in 0..n {
            // Symmetric, and the point reflection is a symmetry of the board.
            for d in bits(game.cells[c].nb) {
                assert!(game.cells[d].nb & bit(c) != 0);
            }
            assert_eq!(
                game.turn(game.cells[c].nb),
                game.cells[n - 1 - c].nb,
                "cell {c}"
            );
            for &(over, land) in &game.cells[c].jumps[..game.cells[c].nj as usize] {
                assert!(game.cells[c].nb & bit(over as usize) != 0);
                assert!(game.cells[land as usize].nb & bit(over as usize) != 0);
                assert!(game.cells[c].nb & bit(land as usize) == 0);
            }
        }
    }
    let g4 = g(4, 1);
    // 4×4: rows 0 | 1 2 | 3 4 5 | 6 7 8 9 | 10 11 12 | 13 14 | 15.
    assert_eq!(
        g4.cells[4].nb,
        [1, 2, 3, 5, 7, 8].iter().map(|&c| bit(c)).sum::<Cells>()
    );
    assert_eq!(
        g4.cells[6].nb,
        [3, 7, 10].iter().map(|&c| bit(c)).sum::<Cells>()
    );
    let mut jumps4: Vec<(u8, u8)> = g4.cells[4].jumps[..g4.cells[4].nj as usize].to_vec();
    jumps4.sort();
    assert_eq!(jumps4, vec![(7, 10), (8, 12)]);
}

#[test]
fn start_areas_and_tip_cells() {
    let g6 = g(4, 6);
    assert_eq!(g6.start[0], 0b111111);
    assert_eq!(g6.start[1], 0b111111 << 10);
    assert_eq!(
        g6.block[0],
        [10, 12, 13, 14].iter().map(|&c| bit(c)).sum::<Cells>()
    );
    assert_eq!(
        g6.block[1],
        [1, 2, 3, 5].iter().map(|&c| bit(c)).sum::<Cells>()
    );
    let g5 = g(7, 5);
    assert_eq!(
        g5.start[1],
        [43, 44, 45, 46, 47].iter().map(|&c| bit(c)).sum::<Cells>()
    );
    let g4 = g(7, 4);
    assert_eq!(
        g4.goal[1],
        [0, 1, 2, 4].iter().map(|&c| bit(c)).sum::<Cells>()
    );
    let s = g(7, 3).start_index();
    assert_eq!(g(7, 3).format_position(s), "0:0,1,2;1:46,47,48;0");
}

#[test]
fn start_position_moves() {
    let game = g(7, 3);
    let s = game.start_index();
    assert_eq!(game.node(s), Node::Live { mover: 0 });
    let moves = game.moves(s);
    let names: Vec<&str> = moves.iter().map(|(t, _)| t.as_str()).collect();
    // 7×7 rows: 0 | 1 2 | 3 4 5 | 6 7 8 9 | ...; the tip jumps over 1 and 2.
    assert_eq!(
        names,
        ["0 0-3", "0 0-5", "0 1-3", "0 1-4", "0 2-4", "0 2-5"]
    );
    let game = g(4, 6);
    let s = game.start_index();
    let names: Vec<String> = game.moves(s).into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        names,
        [
            "0 1-6", "0 1-8", "0 2-7", "0 2-9", "0 3-6", "0 3-7", "0 4-7", "0 4-8", "0 5-8",
            "0 5-9"
        ]
    );
}

/// Class of every state: 0 illegal, 1 live, 2 won by player 0, 3 won by player 1.
fn classes(game: &Cc2p) -> Vec<u8> {
    use rayon::prelude::*;
    (0..game.size())
        .into_par_iter()
        .map(|i| match game.node(i) {
            Node::Illegal => 0,
            Node::Live { mover } => {
                assert_eq!(mover, game.mover(i));
                1
            }
            Node::Terminal { outcome: winner } => 2 + winner,
        })
        .collect()
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Summary {
    illegal: u64,
    terminal: u64,
    /// Terminal states whose mover had moves, all into illegal states.
    stuck: u64,
    passes: u64,
    wins0: u64,
    wins1: u64,
    draws: u64,
    /// The start position's value: 0 or 1 (winner) or 2 (draw).
    start: u8,
}

fn mix(p: u64, s: u64) -> u64 {
    let mut h = p.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ s.rotate_left(29);
    h ^= h >> 31;
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 29)
}

/// Check the move/unmove contract over the whole index space, then solve by counting retrograde
/// analysis (an independent little solver: the kernel proper lives elsewhere).
fn exhaustive(game: &Cc2p) -> Summary {
    use rayon::prelude::*;
    let class = classes(game);
    let size = game.size();
    let mut sum = Summary::default();
    let mut counter = vec![0u8; size as usize];
    const CHUNK: usize = 1 << 14;
    // Per chunk: illegal, terminal, stuck, passes, edges, edge hash.
    let parts: Vec<[u64; 6]> = counter
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(ci, counts)| {
            let mut t = [0u64; 6];
            let mut out = Vec::new();
            for (off, count) in counts.iter_mut().enumerate() {
                let i = (ci * CHUNK + off) as u64;
                out.clear();
                game.successors(i, &mut out);
                let c = class[i as usize];
                match c {
                    0 => t[0] += 1,
                    1 => assert!(!out.is_empty(), "live state {i} has no successors"),
                    _ => {
                        t[1] += 1;
                        let p = game.unrank(i);
                        if !game.wins(&p.o, 1 - p.mover) {
                            t[2] += 1;
                        }
                    }
                }
                if c != 1 {
                    assert!(out.is_empty(), "non-live state {i} has successors");
                }
                if out.len() == 1 && out[0] == i ^ 1 {
                    t[3] += 1;
                }
                assert!(out.len() < 256);
                *count = out.len() as u8;
                for &s in &out {
                    assert_ne!(class[s as usize], 0, "{i} -> illegal {s}");
                    t[5] = t[5].wrapping_add(mix(i, s));
                }
                t[4] += out.len() as u64;
                let mut sorted = out.clone();
                sorted.sort_unstable();
                sorted.dedup();
                assert_eq!(sorted.len(), out.len(), "duplicate successors of {i}");
            }
            t
        })
        .collect();
    let (mut ns, mut hs) = (0u64, 0u64);
    for t in parts {
        sum.illegal += t[0];
        sum.terminal += t[1];
        sum.stuck += t[2];
        sum.passes += t[3];
        ns += t[4];
        hs = hs.wrapping_add(t[5]);
    }
    let (np, hp) = (0..size.div_ceil(CHUNK as u64))
        .into_par_iter()
        .map(|ci| {
            let (mut np, mut hp) = (0u64, 0u64);
            let mut out = Vec::new();
            for i in ci * CHUNK as u64..((ci + 1) * CHUNK as u64).min(size) {
                out.clear();
                game.predecessors(i, &mut out);
                for &p in &out {
                    assert_eq!(class[p as usize], 1, "predecessor {p} of {i} is not live");
                    hp = hp.wrapping_add(mix(p, i));
                }
                np += out.len() as u64;
            }
            (np, hp)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)));
    assert_eq!(
        (ns, hs),
        (np, hp),
        "successor and predecessor edge sets differ"
    );

    let mut out = Vec::new();
    // 0 undecided, 1 won by player 0, 2 won by player 1.
    let mut value = vec![0u8; size as usize];
    let mut queue = VecDeque::new();
    for i in 0..size {
        if class[i as usize] >= 2 {
            value[i as usize] = class[i as usize] - 1;
            queue.push_back(i);
        }
    }
    while let Some(s) = queue.pop_front() {
        let v = value[s as usize];
        out.clear();
        game.predecessors(s, &mut out);
        for &p in &out {
            let p = p as usize;
            if value[p] != 0 {
                continue;
            }
            if game.mover(p as u64) + 1 == v {
                value[p] = v;
                queue.push_back(p as u64);
            } else {
                counter[p] -= 1;
                if counter[p] == 0 {
                    value[p] = v;
                    queue.push_back(p as u64);
                }
            }
        }
    }
    for i in 0..size as usize {
        match (class[i], value[i]) {
            (0, _) => {}
            (_, 1) => sum.wins0 += 1,
            (_, 2) => sum.wins1 += 1,
            _ => sum.draws += 1,
        }
    }
    sum.start = match value[game.start_index() as usize] {
        0 => 2,
        v => v - 1,
    };
    sum
}

#[test]
fn published_7x7_1() {
    let s = exhaustive(&g(7, 1));
    assert_eq!(
        (s.illegal, s.wins0, s.wins1, s.draws),
        (96, 2_304, 2_304, 0)
    );
    assert_eq!(s.start, 0);
}

#[test]
fn published_7x7_2() {
    let s = exhaustive(&g(7, 2));
    assert_eq!(
        (s.illegal, s.wins0, s.wins1, s.draws),
        (10_810, 1_265_851, 1_265_851, 0)
    );
    assert_eq!(s.start, 0);
}

#[test]
fn published_4x4_6() {
    let s = exhaustive(&g(4, 6));
    eprintln!("4x4/6: {s:?}");
    assert_eq!(
        (s.illegal, s.wins0, s.wins1, s.draws),
        (405_420, 1_436_159, 1_436_159, 85_622)
    );
    assert_eq!(s.start, 0);
}

#[test]
fn illegal_counts_by_enumeration() {
    for (m, k, want) in [(7, 1, 96), (7, 2, 10_810), (4, 6, 405_420)] {
        let game = g(m, k);
        let class = classes(&game);
        let got = class.iter().filter(|&&c| c == 0).count() as u64;
        assert_eq!(got, want, "{m}x{m}/{k}");
        assert_eq!(game.illegal_count(), want, "{m}x{m}/{k} by formula");
    }
    // `kingmaker count` uses the formula: it must agree with `node` on every small board, in
    // both tip-rule conventions, and the placements with the index space.
    for tip_rule in [TipRule::Exact, TipRule::SolverShortcut] {
        for (m, k) in (1..=6)
            .map(|k| (4, k))
            .chain([(5, 2), (5, 3), (7, 1), (7, 2)])
        {
            let game = Cc2p::new(m, k, tip_rule).unwrap();
            let enumerated = (0..game.size())
                .filter(|&i| game.node(i) == Node::Illegal)
                .count() as u64;
            let what = format!("{m}x{m}/{k} {tip_rule:?}");
            assert_eq!(game.illegal_count(), enumerated, "{what}");
            assert_eq!(2 * game.placements(), game.size(), "{what}");
        }
    }
}

#[test]
fn illegal_counts_published() {
    let shortcut = |m, k| Cc2p::new(m, k, TipRule::SolverShortcut).unwrap();
    assert_eq!(g(7, 3).illegal_count(), 576_840);
    assert_eq!(shortcut(7, 3).illegal_count(), 576_840);
    assert_eq!(g(4, 6).illegal_count(), 405_420);
    assert_eq!(g(5, 6).illegal_count(), 64_173_018);
    assert_eq!(shortcut(5, 6).illegal_count(), 63_860_706);
    assert_eq!(shortcut(6, 6).illegal_count(), 1_898_692_650);
}

// ---- per-state properties ------------------------------------------------------------------

fn set(v: &[u64]) -> HashSet<u64> {
    let s: HashSet<u64> = v.iter().copied().collect();
    assert_eq!(s.len(), v.len(), "duplicates in {v:?}");
    s
}

fn swap_node(n: Node) -> Node {
    match n {
        Node::Illegal => Node::Illegal,
        Node::Live { mover } => Node::Live { mover: 1 - mover },
        Node::Terminal { outcome: winner } => Node::Terminal {
            outcome: 1 - winner,
        },
    }
}

fn succ(game: &Cc2p, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    game.successors(i, &mut v);
    v
}

fn pred(game: &Cc2p, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    game.predecessors(i, &mut v);
    v
}

/// The conformance suite's contract at one state, and cc2p's own: the ranking, the colour swap,
/// the alternation of movers, move texts that name the mover, the picture.
fn check_state(game: &Cc2p, i: u64) {
    assert!(i < game.size());
    let p = game.unrank(i);
    assert_eq!(p.o[0].count_ones(), game.k as u32);
    assert_eq!(p.o[1].count_ones(), game.k as u32);
    assert_eq!(p.o[0] & p.o[1], 0);
    assert_eq!(
        p.o[0] | p.o[1],
        (p.o[0] | p.o[1]) & all_cells(game.n as usize)
    );
    assert_eq!(game.rank(&p), i);
    crate::conformance::check_state(game, i);

    let node = game.node(i);
    let sw = game.swap_colours(i);
    assert_eq!(game.swap_colours(sw), i);
    assert_eq!(game.node(sw), swap_node(node));

    let s = succ(game, i);
    for &c in &s {
        assert_eq!(game.mover(c), 1 - game.mover(i));
    }
    let mapped: HashSet<u64> = s.iter().map(|&c| game.swap_colours(c)).collect();
    assert_eq!(set(&succ(game, sw)), mapped);

    let moves = game.moves(i);
    for (text, _) in &moves {
        assert!(text.starts_with(&format!("{} ", game.mover(i))), "{text}");
    }

    let ps = pred(game, i);
    let pset = set(&ps);
    for &q in &ps {
        assert_eq!(game.mover(q), 1 - game.mover(i));
    }
    let mapped: HashSet<u64> = pset.iter().map(|&c| game.swap_colours(c)).collect();
    assert_eq!(set(&pred(game, sw)), mapped);

    let pic = game.picture(i);
    assert_eq!(
        pic.chars().filter(|c| matches!(c, '0' | '1' | '.')).count(),
        game.n as usize + 1
    );
}

/// A random position with pieces drawn mostly near the two start areas, where the rules'
/// special cases (wins, the tip rule, moves into illegal states) live.
fn biased_index(game: &Cc2p, seed: u64) -> u64 {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(seed);
    let n = game.n as usize;
    let near = (3 * game.k as usize).max(6).min(n / 2);
    let mut o: [Cells; 2] = [0; 2];
    for y in 0..2 {
        while o[y].count_ones() < game.k as u32 {
            let c = if rng.gen_bool(0.7) {
                let c = rng.gen_range(0..near);
                if rng.gen_bool(0.5) {
                    c
                } else {
                    n - 1 - c
                }
            } else {
                rng.gen_range(0..n)
            };
            if (o[0] | o[1]) & bit(c) == 0 {
                o[y] |= bit(c);
            }
        }
    }
    game.rank(&Pos {
        o,
        mover: rng.gen_range(0..2),
    })
}

static GAMES: std::sync::LazyLock<Vec<Cc2p>> = std::sync::LazyLock::new(|| {
    let mut v: Vec<Cc2p> = [
        (7, 1),
        (7, 2),
        (7, 3),
        (4, 6),
        (5, 6),
        (4, 1),
        (5, 4),
        (6, 5),
        (8, 6),
        (8, 3),
    ]
    .iter()
    .map(|&(m, k)| g(m, k))
    .collect();
    v.push(Cc2p::new(5, 6, TipRule::SolverShortcut).unwrap());
    v.push(Cc2p::new(4, 6, TipRule::SolverShortcut).unwrap());
    v
});

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn random_states(which in 0..12usize, r in any::<u64>()) {
        let game = &GAMES[which];
        check_state(game, r % game.size());
    }

    #[test]
    fn random_states_near_goals(which in 0..12usize, seed in any::<u64>()) {
        let game = &GAMES[which];
        check_state(game, biased_index(game, seed));
    }
}

#[test]
fn colex_unrank_at_bucket_edges() {
    for k in 1..=6u8 {
        let game = g(MAX_BOARD, k);
        let top = game.choose.c(MAX_CELLS, k as usize);
        let mut ranks: Vec<u64> = (0..=MAX_CELLS)
            .flat_map(|a| {
                let c = game.choose.c(a, k as usize);
                [c.saturating_sub(1), c, c + 1]
            })
            .chain((0..BUCKETS).map(bucket_floor))
            .chain((0..BUCKETS).map(|b| bucket_floor(b).saturating_sub(1)))
            .collect();
        ranks.extend((0..2000).map(|j| top / 2000 * j + j));
        ranks.retain(|&r| r < top);
        for r in ranks {
            let mut out = [0u8; K_MAX];
            game.unrank_set(r, &mut out);
            let set = &out[..k as usize];
            assert!(set.windows(2).all(|w| w[0] < w[1]), "k={k} r={r} {set:?}");
            let mask = set.iter().map(|&c| bit(c as usize)).sum();
            assert_eq!(game.colex(mask), r, "k={k}");
            assert_eq!(
                game.choose.colex_unrank(r, k as usize),
                mask as u128,
                "k={k} r={r}"
            );
        }
    }
}

#[test]
fn notation_doc_matches_the_code() {
    let doc = include_str!("../../../docs/cc2p-notation.md");
    for m in [4, 7] {
        let pic = g(m, 1).numbering_picture();
        assert!(doc.contains(&pic), "numbering picture of {m}x{m}:\n{pic}");
    }
    let game = g(7, 3);
    assert!(doc.contains(&game.picture(game.start_index())));
    assert_eq!(
        game.cells[12].nb,
        [11, 13, 7, 8, 17, 18]
            .iter()
            .map(|&c| bit(c))
            .sum::<Cells>()
    );
    let i = game.parse_position("0:0,1,12;1:18,32,48;0").unwrap();
    let moves: Vec<String> = game.moves(i).into_iter().map(|m| m.0).collect();
    // 18 is taken and 7 is empty (nothing to jump over towards 3).
    for (m, present) in [
        ("0 12-25-38", true),
        ("0 12-25", true),
        ("0 12-7", true),
        ("0 12-18", false),
        ("0 12-3", false),
    ] {
        assert_eq!(moves.iter().any(|x| x == m), present, "{m} in {moves:?}");
    }
    for text in ["0:24,40,47;1:0,2,9;1", "0:0,1,2;1:46,47,48;0"] {
        let i = game.parse_position(text).unwrap();
        assert_eq!(game.format_position(i), text);
    }
    let g46 = g(4, 6);
    let text = "0:0,1,2,3,4,5;1:10,11,12,13,14,15;0";
    assert_eq!(g46.format_position(g46.start_index()), text);
    // `start` names the start position (as in cc3p's notation), for query and the explorer.
    let g72 = g(7, 2);
    let start = g72.parse_position(" Start ").unwrap();
    assert_eq!(start, g72.start_index());
    assert_eq!(g72.format_position(start), "0:0,1;1:47,48;0");
}

#[test]
fn parse_errors() {
    let game = g(7, 3);
    for bad in [
        "",
        "0:0,1,2;1:46,47,48",
        "0:0,1,2;1:46,47,48;2",
        "0:0,1;1:46,47,48;0",
        "0:0,1,2;1:46,47,49;0",
        "0:0,1,2;1:2,47,48;0",
        "1:0,1,2;0:46,47,48;0",
        "0:0,1,x;1:46,47,48;0",
    ] {
        let e = game.parse_position(bad).unwrap_err();
        assert!(e.to_string().contains("expected"), "{e}");
    }
    let i = game.parse_position(" 0: 2,1,0 ; 1:48,47,46 ; 1 ").unwrap();
    assert_eq!(game.format_position(i), "0:0,1,2;1:46,47,48;1");
}

/// A parse error's example is a position of the board in hand (it was 7×7 / 3's start on every
/// board, not a position on 6×6 / 3).
#[test]
fn parse_errors_give_an_example_of_the_board_in_hand() {
    for m in MIN_BOARD..=MAX_BOARD {
        for k in [1, 3, 6] {
            let game = g(m, k);
            let e = game.parse_position("0:0;1:1").unwrap_err().to_string();
            let example = e
                .split_once("e.g. this board's start `")
                .and_then(|(_, rest)| rest.split_once('`'))
                .map(|(example, _)| example)
                .unwrap_or_else(|| panic!("no example in {e}"));
            assert_eq!(
                game.parse_position(example).unwrap(),
                game.start_index(),
                "{e}"
            );
        }
    }
    let e = g(6, 3).parse_position("x").unwrap_err().to_string();
    assert!(e.contains("`0:0,1,2;1:33,34,35;0`"), "{e}");
}

/// An illegal state says why, as `query` and `line` print it; a legal one says nothing.
#[test]
fn illegal_states_say_why() {
    use crate::Notation;
    let game = g(4, 1);
    // Player 0 on its goal (cell 15) with player 0 to move: it has already won.
    let i = game.parse_position("0:15;1:0;0").unwrap();
    assert!(matches!(game.node(i), Node::Illegal));
    let why = Notation::illegal_reason(&game, i).unwrap();
    assert!(
        why.contains("player 0 is to move, but its goal is already filled"),
        "{why}"
    );
    assert_eq!(Notation::illegal_reason(&game, game.start_index()), None);
    // The 6-piece tip rule: every illegal state of 5×5 / 6 says one of the two reasons.
    let game = g(5, 6);
    let tip = (0..game.size())
        .step_by(101)
        .filter(|&i| matches!(game.node(i), Node::Illegal))
        .filter_map(|i| Notation::illegal_reason(&game, i))
        .find(|why| why.contains("tip"));
    assert!(tip.is_some(), "no state illegal by the tip rule found");
}

#[test]
fn placements_and_twins_are_the_unrank_and_the_swap() {
    use rand::{rngs::StdRng, Rng, SeedableRng};
    let mut rng = StdRng::seed_from_u64(7);
    for game in GAMES.iter() {
        let placements = game.size() / 2;
        // Runs across block boundaries (player 0's rank changes) and at both ends.
        let mut starts = vec![0, placements - 1000.min(placements), game.sets1 - 3];
        starts.extend((0..20).map(|_| rng.gen_range(0..placements)));
        // 7×7 / 1 has 48 placements per block: runs over several blocks there.
        starts.extend((1..4).map(|b| b * game.sets1 - 5));
        for first in starts {
            let len = (2 * game.sets1 + 7).min(3000).min(placements - first) as usize;
            let mut seen = 0;
            game.each_placement_with_twin(first, len, |i, cells, own, twin| {
                assert_eq!(i, seen);
                seen += 1;
                let p = first + i as u64;
                assert_eq!(cells, game.unrank(p << 1).o, "{} {p}", game.name());
                assert_eq!(own, game.ranks(p), "{} {p}", game.name());
                let t = twin.set * game.sets1 + twin.free;
                assert_eq!(t, game.swap_colours(p << 1) >> 1, "{} {p}", game.name());
                assert_eq!(t, game.swap_colours(p << 1 | 1) >> 1);
            });
            assert_eq!(seen, len);
        }
    }
}

#[test]
fn swap_of_start_is_start_with_other_mover() {
    for k in 1..=6 {
        let game = g(7, k);
        assert_eq!(
            game.swap_colours(game.start_index()),
            game.start_index() ^ 1
        );
    }
}

/// The destinations' search cell by cell, as the moves found them before `jumps.rs`: the oracle
/// of the fill. `all` is the occupied cells with the piece at `from` lifted.
fn searched_dests(game: &Cc2p, from: usize, all: Cells) -> Cells {
    let mut seen = bit(from);
    let mut stack = vec![from];
    while let Some(at) = stack.pop() {
        let cell = &game.cells[at];
        for &(over, land) in &cell.jumps[..cell.nj as usize] {
            let lb = bit(land as usize);
            if all & bit(over as usize) != 0 && (all | seen) & lb == 0 {
                seen |= lb;
                stack.push(land as usize);
            }
        }
    }
    (game.cells[from].nb & !all) | (seen & !bit(from))
}

/// The fill's destinations of the piece on `from` in the occupancy `occupied` (which holds it),
/// as cells, checked against the search and against the notation's tree search.
fn check_dests(game: &Cc2p, occupied: Cells, from: usize) {
    let make = || game.rh.occupancy(bits(occupied));
    let filled = game.dests(from, occupied, &mut None, make);
    let lifted = occupied & !bit(from);
    assert_eq!(
        filled,
        searched_dests(game, from, lifted),
        "{}x{}: from {from}, occupied {occupied:#x}",
        game.m,
        game.m
    );
    assert_eq!(filled, game.dests_with_paths(from, lifted).0);
}

#[test]
fn jump_fill_is_the_search_on_every_4x4_occupancy() {
    let game = g(4, 1);
    for occupied in 0..1u64 << 16 {
        for from in bits(occupied) {
            check_dests(&game, occupied, from);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// Random occupancies of every board the game accepts, from sparse to nearly full (where the
    /// chains are long), and any piece of them.
    #[test]
    fn jump_fill_is_the_search(
        m in MIN_BOARD..=MAX_BOARD,
        density in 0..5usize,
        words in any::<[u64; 3]>(),
        pick in any::<u64>(),
    ) {
        let game = g(m, 1);
        let [a, b, c] = words;
        let occupied = [a & b & c, a & b, a, a | b, a | b | c][density] & all_cells(game.n as usize);
        let from = if occupied == 0 {
            pick as usize % game.n as usize
        } else {
            bits(occupied).nth(pick as usize % occupied.count_ones() as usize).unwrap()
        };
        check_dests(&game, occupied | bit(from), from);
    }
}
