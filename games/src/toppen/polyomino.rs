//! Cell sets on the square grid: SPEC strings, free polyominoes, terrains.
//! 1. Every cell set here is normalised ([`normalise`]: smallest row and column 0, reading order),
//!    so equal sets compare equal; free polyominoes are compared in [`free_canonical`] orientation.

use std::collections::BTreeSet;

use super::ToppenError;

/// A grid cell `(row, column)`, row 0 at the top.
pub type Cell = (u8, u8);

/// Number of tiles and of terrain cells.
pub const TILES: usize = 10;

/// A terrain: an edge-connected set of exactly 10 grid cells (a decomino), normalised.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Terrain {
    cells: Vec<Cell>,
}

impl Terrain {
    /// The terrain as a SPEC string (`#` a cell, `.` empty, rows separated by `/`).
    pub fn spec(&self) -> String {
        spec_of(&self.cells)
    }

    /// Number of cells (always 10).
    pub fn cells(&self) -> usize {
        self.cells.len()
    }

    /// The cells in reading order (row by row from the top, left to right).
    pub fn cell_list(&self) -> &[Cell] {
        &self.cells
    }
}

impl std::fmt::Display for Terrain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.spec())
    }
}

/// Translates cells so that the smallest row and column are 0 and sorts them in reading order.
pub fn normalise(cells: &[(i32, i32)]) -> Vec<Cell> {
    let r0 = cells.iter().map(|c| c.0).min().unwrap_or(0);
    let c0 = cells.iter().map(|c| c.1).min().unwrap_or(0);
    let mut out: Vec<Cell> = cells
        .iter()
        .map(|&(r, c)| ((r - r0) as u8, (c - c0) as u8))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The SPEC string of a normalised cell set.
pub fn spec_of(cells: &[Cell]) -> String {
    let rows = cells.iter().map(|c| c.0 as usize + 1).max().unwrap_or(0);
    let cols = cells.iter().map(|c| c.1 as usize + 1).max().unwrap_or(0);
    let mut grid = vec![vec![b'.'; cols]; rows];
    for &(r, c) in cells {
        grid[r as usize][c as usize] = b'#';
    }
    grid.into_iter()
        .map(|row| String::from_utf8(row).expect("ascii"))
        .collect::<Vec<_>>()
        .join("/")
}

/// Parses a SPEC into its normalised, non-empty cell set (no connectivity check). Surrounding
/// whitespace is ignored; rows may have different lengths.
pub fn parse_cells(spec: &str) -> Result<Vec<Cell>, ToppenError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(ToppenError::BadSpec {
            spec: spec.into(),
            why: "it is empty; write rows of `#` (cell) and `.` (empty) separated by `/`".into(),
        });
    }
    let mut cells = Vec::new();
    let rows = spec.split('/').count();
    for (r, row) in spec.split('/').enumerate() {
        // An empty row is a stray `/` (leading, trailing or doubled), not a row of no cells:
        // a row with no cell is written with `.`.
        if row.trim().is_empty() {
            return Err(ToppenError::BadSpec {
                spec: spec.into(),
                why: format!(
                    "row {} of {rows} is empty (a stray `/`?); write each row with `#` (cell) and \
                     `.` (empty), rows separated by one `/`",
                    r + 1
                ),
            });
        }
        for (c, ch) in row.trim().chars().enumerate() {
            match ch {
                '#' => cells.push((r as i32, c as i32)),
                '.' => {}
                other => {
                    return Err(ToppenError::BadSpec {
                        spec: spec.into(),
                        why: format!(
                            "row {} has {other:?}; only `#` (cell), `.` (empty) and `/` (next row) \
                             are allowed",
                            r + 1
                        ),
                    })
                }
            }
            if r >= 64 || c >= 64 {
                return Err(ToppenError::BadSpec {
                    spec: spec.into(),
                    why: "it is larger than 64 rows or columns".into(),
                });
            }
        }
    }
    if cells.is_empty() {
        return Err(ToppenError::BadSpec {
            spec: spec.into(),
            why: "it has no cell (`#`)".into(),
        });
    }
    Ok(normalise(&cells))
}

/// Adjacency masks of a cell list (bit `j` of entry `i`: cells `i` and `j` are neighbours), with
/// orthogonal neighbours, plus diagonal ones when `diagonal`.
pub fn adjacency(cells: &[Cell], diagonal: bool) -> Vec<u16> {
    let mut adj = vec![0u16; cells.len()];
    for (i, &(r1, c1)) in cells.iter().enumerate() {
        for (j, &(r2, c2)) in cells.iter().enumerate() {
            let dr = (r1 as i32 - r2 as i32).abs();
            let dc = (c1 as i32 - c2 as i32).abs();
            let touch = if diagonal {
                dr <= 1 && dc <= 1 && (dr, dc) != (0, 0)
            } else {
                dr + dc == 1
            };
            if touch {
                adj[i] |= 1 << j;
            }
        }
    }
    adj
}

/// Whether the vertices in `set` induce a connected subgraph (the empty set is not connected).
pub fn connected(adj: &[u16], set: u16) -> bool {
    if set == 0 {
        return false;
    }
    let mut seen = set & set.wrapping_neg();
    let mut frontier = seen;
    while frontier != 0 {
        let v = frontier.trailing_zeros() as usize;
        frontier &= frontier - 1;
        let new = adj[v] & set & !seen;
        seen |= new;
        frontier |= new;
    }
    seen == set
}

/// Parses a terrain SPEC: exactly 10 edge-connected cells.
pub fn parse_terrain(spec: &str) -> Result<Terrain, ToppenError> {
    let cells = parse_cells(spec)?;
    if cells.len() != TILES {
        return Err(ToppenError::BadTerrain {
            spec: spec.trim().into(),
            why: format!(
                "it has {} cells; a terrain has exactly {TILES} (one per tile)",
                cells.len()
            ),
        });
    }
    let adj = adjacency(&cells, false);
    if !connected(&adj, (1u16 << cells.len()) - 1) {
        return Err(ToppenError::BadTerrain {
            spec: spec.trim().into(),
            why: "its cells are not edge-connected; every cell must be reachable from every other \
                  through orthogonal neighbours"
                .into(),
        });
    }
    Ok(Terrain { cells })
}

/// The canonical orientation of a cell set: the smallest normalised list over the 8 symmetries.
pub fn free_canonical(cells: &[Cell]) -> Vec<Cell> {
    let mut best: Option<Vec<Cell>> = None;
    for t in 0..8 {
        let moved: Vec<(i32, i32)> = cells
            .iter()
            .map(|&(r, c)| {
                let (r, c) = (r as i32, c as i32);
                let (r, c) = if t & 4 != 0 { (c, r) } else { (r, c) };
                let r = if t & 1 != 0 { -r } else { r };
                let c = if t & 2 != 0 { -c } else { c };
                (r, c)
            })
            .collect();
        let n = normalise(&moved);
        if best.as_ref().is_none_or(|b| n < *b) {
            best = Some(n);
        }
    }
    best.unwrap_or_default()
}

/// The free polyominoes of 1..=`max` cells, level by level (`result[k]` has the (k+1)-ominoes),
/// each in its canonical orientation, sorted.
pub fn free_polyominoes(max: usize) -> Vec<Vec<Vec<Cell>>> {
    let mut levels: Vec<Vec<Vec<Cell>>> = Vec::new();
    if max == 0 {
        return levels;
    }
    levels.push(vec![vec![(0, 0)]]);
    for _ in 1..max {
        let mut next = BTreeSet::new();
        for poly in levels.last().expect("a level") {
            let cells: Vec<(i32, i32)> = poly.iter().map(|&(r, c)| (r as i32, c as i32)).collect();
            for &(r, c) in &cells {
                for (dr, dc) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    let new = (r + dr, c + dc);
                    if cells.contains(&new) {
                        continue;
                    }
                    let mut grown = cells.clone();
                    grown.push(new);
                    next.insert(free_canonical(&normalise(&grown)));
                }
            }
        }
        levels.push(next.into_iter().collect());
    }
    levels
}

/// The 4655 free decominoes as terrains, one representative each (canonical orientation, sorted).
pub fn all_decominoes() -> Vec<Terrain> {
    free_polyominoes(TILES)
        .pop()
        .unwrap_or_default()
        .into_iter()
        .map(|cells| Terrain { cells })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stray_slash_is_refused_not_read_as_an_empty_row() {
        assert!(parse_terrain("####/#..#/####").is_ok());
        for (spec, row) in [
            ("####/#..#/####/", "row 4 of 4"),
            ("/####/#..#/####", "row 1 of 4"),
            ("####//#..#/####", "row 2 of 4"),
            ("####/#..#/####/ ", "row 4 of 4"),
        ] {
            let err = parse_terrain(spec).unwrap_err().to_string();
            assert!(
                err.contains(row) && err.contains("empty"),
                "{spec:?}: {err}"
            );
        }
    }

    #[test]
    fn free_polyomino_counts() {
        let counts: Vec<usize> = free_polyominoes(10).iter().map(Vec::len).collect();
        assert_eq!(counts, [1, 1, 2, 5, 12, 35, 108, 369, 1285, 4655]);
        assert_eq!(all_decominoes().len(), 4655);
    }

    #[test]
    fn terrain_parsing() {
        let t = parse_terrain("####/#..#/####").unwrap();
        assert_eq!(t.cells(), 10);
        assert_eq!(t.spec(), "####/#..#/####");
        let t = parse_terrain(" ..#.../..#.../######/..#.../..#... ").unwrap();
        assert_eq!(t.spec(), "..#.../..#.../######/..#.../..#...");
        assert_eq!(parse_terrain("...##########").unwrap().spec(), "##########");
        for bad in [
            "",
            "#########",
            "###########",
            "#####/...../#####",
            "####x/#####",
            "/",
        ] {
            assert!(parse_terrain(bad).is_err(), "{bad:?} should be rejected");
        }
        let err = parse_terrain("#####/...../#####").unwrap_err().to_string();
        assert!(err.contains("edge-connected"), "{err}");
        let err = parse_terrain("#########").unwrap_err().to_string();
        assert!(err.contains("9 cells"), "{err}");
        // Diagonal contact does not connect a terrain.
        assert!(parse_terrain("#####/.....#####").is_err());
        assert!(parse_terrain("#####......./.....#####").is_err());
    }
}
