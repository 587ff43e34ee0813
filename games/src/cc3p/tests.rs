//! Tests of cc3p: geometry, counts, ranking, moves vs unmoves, rotation, notation, published BFS
//! numbers.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use proptest::prelude::*;

use super::geometry::{Geometry, Region};
use super::*;

fn level1() -> &'static Cc3p {
    static G: OnceLock<Cc3p> = OnceLock::new();
    G.get_or_init(|| Cc3p::new(1).unwrap())
}

fn level2() -> &'static Cc3p {
    static G: OnceLock<Cc3p> = OnceLock::new();
    G.get_or_init(|| Cc3p::new(2).unwrap())
}

fn succ(g: &Cc3p, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    g.successors(i, &mut v);
    v
}

fn pred(g: &Cc3p, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    g.predecessors(i, &mut v);
    v
}

fn as_set(v: &[u64]) -> HashSet<u64> {
    v.iter().copied().collect()
}

#[test]
fn geometry_sizes() {
    for (level, cells, hex, lane) in [(1u8, 13, 7, 9), (2, 37, 19, 25), (3, 73, 37, 49)] {
        let g = Geometry::new(level);
        assert_eq!(g.len(), cells);
        assert_eq!(g.hex, hex);
        for p in 0..3 {
            assert_eq!(g.lane_len(p), lane);
        }
        for q in 0..6u8 {
            let k = g
                .cells
                .iter()
                .filter(|c| c.region == Region::Point(q))
                .count();
            assert_eq!(k, g.k);
        }
        assert_eq!(g.cells.iter().map(|c| c.row).max(), Some(4 * level));
        // The rotation is a permutation of order 3 mapping A's points onto B's.
        for c in 0..g.len() {
            let r = g.rotate_cell(c);
            assert_eq!(g.rotate_cell(g.rotate_cell(r)), c);
            if let Region::Point(q) = g.cells[c].region {
                assert_eq!(g.cells[r].region, Region::Point((q + 2) % 6));
            }
        }
        // Names are unique.
        let names: HashSet<String> = g.cells.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), cells);
    }
}

#[test]
fn counts_published() {
    let c1 = counts(1).unwrap();
    assert_eq!(c1.placements, 554);
    assert_eq!(c1.states, 1662);
    assert_eq!(c1.illegal_states, 75);
    let c2 = counts(2).unwrap();
    assert_eq!(c2.placements, 4_947_100_130);
    assert_eq!(c2.states, 14_841_300_390);
    assert_eq!(c2.illegal_states, 20_694);
    let c3 = counts(3).unwrap();
    assert_eq!(c3.placements, 433_341_009_067_620_463_656);
    assert_eq!(c3.states, 3 * 433_341_009_067_620_463_656);
    assert!(counts(0).is_err() && counts(4).is_err());
    assert_eq!(level1().placements(), 554);
    assert_eq!(level2().placements(), 4_947_100_130);
    assert_eq!(level2().size(), 14_841_300_390);
    let err = Cc3p::new(3).err().expect("level 3 has no index");
    assert!(err.to_string().contains("u64"), "{err}");
    assert!(Cc3p::new(0).is_err() && Cc3p::new(4).is_err());
}

#[test]
fn level1_exhaustive() {
    let g = level1();
    let mut illegal = 0;
    let mut terminal = [0u64; 3];
    for i in 0..g.size() {
        let (sets, mover) = g.decode(i);
        assert_eq!(g.index_of(&sets, mover), i);
        match g.node(i) {
            Node::Illegal => {
                illegal += 1;
                assert!(succ(g, i).is_empty() && pred(g, i).is_empty());
            }
            Node::Terminal { outcome: winner } => {
                terminal[winner as usize] += 1;
                assert!(succ(g, i).is_empty());
            }
            Node::Live { mover } => assert_eq!(mover, g.mover(i)),
        }
        check_state(g, i);
    }
    assert_eq!(illegal, 75);
    assert_eq!(terminal[0], terminal[1]);
    assert_eq!(terminal[1], terminal[2]);
    assert_eq!(terminal.iter().sum::<u64>(), terminal_states(1));
}

/// Terminal states (exactly one goal filled) counted by inclusion–exclusion with binomials alone,
/// independently of the ranking and the rules code. With goal p filled, the other two players
/// stand anywhere in their lanes (the hexagon H, shared, plus their own 2k point cells): A = Σ
/// C(H, a)·C(2k, k−a)·C(H−a, b)·C(2k, k−b). Two goals filled leave the third player anywhere in its
/// lane of L = H + 2k cells (C(L, k) ways), three goals one way: exactly one goal is
/// 3A − 2·3·C(L, k) + 3·1 placements, times three movers.
fn terminal_states(level: u64) -> u64 {
    fn c(n: u64, k: u64) -> u64 {
        if k > n {
            return 0;
        }
        (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
    }
    let k = level * (level + 1) / 2;
    let h = 3 * level * (level + 1) + 1;
    let mut a = 0;
    for x in 0..=k {
        for y in 0..=k {
            a += c(h, x) * c(2 * k, k - x) * c(h - x, y) * c(2 * k, k - y);
        }
    }
    3 * (3 * a + 3 - 6 * c(h + 2 * k, k))
}

/// The conformance suite's contract at one state, and cc3p's own: a child's mover is the next
/// player, the count learned with the predecessors is the sibling's, the rotation commutes, and
/// moves come in order.
fn check_state(g: &Cc3p, i: u64) {
    crate::conformance::check_state(g, i);
    let s = succ(g, i);
    let p = pred(g, i);
    for &c in &s {
        assert_eq!(g.mover(c), (g.mover(i) + 1) % 3);
    }
    // The count the predecessors report is for the same placement with the previous player to
    // move.
    let sibling = i / 3 * 3 + (i % 3 + 2) % 3;
    let mut again = Vec::new();
    match g.predecessors_and_count(i, &mut again) {
        Some((state, count)) => {
            assert_eq!(state, sibling);
            assert!(matches!(g.node(sibling), Node::Live { .. }));
            assert_eq!(
                count,
                succ(g, sibling).len(),
                "{}",
                g.format_position(sibling)
            );
        }
        None => assert!(!matches!(g.node(sibling), Node::Live { .. })),
    }
    assert_eq!(again, p);
    let r = g.rotate(i);
    assert_eq!(g.rotate(g.rotate(r)), i);
    let rotated: HashSet<u64> = s.iter().map(|&c| g.rotate(c)).collect();
    assert_eq!(as_set(&succ(g, r)), rotated);
    let rotated: HashSet<u64> = p.iter().map(|&c| g.rotate(c)).collect();
    assert_eq!(as_set(&pred(g, r)), rotated);
    let expect = match g.node(i) {
        Node::Illegal => Node::Illegal,
        Node::Terminal { outcome: winner } => Node::Terminal {
            outcome: (winner + 1) % 3,
        },
        Node::Live { mover } => Node::Live {
            mover: (mover + 1) % 3,
        },
    };
    assert_eq!(g.node(r), expect);
    let moves = g.moves(i);
    assert!(moves.windows(2).all(|w| w[0].0 < w[1].0), "moves in order");
    assert_eq!(moves, moves_by_texts(g, i), "{}", g.format_position(i));
    let children: Vec<u64> = moves.iter().map(|m| m.1).collect();
    assert_eq!(
        g.children_in_move_order(i),
        children,
        "{}",
        g.format_position(i)
    );
    // The seat order: the move order of the state rotated until A moves, each child rotated back.
    let turns = ((3 - i % 3) % 3) as usize;
    assert_eq!(
        g.children_in_seat_order(i),
        g.children_ordered_by_texts(i, turns),
        "{}",
        g.format_position(i)
    );
}

/// The reference for [`Cc3p::moves`]: every jump chain written out as its text and the best one
/// per landing cell kept by (jumps, text), then every move sorted by its text.
fn moves_by_texts(g: &Cc3p, i: u64) -> Vec<(String, u64)> {
    let Node::Live { mover } = g.node(i) else {
        return Vec::new();
    };
    let (sets, _) = g.decode(i);
    let mover = usize::from(mover);
    let occ = sets[0] | sets[1] | sets[2];
    let lane = g.lane[mover];
    let name = |c: usize| g.geo.cells[c].name();
    let child_of = |c: usize, t: usize| {
        let mut child = sets;
        child[mover] ^= (1u64 << c) | (1u64 << t);
        g.index_of(&child, (mover + 1) % 3)
    };
    // Depth-first over every chain of jumps from `u`: the best (length, text) per landing cell.
    fn chains(
        g: &Cc3p,
        u: usize,
        occ: u64,
        open: u64,
        seen: u64,
        path: &mut Vec<usize>,
        best: &mut HashMap<usize, (usize, String)>,
    ) {
        for &(over, land) in &g.jumps[u] {
            if occ & over != 0 && open & land & !seen != 0 {
                let t = land.trailing_zeros() as usize;
                path.push(t);
                let text: Vec<String> = path.iter().map(|&x| g.geo.cells[x].name()).collect();
                let candidate = (path.len(), text.join("-"));
                if best.get(&t).is_none_or(|b| candidate < *b) {
                    best.insert(t, candidate);
                }
                chains(g, t, occ, open, seen | land, path, best);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    let mut pieces = sets[mover];
    while pieces != 0 {
        let c = pieces.trailing_zeros() as usize;
        pieces &= pieces - 1;
        for t in (0..g.geo.len()).filter(|&t| (g.step[c] & lane & !occ) >> t & 1 == 1) {
            out.push((
                format!("{} {}-{}", PLAYERS[mover], name(c), name(t)),
                child_of(c, t),
            ));
        }
        let mut best = HashMap::new();
        let without = occ & !(1u64 << c);
        chains(
            g,
            c,
            without,
            lane & !without,
            1u64 << c,
            &mut Vec::new(),
            &mut best,
        );
        for (t, (_, text)) in best {
            out.push((
                format!("{} {}-{text}", PLAYERS[mover], name(c)),
                child_of(c, t),
            ));
        }
    }
    if out.is_empty() {
        out.push((
            format!("{} pass", PLAYERS[mover]),
            i / 3 * 3 + (i % 3 + 1) % 3,
        ));
    }
    out.sort();
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn level2_random_states(i in 0u64..14_841_300_390) {
        check_state(level2(), i);
    }

    #[test]
    fn level2_random_placements_rank(r in 0u64..4_947_100_130) {
        let g = level2();
        let sets = g.tables.unrank(r);
        prop_assert_eq!(g.tables.rank(&sets), r);
        prop_assert_eq!(g.tables.unrank_plain(r), sets);
        for (set, lane) in sets.iter().zip(g.lane) {
            prop_assert_eq!(set.count_ones() as usize, 3);
            prop_assert_eq!(set & !lane, 0);
        }
        prop_assert_eq!(sets[0] & sets[1], 0);
        prop_assert_eq!(sets[0] & sets[2], 0);
        prop_assert_eq!(sets[1] & sets[2], 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    /// The table-driven destinations equal the plain search, on any occupancy (also crowded ones
    /// no placement has), for every cell of both indexed levels and every lane.
    #[test]
    fn destinations_match_plain(occ in any::<u64>(), thin in any::<u64>(), c in 0usize..64, p in 0usize..3) {
        for g in [level1(), level2()] {
            let c = c % g.geo.len();
            let all = (1u64 << g.geo.len()) - 1;
            for occ in [occ & all, occ & thin & all, occ & !thin & all] {
                let occ = occ & !(1u64 << c);
                prop_assert_eq!(
                    g.destinations(c, occ, g.lane[p]),
                    g.destinations_plain(c, occ, g.lane[p])
                );
            }
        }
    }
}

/// The reciprocals of the unranking divide exactly (small divisors, those near powers of two and
/// random ones; dividends at the ends of the range, at multiples of the divisor and one below, and
/// random; every dividend of the small ones); and the whole unranking of level 1, and of level 2 at
/// the group and block edges, equals the plain one.
#[test]
fn division_free_unranking() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let max = (1u64 << 63) - 1;
    let mut divisors: Vec<u64> = (2..5000).collect();
    divisors.extend((1..63).flat_map(|b| [(1u64 << b) - 1, 1 << b, (1 << b) + 1]));
    divisors.extend((0..5000).map(|_| rng.gen_range(2..=max)));
    for _ in 0..5000 {
        let bits = rng.gen_range(2..63);
        divisors.push(rng.gen_range(2..=1u64 << bits));
    }
    for d in divisors.into_iter().filter(|&d| (2..=max).contains(&d)) {
        let r = rank::Recip::new(d);
        let mut ns = vec![0, 1, d - 1, d, max, max - 1, max / d * d, max / d * d - 1];
        ns.extend((0..40).map(|_| rng.gen_range(0..=max)));
        ns.extend((0..40).map(|_| rng.gen_range(0..=max / d) * d));
        for n in ns {
            assert_eq!(r.div(n), n / d, "{n} / {d}");
            if n > 0 {
                assert_eq!(r.div(n - 1), (n - 1) / d, "{} / {d}", n - 1);
            }
        }
    }
    for d in (1..=300).chain([1000, 4095, 4096, 4097, 65_535]) {
        let r = rank::SmallRecip::new(d);
        for n in 0..1u64 << 16 {
            assert_eq!(r.div(n), n / d, "{n} / {d}");
        }
    }
    let g = level1();
    for r in 0..g.placements() {
        assert_eq!(g.tables.unrank(r), g.tables.unrank_plain(r));
    }
    let g = level2();
    for r in g.tables.boundaries() {
        for r in r.saturating_sub(2)..(r + 2).min(g.placements()) {
            assert_eq!(g.tables.unrank(r), g.tables.unrank_plain(r), "rank {r}");
            assert_eq!(g.tables.rank(&g.tables.unrank(r)), r);
        }
    }
}

/// Live states reached from the start with a random walk (random indices are mostly far from
/// play; this exercises crowded, jump-rich positions too).
#[test]
fn level2_random_walks() {
    use rand::{Rng, SeedableRng};
    let g = level2();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for _ in 0..20 {
        let mut s = g.start_index();
        for _ in 0..60 {
            check_state(g, s);
            let c = succ(g, s);
            if c.is_empty() {
                break;
            }
            s = c[rng.gen_range(0..c.len())];
        }
    }
}

#[test]
fn start_and_notation() {
    let g = level1();
    assert_eq!(g.format_position(g.start_index()), "A:b4;B:b1;C:e1;A");
    let g = level2();
    let start = g.start_index();
    assert_eq!(g.parse_position("start").unwrap(), start);
    assert_eq!(g.parse_position(" START ").unwrap(), start);
    let text = g.format_position(start);
    assert_eq!(g.parse_position(&text).unwrap(), start);
    let spaced = text
        .replace(';', " ; ")
        .replace(',', " , ")
        .replace(':', " : ");
    assert_eq!(g.parse_position(&spaced).unwrap(), start);
    assert_eq!(g.node(start), Node::Live { mover: 0 });
    assert_eq!(g.rotate(start), start + 1);
    for bad in [
        "",
        "A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,i1",
        "A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,z9;A",
        "A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,c6;A",
        "A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,c1;A",
        "A:c6,c7;B:c1,c2,d1;C:h1,h2,i1;A",
        "A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,i1;D",
        "A:c6,c7,d6;B:c1,c2,d1;B:h1,h2,i1;A",
        "A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,i1;A;B",
    ] {
        let err = g.parse_position(bad).unwrap_err();
        assert!(!err.to_string().is_empty());
    }
    let err = g
        .parse_position("A:c6,c7,e3;B:c1,c2,e3;C:h1,h2,i1;A")
        .unwrap_err()
        .to_string();
    assert!(err.contains("two pieces on e3"), "{err}");
    let err = g
        .parse_position("A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,z9;A")
        .unwrap_err()
        .to_string();
    assert!(err.contains("unknown cell \"z9\""), "{err}");
    let err = g
        .parse_position("A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,c1;A")
        .unwrap_err()
        .to_string();
    assert!(err.contains("C's piece on c1 is off its lane"), "{err}");
    let err = g
        .parse_position("A:c6,c7,d6;B:c1,c2,d1;A:h1,h2,i1;A")
        .unwrap_err()
        .to_string();
    assert!(err.contains("listed twice"), "{err}");
    let err = g
        .parse_position("A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,i1;D")
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"D\""), "{err}");
    // Two goals filled: parses, and node() says illegal.
    let i = g
        .parse_position("A:f1,g1,g2;B:f6,g6,g7;C:h1,h2,i1;C")
        .unwrap();
    assert_eq!(g.node(i), Node::Illegal);
    assert!(g.moves(i).is_empty());
    let i = g
        .parse_position("A:f1,g1,g2;B:c1,c2,d1;C:h1,h2,i1;B")
        .unwrap();
    assert_eq!(g.node(i), Node::Terminal { outcome: 0 });
    assert_eq!(g.winner(i), Some(0));
    assert_eq!(g.winner(start), None);
    let err = g
        .parse_position("A:c6,c7;B:c1,c2,d1;C:h1,h2,i1;A")
        .unwrap_err()
        .to_string();
    assert!(err.contains("has 2 pieces"), "{err}");
    let err = g
        .parse_position("A:c6,c7,d6;B:c1,c2,d1;C:h1,h2,i1")
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing side to move"), "{err}");
}

#[test]
fn bfs_level1_published() {
    let g = level1();
    let per = bfs_new_per_depth(g, 12);
    assert_eq!(per, vec![2, 4, 8, 20, 53, 143, 261, 324, 256, 132, 34, 7]);
    // Nothing new at depth 13: the search ends at depth 12, however deep it was asked to go.
    assert_eq!(bfs_new_per_depth(g, 14), per);
    assert_eq!(bfs_new_per_depth(g, 1_000_000), per);
}

#[test]
fn bfs_level2_published() {
    let per = bfs_new_per_depth(level2(), 9);
    assert_eq!(
        per,
        vec![6, 36, 216, 1_188, 6_582, 36_574, 124_074, 463_250, 1_906_964]
    );
}

/// Level 1: 1,245 states reachable from the start (the start included), 171 of them terminal.
#[test]
fn reachable_level1() {
    let g = level1();
    let mut seen = HashSet::from([g.start_index()]);
    let mut stack = vec![g.start_index()];
    while let Some(s) = stack.pop() {
        for c in succ(g, s) {
            if seen.insert(c) {
                stack.push(c);
            }
        }
    }
    assert_eq!(seen.len(), 1245);
    let terminal = seen
        .iter()
        .filter(|&&s| matches!(g.node(s), Node::Terminal { .. }))
        .count();
    assert_eq!(terminal, 171);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The fast rank of a moved placement equals the general rank, for every piece of every
    /// player moved to every empty cell of its lane (not only legal moves), through both halves
    /// of the lifted context (to hexagon cells, to point cells) and with each half alone.
    #[test]
    fn child_rank_matches_rank(r in 0u64..4_947_100_130) {
        check_child_ranks(level2(), r)?;
    }
}

fn check_child_ranks(g: &Cc3p, r: u64) -> Result<(), TestCaseError> {
    let u = g.tables.unrank_full(r);
    let occ = u.sets[0] | u.sets[1] | u.sets[2];
    let hex = g.tables.hex_mask;
    for s0 in 0..3 {
        let par = g.tables.parent(&u, s0);
        let mut pieces = u.sets[s0];
        while pieces != 0 {
            let from = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let lifted = g.tables.lift(&par, from, true, true);
            let hex_only = g.tables.lift(&par, from, true, false);
            let point_only = g.tables.lift(&par, from, false, true);
            let mut free = g.lane[s0] & !occ;
            while free != 0 {
                let to = free.trailing_zeros() as usize;
                free &= free - 1;
                let mut sets = u.sets;
                sets[s0] ^= (1u64 << from) | (1u64 << to);
                let want = g.tables.rank(&sets);
                if hex >> to & 1 == 1 {
                    prop_assert_eq!(g.tables.child_hex(&par, &lifted, to), want);
                    prop_assert_eq!(g.tables.child_hex(&par, &hex_only, to), want);
                } else {
                    prop_assert_eq!(g.tables.child_point(&par, &lifted, to), want);
                    prop_assert_eq!(g.tables.child_point(&par, &point_only, to), want);
                }
            }
        }
    }
    Ok(())
}

/// The child ranking on every placement of level 1.
#[test]
fn child_rank_level1_exhaustive() {
    let g = level1();
    for r in 0..g.placements() {
        check_child_ranks(g, r).unwrap();
    }
}

/// docs/cc3p-notation.md shows the pictures the code draws.
#[test]
fn notation_doc_matches() {
    let doc = include_str!("../../../docs/cc3p-notation.md");
    for level in [1, 2] {
        assert!(
            doc.contains(&cell_name_picture(level)),
            "level {level} names picture"
        );
    }
    let g = level2();
    assert!(doc.contains(&g.picture(g.start_index())));
    assert!(doc.contains(&format!("`{}`", g.format_position(g.start_index()))));
    assert!(doc.contains(&format!(
        "`{}`",
        level1().format_position(level1().start_index())
    )));
    // The point table of the doc, checked against the goals and starts.
    let names = |mask: u64| g.cell_names(mask).join(", ");
    for (p, (start, goal)) in [
        ("c6, c7, d6", "f1, g1, g2"),
        ("c1, c2, d1", "f6, g6, g7"),
        ("h1, h2, i1", "a1, b1, b2"),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(names(g.start[p]), start);
        assert_eq!(names(g.goal[p]), goal);
        assert!(doc.contains(&format!("{start} → {goal}")));
    }
    // The moves quoted in the doc.
    let moves: Vec<String> = g.moves(g.start_index()).into_iter().map(|m| m.0).collect();
    assert!(moves.contains(&"A c7-e5".to_string()));
}

/// The listed non-live states are exactly the terminal and illegal ones, each once.
#[test]
fn non_live_states_are_listed_once() {
    let g = level1();
    let mut listed = std::collections::HashMap::new();
    assert!(g.each_non_live(&mut |i, node| {
        assert!(listed.insert(i, node).is_none(), "{i} listed twice");
    }));
    for i in 0..g.size() {
        match g.node(i) {
            Node::Live { .. } => assert!(!listed.contains_key(&i)),
            node => assert_eq!(listed.get(&i), Some(&node), "state {i}"),
        }
    }
    // Level 2: the illegal count of `counts` and the terminal count of `terminal_states`, both
    // combinatorial, and a sample checked against `node`.
    let g = level2();
    let (mut terminal, mut illegal) = (0u64, 0u64);
    assert!(g.each_non_live(&mut |i, node| {
        if i % 1009 == 0 {
            assert_eq!(g.node(i), node);
        }
        match node {
            Node::Terminal { .. } => terminal += 1,
            Node::Illegal => illegal += 1,
            Node::Live { .. } => panic!("{i} is live"),
        }
    }));
    assert_eq!(illegal as u128, counts(2).unwrap().illegal_states);
    assert_eq!(terminal, terminal_states(2));
    assert_eq!(
        terminal, 35_347_923,
        "wave 0 of the level-2 runs decided this many"
    );
}
