//! The race for second place against the contract of the kernel, and the whole of level 1
//! against a plain solver of its own: explicit states, moves by the reference destination
//! search, values by rounds to a fixed point.

use super::second::Second;
use super::{ranking, ranking_of, Cc3pRace, Cc3pRaceParams};
use crate::cc3p::Cc3p;
use crate::conformance::check_solve;
use crate::family::GameFamily;
use crate::notation::Notation;
use kingmaker_kernel::{solve_in_memory, Game, Layer, Node, DRAW, ILLEGAL, LOSS, WIN};
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

fn linked_both_ways(g: &impl Game, i: u64) {
    let (mut kids, mut ups) = (Vec::new(), Vec::new());
    g.successors(i, &mut kids);
    g.predecessors(i, &mut ups);
    for &c in &kids {
        let mut back = Vec::new();
        g.predecessors(c, &mut back);
        assert!(back.contains(&i), "{i} -> {c} has no unmove back");
    }
    for &p in &ups {
        let mut fwd = Vec::new();
        g.successors(p, &mut fwd);
        assert!(
            fwd.contains(&i),
            "{p} is listed as a parent of {i} but has no move to it"
        );
    }
    let mut sorted = kids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), kids.len(), "{i}: a successor listed twice");
}

#[test]
fn the_race_moves_and_unmoves_are_exact_inverses() {
    let one = Second::new(Arc::new(Cc3p::new(1).unwrap()));
    assert_eq!(one.size(), 162);
    for i in 0..one.size() {
        let (sets, mover) = one.decode(i);
        assert_eq!(one.index_of(sets, mover), i);
        linked_both_ways(&one, i);
    }
    let two = Second::new(Arc::new(Cc3p::new(2).unwrap()));
    assert_eq!(two.size(), 2 * 2300 * 2300);
    let mut rng = SplitMix64::seed_from_u64(7);
    for _ in 0..5_000 {
        let i = rng.next_u64() % two.size();
        let (sets, mover) = two.decode(i);
        assert_eq!(two.index_of(sets, mover), i);
        linked_both_ways(&two, i);
    }
}

#[test]
fn the_race_solves_as_the_reference_does() {
    let race = Arc::new(Second::new(Arc::new(Cc3p::new(1).unwrap())));
    check_solve(&race, &Layer::new("b_second", 0b010, 0b010));
}

/// W, L or D for a coalition: rounds to a fixed point over explicit states.
fn plain_values<K: Copy + Eq + Hash>(
    states: &[K],
    children: &HashMap<K, Vec<K>>,
    outcome: impl Fn(K) -> Option<u8>,
    mover: impl Fn(K) -> u8,
    coalition: u8,
    objective: u64,
) -> HashMap<K, u8> {
    let mut value: HashMap<K, u8> = states
        .iter()
        .map(|&s| {
            let v = match outcome(s) {
                Some(o) if objective >> o & 1 == 1 => WIN,
                Some(_) => LOSS,
                None => DRAW,
            };
            (s, v)
        })
        .collect();
    loop {
        let mut changed = false;
        for &s in states {
            if outcome(s).is_some() || value[&s] != DRAW {
                continue;
            }
            let kids: Vec<u8> = children[&s].iter().map(|c| value[c]).collect();
            let ours = coalition >> mover(s) & 1 == 1;
            let (good, bad) = if ours { (WIN, LOSS) } else { (LOSS, WIN) };
            let v = if kids.contains(&good) {
                good
            } else if kids.iter().all(|&k| k == bad) {
                bad
            } else {
                continue;
            };
            value.insert(s, v);
            changed = true;
        }
        if !changed {
            return value;
        }
    }
}

/// A state of level 1 spelled out: each player's cell mask and the mover.
type Plain = ([u64; 3], u8);

/// The plain move generator: `players` take turns (the others do not move); a player without a
/// move passes. None for a state where a goal of `ends` is filled.
fn plain_children(g: &Cc3p, s: Plain, players: &[u8], ends: &[usize]) -> Option<Vec<Plain>> {
    let (sets, mover) = s;
    if ends
        .iter()
        .any(|&p| sets[p] & g.goal_mask(p) == g.goal_mask(p))
    {
        return None;
    }
    let at = players.iter().position(|&p| p == mover).unwrap();
    let next = players[(at + 1) % players.len()];
    let m = usize::from(mover);
    let occupied = sets[0] | sets[1] | sets[2];
    let mut out = Vec::new();
    for from in (0..64).filter(|&c| sets[m] >> c & 1 == 1) {
        let to = g.destinations_plain(from, occupied & !(1 << from), g.lane_mask(m));
        for dest in (0..64).filter(|&c| to >> c & 1 == 1) {
            let mut moved = sets;
            moved[m] = sets[m] & !(1 << from) | 1 << dest;
            out.push((moved, next));
        }
    }
    if out.is_empty() {
        out.push((sets, next));
    }
    Some(out)
}

/// Every state reachable from `start` under `plain_children`, and the children of each.
fn explore(
    g: &Cc3p,
    start: Plain,
    players: &[u8],
    ends: &[usize],
) -> (Vec<Plain>, HashMap<Plain, Vec<Plain>>) {
    let mut children = HashMap::new();
    let mut order = vec![start];
    let mut todo = vec![start];
    children.insert(start, Vec::new());
    while let Some(s) = todo.pop() {
        let kids = plain_children(g, s, players, ends).unwrap_or_default();
        for &k in &kids {
            if let std::collections::hash_map::Entry::Vacant(e) = children.entry(k) {
                e.insert(Vec::new());
                order.push(k);
                todo.push(k);
            }
        }
        children.insert(s, kids);
    }
    (order, children)
}

/// The plain ranking at a terminal cc3p state: the other two race from it, on their own.
fn plain_ranking(g: &Cc3p, s: Plain, first: u8) -> u8 {
    let (q, r) = ((first + 1) % 3, (first + 2) % 3);
    let mover = if s.1 == first { q } else { s.1 };
    let start = (s.0, mover);
    let ends = [usize::from(q), usize::from(r)];
    let (states, children) = explore(g, start, &[q, r], &ends);
    let finisher = |t: Plain| {
        ends.iter()
            .find(|&&p| t.0[p] & g.goal_mask(p) == g.goal_mask(p))
            .map(|&p| p as u8)
    };
    let values = plain_values(&states, &children, finisher, |t| t.1, 1 << q, 1 << q);
    match values[&start] {
        WIN => ranking(first, q),
        LOSS => ranking(first, r),
        _ => ranking(first, first),
    }
}

#[test]
fn level_1_agrees_with_a_plain_solver() {
    let race = Arc::new(Cc3pRace::new(1).unwrap());
    let g = race.cc3p();
    let everyone = [0usize, 1, 2];
    // Every legal state of level 1, spelled out, with its plain children and ranking.
    let states: Vec<Plain> = (0..g.size())
        .filter(|&i| !matches!(g.node(i), Node::Illegal))
        .map(|i| {
            let (sets, mover) = g.decode(i);
            (sets, mover as u8)
        })
        .collect();
    let mut children = HashMap::new();
    let mut outcome = HashMap::new();
    for &s in &states {
        match plain_children(g, s, &[0, 1, 2], &everyone) {
            Some(kids) => {
                children.insert(s, kids);
            }
            None => {
                let first = everyone
                    .into_iter()
                    .find(|&p| s.0[p] & g.goal_mask(p) == g.goal_mask(p))
                    .unwrap() as u8;
                outcome.insert(s, plain_ranking(g, s, first));
                children.insert(s, Vec::new());
            }
        }
    }
    // The kernel's terminal outcomes are the plain ones, and races of level 1 are won by either
    // racer (none goes on for ever: one piece each cannot block for ever).
    let mut seen = [0u32; 3];
    for (&s, &o) in &outcome {
        let index = g.index_of(&s.0, usize::from(s.1));
        assert_eq!(
            race.node(index),
            Node::Terminal { outcome: o },
            "{}",
            race.outcome_text(o)
        );
        let (first, second) = ranking_of(o);
        seen[match second {
            None => 2,
            Some(s) if s == (first + 1) % 3 => 0,
            Some(_) => 1,
        }] += 1;
    }
    assert!(
        seen[0] > 0 && seen[1] > 0 && seen[2] == 0,
        "races: {seen:?}"
    );
    for layer in (Cc3pRaceParams { level: 1 }).layers() {
        let plain = plain_values(
            &states,
            &children,
            |s| outcome.get(&s).copied(),
            |s| s.1,
            layer.coalition,
            layer.objective,
        );
        let solved = solve_in_memory(&race, &layer, 2);
        for i in 0..g.size() {
            let v = solved.values[i as usize];
            let (sets, mover) = g.decode(i);
            match plain.get(&(sets, mover as u8)) {
                Some(&p) => assert_eq!(v, p, "{} at {}", layer.name, g.format_position(i)),
                None => assert_eq!(v, ILLEGAL),
            }
        }
    }
}
