//! A piece's destinations by bit operations. The occupancy is held in rhombus coordinates (cell
//! (i, j) at bit i·m + j; the diamond's rows are the rhombus's anti-diagonals), where each of the
//! six directions is one shift of the whole mask (±1, ±m, ±(m − 1)), so the landings of a piece's
//! jump chains are a flood fill from its cell, all directions at once, to a fixpoint. The landings
//! are rhombus bits: [`Rhombus::cells`] maps them back to the index's row-by-row cells.

use super::board::Cell;
use super::{bit, bits, Cells, MAX_CELLS};

/// The rhombus numbering of one board and its jump masks.
#[derive(Clone, Debug)]
pub(super) struct Rhombus {
    /// The shifts of the three positive directions: 1, m − 1 and m.
    shift: [u32; 3],
    /// `rh[c]`: the rhombus bit of cell c; `cell[p]`: the cell of rhombus bit p.
    rh: [u8; MAX_CELLS],
    cell: [u8; MAX_CELLS],
    /// `from[d]`: the rhombus bits with a jump in direction d (the three positive shifts, then
    /// the three negative ones) whose landing is on the board.
    from: [Cells; 6],
    /// Every rhombus bit of the board.
    board: Cells,
}

/// The rhombus bits that can jump in each direction in an occupancy (the neighbour there
/// occupied, the cell beyond it empty).
#[derive(Copy, Clone, Debug)]
pub(super) struct Occupancy {
    jump: [Cells; 6],
}

impl Rhombus {
    /// The numbering of the `m`×`m` diamond whose cells (row, doubled x) are `coords`: cell (r, x)
    /// is rhombus (i, j) = ((r − x)/2, (r + x)/2). The jump masks come from `cells`' own jumps.
    pub(super) fn new(m: usize, coords: &[(u8, i8)], cells: &[Cell]) -> Rhombus {
        let mut r = Rhombus {
            shift: [1, m as u32 - 1, m as u32],
            rh: [0; MAX_CELLS],
            cell: [0; MAX_CELLS],
            from: [0; 6],
            board: 0,
        };
        for (c, &(row, x)) in coords.iter().enumerate() {
            let (row, x) = (row as i32, x as i32);
            let p = ((row - x) / 2) as usize * m + ((row + x) / 2) as usize;
            r.rh[c] = p as u8;
            r.cell[p] = c as u8;
            r.board |= bit(p);
        }
        for (c, cell) in cells.iter().enumerate() {
            let p = r.rh[c] as usize;
            for &(over, land) in &cell.jumps[..cell.nj as usize] {
                let step = r.rh[over as usize] as i32 - p as i32;
                debug_assert_eq!(r.rh[land as usize] as i32 - p as i32, 2 * step);
                let d = r.shift.iter().position(|&s| s == step.unsigned_abs());
                let d = d.expect("a hex direction is a rhombus shift") + 3 * (step < 0) as usize;
                r.from[d] |= bit(p);
            }
        }
        r
    }

    /// The cells of a set of rhombus bits.
    #[inline]
    pub(super) fn cells(&self, rh: Cells) -> Cells {
        bits(rh).map(|p| bit(self.cell[p] as usize)).sum()
    }

    /// The jump masks of the occupied cells `occupied` (each once).
    #[inline]
    pub(super) fn occupancy(&self, occupied: impl Iterator<Item = usize>) -> Occupancy {
        let all: Cells = occupied.map(|c| bit(self.rh[c] as usize)).sum();
        let free = self.board & !all;
        let mut jump = [0; 6];
        for (d, &s) in self.shift.iter().enumerate() {
            jump[d] = self.from[d] & (all >> s) & (free >> (2 * s));
            jump[d + 3] = self.from[d + 3] & (all << s) & (free << (2 * s));
        }
        Occupancy { jump }
    }

    /// The landings (as rhombus bits) of the jump chains of the piece on cell `c`, with the piece
    /// lifted: a chain's landings lie an even number of steps from `c` along both of the
    /// rhombus's axes, so none of them neighbours `c`, and none jumps over the lifted piece.
    #[inline]
    pub(super) fn landings(&self, o: &Occupancy, c: usize) -> Cells {
        let start = bit(self.rh[c] as usize);
        let (mut reach, mut front) = (start, start);
        loop {
            let mut land = 0;
            for (d, &s) in self.shift.iter().enumerate() {
                land |= (front & o.jump[d]) << (2 * s);
                land |= (front & o.jump[d + 3]) >> (2 * s);
            }
            front = land & !reach;
            if front == 0 {
                return reach ^ start;
            }
            reach |= front;
        }
    }
}
