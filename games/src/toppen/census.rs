//! The census of a terrain: its 252 starting colourings counted by result.
//! 1. The one layer, `solo`, reads every state from A's side whoever moves (W = A can force a win,
//!    L = B can, D = neither), so [`census`] maps W → A wins, L → B wins, D → draw for either
//!    first player.

use kingmaker_kernel::{DRAW, LOSS, WIN};

/// Counts `(A wins, B wins, draws)` over starting states, given the value of each state in the
/// `solo` layer. A start listed twice is counted twice (one count per colouring).
///
/// # Panics
/// When a start's value is not W, L or D (an illegal or unsolved slot: a bug upstream).
pub fn census(value_of: impl Fn(u64) -> u8, starts: &[u64]) -> (u32, u32, u32) {
    let (mut a, mut b, mut d) = (0, 0, 0);
    for &s in starts {
        match value_of(s) {
            WIN => a += 1,
            LOSS => b += 1,
            DRAW => d += 1,
            other => panic!("starting state {s} has value {other}, not W, L or D"),
        }
    }
    (a, b, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toppen::{Toppen, ToppenOptions};
    use kingmaker_kernel::{solve_in_memory, Layer};
    use std::sync::Arc;

    #[test]
    fn census_counts_values() {
        let values = [WIN, LOSS, DRAW, WIN];
        assert_eq!(census(|i| values[i as usize], &[0, 1, 2, 3, 3]), (3, 1, 1));
    }

    /// The published censuses (docs/rules.md §2), from one solve of the whole orthogonal index space.
    #[test]
    fn published_censuses() {
        let game = Arc::new(Toppen::new(ToppenOptions::default()).unwrap());
        let layer = Layer {
            name: "solo".into(),
            coalition: 1,
            objective: 1,
        };
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(2);
        let solved = solve_in_memory(&game, &layer, threads);
        // Swapping the colours and the side to move swaps W and L: both are equally common.
        let count = |v: u8| solved.values.iter().filter(|&&x| x == v).count();
        assert_eq!(count(WIN), count(LOSS));
        assert_eq!(count(kingmaker_kernel::ILLEGAL), 0);
        // With B to move first the roles swap too.
        let ring = game.starting_states(&Toppen::parse_terrain("####/#..#/####").unwrap());
        let b_first: Vec<u64> = ring.iter().map(|s| s | 1).collect();
        assert_eq!(census(|i| solved.values[i as usize], &b_first), (0, 250, 2));
        let check = |spec: &str, expected: (u32, u32, u32)| {
            let terrain = Toppen::parse_terrain(spec).unwrap();
            let starts = game.starting_states(&terrain);
            assert_eq!(starts.len(), 252);
            assert_eq!(
                census(|i| solved.values[i as usize], &starts),
                expected,
                "terrain {spec}"
            );
        };
        check("##########", (122, 114, 16));
        check("#####/....#/....#/....#/....#/....#", (122, 114, 16));
        check("###/..#/###/#../##", (122, 114, 16));
        check("####/#..#/####", (250, 0, 2));
        check("..#.../..#.../######/..#.../..#...", (101, 119, 32));
    }
}
