//! Independent checks of a solved layer: a slow reference solver (for tests) and the local
//! consistency test that `verify --deep` runs on every state.

use super::{Layer, DRAW, ILLEGAL, LOSS, WIN};
use crate::game::{Game, Node};

/// What a state's value and depth must be, given its children's: the retrograde fixpoint, one
/// state at a time. Returns `None` when `values[index]`/`depth[index]` agree with the children.
pub fn expected(
    game: &impl Game,
    layer: &Layer,
    index: u64,
    value_of: impl Fn(u64) -> (u8, u16),
) -> Option<(u8, u16)> {
    let (value, depth) = value_of(index);
    let want = match game.node(index) {
        Node::Illegal => (ILLEGAL, 0),
        Node::Terminal { outcome: winner } => (if layer.wins(winner) { WIN } else { LOSS }, 0),
        Node::Live { mover } => {
            let good = if layer.in_coalition(mover) { WIN } else { LOSS };
            let bad = if good == WIN { LOSS } else { WIN };
            let mut children = Vec::new();
            game.successors(index, &mut children);
            // Children of a game seen from the side to move are valued from the other side.
            let seen = |(v, d): (u8, u16)| match v {
                WIN if game.alternates_sides() => (LOSS, d),
                LOSS if game.alternates_sides() => (WIN, d),
                _ => (v, d),
            };
            let kids: Vec<(u8, u16)> = children.iter().map(|&c| seen(value_of(c))).collect();
            let best_good = kids.iter().filter(|k| k.0 == good).map(|k| k.1).min();
            if let Some(d) = best_good {
                (good, d + 1)
            } else if kids.iter().all(|k| k.0 == bad) {
                (bad, kids.iter().map(|k| k.1).max().unwrap_or(0) + 1)
            } else {
                (DRAW, 0)
            }
        }
    };
    (want != (value, depth)).then_some(want)
}

/// A slow, obviously correct solver: synchronous rounds of "decide what the children decide",
/// over the whole index space. Round `r` decides exactly the states of wave `r`.
pub fn reference_solve(game: &impl Game, layer: &Layer) -> (Vec<u8>, Vec<u16>) {
    let n = game.size() as usize;
    let mut values = vec![DRAW; n];
    let mut depth = vec![0u16; n];
    for (i, value) in values.iter_mut().enumerate() {
        match game.node(i as u64) {
            Node::Illegal => *value = ILLEGAL,
            Node::Terminal { outcome: winner } => {
                *value = if layer.wins(winner) { WIN } else { LOSS }
            }
            Node::Live { .. } => {}
        }
    }
    let mut round = 1u16;
    loop {
        let mut decided = Vec::new();
        for i in 0..n {
            if values[i] == DRAW {
                if let Some((v, d)) = expected(game, layer, i as u64, |c| {
                    (values[c as usize], depth[c as usize])
                }) {
                    if v != DRAW {
                        debug_assert_eq!(d, round);
                        decided.push((i, v));
                    }
                }
            }
        }
        if decided.is_empty() {
            return (values, depth);
        }
        for (i, v) in decided {
            values[i] = v;
            depth[i] = round;
        }
        round += 1;
    }
}
