//! Tests of Go on five surfaces: neighbour tables, winding, index, moves and exact unmoves, and
//! notation; solved boards are `solving.rs`, the independent rules it checks against `plain.rs`.

use super::*;
use kingmaker_kernel::{solve_in_memory, DRAW, ILLEGAL, LOSS, WIN};
use proptest::prelude::*;
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

mod plain;
mod solving;

fn go(surface: Surface, rows: usize, cols: usize) -> Go {
    Go::new(surface, rows, cols).unwrap()
}

fn succ(g: &Go, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    g.successors(i, &mut v);
    v
}

fn pred(g: &Go, i: u64) -> Vec<u64> {
    let mut v = Vec::new();
    g.predecessors(i, &mut v);
    v
}

/// The sizes checked state by state, exhaustively.
const SMALL: [(usize, usize); 9] = [
    (1, 1),
    (1, 2),
    (1, 3),
    (1, 4),
    (2, 2),
    (1, 5),
    (2, 3),
    (1, 6),
    (3, 3),
];

// ---------------------------------------------------------------- neighbour tables

/// The neighbours of (r, c), written straight from the rules' text (docs/go.md), as a set.
fn rule_neighbours(s: Surface, rows: usize, cols: usize, r: usize, c: usize) -> HashSet<usize> {
    let (rr, cc) = (rows as i64, cols as i64);
    let (r, c) = (r as i64, c as i64);
    let mut out = HashSet::new();
    for (dr, dc) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
        let (mut nr, mut nc) = (r + dr, c + dc);
        // Left/right edges.
        if nc < 0 || nc >= cc {
            match s {
                Surface::Plane => continue,
                Surface::Cylinder | Surface::Torus | Surface::Klein => nc = (nc + cc) % cc,
                Surface::Projective => {
                    nc = (nc + cc) % cc;
                    nr = rr - 1 - r;
                }
            }
        }
        // Top/bottom edges.
        if nr < 0 || nr >= rr {
            match s {
                Surface::Plane | Surface::Cylinder => continue,
                Surface::Torus => nr = (nr + rr) % rr,
                Surface::Klein | Surface::Projective => {
                    nr = (nr + rr) % rr;
                    nc = cc - 1 - c;
                }
            }
        }
        if (nr, nc) != (r, c) {
            out.insert((nr * cc + nc) as usize);
        }
    }
    out
}

#[test]
fn neighbour_tables_match_the_rules() {
    for s in Surface::ALL {
        for rows in 1..=6 {
            for cols in rows..=6 {
                let g = Geometry::new(s, rows, cols).unwrap();
                for p in 0..g.n {
                    let mine: HashSet<usize> =
                        (0..g.n).filter(|&q| g.nbr[p] >> q & 1 == 1).collect();
                    let want = rule_neighbours(s, rows, cols, p / cols, p % cols);
                    assert_eq!(mine, want, "{s:?} {rows}x{cols} point {p}");
                    assert_eq!(g.nbr[p] >> p & 1, 0);
                    for &q in &mine {
                        assert_eq!(g.nbr[q] >> p & 1, 1, "symmetric");
                    }
                }
                // Every step has its reverse with the opposite crossings (the surface's edges).
                let mut half: HashMap<(u8, u8, [i8; 2]), i32> = HashMap::new();
                for p in 0..g.n {
                    for st in g.steps[p].iter().flatten() {
                        *half.entry((p as u8, st.to, st.wind)).or_default() += 1;
                    }
                }
                for (&(p, q, w), &k) in &half {
                    assert_eq!(
                        half.get(&(q, p, [-w[0], -w[1]])),
                        Some(&k),
                        "{s:?} {rows}x{cols}"
                    );
                }
            }
        }
    }
}

#[test]
fn neighbour_tables_by_hand() {
    let count = |s, r, c, p: usize| Geometry::new(s, r, c).unwrap().nbr[p].count_ones();
    // 1x1: nobody has neighbours, on any surface.
    for s in Surface::ALL {
        assert_eq!(count(s, 1, 1, 0), 0);
    }
    // 2x2 torus: the two gluings repeat the grid neighbours.
    for p in 0..4 {
        assert_eq!(count(Surface::Torus, 2, 2, p), 2);
    }
    for p in 0..9 {
        assert_eq!(count(Surface::Torus, 3, 3, p), 4);
    }
    // 3x3 plane: corner, edge, centre.
    assert_eq!(count(Surface::Plane, 3, 3, 0), 2);
    assert_eq!(count(Surface::Plane, 3, 3, 1), 3);
    assert_eq!(count(Surface::Plane, 3, 3, 4), 4);
    // 1x3 cylinder: a triangle.
    assert_eq!(
        Geometry::new(Surface::Cylinder, 1, 3).unwrap().nbr,
        vec![0b110, 0b101, 0b011]
    );
    // 3x3 Klein bottle: a1 (point 0) is next to b1, a2, c1 (left/right) and c3 (flip).
    let k = Geometry::new(Surface::Klein, 3, 3).unwrap();
    assert_eq!(k.nbr[0], 1 << 1 | 1 << 3 | 1 << 2 | 1 << 8);
    // b1 (point 1) is next to b3 (point 7) through the flip: column 1 maps to itself.
    assert_eq!(k.nbr[1] >> 7 & 1, 1);
    // 2x3 projective plane: a1 is next to c2 (left, flipped) and c2 (up, flipped): deduplicated.
    let pp = Geometry::new(Surface::Projective, 2, 3).unwrap();
    assert_eq!(pp.nbr[0], 1 << 1 | 1 << 3 | 1 << 5);
    // 1x2 Klein: a1's flip partner is b1, already its neighbour.
    assert_eq!(
        Geometry::new(Surface::Klein, 1, 2).unwrap().nbr,
        vec![0b10, 0b01]
    );
    // Bad sizes.
    assert!(Geometry::new(Surface::Plane, 3, 2).is_err());
    assert!(Geometry::new(Surface::Plane, 0, 2).is_err());
    assert!(Geometry::new(Surface::Plane, 6, 7).is_err());
    assert_eq!(Surface::parse("Klein"), Ok(Surface::Klein));
    assert!(Surface::parse("sphere").is_err());
}

// ---------------------------------------------------------------- winding and scores

fn score_of(s: Surface, rows: usize, cols: usize, text: &str) -> i32 {
    let g = go(s, rows, cols);
    let i = g.parse_position(text).unwrap();
    g.score(i)
}

#[test]
fn winding_regions() {
    use Surface::*;
    // A row of empty points between two rows of White stones, on a 3x3 board.
    let row = "OOO/.../OOO:B";
    assert_eq!(score_of(Plane, 3, 3, row), -9);
    assert_eq!(score_of(Cylinder, 3, 3, row), -6); // the row goes around the cylinder
    assert_eq!(score_of(Torus, 3, 3, row), -6);
    assert_eq!(score_of(Klein, 3, 3, row), -9); // around the straight-glued direction: torsion
    assert_eq!(score_of(Projective, 3, 3, row), -9);
    // The middle column: goes around the top/bottom gluing (column b maps to itself when flipped).
    let col = "O.O/O.O/O.O:B";
    assert_eq!(score_of(Plane, 3, 3, col), -9);
    assert_eq!(score_of(Cylinder, 3, 3, col), -9);
    assert_eq!(score_of(Torus, 3, 3, col), -6);
    assert_eq!(score_of(Klein, 3, 3, col), -6); // around the flip-glued direction
    assert_eq!(score_of(Projective, 3, 3, col), -9);
    // Column a alone does not close up on the Klein bottle (a1 is glued to c3): no winding.
    let a_col = ".OO/.OO/.OO:B";
    assert_eq!(score_of(Klein, 3, 3, a_col), -9);
    assert_eq!(score_of(Torus, 3, 3, a_col), -6);
    // Columns a and c together close up across the flip: winding.
    assert_eq!(score_of(Klein, 3, 3, ".O./.O./.O.:B"), -3);
    // A single empty point: never winding on a board wider than 1 ...
    assert_eq!(score_of(Torus, 3, 3, "XXX/X.X/XXX:W"), 9);
    // ... but on a 1-row torus its top/bottom self-loop goes around.
    assert_eq!(score_of(Torus, 1, 3, "X.X:W"), 2);
    assert_eq!(score_of(Cylinder, 1, 3, "X.X:W"), 3);
    assert_eq!(score_of(Klein, 1, 3, "X.X:W"), 2); // b1 is its own flip partner: a loop
    assert_eq!(score_of(Klein, 1, 3, ".X.:W"), 1); // a1-c1 is crossed up and down: winds
    assert_eq!(score_of(Projective, 1, 3, ".X.:W"), 3);
    // Empty board: nobody's.
    for s in Surface::ALL {
        assert_eq!(score_of(s, 2, 3, ".../...:B"), 0);
    }
    // Mixed borders: neutral.
    assert_eq!(score_of(Plane, 1, 3, "X.O:B"), 0);
    assert_eq!(score_of(Plane, 2, 2, "X./.O:B"), 0);
    assert_eq!(score_of(Plane, 2, 2, "X./..:W"), 4);
}

/// The winding rule against an independent computation on the torus and the cylinder: a region
/// winds there exactly when its points, unrolled on the universal cover, are not a finite copy.
#[test]
fn winding_matches_the_cover_on_tori() {
    let mut rng = StdRng::seed_from_u64(3);
    let mut seen_both = [0, 0];
    for (rows, cols) in [
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 2),
        (2, 3),
        (3, 3),
        (3, 4),
        (4, 4),
        (2, 5),
    ] {
        for s in [Surface::Cylinder, Surface::Torus] {
            let g = Geometry::new(s, rows, cols).unwrap();
            for _ in 0..300 {
                let region_mask: u64 = rng.gen::<u64>() & g.all;
                if region_mask == 0 {
                    continue;
                }
                let start = region_mask.trailing_zeros() as usize;
                let region = g.component(region_mask, start);
                // Flood the cover: (row, col) unbounded, reduced mod the glued periods.
                let (wr, wc) = if s == Surface::Torus {
                    (true, true)
                } else {
                    (false, true)
                };
                let mut seen: HashSet<(i64, i64)> = HashSet::new();
                let mut stack = vec![((start / cols) as i64, (start % cols) as i64)];
                let mut winds = false;
                while let Some((r, c)) = stack.pop() {
                    if seen.len() > 4 * g.n {
                        winds = true;
                        break;
                    }
                    if !seen.insert((r, c)) {
                        continue;
                    }
                    for (dr, dc) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                        let (nr, nc) = (r + dr, c + dc);
                        let (pr, pc) = (nr.rem_euclid(rows as i64), nc.rem_euclid(cols as i64));
                        if (!wr && pr != nr) || (!wc && pc != nc) {
                            continue;
                        }
                        if region >> (pr as usize * cols + pc as usize) & 1 == 1 {
                            stack.push((nr, nc));
                        }
                    }
                }
                assert_eq!(
                    score::winds(&g, region),
                    winds,
                    "{s:?} {rows}x{cols} {region:b}"
                );
                seen_both[winds as usize] += 1;
            }
        }
    }
    assert!(seen_both[0] > 100 && seen_both[1] > 100, "{seen_both:?}");
}

/// The Klein bottle's winding rule against its infinite cyclic cover: the cylinder of points
/// (y, c') with y any integer and c' a column mod C, lying over the board point
/// (y mod R, c') when y div R is even and (y mod R, C−1−c') when it is odd. Steps are y ± 1 and
/// c' ± 1 mod C; the deck group is generated by the glide (y, c') ↦ (y + R, C−1−c'), whose
/// top/bottom count is 1. A region winds exactly when its lift is unbounded (more than n points).
#[test]
fn winding_matches_the_cover_on_klein_bottles() {
    let mut rng = StdRng::seed_from_u64(4);
    let mut seen_both = [0, 0];
    for (rows, cols) in [
        (1, 1),
        (1, 2),
        (1, 3),
        (2, 2),
        (2, 3),
        (3, 3),
        (3, 4),
        (4, 4),
        (2, 5),
    ] {
        let g = Geometry::new(Surface::Klein, rows, cols).unwrap();
        let (rr, cc) = (rows as i64, cols as i64);
        let below = |y: i64, c: i64| {
            let c = if y.div_euclid(rr) % 2 == 0 {
                c
            } else {
                cc - 1 - c
            };
            (y.rem_euclid(rr) * cc + c) as usize
        };
        for _ in 0..300 {
            let region_mask: u64 = rng.gen::<u64>() & g.all;
            if region_mask == 0 {
                continue;
            }
            let start = region_mask.trailing_zeros() as usize;
            let region = g.component(region_mask, start);
            let mut seen: HashSet<(i64, i64)> = HashSet::new();
            let mut stack = vec![((start / cols) as i64, (start % cols) as i64)];
            let mut winds = false;
            while let Some((y, c)) = stack.pop() {
                if seen.len() > g.n {
                    winds = true;
                    break;
                }
                if !seen.insert((y, c)) {
                    continue;
                }
                for (dy, dc) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    let (ny, nc) = (y + dy, (c + dc).rem_euclid(cc));
                    if region >> below(ny, nc) & 1 == 1 {
                        stack.push((ny, nc));
                    }
                }
            }
            assert_eq!(score::winds(&g, region), winds, "{rows}x{cols} {region:b}");
            seen_both[winds as usize] += 1;
        }
    }
    assert!(seen_both[0] > 100 && seen_both[1] > 100, "{seen_both:?}");
}

// ---------------------------------------------------------------- index and legality

#[test]
fn index_round_trips() {
    for s in Surface::ALL {
        for (r, c) in SMALL {
            let g = go(s, r, c);
            assert_eq!(g.size(), 3u64.pow((r * c) as u32) * (r * c + 3) as u64 * 2);
            for i in 0..g.size() {
                let st = g.state(i);
                assert_eq!(g.index(&st), i);
                assert_eq!(st.side as u64, i & 1);
            }
        }
    }
    let g = go(Surface::Torus, 4, 4);
    assert_eq!(g.size(), 43_046_721 * 19 * 2);
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..100_000 {
        let i = rng.gen_range(0..g.size());
        assert_eq!(g.index(&g.state(i)), i);
    }
    // The index space reaches 36 points (the game, whose outcomes must stay below 64, 31).
    let space = IndexSpace::new(36);
    assert_eq!(
        space.encode(&space.decode(space.size() - 1)),
        space.size() - 1
    );
    assert!(Go::new(Surface::Plane, 6, 6).is_err());
}

#[test]
fn legality_and_terminals() {
    let g = go(Surface::Plane, 1, 2);
    let illegal = |t: &str| {
        let e = g.parse_position(t);
        assert!(e.is_err(), "{t} should be illegal");
    };
    illegal("XO:B"); // no liberties
    illegal("XX:W");
    illegal(".O:W:ko=a1"); // the last mover was Black, but the stone is White's
    illegal("..:B:ko=a1");
    illegal("X.:B:ko=b1"); // the last mover was White, but the stone is Black's
    assert!(g.parse_position("X.:W:ko=b1").is_ok()); // Black took a White stone on b1
    assert!(g.parse_position(".O:B:ko=a1").is_ok());
    assert!(g.parse_position("X.:W:pass").is_ok());
    let start = g.start();
    assert_eq!(g.format_position(start), "..:B");
    assert_eq!(g.node(start), Node::Live { mover: 0 });
    let end = g.parse_position("X.:B:end").unwrap();
    assert_eq!(
        g.node(end),
        Node::Terminal {
            outcome: g.outcome(2)
        }
    ); // Black's two points
    assert!(succ(&g, end).is_empty());
    assert_eq!(pred(&g, end), vec![g.parse_position("X.:W:pass").unwrap()]);
    let g0 = g.threshold_layer(3).unwrap_err();
    assert!(g0.to_string().contains("-1..=2"), "{g0}");
    assert_eq!(Go::thresholds(4), -3..=4);
    let Node::Terminal { outcome: won } = g.node(end) else {
        unreachable!()
    };
    assert!(g.threshold_layer(2).unwrap().wins(won));
    assert!(g.threshold_layer(1).unwrap().wins(won));
    let e0 = g.parse_position("..:W:end").unwrap();
    let Node::Terminal { outcome: zero } = g.node(e0) else {
        unreachable!()
    };
    assert_eq!(g.outcome_score(zero), 0);
    assert!(g.threshold_layer(0).unwrap().wins(zero));
    assert!(!g.threshold_layer(1).unwrap().wins(zero));
    assert_eq!(g.name(), "go-plane-1x2");
    for k in Go::thresholds(2) {
        let layer = g.threshold_layer(k).unwrap();
        assert_eq!(Go::layer_threshold(&layer.name), Some(k), "{}", layer.name);
    }
    assert_eq!(Go::layer_threshold("score_ge_03"), None);
    assert_eq!(Go::layer_threshold("score_ge_m0"), None);
    // Illegal indices have no moves either way.
    let bad = g.index(&State {
        board: Board { black: 1, white: 2 },
        side: 0,
        flag: Flag::Clear,
    });
    assert_eq!(g.node(bad), Node::Illegal);
    assert!(succ(&g, bad).is_empty() && pred(&g, bad).is_empty());
}

#[test]
fn ko_by_hand() {
    // 1x2: White captures the Black stone; Black may not retake at once, so it can only pass.
    let g = go(Surface::Plane, 1, 2);
    let p = g.parse_position("X.:W").unwrap();
    let moves = g.moves(p);
    let names: Vec<&str> = moves.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(names, vec!["b1", "pass"]);
    assert_eq!(g.format_position(moves[0].1), ".O:B:ko=a1");
    let q = moves[0].1;
    let after: Vec<String> = g.moves(q).into_iter().map(|(m, _)| m).collect();
    assert_eq!(after, vec!["pass"]);
    // Without the ban, Black retakes (and sets a ban in turn).
    let r = g.parse_position(".O:B").unwrap();
    let kids: Vec<String> = g
        .moves(r)
        .iter()
        .map(|(_, c)| g.format_position(*c))
        .collect();
    assert_eq!(kids, vec!["X.:W:ko=b1", ".O:W:pass"]);
    // The ko state's parents: "X.:W" with every flag under which b1 was playable. The legal
    // state "X.:W:ko=b1" is not one: it bans b1 itself.
    let parents: HashSet<String> = pred(&g, q).iter().map(|&i| g.format_position(i)).collect();
    let want: HashSet<String> = ["X.:W", "X.:W:pass"].map(String::from).into();
    assert_eq!(parents, want);
    assert!(g.parse_position("X.:W:ko=b1").is_ok());
    // A classic ko on a 3x4 plane: Black takes at c2; the single White stone on b2 is gone.
    let g = go(Surface::Plane, 3, 4);
    let p = g.parse_position(".XO./XO.O/.XO.:B").unwrap();
    let c2 = moves_to(&g, p, "c2");
    assert_eq!(g.format_position(c2), ".XO./X.XO/.XO.:W:ko=b2");
    assert!(!g.moves(c2).iter().any(|(m, _)| m == "b2"));
    // Capturing two stones sets no ban, even when the capturing stone is left with one liberty.
    let g = go(Surface::Plane, 1, 5);
    let p = g.parse_position(".OOX.:B").unwrap();
    assert_eq!(g.format_position(moves_to(&g, p, "a1")), "X..X.:W");
    // A stone that captures one stone but keeps two liberties sets no ban either.
    let g = go(Surface::Plane, 2, 3);
    let p = g.parse_position("XO./...:W").unwrap();
    assert_eq!(g.format_position(moves_to(&g, p, "a2")), ".O./O..:B");
}

fn moves_to(g: &Go, i: u64, name: &str) -> u64 {
    g.moves(i)
        .into_iter()
        .find(|(m, _)| m == name)
        .unwrap_or_else(|| panic!("{name} is not a move of {}", g.format_position(i)))
        .1
}

// ---------------------------------------------------------------- moves and unmoves

/// The contract at one index (the conformance suite's).
fn check_contract(g: &Go, i: u64) {
    crate::conformance::check_state(g, i);
}

/// Every index of the small sizes, every surface.
#[test]
fn unmoves_invert_moves_exhaustively() {
    for s in Surface::ALL {
        for (r, c) in SMALL {
            let g = go(s, r, c);
            for i in 0..g.size() {
                check_contract(&g, i);
            }
        }
    }
}

#[test]
fn unmoves_invert_moves_on_random_states() {
    let mut rng = StdRng::seed_from_u64(15);
    for s in Surface::ALL {
        for (r, c) in [(2, 4), (3, 4), (4, 4), (1, 7), (2, 5), (4, 5)] {
            let g = go(s, r, c);
            let states = sample::random_states(&g, &mut rng, 400);
            let kos = states
                .iter()
                .filter(|&&i| matches!(g.state(i).flag, Flag::Ko(_)))
                .count();
            // On the 2x4 Klein bottle every point has four distinct neighbours: a ko shape (p, its
            // four neighbours, x's three others) needs all eight points, and the stones next to x
            // then have no liberty. No ko exists there.
            let no_ko = (r, c, s) == (2, 4, Surface::Klein);
            assert_eq!(kos == 0, no_ko, "{s:?} {r}x{c}: {kos} ko states sampled");
            for i in states {
                check_contract(&g, i);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    /// Any index of a 4x4 board, legal or not.
    #[test]
    fn contract_on_any_index(x in any::<u64>(), s in 0usize..5, size in 0usize..3) {
        let (r, c) = [(4, 4), (3, 3), (2, 4)][size];
        let g = go(Surface::ALL[s], r, c);
        check_contract(&g, x % g.size());
    }

    #[test]
    fn notation_round_trips(x in any::<u64>(), s in 0usize..5) {
        let g = go(Surface::ALL[s], 3, 4);
        let i = x % g.size();
        let text = g.format_position(i);
        if g.is_legal(i) {
            prop_assert_eq!(g.parse_position(&text), Ok(i), "{}", text);
            prop_assert_eq!(g.parse_position(&text.to_lowercase()), Ok(i), "{}", text);
        } else {
            prop_assert!(g.parse_position(&text).is_err(), "{}", text);
        }
    }
}

#[test]
fn notation_errors() {
    let g = go(Surface::Torus, 2, 3);
    for bad in [
        "",
        "XO./...",
        "XO./...:B:pass:end",
        "XO./..:B",
        "XO./.../...:B",
        "XQ./...:B",
        "XO./...:X",
        "XO./...:B:ko",
        "XO./...:B:ko=d1",
        "XO./...:B:ko=a3",
        "XO./...:B:later",
    ] {
        assert!(g.parse_position(bad).is_err(), "{bad:?} should be rejected");
    }
    assert_eq!(g.parse_point("c2"), Some(5));
    assert_eq!(g.point_name(5), "c2");
    assert_eq!(g.parse_point("a0"), None);
}
