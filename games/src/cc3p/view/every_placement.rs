//! The exact census of a preference rule over a game too large for the retrograde pass (level 2):
//! the rule followed from every placement (a state's outcome is its rotation's, turned: docs/rules.md
//! §1.4), a byte per placement remembering what walks found (4.9 GB at level 2, where the retrograde
//! pass would keep 30 GB). A walk stops at a state whose outcome is known, so each choice is made
//! about once.

use super::preferences::{choose, Outcome, Rule, ENDLESS, ILLEGAL};
use super::rule_census::Census;
use crate::cc3p::answers::{class, Cc3pTables};
use crate::cc3p::Cc3p;
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::{FormatError, Lookup};
use rayon::prelude::*;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};

/// Placements walked between two calls of the progress callback.
const CHUNK_PLACEMENTS: u64 = 1 << 16;

/// The memo's bytes: the placement's outcome (with A to move) plus one; 0 while unknown.
const UNKNOWN: u8 = 0;

/// `o` as seen `k` seats on: the rotation by `k` seats hands each win on by `k` players.
fn turned(o: Outcome, k: u64) -> Outcome {
    if o < 3 {
        ((u64::from(o) + k) % 3) as Outcome
    } else {
        o
    }
}

/// What walks found: by placement, the outcome of its state with A to move.
struct Memo {
    bytes: Vec<AtomicU8>,
}

impl Memo {
    fn new(placements: u64) -> Memo {
        Memo {
            bytes: (0..placements).map(|_| AtomicU8::new(UNKNOWN)).collect(),
        }
    }

    /// The placement of `s` rotated until A moves, and the seats `s` is turned from it:
    /// R(p·3 + m) = R(p)·3 + (m + 1) mod 3, so a mover m needs (3 − m) mod 3 rotations.
    fn slot(game: &Cc3p, s: u64) -> (usize, u64) {
        let mover = s % 3;
        let mut a = s;
        for _ in 0..(3 - mover) % 3 {
            a = game.rotate(a);
        }
        ((a / 3) as usize, mover)
    }

    fn get(&self, game: &Cc3p, s: u64) -> Option<Outcome> {
        let (slot, mover) = Memo::slot(game, s);
        match self.bytes[slot].load(Relaxed) {
            UNKNOWN => None,
            b => Some(turned(b - 1, mover)),
        }
    }

    /// Every walk finds the same outcome for a state, so concurrent stores agree.
    fn set(&self, game: &Cc3p, s: u64, o: Outcome) {
        let (slot, mover) = Memo::slot(game, s);
        self.bytes[slot].store(turned(o, 3 - mover) + 1, Relaxed);
    }
}

/// The outcome of the live or terminal state `s`: `rule` followed from it until a terminal state,
/// a state the memo knows, or a state the walk has passed (a cycle: endless). Every state passed
/// takes the outcome.
fn walk<T: Lookup>(
    game: &Cc3p,
    t: &Cc3pTables<T>,
    rule: Rule,
    memo: &Memo,
    s: u64,
) -> Result<Outcome, FormatError> {
    let mut path = Vec::new();
    let mut passed = HashSet::new();
    let mut here = s;
    let outcome = loop {
        if let Some(o) = memo.get(game, here) {
            break o;
        }
        match game.node(here) {
            Node::Terminal { outcome } => break outcome,
            Node::Illegal => break ILLEGAL,
            Node::Live { .. } => {}
        }
        if !passed.insert(here) {
            break ENDLESS;
        }
        path.push(here);
        here = choose(game, t, rule, here)?.expect("a live state has a move");
    };
    for &x in &path {
        memo.set(game, x, outcome);
    }
    Ok(outcome)
}

/// The census of `rule` over every state of `game`, by walks from each placement's A-to-move
/// state, each counted for its three rotations. `progress` hears of each chunk of placements
/// done, with its size.
pub fn census_by_walks<T: Lookup + Sync>(
    game: &Cc3p,
    t: &Cc3pTables<T>,
    rule: Rule,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Census, FormatError> {
    let placements = game.placements();
    let memo = Memo::new(placements);
    (0..placements.div_ceil(CHUNK_PLACEMENTS))
        .into_par_iter()
        .map(|k| {
            let first = k * CHUNK_PLACEMENTS;
            let end = (first + CHUNK_PLACEMENTS).min(placements);
            let mut census = Census::default();
            for p in first..end {
                let s = p * 3;
                let node = game.node(s);
                // A rotation maps a placement with two goals filled to another.
                if node == Node::Illegal {
                    continue;
                }
                let outcome = walk(game, t, rule, &memo, s)?;
                let class = class(game, t, s)?;
                let live = matches!(node, Node::Live { .. });
                for m in 0..3u8 {
                    census.add(turned(outcome, m.into()), class, live.then_some(m));
                }
            }
            progress(end - first);
            Ok(census)
        })
        .try_reduce(Census::default, |a, b| Ok(a.merge(b)))
}

#[cfg(test)]
mod tests {
    use super::super::level_one::level_1;
    use super::super::preferences::outcomes;
    use super::*;
    use crate::cc3p::answers::answers;

    /// The walks' census against the retrograde pass's, state by state, under every rule:
    /// which also checks that the rules treat the seats alike.
    #[test]
    fn walking_from_every_placement_counts_what_the_retrograde_pass_finds() {
        let (game, t) = level_1();
        for rule in Rule::ALL {
            let o = outcomes(&game, &t, rule).unwrap();
            let mut want = Census::default();
            for s in 0..game.size() {
                let mover = match game.node(s) {
                    Node::Illegal => continue,
                    Node::Live { mover } => Some(mover),
                    Node::Terminal { .. } => None,
                };
                let class = answers(&game, &t, s).unwrap().class;
                want.add(o.outcome[s as usize], class, mover);
            }
            let done = std::sync::atomic::AtomicU64::new(0);
            let got = census_by_walks(&game, &t, rule, &|n| {
                done.fetch_add(n, Relaxed);
            })
            .unwrap();
            assert_eq!(got, want, "{}", rule.name());
            assert_eq!(done.into_inner(), game.placements(), "{}", rule.name());
        }
    }

    /// A memo's byte holds a state's outcome for all three of its rotations.
    #[test]
    fn the_memo_turns_an_outcome_with_the_state() {
        let (game, _) = level_1();
        let memo = Memo::new(game.placements());
        let live: Vec<u64> = (0..game.size())
            .filter(|&s| matches!(game.node(s), Node::Live { .. }))
            .take(20)
            .collect();
        for (k, &s) in live.iter().enumerate() {
            let o = (k % 4) as Outcome; // A, B, C wins or endless
            memo.set(&game, s, o);
            let r1 = game.rotate(s);
            assert_eq!(memo.get(&game, s), Some(o));
            assert_eq!(memo.get(&game, r1), Some(turned(o, 1)));
            assert_eq!(memo.get(&game, game.rotate(r1)), Some(turned(o, 2)));
        }
    }
}
