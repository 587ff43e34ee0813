//! The full cc2p table from the reduced one out of core: the reduced table routed, block by block,
//! to zones of whole rows of the full table (a row: one player-0 set, `2 · C(N − k, k)` states).
//! 1. Routing and filling visit the (block, row) pairs in the same order, so the reduced table is
//!    read once and written once more whatever the number of zones, and a zone's memory is its own
//!    states. What a block answers: docs/cc2p-notation.md, `zones.rs`.

use super::mirror::Kind;
use super::reduced::Cc2pReduced;
use super::{bit, Cells, K_MAX};
use crate::combinatorics::next_subset;
use crate::reduction::ReadRouted;
use kingmaker_kernel::{Game, LOSS, WIN};
use rayon::prelude::*;
use std::ops::Range;

/// A row of a zone: its player-0 set and what its player-0-to-move states read.
struct Row {
    rank: u64,
    cells: Cells,
    /// `turn(cells)`: player 1's cells in every twin of a player-0-to-move state of the row.
    turned: Cells,
    /// The reflection of `turned` (in the quarter): the same, for twins stood for by their
    /// reflection.
    turned_reflected: Cells,
}

/// A block of the reduced table: the player-0 set it holds, and the reflection it stands for.
struct Block {
    lower: Side,
    higher: Option<Side>,
}

/// One player-0 set X of a block: X's rank and cells, and `turn(X)`.
struct Side {
    rank: u64,
    cells: Cells,
    turned: Cells,
}

impl Cc2pReduced {
    /// The full table in zones of whole rows, at most `states` states each (at least one row).
    pub fn zones(&self, states: u64) -> Vec<Range<u64>> {
        let full = self.full();
        let row = 2 * full.sets1;
        let rows = (states / row).max(1);
        (0..full.sets0)
            .step_by(rows as usize)
            .map(|r| r * row..(r + rows).min(full.sets0) * row)
            .collect()
    }

    /// Route the reduced states `first .. first + values.len()` (whole blocks) to `zones`: see
    /// [`crate::reduction::Reduction::scatter`].
    pub fn scatter(
        &self,
        zones: &[Range<u64>],
        first: u64,
        values: &[u8],
        depth: &[u16],
        out: &mut [(Vec<u8>, Vec<u16>)],
    ) {
        let sets1 = self.full().sets1;
        assert!(
            first.is_multiple_of(sets1) && (values.len() as u64).is_multiple_of(sets1),
            "whole blocks only"
        );
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        assert_eq!(zones.len(), out.len(), "one output per zone");
        let first_block = first / sets1;
        let blocks: Vec<Block> = (first_block..first_block + values.len() as u64 / sets1)
            .map(|b| self.block(b))
            .collect();
        let flip = |x: u8| match x {
            WIN => LOSS,
            LOSS => WIN,
            other => other,
        };
        zones
            .par_iter()
            .zip(out.par_iter_mut())
            .for_each(|(zone, (ov, od))| {
                let rows = self.rows(zone);
                for (i, block) in blocks.iter().enumerate() {
                    let span = i * sets1 as usize..(i + 1) * sets1 as usize;
                    let (bv, bd) = (&values[span.clone()], &depth[span]);
                    for r in &rows {
                        self.each_answer(r, block, |src, _, flipped| {
                            ov.push(if flipped { flip(bv[src]) } else { bv[src] });
                            od.push(bd[src]);
                        });
                    }
                }
            });
    }

    /// Zone `zone` (whole rows) from the states routed to it, read in order with `read`.
    pub fn expand_zone(
        &self,
        zone: Range<u64>,
        read: &mut ReadRouted,
        values: &mut [u8],
        depth: &mut [u16],
    ) -> anyhow::Result<()> {
        let row = 2 * self.full().sets1 as usize;
        assert_eq!(
            values.len() as u64,
            zone.end - zone.start,
            "one value per state"
        );
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        let rows = self.rows(&zone);
        let (mut sv, mut sd) = (Vec::new(), Vec::new());
        for b in 0..self.size() / self.full().sets1 {
            let block = self.block(b);
            let n: usize = rows.iter().map(|r| self.answers(r, &block)).sum();
            sv.resize(n, 0u8);
            sd.resize(n, 0u16);
            read(&mut sv, &mut sd)?;
            let mut k = 0;
            for (i, r) in rows.iter().enumerate() {
                let (v, d) = (&mut values[i * row..], &mut depth[i * row..]);
                self.each_answer(r, &block, |_, dest, _| {
                    (v[dest], d[dest]) = (sv[k], sd[k]);
                    k += 1;
                });
            }
            debug_assert_eq!(k, n, "answers counted as visited");
        }
        Ok(())
    }

    /// The rows of a zone of whole rows, in order (the next player-0 set in colex order is the
    /// next larger mask with k bits).
    fn rows(&self, zone: &Range<u64>) -> Vec<Row> {
        let full = self.full();
        let row = 2 * full.sets1;
        assert!(
            zone.start.is_multiple_of(row) && zone.end.is_multiple_of(row),
            "whole rows only"
        );
        assert!(zone.end <= full.size(), "a zone of this game");
        let mut cells = self.set_cells(zone.start / row);
        (zone.start / row..zone.end / row)
            .map(|rank| {
                let turned = full.turn(cells);
                let r = Row {
                    rank,
                    cells,
                    turned,
                    turned_reflected: self.mirror().map_or(turned, |m| m.reflect(turned)),
                };
                cells = next_subset(cells);
                r
            })
            .collect()
    }

    /// The cells of player-0 set `rank`.
    fn set_cells(&self, rank: u64) -> Cells {
        let mut set = [0u8; K_MAX];
        self.full().unrank_set(rank, &mut set);
        set[..self.full().k as usize]
            .iter()
            .map(|&c| bit(c as usize))
            .sum()
    }

    /// Block `b` of the reduced table.
    fn block(&self, b: u64) -> Block {
        let full = self.full();
        let side = |rank: u64| {
            let cells = self.set_cells(rank);
            Side {
                rank,
                cells,
                turned: full.turn(cells),
            }
        };
        let lower = side(self.placement(b * full.sets1) / full.sets1);
        let higher = self.mirror().and_then(|m| {
            (m.block_of(lower.rank).1 == Kind::Lower)
                .then(|| side(full.colex(m.reflect(lower.cells))))
        });
        Block { lower, higher }
    }

    /// How many states of row `r` block `b` answers ([`Cc2pReduced::each_answer`]'s count).
    #[inline]
    fn answers(&self, r: &Row, b: &Block) -> usize {
        let sets1 = self.full().sets1 as usize;
        let side =
            |s: &Side| (r.cells & s.turned == 0) as usize + (r.rank == s.rank) as usize * sets1;
        side(&b.lower) + b.higher.as_ref().map_or(0, side)
    }

    /// The states of row `r` that block `b` answers, in routing order: `f(src, dest, flipped)`
    /// with the answer's offset in the block, the state's offset in the row, and whether W and L
    /// are exchanged on the way.
    #[inline(always)]
    fn each_answer(&self, r: &Row, b: &Block, mut f: impl FnMut(usize, usize, bool)) {
        let full = self.full();
        let l = &b.lower;
        // Player 0 to move, player 1 on turn(L): the twin (L, turn(S0)), as it is.
        if r.cells & l.turned == 0 {
            let src = full.rank1(&[l.cells, r.turned]) as usize;
            f(src, 2 * full.rank1(&[r.cells, l.turned]) as usize, false);
        }
        // Player 1 to move in row L: the block in order, W and L exchanged.
        if r.rank == l.rank {
            for j in 0..full.sets1 as usize {
                f(j, 2 * j + 1, true);
            }
        }
        let (Some(h), Some(m)) = (&b.higher, self.mirror()) else {
            return;
        };
        // Player 0 to move, player 1 on turn(H): the twin (H, turn(S0)), stood for by its
        // reflection (L, reflect(turn(S0))).
        if r.cells & h.turned == 0 {
            let src = full.rank1(&[l.cells, r.turned_reflected]) as usize;
            f(src, 2 * full.rank1(&[r.cells, h.turned]) as usize, false);
        }
        // Player 1 to move in row H: each state stood for by its reflection in the block.
        if r.rank == h.rank {
            let placement = h.rank * full.sets1;
            full.each_placement(placement, full.sets1 as usize, |j, cells| {
                f(
                    full.rank1(&[l.cells, m.reflect(cells[1])]) as usize,
                    2 * j + 1,
                    true,
                );
            });
        }
    }
}
