//! The board's left–right reflection, (r, x) ↦ (r, −x), and the blocks of player-0 sets that the
//! quarter ([`super::reduced`]) is built on.
//! 1. The reflection fixes the start areas for every piece count but 2, the goals' tips and the
//!    cells that block them, so it keeps every value and depth. A *block* is the lower-ranked set
//!    of a reflected pair, or a symmetric set (docs/cc2p-notation.md, `mirror.rs`).

use super::{bit, bits, Cc2p, Cells, K_MAX, MAX_CELLS};
use crate::huge::huge_vec;

/// Beyond this many player-0 sets the block tables are not built (C(49, 6) is 14 million; larger
/// games are far beyond any table this tool builds).
const MAX_SETS: u64 = 1 << 25;

impl Cc2p {
    /// Whether the quarter ([`super::reduced::Cc2pReduced::quarter`]) can be solved for this game: the
    /// board's reflection is a symmetry of the rules, and the game is small enough for the block
    /// tables.
    pub fn has_reflection(&self) -> bool {
        reflected_cells(self).is_some()
    }
}

/// The reflection of every cell, if the reflection fixes the start areas, goals, tips and the
/// cells that block them, and the game has at most [`MAX_SETS`] player-0 sets.
fn reflected_cells(game: &Cc2p) -> Option<[u8; MAX_CELLS]> {
    if game.sets0 > MAX_SETS {
        return None;
    }
    let mut cell = [0u8; MAX_CELLS];
    for (c, &(r, x)) in game.coords.iter().enumerate() {
        let twin = game.coords.iter().position(|&t| t == (r, -x))?;
        cell[c] = twin as u8;
    }
    let reflect = |m: Cells| -> Cells { bits(m).map(|c| bit(cell[c] as usize)).sum() };
    let special = [game.start, game.goal, game.tip, game.block];
    special
        .iter()
        .flatten()
        .all(|&m| reflect(m) == m)
        .then_some(cell)
}

/// How a player-0 set relates to its reflection.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// The lower rank of a pair: a block.
    Lower,
    /// The higher rank of a pair: stood for by its reflection.
    Higher,
    /// Equal to its reflection: a block.
    Symmetric,
}

/// The reflection of cells and the blocks of player-0 sets.
#[derive(Clone, Debug)]
pub(super) struct Mirror {
    cell: [u8; MAX_CELLS],
    /// The reflection of the half turn of each cell ([`Cc2p::turn`]): where the colour swap and
    /// then the reflection take it.
    turned: [u8; MAX_CELLS],
    /// Per player-0 set rank: its block (its own, or its reflection's) and its kind in the low
    /// two bits.
    class: Vec<u32>,
    /// Per block: the rank of its player-0 set.
    blocks: Vec<u32>,
}

impl Mirror {
    /// The reflection of `game`'s board, if it is a symmetry of the rules and the game is small
    /// enough for the block tables.
    pub(super) fn new(game: &Cc2p) -> Option<Mirror> {
        let cell = reflected_cells(game)?;
        let n = game.n as usize;
        let mut turned = [0u8; MAX_CELLS];
        for (c, t) in turned[..n].iter_mut().enumerate() {
            *t = cell[n - 1 - c];
        }
        let mut mirror = Mirror {
            cell,
            turned,
            class: Vec::new(),
            blocks: Vec::new(),
        };
        let k = game.k as usize;
        // Read at random (a predecessor's set per state): on huge pages, a TLB miss fewer each.
        mirror.class = huge_vec(game.sets0 as usize);
        mirror.class.resize(game.sets0 as usize, 0);
        mirror.blocks = huge_vec(game.sets0 as usize);
        for r0 in 0..game.sets0 {
            let mut set = [0u8; K_MAX];
            game.unrank_set(r0, &mut set);
            let mask: Cells = set[..k].iter().map(|&c| bit(c as usize)).sum();
            let twin = game.colex(mirror.reflect(mask));
            let (block, kind) = match twin.cmp(&r0) {
                std::cmp::Ordering::Greater => (mirror.blocks.len() as u32, Kind::Lower),
                std::cmp::Ordering::Equal => (mirror.blocks.len() as u32, Kind::Symmetric),
                std::cmp::Ordering::Less => (mirror.class[twin as usize] >> 2, Kind::Higher),
            };
            if kind != Kind::Higher {
                mirror.blocks.push(r0 as u32);
            }
            mirror.class[r0 as usize] = block << 2 | kind as u32;
        }
        Some(mirror)
    }

    /// The reflection of a set of cells.
    #[inline]
    pub(super) fn reflect(&self, mask: Cells) -> Cells {
        bits(mask).map(|c| bit(self.cell[c] as usize)).sum()
    }

    /// The reflection of the half turn of a set of cells: `reflect(game.turn(mask))`.
    #[inline]
    pub(super) fn reflect_turned(&self, mask: Cells) -> Cells {
        bits(mask).map(|c| bit(self.turned[c] as usize)).sum()
    }

    /// The number of blocks.
    pub(super) fn blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// The rank of block `b`'s player-0 set.
    #[inline]
    pub(super) fn set_of(&self, b: u64) -> u64 {
        self.blocks[b as usize] as u64
    }

    /// The block of player-0 set `r0` (its reflection's if it is the higher of a pair), and its kind.
    #[inline]
    pub(super) fn block_of(&self, r0: u64) -> (u64, Kind) {
        let c = self.class[r0 as usize];
        let kind = match c & 3 {
            0 => Kind::Lower,
            1 => Kind::Higher,
            _ => Kind::Symmetric,
        };
        ((c >> 2) as u64, kind)
    }
}
