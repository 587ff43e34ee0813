//! The colour-swap half of `cc2p`: what the kernel solves for a cc2p build.
//!
//! [`Cc2p::swap_colours`] (board flipped, players exchanged, side to move exchanged) is an
//! involution that commutes with moves and turns a win of one player into a win of the other, and
//! every move (a pass too) hands the turn to the other player. So a state with player 1 to move is
//! answered by its twin with player 0 to move, seen from the other side, and only the states with
//! player 0 to move need solving: half the index space.
//!
//! **Index.** Half index `h` is the full index `2h` (placement `h`, player 0 to move).
//!
//! **Moves.** The successors of `h` are the full successors of `2h` (player 1 to move), each
//! mapped by the swap to a player-0 state. Since the swap commutes with moves, they are the full
//! successors of `swap_colours(2h)` (player 1 to move in its placement), which already have player
//! 0 to move: their placements. Likewise the predecessors of `h` are those of `swap_colours(2h)`.
//! Either way one unrank of `h` and one mirror, and the fast half of the move generator (player 1's
//! pieces move: player 0's rank stays) for successors.
//!
//! **Values.** Every half state is seen from the side to move: [`Game::node`] gives
//! `Terminal { winner: 0 }` when the player to move has won and `Terminal { winner: 1 }` when it
//! has lost (in cc2p always the latter), and `mover` is always 0. Along every edge the side to move
//! changes, so a child's value is flipped when it reaches its parent:
//! [`Game::alternates_sides`] is true, and the kernel does the flip.
//!
//! **Back to the full table** ([`Cc2pHalf::source`], [`Cc2pHalf::expand_rows`]): full index `f`
//! with player 0 to move is `half[f >> 1]`; with player 1 to move it is
//! `half[swap_colours(f) >> 1]` with W and L exchanged, at the same depth (the twin is decided in
//! the same wave: the two solves are the same retrograde analysis up to the swap). Illegal and
//! drawn states stay as they are. The expanded table is byte-identical to a full solve's.

use super::{Cc2p, Cc2pError};
use crate::game::{Game, Node};
use crate::kernel::{LOSS, WIN};
use rayon::prelude::*;

/// The states of a [`Cc2p`] game with player 0 to move, each standing for itself and its
/// colour-swapped twin (see the module documentation).
#[derive(Clone, Debug)]
pub struct Cc2pHalf {
    full: Cc2p,
}

impl Cc2pHalf {
    pub fn new(full: Cc2p) -> Cc2pHalf {
        Cc2pHalf { full }
    }

    /// The full game this half stands for.
    pub fn full(&self) -> &Cc2p {
        &self.full
    }

    /// Where full index `f`'s answer is in the half table, and whether W and L are exchanged.
    #[inline]
    pub fn source(&self, f: u64) -> (u64, bool) {
        if f & 1 == 0 {
            (f >> 1, false)
        } else {
            (self.full.swap_colours(f) >> 1, true)
        }
    }

    /// Rows `first .. first + values.len()` of the full table from the half table: `half(h)` is
    /// the (value, depth) of half index `h`. Parallel over the rows.
    pub fn expand_rows(
        &self,
        first: u64,
        half: impl Fn(u64) -> (u8, u16) + Sync,
        values: &mut [u8],
        depth: &mut [u16],
    ) {
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        const CHUNK: usize = 1 << 14;
        values
            .par_chunks_mut(CHUNK)
            .zip(depth.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, (values, depth))| {
                let base = first + (c * CHUNK) as u64;
                for (i, (v, d)) in values.iter_mut().zip(depth.iter_mut()).enumerate() {
                    let (h, swap) = self.source(base + i as u64);
                    let (value, dep) = half(h);
                    *v = match value {
                        WIN if swap => LOSS,
                        LOSS if swap => WIN,
                        other => other,
                    };
                    *d = dep;
                }
            });
    }

    /// Read a position in the full game's notation; only positions with player 0 to move are in
    /// the half game.
    pub fn parse_position(&self, text: &str) -> Result<u64, Cc2pError> {
        let f = self.full.parse_position(text)?;
        if f & 1 == 1 {
            return Err(Cc2pError::BadPosition {
                text: text.to_string(),
                reason: "the half game holds the positions with player 0 to move (give the \
                         colour-swapped position)"
                    .to_string(),
            });
        }
        Ok(f >> 1)
    }

    /// The position of half index `h` in the full game's notation (player 0 to move).
    pub fn format_position(&self, h: u64) -> String {
        self.full.format_position(h << 1)
    }

    /// The legal moves of `h` (player 0's moves), each with the half index of its child's twin.
    pub fn moves(&self, h: u64) -> Vec<(String, u64)> {
        let mut moves = self.full.moves(h << 1);
        for m in &mut moves {
            m.1 = self.full.swap_colours(m.1) >> 1;
        }
        moves
    }

    pub fn picture(&self, h: u64) -> String {
        self.full.picture(h << 1)
    }

    /// The start position (player 0 to move).
    pub fn start_index(&self) -> u64 {
        self.full.start_index() >> 1
    }
}

impl Game for Cc2pHalf {
    fn name(&self) -> String {
        format!("{}-half", self.full.name())
    }

    fn players(&self) -> u8 {
        2
    }

    fn size(&self) -> u64 {
        self.full.size() / 2
    }

    /// The full game's node of `2h`: player 0 is to move, so its winner is already relative to
    /// the side to move.
    fn node(&self, h: u64) -> Node {
        self.full.node(h << 1)
    }

    fn successors(&self, h: u64, out: &mut Vec<u64>) {
        let e = self.full.expand_swapped(h);
        self.full
            .each_successor(&e, |placement| out.push(placement));
    }

    fn predecessors(&self, h: u64, out: &mut Vec<u64>) {
        let e = self.full.expand_swapped(h);
        self.full
            .each_predecessor(&e, |placement| out.push(placement));
    }

    fn mover(&self, _h: u64) -> u8 {
        0
    }

    fn alternates_sides(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::cc2p::TipRule;
    use crate::kernel::{check, solve_in_memory, Layer, DRAW, ILLEGAL};
    use proptest::prelude::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    fn half(m: u8, k: u8, rule: TipRule) -> Cc2pHalf {
        Cc2pHalf::new(Cc2p::new(m, k, rule).unwrap())
    }

    fn solo() -> Layer {
        Layer::new("solo", 0b01, 0b01)
    }

    fn set(v: &[u64]) -> HashSet<u64> {
        let s: HashSet<u64> = v.iter().copied().collect();
        assert_eq!(s.len(), v.len(), "duplicates in {v:?}");
        s
    }

    fn succ(g: &impl Game, i: u64) -> Vec<u64> {
        let mut v = Vec::new();
        g.successors(i, &mut v);
        v
    }

    fn pred(g: &impl Game, i: u64) -> Vec<u64> {
        let mut v = Vec::new();
        g.predecessors(i, &mut v);
        v
    }

    /// The half game's contract at one state, and its agreement with the full game.
    fn check_state(g: &Cc2pHalf, h: u64) {
        let full = g.full();
        assert!(h < g.size());
        assert_eq!(g.node(h), full.node(h << 1));
        assert!(!matches!(g.node(h), Node::Live { mover: 1 }));
        assert_eq!(g.mover(h), 0);
        let s = succ(g, h);
        let ss = set(&s);
        // The swapped full successors of 2h.
        let want: HashSet<u64> = succ(full, h << 1)
            .iter()
            .map(|&c| {
                let t = full.swap_colours(c);
                assert_eq!(t & 1, 0);
                t >> 1
            })
            .collect();
        assert_eq!(ss, want, "successors of {h}");
        match g.node(h) {
            Node::Live { .. } => assert!(!s.is_empty()),
            _ => assert!(s.is_empty()),
        }
        for &c in &s {
            assert!(c < g.size());
            assert_ne!(g.node(c), Node::Illegal, "{h} -> illegal {c}");
            assert!(set(&pred(g, c)).contains(&h), "{h} -> {c} has no unmove");
        }
        let p = pred(g, h);
        let want: HashSet<u64> = pred(full, full.swap_colours(h << 1))
            .iter()
            .map(|&q| {
                assert_eq!(q & 1, 0);
                q >> 1
            })
            .collect();
        assert_eq!(set(&p), want, "predecessors of {h}");
        for &q in &p {
            assert!(matches!(g.node(q), Node::Live { mover: 0 }));
            assert!(
                set(&succ(g, q)).contains(&h),
                "unmove {q} of {h} is no move"
            );
        }
        // Both halves of the full space map onto the half space.
        assert_eq!(g.source(h << 1), (h, false));
        let twin = full.swap_colours(h << 1);
        assert_eq!(g.source(twin), (h, true));
        let moves: HashSet<u64> = g.moves(h).iter().map(|m| m.1).collect();
        assert_eq!(moves, ss);
        assert_eq!(g.parse_position(&g.format_position(h)).unwrap(), h);
    }

    static GAMES: std::sync::LazyLock<Vec<Cc2pHalf>> = std::sync::LazyLock::new(|| {
        let mut v: Vec<Cc2pHalf> = [(7, 1), (7, 2), (7, 3), (4, 6), (5, 6), (5, 4), (9, 6)]
            .iter()
            .map(|&(m, k)| half(m, k, TipRule::Exact))
            .collect();
        v.push(half(5, 6, TipRule::SolverShortcut));
        v
    });

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        #[test]
        fn random_half_states(which in 0..8usize, r in any::<u64>()) {
            let g = &GAMES[which];
            check_state(g, r % g.size());
        }
    }

    #[test]
    fn every_state_of_small_boards() {
        for g in [half(7, 1, TipRule::Exact), half(4, 1, TipRule::Exact)] {
            for h in 0..g.size() {
                check_state(&g, h);
            }
        }
    }

    /// The half successor and predecessor relations are each other's inverse over a whole space:
    /// equal edge counts and equal order-independent hashes of the edge sets.
    #[test]
    fn successors_and_predecessors_are_inverse_on_7x7_2() {
        let g = half(7, 2, TipRule::Exact);
        let mix = |a: u64, b: u64| {
            let mut x = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.rotate_left(29);
            x ^= x >> 31;
            x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x ^ (x >> 29)
        };
        let edges = |forward: bool| {
            (0..g.size())
                .into_par_iter()
                .map(|i| {
                    let mut out = Vec::new();
                    if forward {
                        g.successors(i, &mut out);
                    } else {
                        g.predecessors(i, &mut out);
                    }
                    let h = out.iter().fold(0u64, |acc, &j| {
                        acc.wrapping_add(if forward { mix(i, j) } else { mix(j, i) })
                    });
                    (out.len() as u64, h)
                })
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)))
        };
        let (ns, hs) = edges(true);
        assert!(ns > 0);
        assert_eq!((ns, hs), edges(false));
    }

    /// Solve the half game and the full game with the kernel; the expanded half table must be the
    /// full table, byte for byte.
    fn half_solve_expands_to_full_solve(m: u8, k: u8, rule: TipRule) {
        let g = Arc::new(half(m, k, rule));
        let full = Arc::new(g.full().clone());
        let h = solve_in_memory(&g, &solo(), 2);
        let f = solve_in_memory(&full, &solo(), 2);
        let n = full.size() as usize;
        let (mut values, mut depth) = (vec![0u8; n], vec![0u16; n]);
        let lookup = |i: u64| (h.values[i as usize], h.depth[i as usize]);
        // In two calls, to exercise `first`.
        let (v0, v1) = values.split_at_mut(n / 3);
        let (d0, d1) = depth.split_at_mut(n / 3);
        g.expand_rows(0, lookup, v0, d0);
        g.expand_rows((n / 3) as u64, lookup, v1, d1);
        assert_eq!(h.waves, f.waves, "{m}x{m}/{k}");
        assert!(values == f.values, "{m}x{m}/{k}: values differ");
        assert!(depth == f.depth, "{m}x{m}/{k}: depths differ");
        let count = |v: u8| f.values.iter().filter(|&&x| x == v).count();
        eprintln!(
            "{m}x{m}/{k}: {} W, {} L, {} D, {} illegal",
            count(WIN),
            count(LOSS),
            count(DRAW),
            count(ILLEGAL)
        );
    }

    #[test]
    fn half_solve_is_the_full_solve_on_7x7_1() {
        half_solve_expands_to_full_solve(7, 1, TipRule::Exact);
    }

    #[test]
    fn half_solve_is_the_full_solve_on_7x7_2() {
        half_solve_expands_to_full_solve(7, 2, TipRule::Exact);
    }

    #[test]
    fn half_solve_is_the_full_solve_on_4x4() {
        for k in [1, 2, 3, 4, 6] {
            half_solve_expands_to_full_solve(4, k, TipRule::Exact);
        }
        half_solve_expands_to_full_solve(4, 6, TipRule::SolverShortcut);
    }

    /// The kernel's flip along edges agrees with the reference solver (which honours
    /// `alternates_sides` on its own).
    #[test]
    fn half_solve_matches_the_reference_solver() {
        for (m, k) in [(7, 1), (4, 2)] {
            let g = Arc::new(half(m, k, TipRule::Exact));
            let solved = solve_in_memory(&g, &solo(), 2);
            let (values, depth) = check::reference_solve(g.as_ref(), &solo());
            assert!(solved.values == values, "{m}x{m}/{k}");
            assert!(solved.depth == depth, "{m}x{m}/{k}");
            for i in 0..g.size() {
                let got = check::expected(g.as_ref(), &solo(), i, |c| {
                    (values[c as usize], depth[c as usize])
                });
                assert_eq!(got, None, "state {i}");
            }
        }
    }
}
