//! The m×m diamond: cells numbered row by row (rows of widths 1, 2, …, m, …, 2, 1), left to
//! right, in doubled coordinates (the cell at row r, position i of a row of width w sits at
//! x = 2i − (w − 1)); neighbours are (r, x ± 2) and (r ± 1, x ± 1), jumps go two steps in one
//! direction over an occupied neighbour.

use super::{bit, Cells};

/// One cell's neighbourhood: neighbour mask and the (jumped-over cell, landing cell) pairs.
#[derive(Copy, Clone, Debug)]
pub(super) struct Cell {
    pub(super) nb: Cells,
    pub(super) nj: u8,
    pub(super) jumps: [(u8, u8); 6],
}

/// The cells of the `m`×`m` diamond: (row, doubled x) of every cell and its neighbourhood.
pub(super) fn layout(m: usize) -> (Vec<(u8, i8)>, Vec<Cell>) {
    let n = m * m;
    let rows = 2 * m - 1;
    // Grid of cell ids indexed by (row, x + m - 1); x + m - 1 ranges over 0..=2m-2.
    let width = 2 * m - 1;
    let mut grid = vec![u8::MAX; rows * width];
    let mut coords = Vec::with_capacity(n);
    for r in 0..rows {
        let w = if r < m { r + 1 } else { 2 * m - 1 - r };
        for i in 0..w {
            let x = 2 * i as i32 - (w as i32 - 1);
            grid[r * width + (x + m as i32 - 1) as usize] = coords.len() as u8;
            coords.push((r as u8, x as i8));
        }
    }
    debug_assert_eq!(coords.len(), n);
    let at = |r: i32, x: i32| -> Option<usize> {
        let col = x + m as i32 - 1;
        if r < 0 || r >= rows as i32 || col < 0 || col >= width as i32 {
            return None;
        }
        let id = grid[r as usize * width + col as usize];
        (id != u8::MAX).then_some(id as usize)
    };
    const DIRS: [(i32, i32); 6] = [(0, -2), (0, 2), (-1, -1), (-1, 1), (1, -1), (1, 1)];
    let cells = coords
        .iter()
        .map(|&(r, x)| {
            let (r, x) = (r as i32, x as i32);
            let mut cell = Cell {
                nb: 0,
                nj: 0,
                jumps: [(0, 0); 6],
            };
            for (dr, dx) in DIRS {
                if let Some(a) = at(r + dr, x + dx) {
                    cell.nb |= bit(a);
                    if let Some(b) = at(r + 2 * dr, x + 2 * dx) {
                        cell.jumps[cell.nj as usize] = (a as u8, b as u8);
                        cell.nj += 1;
                    }
                }
            }
            cell
        })
        .collect();
    (coords, cells)
}
