//! The symmetry-reduced forms of `cc2p` the kernel solves: the colour-swap half (only player 0 to
//! move needs solving), and the quarter within it (the board's reflection, `super::mirror`).
//! 1. Half index `h` is the full index `2h + 1` (player 1 to move): every predecessor of a half
//!    state then lies in one run of C(N − k, k) consecutive indices, where kernel updates hit.
//! 2. Moves, values, the way back to the full table, the quarter: docs/cc2p-notation.md.

use super::mirror::{Kind, Mirror};
use super::rank::Ranks;
use super::{Cc2p, Cc2pError, Cells, Expanded, Pos};
use crate::drawing::Drawing;
use crate::notation::Notation;
use crate::reduction::{ReadRouted, Reduction, SolvedTable};
use kingmaker_kernel::{Game, Node};
use kingmaker_kernel::{LOSS, WIN};
use rayon::prelude::*;

/// The states of a [`Cc2p`] game with player 1 to move, each standing for itself and its
/// colour-swapped twin, and in the quarter only one of each reflected pair (docs/cc2p-notation.md,
/// `reduced.rs`).
#[derive(Clone, Debug)]
pub struct Cc2pReduced {
    full: Cc2p,
    /// The board's reflection, in the quarter.
    mirror: Option<Mirror>,
}

/// The side to move in the full states the half indices name.
const SIDE: u64 = 1;

impl Cc2pReduced {
    /// The colour-swap half.
    pub fn new(full: Cc2p) -> Cc2pReduced {
        Cc2pReduced { full, mirror: None }
    }

    /// The quarter: the half reduced again by the board's reflection, where that is a symmetry
    /// of the rules ([`Cc2p::has_reflection`]); else the half.
    pub fn quarter(full: Cc2p) -> Cc2pReduced {
        let mirror = Mirror::new(&full);
        Cc2pReduced { full, mirror }
    }

    /// Whether this is the quarter.
    pub fn is_quarter(&self) -> bool {
        self.mirror.is_some()
    }

    /// The board's reflection, in the quarter.
    pub(super) fn mirror(&self) -> Option<&Mirror> {
        self.mirror.as_ref()
    }

    /// The half placement (player 0's and player 1's cells) that index `q` names.
    #[inline]
    pub fn placement(&self, q: u64) -> u64 {
        let r = self.placement_ranks(q);
        r.set * self.full.sets1 + r.free
    }

    /// [`Cc2pReduced::placement`] as ranks (one division, which the moves need no more of).
    #[inline]
    fn placement_ranks(&self, q: u64) -> Ranks {
        let r = self.full.ranks(q);
        match &self.mirror {
            None => r,
            Some(m) => Ranks {
                set: m.set_of(r.set),
                free: r.free,
            },
        }
    }

    /// The colour-swapped twin of index `q`'s full state (player 0 to move), expanded.
    #[inline]
    fn expand_swapped(&self, q: u64) -> Expanded {
        self.full
            .expand_swapped(self.placement_ranks(q), SIDE as usize)
    }

    /// The index that stands for half placement `h`: `h` itself, or in the quarter its
    /// reflection's when player 0's set is the higher of a reflected pair.
    #[inline]
    pub fn reduce(&self, h: u64) -> u64 {
        self.reduce_cells(h, || self.full.unrank(h << 1 | SIDE).o)
    }

    /// [`Cc2pReduced::reduce`] of half placement `h` whose two players' cells are `cells()` (called
    /// only when the reflection is needed).
    #[inline]
    fn reduce_cells(&self, h: u64, cells: impl FnOnce() -> [Cells; 2]) -> u64 {
        self.reduce_ranks(self.full.ranks(h), |m| cells().map(|c| m.reflect(c)))
    }

    /// [`Cc2pReduced::reduce_cells`] of the half placement with ranks `r` (no division), given
    /// its two players' cells reflected by `reflected(mirror)` (called only when needed).
    #[inline]
    fn reduce_ranks(&self, r: Ranks, reflected: impl FnOnce(&Mirror) -> [Cells; 2]) -> u64 {
        let sets1 = self.full.sets1;
        let Some(m) = &self.mirror else {
            return r.set * sets1 + r.free;
        };
        let (block, kind) = m.block_of(r.set);
        if kind != Kind::Higher {
            return block * sets1 + r.free;
        }
        block * sets1 + self.full.rank1(&reflected(m))
    }

    /// The full index (player 1 to move) of index `q`.
    #[inline]
    pub fn full_index(&self, q: u64) -> u64 {
        self.placement(q) << 1 | SIDE
    }

    /// The node of a half state from its full state's: seen from the side to move.
    #[inline]
    fn half_node(&self, full: Node) -> Node {
        match full {
            Node::Terminal { outcome: winner } => Node::Terminal {
                outcome: winner ^ SIDE as u8,
            },
            Node::Live { .. } => Node::Live { mover: 0 },
            Node::Illegal => Node::Illegal,
        }
    }

    /// The full game this half stands for.
    pub fn full(&self) -> &Cc2p {
        &self.full
    }

    /// Where full index `f`'s answer is in the reduced table, and whether W and L are exchanged.
    #[inline]
    pub fn source(&self, f: u64) -> (u64, bool) {
        if f & 1 == SIDE {
            (self.reduce(f >> 1), true)
        } else {
            (self.reduce(self.full.swap_colours(f) >> 1), false)
        }
    }

    /// Rows `first .. first + values.len()` of the full table from the solved half table (both
    /// even: whole placements). Parallel over the rows; the rows of player 1 to move read the
    /// half table in order, those of player 0 at their twins, at random.
    pub fn expand_rows(
        &self,
        first: u64,
        half: &SolvedTable,
        values: &mut [u8],
        depth: &mut [u16],
    ) {
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        assert!(
            first.is_multiple_of(2) && values.len().is_multiple_of(2),
            "whole placements only"
        );
        assert_eq!(half.len(), self.size(), "a half table of this game");
        const CHUNK: usize = 1 << 14;
        const AHEAD: usize = 64;
        let flip = |v: u8| match v {
            WIN => LOSS,
            LOSS => WIN,
            other => other,
        };
        values
            .par_chunks_mut(CHUNK)
            .zip(depth.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each_init(Vec::new, |sources, (c, (values, depth))| {
                let placement = (first + (c * CHUNK) as u64) / 2;
                sources.resize(values.len() / 2, (0, 0));
                let full = &self.full;
                // Player 0's cells change once a block: their reflections are kept.
                let mut player0 = (Cells::MAX, 0, 0);
                full.each_placement_with_twin(placement, sources.len(), |i, cells, own, twin| {
                    if let Some(m) = &self.mirror {
                        if player0.0 != cells[0] {
                            player0 = (cells[0], m.reflect(cells[0]), m.reflect_turned(cells[0]));
                        }
                    }
                    let own = self.reduce_ranks(own, |m| [player0.1, m.reflect(cells[1])]);
                    // The twin's cells are the turns of player 1's and player 0's.
                    let twin = self.reduce_ranks(twin, |m| [m.reflect_turned(cells[1]), player0.2]);
                    sources[i] = (own, twin);
                });
                let rows = values.chunks_exact_mut(2).zip(depth.chunks_exact_mut(2));
                for (k, ((v, d), &(own, twin))) in rows.zip(sources.iter()).enumerate() {
                    // The twins are read at random: ask for them a few rows ahead.
                    if let Some(&(_, ahead)) = sources.get(k + AHEAD) {
                        half.prefetch(ahead);
                    }
                    let (own, twin) = (half.get(own), half.get(twin));
                    let (mover0, mover1) = if SIDE == 1 {
                        (twin, (flip(own.0), own.1))
                    } else {
                        ((own.0, own.1), (flip(twin.0), twin.1))
                    };
                    (v[0], d[0]) = mover0;
                    (v[1], d[1]) = mover1;
                }
            });
    }

    /// Read a position in the full game's notation; only positions with player 1 to move are in
    /// the half game.
    pub fn parse_position(&self, text: &str) -> Result<u64, Cc2pError> {
        let f = self.full.parse_position(text)?;
        if f & 1 != SIDE {
            return Err(Cc2pError::BadPosition {
                text: text.to_string(),
                reason: format!(
                    "the half game holds the positions with player {SIDE} to move (give the \
                     colour-swapped position)"
                ),
                example: self
                    .full
                    .format_position(self.full.start_index() & !1 | SIDE),
            });
        }
        Ok(self.reduce(f >> 1))
    }

    /// The predecessors of the swapped state `s` (player 0 to move), as indices: each
    /// predecessor's placement has `s`'s player-0 set, whose block is `block`.
    #[inline(always)]
    fn predecessors_of(&self, s: &Expanded, block: u64, out: &mut Vec<u64>) {
        let shift = (s.r0 - block) * self.full.sets1;
        self.full
            .each_predecessor(s, |placement| out.push(placement - shift));
    }
}

/// Never drawn: the explorer shows the full game's tables, expanded from these.
impl Drawing for Cc2pReduced {}

impl Notation for Cc2pReduced {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        Ok(Cc2pReduced::parse_position(self, text)?)
    }

    /// The position of half index `h` in the full game's notation.
    fn format_position(&self, h: u64) -> String {
        self.full.format_position(self.full_index(h))
    }

    /// The legal moves of `h`, each with the half index of its child's twin.
    fn moves(&self, h: u64) -> Vec<(String, u64)> {
        let mut moves = self.full.moves(self.full_index(h));
        for m in &mut moves {
            m.1 = self.reduce(self.full.swap_colours(m.1) >> 1);
        }
        moves
    }

    fn picture(&self, h: u64) -> String {
        self.full.picture(self.full_index(h))
    }

    fn player_name(&self, player: u8) -> String {
        Notation::player_name(&self.full, player)
    }

    /// The half index that stands for the start position (its twin).
    fn start_index(&self) -> Option<u64> {
        Some(self.source(self.full.start_index()).0)
    }
}

impl Reduction for Cc2pReduced {
    fn full_size(&self) -> u64 {
        self.full.size()
    }

    fn full_name(&self) -> String {
        self.full.name()
    }

    fn expand_rows(&self, first: u64, solved: &SolvedTable, values: &mut [u8], depth: &mut [u16]) {
        Cc2pReduced::expand_rows(self, first, solved, values, depth)
    }

    fn zones(&self, states: u64) -> Vec<std::ops::Range<u64>> {
        Cc2pReduced::zones(self, states)
    }

    fn block_states(&self) -> u64 {
        self.full.sets1
    }

    fn scatter(
        &self,
        zones: &[std::ops::Range<u64>],
        first: u64,
        values: &[u8],
        depth: &[u16],
        out: &mut [(Vec<u8>, Vec<u16>)],
    ) {
        Cc2pReduced::scatter(self, zones, first, values, depth, out)
    }

    fn expand_zone(
        &self,
        zone: std::ops::Range<u64>,
        read: &mut ReadRouted,
        values: &mut [u8],
        depth: &mut [u16],
    ) -> anyhow::Result<()> {
        Cc2pReduced::expand_zone(self, zone, read, values, depth)
    }
}

impl Game for Cc2pReduced {
    fn name(&self) -> String {
        let part = if self.is_quarter() { "quarter" } else { "half" };
        format!("{}-{part}", self.full.name())
    }

    fn players(&self) -> u8 {
        2
    }

    fn size(&self) -> u64 {
        match &self.mirror {
            None => self.full.size() / 2,
            Some(m) => m.blocks() * self.full.sets1,
        }
    }

    /// The full game's node of `2h + 1` (player 1 to move), its winner made relative to the side
    /// to move (0: the side to move has won).
    fn node(&self, h: u64) -> Node {
        self.half_node(self.full.node(self.full_index(h)))
    }

    /// One sweep per run of indices in one block of player-0 sets, whose placements are
    /// consecutive.
    fn nodes(&self, first: u64, out: &mut [Node]) {
        let sets1 = self.full.sets1;
        let mut done = 0;
        while done < out.len() {
            let h = first + done as u64;
            let run = ((sets1 - h % sets1) as usize).min(out.len() - done);
            let nodes = &mut out[done..done + run];
            self.full.each_placement(self.placement(h), run, |i, o| {
                nodes[i] = self.half_node(self.full.classify(&Pos {
                    o,
                    mover: SIDE as usize,
                }));
            });
            done += run;
        }
    }

    fn successors(&self, h: u64, out: &mut Vec<u64>) {
        let e = self.expand_swapped(h);
        self.full
            .each_successor(&e, |placement| out.push(self.reduce(placement)));
    }

    /// The predecessors share one player-0 set P (the swapped state's); with Q the player-0 set of
    /// `q`, in the quarter:
    /// - P the lower of a pair: the half predecessors, as they are;
    /// - P the higher of a pair: those of the reflected state (which stand for them), unless Q is
    ///   symmetric: then they lead to the reflection of `q`, which has its own index;
    /// - P symmetric: the half predecessors, and unless Q is symmetric those of the reflected
    ///   state too (parents whose reflected child is `q`). A parent may so be listed twice: one
    ///   update per edge, as the successor counter expects.
    fn predecessors(&self, q: u64, out: &mut Vec<u64>) {
        let own = self.placement_ranks(q);
        let s = self.full.expand_swapped(own, SIDE as usize);
        let Some(m) = &self.mirror else {
            return self.predecessors_of(&s, s.r0, out);
        };
        let reflected = || {
            self.full.expanded_of(&Pos {
                o: [m.reflect(s.pos.o[0]), m.reflect(s.pos.o[1])],
                mover: s.pos.mover,
            })
        };
        let own_symmetric = m.block_of(own.set).1 == Kind::Symmetric;
        let (block, kind) = m.block_of(s.r0);
        match kind {
            Kind::Lower => self.predecessors_of(&s, block, out),
            Kind::Higher if !own_symmetric => self.predecessors_of(&reflected(), block, out),
            Kind::Higher => {}
            Kind::Symmetric => {
                self.predecessors_of(&s, block, out);
                if !own_symmetric {
                    self.predecessors_of(&reflected(), block, out);
                }
            }
        }
    }

    /// The block of the swapped state's player-0 set, in the quarter its reflection's where that
    /// stands for it: [`Game::predecessors`] lists nothing outside it.
    fn predecessor_span(&self, q: u64) -> Option<std::ops::Range<u64>> {
        let r0 = self.full.swapped_set_rank(self.placement_ranks(q));
        let block = self.mirror.as_ref().map_or(r0, |m| m.block_of(r0).0);
        let sets1 = self.full.sets1;
        Some(block * sets1..(block + 1) * sets1)
    }

    fn mover(&self, _h: u64) -> u8 {
        0
    }

    fn successor_count(&self, h: u64) -> usize {
        self.full.successor_count_of(&self.expand_swapped(h))
    }

    fn alternates_sides(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc2p::TipRule;
    use kingmaker_kernel::{check, solve_in_memory, Layer, DRAW, ILLEGAL};
    use proptest::prelude::*;
    use std::collections::HashSet;
    use std::sync::Arc;

    fn half(m: u8, k: u8, rule: TipRule) -> Cc2pReduced {
        Cc2pReduced::new(Cc2p::new(m, k, rule).unwrap())
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
    fn check_state(g: &Cc2pReduced, h: u64) {
        let full = g.full();
        assert!(h < g.size());
        let f = g.full_index(h);
        let relative = match full.node(f) {
            Node::Terminal { outcome: winner } => Node::Terminal {
                outcome: (winner != full.mover(f)) as u8,
            },
            Node::Live { .. } => Node::Live { mover: 0 },
            Node::Illegal => Node::Illegal,
        };
        assert_eq!(g.node(h), relative);
        assert_eq!(g.mover(h), 0);
        let s = succ(g, h);
        let ss = set(&s);
        // The swapped full successors of the full state.
        let want: HashSet<u64> = succ(full, f)
            .iter()
            .map(|&c| {
                let t = full.swap_colours(c);
                assert_eq!(t & 1, SIDE);
                t >> 1
            })
            .collect();
        assert_eq!(ss, want, "successors of {h}");
        assert_eq!(g.successor_count(h), s.len(), "successor count of {h}");
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
        let want: HashSet<u64> = pred(full, full.swap_colours(f))
            .iter()
            .map(|&q| {
                assert_eq!(q & 1, SIDE);
                q >> 1
            })
            .collect();
        assert_eq!(set(&p), want, "predecessors of {h}");
        // All of them in one block of consecutive indices (player 0's cells are the same), the
        // span the kernel sends the state to.
        let span = g.predecessor_span(h).unwrap();
        assert!(
            p.iter().all(|q| span.contains(q)),
            "{h}: {p:?} not in {span:?}"
        );
        let blocks: HashSet<u64> = p.iter().map(|&q| q / full.sets1).collect();
        assert!(
            blocks.len() <= 1,
            "predecessors of {h} in blocks {blocks:?}"
        );
        for &q in &p {
            assert!(matches!(g.node(q), Node::Live { mover: 0 }));
            assert!(
                set(&succ(g, q)).contains(&h),
                "unmove {q} of {h} is no move"
            );
        }
        // Both halves of the full space map onto the half space.
        assert_eq!(g.source(f), (h, true));
        assert_eq!(g.source(full.swap_colours(f)), (h, false));
        let moves: HashSet<u64> = g.moves(h).iter().map(|m| m.1).collect();
        assert_eq!(moves, ss);
        assert_eq!(g.parse_position(&g.format_position(h)).unwrap(), h);
    }

    static GAMES: std::sync::LazyLock<Vec<Cc2pReduced>> = std::sync::LazyLock::new(|| {
        let mut v: Vec<Cc2pReduced> = [(7, 1), (7, 2), (7, 3), (4, 6), (5, 6), (5, 4), (8, 6)]
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
        reduced_solve_expands_to_full_solve(half(m, k, rule));
    }

    fn reduced_solve_expands_to_full_solve(g: Cc2pReduced) {
        let (m, k) = (g.full().board(), g.full().pieces());
        let g = Arc::new(g);
        let full = Arc::new(g.full().clone());
        let h = solve_in_memory(&g, &solo(), 2);
        let f = solve_in_memory(&full, &solo(), 2);
        let n = full.size() as usize;
        let (mut values, mut depth) = (vec![0u8; n], vec![0u16; n]);
        let mut table = SolvedTable::with_capacity(g.size());
        let third = h.values.len() / 3;
        table.append(&h.values[..third], &h.depth[..third]);
        table.append(&h.values[third..], &h.depth[third..]);
        // In two calls, to exercise `first`.
        let cut = (n / 3) & !1;
        let (v0, v1) = values.split_at_mut(cut);
        let (d0, d1) = depth.split_at_mut(cut);
        g.expand_rows(0, &table, v0, d0);
        g.expand_rows(cut as u64, &table, v1, d1);
        assert_eq!(h.waves, f.waves, "{m}x{m}/{k}");
        assert!(values == f.values, "{m}x{m}/{k}: values differ");
        assert!(depth == f.depth, "{m}x{m}/{k}: depths differ");
        // Out of core: zones of one row, a few rows, all rows; routed in runs of one block, a
        // few blocks, all of them.
        let block = Reduction::block_states(g.as_ref());
        let blocks = g.size() / block;
        // (Each run recomputes its zones' rows: runs of one block on a game of many blocks
        // would be rows × blocks of that in a debug build, and tell no more than small runs.)
        let small_run = if blocks < 3000 { 1 } else { 7 };
        let sizes = [
            (1, blocks / 7),
            (n as u64 / 5, small_run),
            (u64::MAX, blocks),
        ];
        for (zone_states, run) in sizes {
            let zones = g.zones(zone_states);
            assert_eq!(zones.first().map(|z| z.start), Some(0));
            assert_eq!(zones.last().map(|z| z.end), Some(n as u64));
            let mut routed = vec![(Vec::new(), Vec::new()); zones.len()];
            for first in (0..blocks).step_by(run.max(1) as usize) {
                let span = (first * block) as usize..((first + run).min(blocks) * block) as usize;
                let (hv, hd) = (&h.values[span.clone()], &h.depth[span.clone()]);
                g.scatter(&zones, span.start as u64, hv, hd, &mut routed);
            }
            let (mut zv, mut zd) = (vec![0u8; n], vec![0u16; n]);
            for (zone, (rv, rd)) in zones.into_iter().zip(routed) {
                assert_eq!(
                    rv.len() as u64,
                    zone.end - zone.start,
                    "every state routed once"
                );
                let mut at = 0;
                let mut read = |v: &mut [u8], d: &mut [u16]| {
                    v.copy_from_slice(&rv[at..at + v.len()]);
                    d.copy_from_slice(&rd[at..at + v.len()]);
                    at += v.len();
                    Ok(())
                };
                let span = zone.start as usize..zone.end as usize;
                g.expand_zone(zone, &mut read, &mut zv[span.clone()], &mut zd[span])
                    .unwrap();
            }
            assert!(
                zv == f.values,
                "{m}x{m}/{k}, zones of {zone_states}: values differ"
            );
            assert!(
                zd == f.depth,
                "{m}x{m}/{k}, zones of {zone_states}: depths differ"
            );
        }
        let count = |v: u8| f.values.iter().filter(|&&x| x == v).count();
        eprintln!(
            "{}: {} W, {} L, {} D, {} illegal",
            g.name(),
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

    fn quarter(m: u8, k: u8, rule: TipRule) -> Cc2pReduced {
        let g = Cc2pReduced::quarter(Cc2p::new(m, k, rule).unwrap());
        assert!(g.is_quarter(), "{m}x{m}/{k} has a reflection");
        g
    }

    /// The quarter's contract at every state: its nodes and successors are the half's, reduced;
    /// the successor count counts them; every index round-trips; and the edges listed by
    /// successors are exactly those listed by predecessors, with their multiplicities.
    fn check_quarter(g: &Cc2pReduced) {
        let half = Cc2pReduced::new(g.full().clone());
        let mut forward = Vec::new();
        let mut backward = Vec::new();
        for q in 0..g.size() {
            let h = g.placement(q);
            assert_eq!(g.reduce(h), q);
            assert_eq!(g.node(q), half.node(h));
            let s = succ(g, q);
            let mut want: Vec<u64> = succ(&half, h).iter().map(|&c| g.reduce(c)).collect();
            let mut got = s.clone();
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(got, want, "successors of {q}");
            assert_eq!(g.successor_count(q), s.len());
            forward.extend(s.iter().map(|&c| (q, c)));
            let p = pred(g, q);
            let span = g.predecessor_span(q).unwrap();
            assert!(
                p.iter().all(|p| span.contains(p)),
                "{q}: {p:?} not in {span:?}"
            );
            backward.extend(p.iter().map(|&p| (p, q)));
        }
        forward.sort_unstable();
        backward.sort_unstable();
        assert!(!forward.is_empty());
        assert!(
            forward == backward,
            "{}: moves and unmoves differ",
            g.name()
        );
        // Every half state is stood for by a state with the same answer's shape.
        for h in 0..half.size() {
            let q = g.reduce(h);
            assert_eq!(
                g.node(q),
                half.node(h),
                "half state {h} and its stand-in {q}"
            );
        }
    }

    #[test]
    fn the_quarter_is_consistent_on_small_boards() {
        for (m, k) in [(4, 1), (4, 3), (4, 4), (4, 6), (5, 3), (7, 1)] {
            check_quarter(&quarter(m, k, TipRule::Exact));
        }
        check_quarter(&quarter(4, 6, TipRule::SolverShortcut));
    }

    #[test]
    fn two_pieces_have_no_quarter() {
        let g = Cc2pReduced::quarter(Cc2p::new(7, 2, TipRule::Exact).unwrap());
        assert!(!g.is_quarter());
        assert!(!g.full().has_reflection());
        assert_eq!(g.size(), g.full().size() / 2);
        assert!(Cc2p::new(7, 3, TipRule::Exact).unwrap().has_reflection());
    }

    /// 7×7 / 3 keeps 141,219,540 of its 559,352,640 states: the number the published solver
    /// stores with the same two symmetries (BENCHMARKS.md, cc2p).
    #[test]
    fn the_quarter_of_7x7_3_is_the_published_solvers() {
        let g = quarter(7, 3, TipRule::Exact);
        assert_eq!(g.size(), 141_219_540);
        assert_eq!(g.full().size(), 559_352_640);
    }

    #[test]
    fn quarter_solve_is_the_full_solve() {
        for (m, k) in [(4, 1), (4, 3), (4, 4), (4, 6), (5, 3), (7, 1)] {
            reduced_solve_expands_to_full_solve(quarter(m, k, TipRule::Exact));
        }
        reduced_solve_expands_to_full_solve(quarter(4, 6, TipRule::SolverShortcut));
    }

    /// The kernel's flip along edges agrees with the reference solver (which honours
    /// `alternates_sides` on its own), and the reference solve of the half game, expanded, is the
    /// reference solve of the full game (both sides to move, no flip): an independent account of
    /// the colour swap.
    #[test]
    fn half_solve_matches_the_reference_solver() {
        let games = [(7, 1), (4, 2)]
            .map(|(m, k)| half(m, k, TipRule::Exact))
            .into_iter()
            .chain([quarter(7, 1, TipRule::Exact), quarter(4, 3, TipRule::Exact)]);
        for g in games {
            let (m, k) = (g.full().board(), g.full().pieces());
            let g = Arc::new(g);
            let solved = solve_in_memory(&g, &solo(), 2);
            let (values, depth) = check::reference_solve(g.as_ref(), &solo());
            assert!(solved.values == values, "{m}x{m}/{k}");
            assert!(solved.depth == depth, "{m}x{m}/{k}");
            let full = g.full();
            let (full_values, full_depth) = check::reference_solve(full, &solo());
            let n = full.size() as usize;
            let (mut v, mut d) = (vec![0u8; n], vec![0u16; n]);
            let mut table = SolvedTable::with_capacity(g.size());
            table.append(&values, &depth);
            g.expand_rows(0, &table, &mut v, &mut d);
            assert!(
                v == full_values,
                "{m}x{m}/{k}: values differ from the full game's"
            );
            assert!(
                d == full_depth,
                "{m}x{m}/{k}: depths differ from the full game's"
            );
        }
    }
}
