//! The projective plane PG(2, q) over GF(q), and what is known of orders that are not prime powers.
//! 1. Points and lines are named by normalised homogeneous coordinates (the first non-zero is 1)
//!    and numbered alike: (1, a, b) ↦ a·q + b, (0, 1, b) ↦ q² + b, (0, 0, 1) ↦ q² + q.
//! 2. Why two lines meet in exactly one point, and the known non-existence results: docs/decks.md.

use crate::field::{prime_power, Field, FieldError};

/// The largest order built: PG(2, 256) has 65,793 lines of 257 points.
pub const MAX_ORDER: u64 = 256;

/// Errors building a plane: the order names why there is none to build.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlaneError {
    /// Orders 0 and 1.
    #[error("order {0} is too small: a projective plane has order at least 2 (order 2 is the Fano plane: 7 cards of 3 pictures)")]
    TooSmall(u64),
    /// No plane is built for an order that is not a prime power; [`Existence`] says what is known.
    #[error(
        "order {0} is not a prime power, so there is no field GF({0}) to build a plane from; {1}"
    )]
    NotPrimePower(u64, Existence),
    /// The order is above [`MAX_ORDER`].
    #[error("order {0} is larger than the largest plane built here (order {MAX_ORDER})")]
    TooLarge(u64),
    /// The field GF(order) could not be built.
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// What is known about the projective planes of an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existence {
    /// n = p^k: PG(2, n) exists (and is built here).
    PrimePower {
        /// The prime.
        p: u64,
        /// The exponent.
        k: u32,
    },
    /// No plane: n ≡ 1 or 2 (mod 4) and n is not a sum of two squares (Bruck–Ryser, 1949).
    BruckRyser(u64),
    /// No plane of order 10: exhaustive computer search (Lam, Thiel and Swiercz, 1989).
    Lam,
    /// Not a prime power and not ruled out: no plane is known and none is proved impossible.
    Open(u64),
    /// Orders 0 and 1 are degenerate.
    Degenerate(u64),
}

impl std::fmt::Display for Existence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Existence::PrimePower { p, k } => write!(
                f,
                "{} = {p}^{k} is a prime power: PG(2, {}) is a projective plane of that order",
                p.pow(k),
                p.pow(k)
            ),
            Existence::BruckRyser(n) => write!(
                f,
                "no projective plane of order {n} exists: {n} ≡ {} (mod 4) and {n} is not a sum of two squares (Bruck–Ryser theorem, 1949)",
                n % 4
            ),
            Existence::Lam => write!(
                f,
                "no projective plane of order 10 exists: ruled out by exhaustive computer search (Lam, Thiel and Swiercz, 1989)"
            ),
            Existence::Open(12) => write!(
                f,
                "whether a projective plane of order 12 exists is open (the smallest open order; every known plane has prime-power order)"
            ),
            Existence::Open(n) => write!(
                f,
                "whether a projective plane of order {n} exists is open (every known plane has prime-power order, and no theorem rules out {n})"
            ),
            Existence::Degenerate(n) => write!(
                f,
                "order {n} is degenerate: a projective plane has order at least 2"
            ),
        }
    }
}

/// What is known about projective planes of order n.
pub fn existence(n: u64) -> Existence {
    if n < 2 {
        return Existence::Degenerate(n);
    }
    if let Some((p, k)) = prime_power(n) {
        return Existence::PrimePower { p, k };
    }
    if (n % 4 == 1 || n % 4 == 2) && !sum_of_two_squares(n) {
        return Existence::BruckRyser(n);
    }
    if n == 10 {
        return Existence::Lam;
    }
    Existence::Open(n)
}

fn sum_of_two_squares(n: u64) -> bool {
    (0..).take_while(|a| a * a <= n).any(|a| {
        let rest = n - a * a;
        let b = rest.isqrt();
        b * b == rest
    })
}

/// PG(2, q): its field and, for every line, the points on it (ascending).
#[derive(Debug, Clone)]
pub struct Plane {
    field: Field,
    lines: Vec<Vec<u32>>,
}

impl Plane {
    /// PG(2, n) for a prime power n from 2 to [`MAX_ORDER`]; otherwise an error saying what is
    /// known about order n.
    pub fn new(n: u64) -> Result<Plane, PlaneError> {
        match existence(n) {
            Existence::Degenerate(n) => return Err(PlaneError::TooSmall(n)),
            Existence::PrimePower { .. } => {}
            other => return Err(PlaneError::NotPrimePower(n, other)),
        }
        if n > MAX_ORDER {
            return Err(PlaneError::TooLarge(n));
        }
        let field = Field::new(n)?;
        let size = (n * n + n + 1) as usize;
        let lines = (0..size as u32)
            .map(|l| points_on(&field, coordinates(n as u32, l)))
            .collect();
        Ok(Plane { field, lines })
    }

    /// The field GF(q).
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// The order q.
    pub fn order(&self) -> u32 {
        self.field.order()
    }

    /// q² + q + 1: the number of points, and of lines.
    pub fn size(&self) -> usize {
        self.lines.len()
    }

    /// The points on every line, lines in order of their numbers.
    pub fn lines(&self) -> &[Vec<u32>] {
        &self.lines
    }

    /// Normalised homogeneous coordinates of point (or line) number `i`.
    pub fn coordinates(&self, i: u32) -> [u32; 3] {
        coordinates(self.order(), i)
    }

    /// Whether point `point` lies on line `line`: u·x + v·y + w·z = 0.
    pub fn incident(&self, point: u32, line: u32) -> bool {
        let f = &self.field;
        let [x, y, z] = self.coordinates(point);
        let [u, v, w] = self.coordinates(line);
        f.add(f.add(f.mul(u, x), f.mul(v, y)), f.mul(w, z)) == 0
    }
}

/// The number of a point (or line) from its normalised coordinates.
pub fn number(q: u32, [x, y, z]: [u32; 3]) -> u32 {
    match (x, y) {
        (1, _) => y * q + z,
        (0, 1) => q * q + z,
        _ => q * q + q,
    }
}

/// Normalised coordinates of point (or line) number `i` < q² + q + 1.
pub fn coordinates(q: u32, i: u32) -> [u32; 3] {
    if i < q * q {
        [1, i / q, i % q]
    } else if i < q * q + q {
        [0, 1, i - q * q]
    } else {
        [0, 0, 1]
    }
}

/// The points (x : y : z) with u·x + v·y + w·z = 0, solved for each of the three kinds of point.
fn points_on(f: &Field, [u, v, w]: [u32; 3]) -> Vec<u32> {
    let q = f.order();
    let mut points = Vec::with_capacity(q as usize + 1);
    // (1, a, b): u + v·a + w·b = 0.
    if w != 0 {
        for a in 0..q {
            let b = f.div(f.neg(f.add(u, f.mul(v, a))), w).unwrap();
            points.push(number(q, [1, a, b]));
        }
    } else if v != 0 {
        let a = f.div(f.neg(u), v).unwrap();
        points.extend((0..q).map(|b| number(q, [1, a, b])));
    }
    // (0, 1, b): v + w·b = 0.
    if w != 0 {
        let b = f.div(f.neg(v), w).unwrap();
        points.push(number(q, [0, 1, b]));
    } else if v == 0 {
        points.extend((0..q).map(|b| number(q, [0, 1, b])));
    }
    // (0, 0, 1): w = 0.
    if w == 0 {
        points.push(number(q, [0, 0, 1]));
    }
    points.sort_unstable();
    points
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_known_about_each_order() {
        assert_eq!(existence(7), Existence::PrimePower { p: 7, k: 1 });
        assert_eq!(existence(8), Existence::PrimePower { p: 2, k: 3 });
        assert_eq!(existence(6), Existence::BruckRyser(6));
        assert_eq!(existence(14), Existence::BruckRyser(14));
        assert_eq!(existence(21), Existence::BruckRyser(21));
        assert_eq!(existence(10), Existence::Lam);
        assert_eq!(existence(12), Existence::Open(12));
        assert_eq!(existence(15), Existence::Open(15));
        assert_eq!(existence(18), Existence::Open(18));
        assert_eq!(existence(20), Existence::Open(20));
        assert_eq!(existence(1), Existence::Degenerate(1));
        let msg = Plane::new(6).unwrap_err().to_string();
        assert!(msg.contains("Bruck–Ryser"), "{msg}");
        let msg = Plane::new(10).unwrap_err().to_string();
        assert!(msg.contains("Lam") && msg.contains("1989"), "{msg}");
        let msg = Plane::new(12).unwrap_err().to_string();
        assert!(msg.contains("open"), "{msg}");
        assert_eq!(Plane::new(1).unwrap_err(), PlaneError::TooSmall(1));
        assert_eq!(Plane::new(257).unwrap_err(), PlaneError::TooLarge(257));
    }

    #[test]
    fn coordinates_and_numbers_are_inverse() {
        for q in [2, 3, 4, 7] {
            for i in 0..q * q + q + 1 {
                let c = coordinates(q, i);
                assert_eq!(c.iter().find(|&&x| x != 0), Some(&1), "normalised");
                assert_eq!(number(q, c), i);
            }
        }
    }

    /// Every axiom of a projective plane by brute force, and the lines solved for equal the lines
    /// found by testing every point.
    #[test]
    fn small_planes_are_projective_planes() {
        for q in [2u64, 3, 4, 5, 7, 8, 9, 11, 13, 16] {
            let plane = Plane::new(q).unwrap();
            let n = plane.size();
            assert_eq!(n as u64, q * q + q + 1);
            let mut on = vec![vec![false; n]; n];
            for (l, points) in plane.lines().iter().enumerate() {
                assert_eq!(points.len() as u64, q + 1, "PG(2,{q}) line {l}");
                for &p in points {
                    on[l][p as usize] = true;
                }
                for (p, &is_on) in on[l].iter().enumerate() {
                    assert_eq!(is_on, plane.incident(p as u32, l as u32), "PG(2,{q})");
                }
            }
            for a in 0..n {
                assert_eq!((0..n).filter(|&l| on[l][a]).count() as u64, q + 1);
                for b in a + 1..n {
                    let lines_meet = (0..n).filter(|&p| on[a][p] && on[b][p]).count();
                    assert_eq!(lines_meet, 1, "PG(2,{q}): lines {a} and {b}");
                    let points_joined = (0..n).filter(|&l| on[l][a] && on[l][b]).count();
                    assert_eq!(points_joined, 1, "PG(2,{q}): points {a} and {b}");
                }
            }
        }
    }

    #[test]
    fn the_fano_plane() {
        let plane = Plane::new(2).unwrap();
        assert_eq!(
            plane.lines(),
            &[
                vec![4, 5, 6],
                vec![1, 3, 4],
                vec![2, 3, 6],
                vec![1, 2, 5],
                vec![0, 1, 6],
                vec![0, 3, 5],
                vec![0, 2, 4],
            ]
        );
    }
}
