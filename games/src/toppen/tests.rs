//! Tests of the whole TOPPEN game: index, moves and unmoves, notation.

use super::*;
use proptest::prelude::*;
use std::collections::HashSet;

fn game(diagonal: bool) -> &'static Toppen {
    shared(diagonal)
}

fn succ(g: &Toppen, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    g.successors(i, &mut v);
    v
}

fn pred(g: &Toppen, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    g.predecessors(i, &mut v);
    v
}

#[test]
fn sizes_and_catalogue() {
    for diagonal in [false, true] {
        let g = game(diagonal);
        let sizes = g.catalogue_sizes();
        let blocks: u64 = (1..=10)
            .map(|v| sizes[v] as u64 * index::compositions(v))
            .sum();
        assert_eq!(g.size(), blocks * 504);
        println!(
            "diagonal={diagonal}: classes per vertex count {:?}, total {}, index size {}",
            &sizes[1..],
            g.catalogue().classes.len(),
            g.size()
        );
        assert_eq!(sizes[1], 1);
        assert_eq!(sizes[2], 1);
    }
    // Orthogonal: 1, 1, 2 (path, L = path), ... small classes are easy to count by hand.
    let sizes = game(false).catalogue_sizes();
    assert_eq!(&sizes[1..5], &[1, 1, 1, 3]); // 4 cells: path, 4-cycle, star (T)
                                             // King adjacency on up to 3 cells: K1, K2, path P3, triangle K3.
    assert_eq!(&game(true).catalogue_sizes()[1..4], &[1, 1, 2]);
}

#[test]
fn options_are_validated() {
    assert!(Toppen::new(ToppenOptions {
        first: 2,
        diagonal: false
    })
    .is_err());
    let g = game(false);
    assert_eq!(g.players(), 2);
    assert_eq!(g.name(), "toppen");
    assert_eq!(game(true).name(), "toppen-diagonal");
}

#[test]
fn index_round_trip_everywhere() {
    for diagonal in [false, true] {
        let g = game(diagonal);
        for i in 0..g.size() {
            let s = g.space.decode(i);
            assert_eq!(g.space.encode(&s), i);
            assert_eq!(s.mover as u64, i & 1);
            assert_eq!(
                s.h[..s.n as usize].iter().map(|&h| h as u32).sum::<u32>(),
                10
            );
        }
    }
}

#[test]
fn terminal_states() {
    let g = game(false);
    let one = g.catalogue().classes.iter().position(|c| c.n == 1).unwrap() as u32;
    let (lo, hi) = (g.space.offset(one), g.space.offset(one + 1));
    assert_eq!(hi - lo, 504);
    for i in lo..hi {
        let s = g.space.decode(i);
        let winner = if (s.bits[0] >> 9) & 1 == 1 { 0 } else { 1 };
        assert_eq!(g.node(i), Node::Terminal { outcome: winner });
        assert!(succ(g, i).is_empty());
        assert!(g.moves(i).is_empty());
    }
    for i in [0, hi, g.size() - 1] {
        if i < lo || i >= hi {
            assert!(matches!(g.node(i), Node::Live { mover } if mover as u64 == i & 1));
        }
    }
    let t = g.parse_position("#:AAAAABBBBB:A").unwrap();
    assert_eq!(g.node(t), Node::Terminal { outcome: 1 });
    let t = g.parse_position("#:BBBBBAAAAA").unwrap();
    assert_eq!(g.node(t), Node::Terminal { outcome: 0 });
    // Two stacks side by side: the mover finishes the game.
    let p = g.parse_position("##:AAAABBBBB,A:A").unwrap();
    let kids = succ(g, p);
    assert_eq!(kids.len(), 1);
    assert_eq!(g.node(kids[0]), Node::Terminal { outcome: 0 });
    // No A top: A passes.
    let p = g.parse_position("##:AAAAB,BBBAB:A").unwrap();
    assert_eq!(g.moves(p), vec![("pass".to_string(), p ^ 1)]);
}

/// The game contract at one index (the conformance suite's), and no TOPPEN state is illegal.
fn check_contract(g: &Toppen, i: u64) {
    assert_ne!(g.node(i), Node::Illegal, "no TOPPEN state is illegal");
    crate::conformance::check_state(g, i);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn moves_and_unmoves_are_inverse(x in any::<u64>(), diagonal in any::<bool>()) {
        let g = game(diagonal);
        check_contract(g, x % g.size());
    }

    #[test]
    fn pictures_have_rows(x in any::<u64>(), diagonal in any::<bool>()) {
        let g = game(diagonal);
        prop_assert!(g.picture(x % g.size()).lines().count() >= 2);
    }
}

/// Every state of every class with at most 4 vertices, and every state reached in a few plies from
/// some starts: the contract exhaustively where it is cheap.
#[test]
fn contract_on_small_classes() {
    for diagonal in [false, true] {
        let g = game(diagonal);
        let classes = &g.catalogue().classes;
        let last = classes.iter().position(|c| c.n > 4).unwrap() as u32;
        for i in 0..g.space.offset(last) {
            check_contract(g, i);
        }
    }
}

/// Global balance over the whole orthogonal space: every (parent, child) pair is listed once from
/// each end (with the sampled inclusion checks above, this pins down the predecessor lists).
#[test]
fn edge_counts_balance() {
    let g = game(false);
    let (mut forward, mut backward) = (0u64, 0u64);
    let mut out = Vec::new();
    for i in 0..g.size() {
        out.clear();
        g.successors(i, &mut out);
        forward += out.len() as u64;
        out.clear();
        g.predecessors(i, &mut out);
        backward += out.len() as u64;
    }
    assert_eq!(forward, backward);
    println!("{forward} moves (passes included) in the orthogonal space");
}

#[test]
fn starting_states_and_classes() {
    let g = game(false);
    let path = Toppen::parse_terrain("##########").unwrap();
    let snake = Toppen::parse_terrain("###/..#/###/#../##").unwrap();
    let ring = Toppen::parse_terrain("####/#..#/####").unwrap();
    let cross = Toppen::parse_terrain("..#.../..#.../######/..#.../..#...").unwrap();
    assert_eq!(g.graph_class(&path), g.graph_class(&snake));
    assert_ne!(g.graph_class(&path), g.graph_class(&ring));
    assert_eq!(g.automorphisms(g.graph_class(&path)), 2);
    assert_eq!(g.automorphisms(g.graph_class(&ring)), 20);
    assert_eq!(g.automorphisms(g.graph_class(&cross)), 6);
    assert_eq!(g.class_vertices(g.graph_class(&ring)), 10);
    for t in [&path, &ring, &cross] {
        let starts = g.starting_states(t);
        assert_eq!(starts.len(), 252);
        assert_eq!(starts.iter().collect::<HashSet<_>>().len(), starts.len());
        for &s in &starts {
            assert_eq!(g.mover(s), 0);
            assert_eq!(g.space.class_of(s) as usize, g.graph_class(t));
            assert!(pred(g, s).iter().all(|&p| g.space.vertices_of(p) == 10));
        }
    }
    let b_first = Toppen::new(ToppenOptions {
        first: 1,
        diagonal: false,
    })
    .unwrap();
    let sb = b_first.starting_states(&ring);
    assert_eq!(
        sb,
        g.starting_states(&ring)
            .iter()
            .map(|s| s | 1)
            .collect::<Vec<_>>()
    );
    // Every decomino classifies; 10-vertex classes are exactly the decomino graphs.
    let all = Toppen::all_decominoes();
    assert_eq!(all.len(), 4655);
    let used: HashSet<usize> = all.iter().map(|t| g.graph_class(t)).collect();
    assert_eq!(used.len(), g.catalogue_sizes()[10]);
    let gd = game(true);
    let used: HashSet<usize> = all.iter().map(|t| gd.graph_class(t)).collect();
    assert_eq!(used.len(), gd.catalogue_sizes()[10]);
}

#[test]
fn notation_examples() {
    let g = game(false);
    // A start on the ring, written on the user's own terrain and on the representative drawing.
    let i = g.parse_position("####/#..#/####:AABBABABAB:A").unwrap();
    assert_eq!(g.format_position(i), "####/#..#/####:AABBABABAB:A");
    assert_eq!(g.parse_position("####/#..#/####:aabbababab").unwrap(), i);
    assert_eq!(
        g.parse_position("####/#..#/####:A,A,B,B,A,B,A,B,A,B:A")
            .unwrap(),
        i
    );
    // Emptied cells may be kept in the SPEC.
    let j = g
        .parse_position("####/#..#/####:AA,-,B,B,A,B,A,B,A,B:B")
        .unwrap();
    let k = g
        .parse_position("####/#..#/####:AA,,B,B,A,B,A,B,A,B:B")
        .unwrap();
    let l = g
        .parse_position("#.##/#..#/####:AA,B,B,A,B,A,B,A,B:B")
        .unwrap();
    assert_eq!(j, k);
    assert_eq!(j, l);
    assert_eq!(g.mover(j), 1);
    // Moves on the path a1..j1: the A on a1 cannot move off (that would need a neighbour b1...).
    let p = g.parse_position("##########:ABABABABAB:A").unwrap();
    let moves: Vec<String> = g.moves(p).into_iter().map(|(m, _)| m).collect();
    // A tops at a1, c1, e1, g1, i1; the end a1 may move to b1; inner cells would split the path.
    assert_eq!(moves, vec!["a1-b1".to_string()]);
    let pic = g.picture(p);
    assert!(pic.contains("A to move"), "{pic}");
    assert!(pic.starts_with("   a b c d e f g h i j"), "{pic}");
    for bad in [
        "",
        "##########",
        "##########:ABABABABAB:C",
        "##########:ABABABABAA",
        "##########:ABABABABA",
        "#####/...../#####:ABABABABAB",
        "##:AAAAAX,BBBBB",
        "##:AAAAA,BBBBB:A:B",
    ] {
        let e = g.parse_position(bad);
        assert!(e.is_err(), "{bad:?} should be rejected");
    }
    // Diagonal: a diagonal pair is connected; orthogonally it is not.
    let gd = game(true);
    assert!(gd.parse_position("#./.#:AAAAA,BBBBB:A").is_ok());
    assert!(g.parse_position("#./.#:AAAAA,BBBBB:A").is_err());
    // Ten cells on a diagonal have the king graph of a straight decomino: a legal position.
    let diag10 = (0..10)
        .map(|r| format!("{}#", ".".repeat(r)))
        .collect::<Vec<_>>()
        .join("/");
    let on_diag = gd.parse_position(&format!("{diag10}:ABABABABAB")).unwrap();
    assert_eq!(on_diag, gd.parse_position("##########:ABABABABAB").unwrap());
    // A 3x3 block with a cell touching one corner diagonally has a king graph that no subset of a
    // decomino has.
    let e = gd
        .parse_position("###./###./###./...#:ABABABABAB")
        .unwrap_err();
    assert!(e.to_string().contains("decomino"), "{e}");
}
