//! The star board: cells in cube coordinates, the hexagon and the six points, lanes, neighbours,
//! jumps, the C3 rotation and the cell names of the notation.
//! 1. Cells are numbered ("bit order") so that bit masks are cheap: the hexagon in reading order,
//!    then the points +x, −x, +y, −y, +z, −z (A's start and goal, B's, C's), each in reading order.
//!    Geometry works for every level; the masks of the game itself need at most 64 cells.

/// The six neighbour directions, as in docs/rules.md.
pub const DIRS: [(i32, i32, i32); 6] = [
    (1, -1, 0),
    (1, 0, -1),
    (0, 1, -1),
    (-1, 1, 0),
    (-1, 0, 1),
    (0, -1, 1),
];

/// Where a cell lies: the central hexagon or one of the six points.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Region {
    Hex,
    /// Point index: `2p` is player p's start point, `2p + 1` its goal (+x, −x, +y, −y, +z, −z).
    Point(u8),
}

/// One cell of the star.
#[derive(Clone, Debug)]
pub struct Cell {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    /// Row from the top, 0-based (row letter `'a' + row`).
    pub row: u8,
    /// Position in the row from the left, 1-based.
    pub col: u8,
    pub region: Region,
}

impl Cell {
    /// The notation name, e.g. `e3`.
    pub fn name(&self) -> String {
        format!("{}{}", (b'a' + self.row) as char, self.col)
    }

    /// Horizontal position in a picture, 0..=6n (adjacent cells of a row are 2 apart).
    pub fn column(&self, n: i32) -> usize {
        (self.x - self.y + 3 * n) as usize
    }

    /// May `player`'s pieces stand here?
    pub fn in_lane(&self, player: usize) -> bool {
        match self.region {
            Region::Hex => true,
            Region::Point(p) => p as usize / 2 == player,
        }
    }
}

/// The board of one level.
pub struct Geometry {
    pub level: u8,
    /// Pieces per player, n(n+1)/2 (also the size of a point).
    pub k: usize,
    /// Number of hexagon cells, 3n(n+1)+1.
    pub hex: usize,
    /// All cells in bit order.
    pub cells: Vec<Cell>,
    /// `neighbours[c][d]`: the cell one step from `c` in direction `d`.
    pub neighbours: Vec<[Option<usize>; 6]>,
}

impl Geometry {
    /// The board of level `level` (≥ 1).
    pub fn new(level: u8) -> Geometry {
        let n = level as i32;
        let mut reading = Vec::new();
        for z in -2 * n..=2 * n {
            let mut col = 0u8;
            for x in -2 * n..=2 * n {
                let y = -x - z;
                let (lo, hi) = (x.min(y).min(z), x.max(y).max(z));
                if lo < -n && hi > n {
                    continue;
                }
                if y.abs() > 2 * n {
                    continue;
                }
                col += 1;
                let region = if hi <= n && lo >= -n {
                    Region::Hex
                } else if x > n {
                    Region::Point(0)
                } else if x < -n {
                    Region::Point(1)
                } else if y > n {
                    Region::Point(2)
                } else if y < -n {
                    Region::Point(3)
                } else if z > n {
                    Region::Point(4)
                } else {
                    Region::Point(5)
                };
                reading.push(Cell {
                    x,
                    y,
                    z,
                    row: (z + 2 * n) as u8,
                    col,
                    region,
                });
            }
        }
        let order = |c: &Cell| match c.region {
            Region::Hex => 0,
            Region::Point(p) => 1 + p as usize,
        };
        // A stable sort keeps reading order inside each region.
        reading.sort_by_key(order);
        let cells = reading;
        let hex = cells.iter().filter(|c| c.region == Region::Hex).count();
        let find = |x: i32, y: i32, z: i32| cells.iter().position(|c| (c.x, c.y, c.z) == (x, y, z));
        let neighbours = cells
            .iter()
            .map(|c| {
                let mut nb = [None; 6];
                for (d, &(dx, dy, dz)) in DIRS.iter().enumerate() {
                    nb[d] = find(c.x + dx, c.y + dy, c.z + dz);
                }
                nb
            })
            .collect();
        let k = (level as usize) * (level as usize + 1) / 2;
        Geometry {
            level,
            k,
            hex,
            cells,
            neighbours,
        }
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// The cell at cube coordinates (x, y, z), if it is on the board.
    pub fn find(&self, x: i32, y: i32, z: i32) -> Option<usize> {
        self.cells.iter().position(|c| (c.x, c.y, c.z) == (x, y, z))
    }

    /// The cell with notation name `name` (case-insensitive), if any.
    pub fn by_name(&self, name: &str) -> Option<usize> {
        let name = name.to_ascii_lowercase();
        self.cells.iter().position(|c| c.name() == name)
    }

    /// A jump from `c` in direction `d`: (the cell jumped over, the landing cell).
    pub fn jump(&self, c: usize, d: usize) -> Option<(usize, usize)> {
        let over = self.neighbours[c][d]?;
        let land = self.neighbours[over][d]?;
        Some((over, land))
    }

    /// The image of cell `c` under the rotation (x, y, z) ↦ (z, x, y).
    pub fn rotate_cell(&self, c: usize) -> usize {
        let cell = &self.cells[c];
        self.find(cell.z, cell.x, cell.y)
            .expect("the star is invariant under the rotation")
    }

    /// Number of cells in `player`'s lane.
    #[cfg(test)]
    pub fn lane_len(&self, player: usize) -> usize {
        self.cells.iter().filter(|c| c.in_lane(player)).count()
    }

    /// Draw the star: `label(cell)` is written at each cell's place, `width` characters per
    /// half-cell step; with `row_letters` each row starts with its letter.
    pub fn draw(&self, width: usize, row_letters: bool, label: impl Fn(usize) -> String) -> String {
        let n = self.level as i32;
        let rows = 4 * self.level as usize + 1;
        let mut lines: Vec<String> = vec![String::new(); rows];
        let mut by_row: Vec<Vec<usize>> = vec![Vec::new(); rows];
        for (i, c) in self.cells.iter().enumerate() {
            by_row[c.row as usize].push(i);
        }
        for (r, cells) in by_row.iter_mut().enumerate() {
            cells.sort_by_key(|&i| self.cells[i].col);
            let mut line = if row_letters {
                format!("{}  ", (b'a' + r as u8) as char)
            } else {
                String::new()
            };
            let base = line.len();
            for &i in cells.iter() {
                let at = base + self.cells[i].column(n) * width;
                while line.len() < at {
                    line.push(' ');
                }
                line.push_str(&label(i));
            }
            lines[r] = line.trim_end().to_string();
        }
        let mut out = lines.join("\n");
        out.push('\n');
        out
    }
}

/// The ASCII picture of the cell names of level `level` (1..=3), as used in docs/cc3p-notation.md.
pub fn cell_name_picture(level: u8) -> String {
    if !(1..=3).contains(&level) {
        return format!("cc3p has levels 1, 2 and 3, not {level}\n");
    }
    let geo = Geometry::new(level);
    geo.draw(2, false, |i| geo.cells[i].name())
}
