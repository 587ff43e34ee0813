//! The full cc2p table from the reduced one out of core: zones of whole rows (a row is one
//! player-0 set: its `2 · C(N − k, k)` states), each filled in one sequential pass over the reduced
//! table, block by block.
//!
//! A block of the reduced table (a player-0 set L, and in the quarter its reflection H when L is
//! the lower of a pair: [`super::half`]) answers:
//! - the player-1-to-move states of row L, in order (and of row H, at reflected ranks);
//! - one player-0-to-move state in every row S0 that leaves the cells `turn(L)` free: the state
//!   with player 1 on `turn(L)`, whose colour-swapped twin is `(L, turn(S0))` (likewise for H).
//!
//! So a pass over the blocks meets every state of a zone once; the zone is in memory, the reduced
//! table is read `batch` states at a time. The work is the zone's states plus one look at every
//! (row, block) pair; the reads are the reduced table once per zone.

use super::half::Cc2pHalf;
use super::mirror::Kind;
use super::{bit, K_MAX};
use crate::reduction::ReadReduced;
use kingmaker_kernel::{Game, LOSS, WIN};
use rayon::prelude::*;
use std::ops::Range;

/// A row of the zone: its player-0 set and what its player-0-to-move states read.
struct Row {
    rank: u64,
    cells: u128,
    /// `turn(cells)`: player 1's cells in every twin of a player-0-to-move state of the row.
    turned: u128,
    /// The reflection of `turned` (in the quarter): the same, for twins stood for by their
    /// reflection.
    turned_reflected: u128,
}

/// A block of the reduced table: the player-0 set it holds, and the reflection it stands for.
struct Block {
    lower: Side,
    higher: Option<Side>,
}

/// One player-0 set X of a block: X's rank and cells, and `turn(X)`.
struct Side {
    rank: u64,
    cells: u128,
    turned: u128,
}

impl Cc2pHalf {
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

    /// The full table's states `zone` (whole rows) from one pass over the reduced table,
    /// `batch` states (whole blocks, at least one) at a time. See the module documentation.
    pub fn expand_zone(
        &self,
        zone: Range<u64>,
        read: &ReadReduced,
        batch: u64,
        values: &mut [u8],
        depth: &mut [u16],
    ) -> anyhow::Result<()> {
        let full = self.full();
        let (sets1, row) = (full.sets1, 2 * full.sets1 as usize);
        assert!(
            zone.start.is_multiple_of(row as u64) && zone.end.is_multiple_of(row as u64),
            "whole rows only"
        );
        assert!(zone.end <= full.size(), "a zone of this game");
        assert_eq!(values.len() as u64, zone.end - zone.start, "one value per state");
        assert_eq!(values.len(), depth.len(), "values and depths come in pairs");
        let rows: Vec<Row> = (zone.start / row as u64..zone.end / row as u64)
            .map(|rank| {
                let cells = self.set_cells(rank);
                let turned = full.turn(cells);
                Row {
                    rank,
                    cells,
                    turned,
                    turned_reflected: self.mirror().map_or(turned, |m| m.reflect(turned)),
                }
            })
            .collect();
        let blocks = self.size() / sets1;
        let per_batch = (batch / sets1).max(1);
        let (mut bv, mut bd) = (Vec::new(), Vec::new());
        for first in (0..blocks).step_by(per_batch as usize) {
            let end = (first + per_batch).min(blocks);
            let n = ((end - first) * sets1) as usize;
            bv.resize(n, 0u8);
            bd.resize(n, 0u16);
            read(first * sets1, &mut bv, &mut bd)?;
            let batch: Vec<Block> = (first..end).map(|b| self.block(b)).collect();
            values
                .par_chunks_mut(row)
                .zip(depth.par_chunks_mut(row))
                .zip(&rows)
                .for_each(|((v, d), r)| {
                    for (i, b) in batch.iter().enumerate() {
                        let span = i * sets1 as usize..(i + 1) * sets1 as usize;
                        self.fill_row(r, b, &bv[span.clone()], &bd[span], v, d);
                    }
                });
        }
        Ok(())
    }

    /// The cells of player-0 set `rank`.
    fn set_cells(&self, rank: u64) -> u128 {
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

    /// The states of row `r` that block `b` (values `bv`, depths `bd`) answers, into the row's
    /// values `v` and depths `d`.
    fn fill_row(&self, r: &Row, b: &Block, bv: &[u8], bd: &[u16], v: &mut [u8], d: &mut [u16]) {
        let full = self.full();
        let flip = |x: u8| match x {
            WIN => LOSS,
            LOSS => WIN,
            other => other,
        };
        let l = &b.lower;
        // Player 0 to move, player 1 on turn(L): the twin (L, turn(S0)), as it is.
        if r.cells & l.turned == 0 {
            let col = full.rank1(&[r.cells, l.turned]) as usize;
            let src = full.rank1(&[l.cells, r.turned]) as usize;
            (v[2 * col], d[2 * col]) = (bv[src], bd[src]);
        }
        // Player 1 to move in row L: the block in order, W and L exchanged.
        if r.rank == l.rank {
            for (j, (&x, &y)) in bv.iter().zip(bd).enumerate() {
                (v[2 * j + 1], d[2 * j + 1]) = (flip(x), y);
            }
        }
        let (Some(h), Some(m)) = (&b.higher, self.mirror()) else {
            return;
        };
        // Player 0 to move, player 1 on turn(H): the twin (H, turn(S0)), stood for by its
        // reflection (L, reflect(turn(S0))).
        if r.cells & h.turned == 0 {
            let col = full.rank1(&[r.cells, h.turned]) as usize;
            let src = full.rank1(&[l.cells, r.turned_reflected]) as usize;
            (v[2 * col], d[2 * col]) = (bv[src], bd[src]);
        }
        // Player 1 to move in row H: each state stood for by its reflection in the block.
        if r.rank == h.rank {
            let placement = h.rank * full.sets1;
            full.each_placement_with_twin(placement, full.sets1 as usize, |j, cells, _| {
                let src = full.rank1(&[l.cells, m.reflect(cells[1])]) as usize;
                (v[2 * j + 1], d[2 * j + 1]) = (flip(bv[src]), bd[src]);
            });
        }
    }
}
