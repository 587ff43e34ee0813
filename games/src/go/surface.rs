//! The five surfaces: how the edges of the R×C rectangle are glued, the neighbour tables used for
//! play, and the glued edges with the crossings that the winding rule of scoring counts.
//! 1. Points are `r * cols + c` (row 0 on top), each with four *steps* (inside, across a glued
//!    pair, or off the board). Play uses their targets deduplicated, without the point itself; the
//!    winding rule the steps themselves, the surface's edges (docs/go.md, "The winding rule").

use super::GoError;

/// One of the five surfaces (docs/go.md).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Surface {
    /// Nothing glued.
    Plane,
    /// Left and right edges glued straight: (r, 0) next to (r, C−1).
    Cylinder,
    /// Left/right and top/bottom glued straight.
    Torus,
    /// Left/right glued straight, top/bottom glued with a flip: (0, c) next to (R−1, C−1−c).
    Klein,
    /// Both pairs glued with a flip: (r, 0) next to (R−1−r, C−1), (0, c) next to (R−1, C−1−c).
    Projective,
}

/// How one pair of opposite edges is glued.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Glue {
    None,
    Straight,
    Flip,
}

impl Surface {
    /// The five surfaces.
    pub const ALL: [Surface; 5] = [
        Surface::Plane,
        Surface::Cylinder,
        Surface::Torus,
        Surface::Klein,
        Surface::Projective,
    ];

    /// The machine name: `plane`, `cylinder`, `torus`, `klein`, `projective`.
    pub fn name(self) -> &'static str {
        match self {
            Surface::Plane => "plane",
            Surface::Cylinder => "cylinder",
            Surface::Torus => "torus",
            Surface::Klein => "klein",
            Surface::Projective => "projective",
        }
    }

    /// Parses a machine name (case-insensitive).
    pub fn parse(text: &str) -> Result<Surface, GoError> {
        let t = text.trim().to_ascii_lowercase();
        Surface::ALL
            .into_iter()
            .find(|s| s.name() == t)
            .ok_or_else(|| {
                GoError::BadSurface(format!(
                    "unknown surface {text:?}: use plane, cylinder, torus, klein or projective"
                ))
            })
    }

    /// How the left/right and the top/bottom edges are glued: `none`, `straight` or `flip`.
    pub fn gluings(self) -> [&'static str; 2] {
        let name = |g: Glue| match g {
            Glue::None => "none",
            Glue::Straight => "straight",
            Glue::Flip => "flip",
        };
        [name(self.left_right()), name(self.top_bottom())]
    }

    /// The gluing of the left and right edges.
    fn left_right(self) -> Glue {
        match self {
            Surface::Plane => Glue::None,
            Surface::Cylinder | Surface::Torus | Surface::Klein => Glue::Straight,
            Surface::Projective => Glue::Flip,
        }
    }

    /// The gluing of the top and bottom edges.
    fn top_bottom(self) -> Glue {
        match self {
            Surface::Plane | Surface::Cylinder => Glue::None,
            Surface::Torus => Glue::Straight,
            Surface::Klein | Surface::Projective => Glue::Flip,
        }
    }

    /// Which crossing counts are cocycles generating H¹(surface; Q): the signed number of
    /// left/right crossings (component 0) and of top/bottom crossings (component 1). See
    /// docs/go.md, "The winding rule": on the Klein bottle only the flip-glued (top/bottom) pair
    /// counts, on the projective plane none.
    pub fn rational_crossings(self) -> [bool; 2] {
        match self {
            Surface::Plane | Surface::Projective => [false, false],
            Surface::Cylinder => [true, false],
            Surface::Torus => [true, true],
            Surface::Klein => [false, true],
        }
    }
}

/// One step from a point across an edge of the surface: the point reached and the signed
/// crossings it makes (left/right, top/bottom), zeroed where the crossing count is not rational.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The point reached.
    pub to: u8,
    /// The crossings of the left/right and of the top/bottom edges: +1 going right or down,
    /// −1 going left or up, 0 inside the rectangle or where the count is not rational.
    pub wind: [i8; 2],
}

/// Directions of the four steps, in this order.
pub const UP: usize = 0;
/// Down: the next row.
pub const DOWN: usize = 1;
/// Left: the previous column.
pub const LEFT: usize = 2;
/// Right: the next column.
pub const RIGHT: usize = 3;

/// The largest board: 3^36 × 2 × 39 states still fit a u64 index.
pub const MAX_POINTS: usize = 36;

/// A surface of a given size: its neighbour masks and steps.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// How the edges are glued.
    pub surface: Surface,
    /// R, the number of rows.
    pub rows: usize,
    /// C, the number of columns.
    pub cols: usize,
    /// Number of points, `rows * cols`.
    pub n: usize,
    /// Bit mask of every point.
    pub all: u64,
    /// `nbr[p]`: the neighbours of `p` for play (deduplicated, never `p` itself).
    pub nbr: Vec<u64>,
    /// `steps[p][d]`: the step from `p` in direction `d` (`UP`, `DOWN`, `LEFT`, `RIGHT`).
    pub steps: Vec<[Option<Step>; 4]>,
}

impl Geometry {
    /// Builds the tables; `1 <= rows <= cols` and `rows * cols <= MAX_POINTS`.
    pub fn new(surface: Surface, rows: usize, cols: usize) -> Result<Geometry, GoError> {
        if rows == 0 || rows > cols {
            return Err(GoError::BadBoard(format!(
                "{rows}x{cols}: boards are R×C with 1 <= R <= C (write the shorter side first)"
            )));
        }
        let n = rows * cols;
        if n > MAX_POINTS {
            return Err(GoError::BadBoard(format!(
                "{rows}x{cols} has {n} points; the index holds at most {MAX_POINTS}"
            )));
        }
        let rational = surface.rational_crossings();
        let at = |r: usize, c: usize| (r * cols + c) as u8;
        let step = |r: usize, c: usize, d: usize| -> Option<Step> {
            let (last_r, last_c) = (rows - 1, cols - 1);
            let inside = |to: u8| Some(Step { to, wind: [0, 0] });
            let across = |to: u8, axis: usize, sign: i8| {
                let mut wind = [0, 0];
                if rational[axis] {
                    wind[axis] = sign;
                }
                Some(Step { to, wind })
            };
            match d {
                UP if r > 0 => inside(at(r - 1, c)),
                DOWN if r < last_r => inside(at(r + 1, c)),
                LEFT if c > 0 => inside(at(r, c - 1)),
                RIGHT if c < last_c => inside(at(r, c + 1)),
                UP | DOWN => {
                    let to_r = if d == UP { last_r } else { 0 };
                    let sign = if d == UP { -1 } else { 1 };
                    match surface.top_bottom() {
                        Glue::None => None,
                        Glue::Straight => across(at(to_r, c), 1, sign),
                        Glue::Flip => across(at(to_r, last_c - c), 1, sign),
                    }
                }
                _ => {
                    let to_c = if d == LEFT { last_c } else { 0 };
                    let sign = if d == LEFT { -1 } else { 1 };
                    match surface.left_right() {
                        Glue::None => None,
                        Glue::Straight => across(at(r, to_c), 0, sign),
                        Glue::Flip => across(at(last_r - r, to_c), 0, sign),
                    }
                }
            }
        };
        let mut steps = Vec::with_capacity(n);
        let mut nbr = Vec::with_capacity(n);
        for r in 0..rows {
            for c in 0..cols {
                let s = [
                    step(r, c, UP),
                    step(r, c, DOWN),
                    step(r, c, LEFT),
                    step(r, c, RIGHT),
                ];
                let p = at(r, c);
                let mask = s
                    .iter()
                    .flatten()
                    .filter(|st| st.to != p)
                    .fold(0u64, |m, st| m | 1 << st.to);
                steps.push(s);
                nbr.push(mask);
            }
        }
        Ok(Geometry {
            surface,
            rows,
            cols,
            n,
            all: if n == 64 { !0 } else { (1u64 << n) - 1 },
            nbr,
            steps,
        })
    }

    /// The union of the neighbours of the points of `set`.
    #[inline]
    pub fn spread(&self, mut set: u64) -> u64 {
        let mut out = 0;
        while set != 0 {
            out |= self.nbr[set.trailing_zeros() as usize];
            set &= set - 1;
        }
        out
    }

    /// The connected part of `within` that contains point `p` (`p` must be in `within`).
    #[inline]
    pub fn component(&self, within: u64, p: usize) -> u64 {
        let mut set = 1u64 << p;
        let mut frontier = set;
        while frontier != 0 {
            let grown = self.spread(frontier) & within & !set;
            set |= grown;
            frontier = grown;
        }
        set
    }
}
