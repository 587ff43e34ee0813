//! Finite fields GF(q), q = p^k, by tables: a field operation is one lookup.
//! 1. An element is the integer whose base-p digits are its polynomial's coefficients (constant
//!    term least significant): in GF(8) the element 6 is x² + x.
//! 2. The modulus is the first monic irreducible x^k + c for c = 0, 1, 2, …: any gives the same
//!    field, so the choice only fixes the numbering (docs/decks.md, "The field").

use std::fmt;

/// The largest field order built (tables are q² entries each).
pub const MAX_ORDER: u64 = 1024;

/// Errors building a field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// The order is not a prime power: there is no such field.
    #[error("there is no field with {0} elements: a finite field's order is a prime power (2, 3, 4, 5, 7, 8, 9, 11, …)")]
    NotPrimePower(u64),
    /// The order is above [`MAX_ORDER`].
    #[error("GF({0}) is larger than the largest field built here ({MAX_ORDER} elements)")]
    TooLarge(u64),
}

/// `n = p^k` with p prime and k ≥ 1, or `None`.
pub fn prime_power(n: u64) -> Option<(u64, u32)> {
    if n < 2 {
        return None;
    }
    let p = smallest_prime_factor(n);
    let mut rest = n;
    let mut k = 0;
    while rest.is_multiple_of(p) {
        rest /= p;
        k += 1;
    }
    (rest == 1).then_some((p, k))
}

fn smallest_prime_factor(n: u64) -> u64 {
    let mut d = 2;
    while d * d <= n {
        if n.is_multiple_of(d) {
            return d;
        }
        d += 1;
    }
    n
}

/// GF(p^k) with its operation tables. Elements are `u32` in `0..q`; 0 and 1 are the field's zero
/// and one.
#[derive(Clone)]
pub struct Field {
    p: u32,
    k: u32,
    q: u32,
    /// The modulus' coefficients c_0 … c_k (c_k = 1).
    modulus: Vec<u32>,
    add: Vec<u16>,
    mul: Vec<u16>,
    neg: Vec<u16>,
    inv: Vec<u16>,
}

impl fmt::Debug for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GF({}) mod {}", self.q, self.modulus_string())
    }
}

impl Field {
    /// GF(q): an error if q is not a prime power or is larger than [`MAX_ORDER`].
    pub fn new(q: u64) -> Result<Field, FieldError> {
        let (p, k) = prime_power(q).ok_or(FieldError::NotPrimePower(q))?;
        if q > MAX_ORDER {
            return Err(FieldError::TooLarge(q));
        }
        let (p, q) = (p as u32, q as u32);
        let modulus = first_irreducible(p, k);
        let n = q as usize;
        let pow: Vec<u32> = (0..k).map(|j| p.pow(j)).collect();
        // The lowest position j with a non-zero coefficient in b (b ≥ 1).
        let low = |b: u32| {
            (0..k as usize)
                .find(|&j| !(b / pow[j]).is_multiple_of(p))
                .unwrap()
        };
        // Tables by linearity in b: with j = low(b), b = (b − p^j) + x^j, so
        // a + b = (a + (b − p^j)) + x^j and a · b = a · (b − p^j) + a · x^j.
        let plus_xj = |e: u32, j: usize| {
            if (e / pow[j]) % p == p - 1 {
                e - (p - 1) * pow[j]
            } else {
                e + pow[j]
            }
        };
        let mut add = vec![0u16; n * n];
        for a in 0..n {
            add[a * n] = a as u16;
            for b in 1..n {
                let j = low(b as u32);
                add[a * n + b] = plus_xj(add[a * n + b - pow[j] as usize] as u32, j) as u16;
            }
        }
        let mut mul = vec![0u16; n * n];
        for a in 0..q {
            // a · x^j for j < k, by polynomial multiplication.
            let da = digits(a, p, k);
            let times_xj: Vec<u32> = (0..k as usize)
                .map(|j| {
                    let mut xj = vec![0; k as usize];
                    xj[j] = 1;
                    number(&mul_mod(&da, &xj, &modulus, p), p)
                })
                .collect();
            let row = a as usize * n;
            for b in 1..n {
                let j = low(b as u32);
                let rest = mul[row + b - pow[j] as usize] as usize;
                mul[row + b] = add[rest * n + times_xj[j] as usize];
            }
        }
        let neg: Vec<u16> = (0..q)
            .map(|a| {
                let d: Vec<u32> = digits(a, p, k).iter().map(|&x| (p - x) % p).collect();
                number(&d, p) as u16
            })
            .collect();
        let mut inv = vec![0u16; n];
        for a in 1..n {
            // The modulus is irreducible, so every non-zero element has an inverse.
            inv[a] = (1..n).find(|&b| mul[a * n + b] == 1).unwrap() as u16;
        }
        Ok(Field {
            p,
            k,
            q,
            modulus,
            add,
            mul,
            neg,
            inv,
        })
    }

    /// The number of elements q.
    pub fn order(&self) -> u32 {
        self.q
    }

    /// The characteristic p.
    pub fn characteristic(&self) -> u32 {
        self.p
    }

    /// The degree k of q = p^k.
    pub fn degree(&self) -> u32 {
        self.k
    }

    /// The modulus' coefficients c_0 … c_k (monic: c_k = 1).
    pub fn modulus(&self) -> &[u32] {
        &self.modulus
    }

    /// The modulus as a polynomial in x, e.g. `x^3 + x + 1`.
    pub fn modulus_string(&self) -> String {
        poly_string(&self.modulus)
    }

    /// a + b.
    #[inline]
    pub fn add(&self, a: u32, b: u32) -> u32 {
        self.add[(a * self.q + b) as usize] as u32
    }

    /// a · b.
    #[inline]
    pub fn mul(&self, a: u32, b: u32) -> u32 {
        self.mul[(a * self.q + b) as usize] as u32
    }

    /// −a, the additive inverse.
    #[inline]
    pub fn neg(&self, a: u32) -> u32 {
        self.neg[a as usize] as u32
    }

    /// a − b, as a + (−b).
    #[inline]
    pub fn sub(&self, a: u32, b: u32) -> u32 {
        self.add(a, self.neg(b))
    }

    /// The multiplicative inverse; `None` for 0.
    #[inline]
    pub fn inv(&self, a: u32) -> Option<u32> {
        (a != 0).then(|| self.inv[a as usize] as u32)
    }

    /// a / b; `None` when b = 0.
    #[inline]
    pub fn div(&self, a: u32, b: u32) -> Option<u32> {
        self.inv(b).map(|ib| self.mul(a, ib))
    }

    /// The addition table, row a holding a + b for b = 0 … q−1.
    pub fn addition_table(&self) -> Vec<Vec<u32>> {
        self.table(&self.add)
    }

    /// The multiplication table, row a holding a · b for b = 0 … q−1.
    pub fn multiplication_table(&self) -> Vec<Vec<u32>> {
        self.table(&self.mul)
    }

    fn table(&self, t: &[u16]) -> Vec<Vec<u32>> {
        t.chunks(self.q as usize)
            .map(|row| row.iter().map(|&x| x as u32).collect())
            .collect()
    }

    /// The element as a polynomial in x, e.g. `x^2 + 1` (`0` for zero).
    pub fn element_string(&self, a: u32) -> String {
        poly_string(&digits(a, self.p, self.k))
    }
}

/// The k base-p digits of `a`, least significant first: the polynomial's coefficients.
fn digits(mut a: u32, p: u32, k: u32) -> Vec<u32> {
    (0..k)
        .map(|_| {
            let d = a % p;
            a /= p;
            d
        })
        .collect()
}

fn number(coeffs: &[u32], p: u32) -> u32 {
    coeffs.iter().rev().fold(0, |acc, &c| acc * p + c)
}

/// a · b mod f over GF(p), a and b of degree below deg f = k; the result has k coefficients.
fn mul_mod(a: &[u32], b: &[u32], f: &[u32], p: u32) -> Vec<u32> {
    let mut prod = vec![0u32; a.len() + b.len()];
    for (i, &x) in a.iter().enumerate() {
        for (j, &y) in b.iter().enumerate() {
            prod[i + j] = (prod[i + j] + x * y) % p;
        }
    }
    let k = f.len() - 1;
    let mut rem = poly_rem(prod, f, p);
    rem.resize(k, 0);
    rem
}

/// The remainder of a divided by a monic f over GF(p).
fn poly_rem(mut a: Vec<u32>, f: &[u32], p: u32) -> Vec<u32> {
    let k = f.len() - 1;
    while a.len() > k {
        let lead = a.pop().unwrap();
        if lead != 0 {
            // a -= lead · x^(deg a − k) · f, which clears the (already popped) leading term.
            let shift = a.len() - k;
            for (i, &c) in f[..k].iter().enumerate() {
                a[shift + i] = (a[shift + i] + (p - lead) * c) % p;
            }
        }
    }
    a
}

/// The monic polynomial of degree `deg` numbered `c` (x^deg plus c's base-p digits).
fn monic(c: u32, p: u32, deg: u32) -> Vec<u32> {
    let mut f = digits(c, p, deg);
    f.push(1);
    f
}

/// The first monic irreducible polynomial of degree k over GF(p), in the order of [`monic`]'s `c`.
fn first_irreducible(p: u32, k: u32) -> Vec<u32> {
    (0..p.pow(k - 1) * p)
        .map(|c| monic(c, p, k))
        .find(|f| is_irreducible(f, p))
        .expect("an irreducible polynomial of every degree exists over every GF(p)")
}

/// Trial division by every monic polynomial of degree 1 … deg f / 2.
fn is_irreducible(f: &[u32], p: u32) -> bool {
    let k = (f.len() - 1) as u32;
    for d in 1..=k / 2 {
        for c in 0..p.pow(d) {
            let g = monic(c, p, d);
            if poly_rem(f.to_vec(), &g, p).iter().all(|&x| x == 0) {
                return false;
            }
        }
    }
    true
}

fn poly_string(coeffs: &[u32]) -> String {
    let mut terms = Vec::new();
    for (i, &c) in coeffs.iter().enumerate().rev() {
        if c == 0 {
            continue;
        }
        let coef = if c == 1 && i > 0 {
            String::new()
        } else {
            c.to_string()
        };
        terms.push(match i {
            0 => coef,
            1 => format!("{coef}x"),
            _ => format!("{coef}x^{i}"),
        });
    }
    if terms.is_empty() {
        "0".to_string()
    } else {
        terms.join(" + ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn prime_powers(limit: u64) -> Vec<u64> {
        (2..=limit).filter(|&n| prime_power(n).is_some()).collect()
    }

    #[test]
    fn prime_powers_are_recognised() {
        assert_eq!(prime_power(8), Some((2, 3)));
        assert_eq!(prime_power(9), Some((3, 2)));
        assert_eq!(prime_power(101), Some((101, 1)));
        assert_eq!(prime_power(121), Some((11, 2)));
        for n in [0, 1, 6, 10, 12, 15, 100] {
            assert_eq!(prime_power(n), None, "{n}");
        }
        assert_eq!(
            prime_powers(32),
            vec![2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17, 19, 23, 25, 27, 29, 31, 32]
        );
    }

    #[test]
    fn the_moduli_are_the_documented_ones() {
        let m = |q| Field::new(q).unwrap().modulus_string();
        assert_eq!(m(2), "x");
        assert_eq!(m(7), "x");
        assert_eq!(m(4), "x^2 + x + 1");
        assert_eq!(m(8), "x^3 + x + 1");
        assert_eq!(m(9), "x^2 + 1");
        assert_eq!(m(16), "x^4 + x + 1");
        assert_eq!(m(27), "x^3 + 2x + 1");
        // GF(8): x · x² = x³ = x + 1, i.e. 2 · 4 = 3.
        let f = Field::new(8).unwrap();
        assert_eq!(f.mul(2, 4), 3);
        assert_eq!(f.element_string(6), "x^2 + x");
    }

    #[test]
    fn non_prime_powers_and_huge_orders_are_refused() {
        assert_eq!(Field::new(6).unwrap_err(), FieldError::NotPrimePower(6));
        assert_eq!(Field::new(1).unwrap_err(), FieldError::NotPrimePower(1));
        assert_eq!(Field::new(0).unwrap_err(), FieldError::NotPrimePower(0));
        assert_eq!(Field::new(2048).unwrap_err(), FieldError::TooLarge(2048));
        assert!(Field::new(1024).is_ok());
    }

    /// Every field axiom by exhaustive loops over all elements (pairs and triples).
    fn check_axioms_exhaustively(f: &Field) {
        let q = f.order();
        let (p, k) = prime_power(q as u64).unwrap();
        assert_eq!((f.characteristic() as u64, f.degree()), (p, k));
        assert_ne!(0, 1);
        for a in 0..q {
            assert_eq!(f.add(a, 0), a, "GF({q}): {a} + 0");
            assert_eq!(f.mul(a, 1), a, "GF({q}): {a} · 1");
            assert_eq!(f.mul(a, 0), 0, "GF({q}): {a} · 0");
            assert_eq!(f.add(a, f.neg(a)), 0, "GF({q}): {a} + −{a}");
            match f.inv(a) {
                None => assert_eq!(a, 0),
                Some(i) => assert_eq!(f.mul(a, i), 1, "GF({q}): {a} · {a}⁻¹"),
            }
            // p · a = 0: the characteristic.
            let mut s = 0;
            for _ in 0..p {
                s = f.add(s, a);
            }
            assert_eq!(s, 0, "GF({q}): {p} · {a}");
            for b in 0..q {
                assert_eq!(f.add(a, b), f.add(b, a), "GF({q}): {a} + {b}");
                assert_eq!(f.mul(a, b), f.mul(b, a), "GF({q}): {a} · {b}");
                assert!(
                    a == 0 || b == 0 || f.mul(a, b) != 0,
                    "GF({q}): zero divisor"
                );
                for c in 0..q {
                    assert_eq!(f.add(f.add(a, b), c), f.add(a, f.add(b, c)));
                    assert_eq!(f.mul(f.mul(a, b), c), f.mul(a, f.mul(b, c)));
                    assert_eq!(
                        f.mul(a, f.add(b, c)),
                        f.add(f.mul(a, b), f.mul(a, c)),
                        "GF({q}): {a} · ({b} + {c})"
                    );
                }
            }
        }
        // Every row of both tables is a permutation (a Latin square; row 0 of · excepted).
        for (name, table) in [("+", f.addition_table()), ("·", f.multiplication_table())] {
            for (a, row) in table.iter().enumerate() {
                if name == "·" && a == 0 {
                    continue;
                }
                let mut seen = vec![false; q as usize];
                for &x in row {
                    assert!(!seen[x as usize], "GF({q}): row {a} of {name}");
                    seen[x as usize] = true;
                }
            }
        }
    }

    /// The multiplicative group of a finite field is cyclic: some element has order q − 1.
    fn check_cyclic(f: &Field) {
        let q = f.order();
        let generator = (1..q).find(|&g| {
            let mut x = g;
            let mut n = 1;
            while x != 1 {
                x = f.mul(x, g);
                n += 1;
            }
            n == q - 1
        });
        assert!(generator.is_some(), "GF({q}) has no primitive element");
    }

    #[test]
    fn every_field_up_to_128_satisfies_the_axioms_exhaustively() {
        for q in prime_powers(128) {
            let f = Field::new(q).unwrap();
            check_axioms_exhaustively(&f);
            check_cyclic(&f);
        }
    }

    fn large_fields() -> Vec<u64> {
        prime_powers(MAX_ORDER)
            .into_iter()
            .filter(|&q| q > 128)
            .collect()
    }

    #[test]
    fn every_field_up_to_the_maximum_has_inverses_and_is_cyclic() {
        for q in large_fields() {
            let f = Field::new(q).unwrap();
            for a in 1..f.order() {
                assert_eq!(f.mul(a, f.inv(a).unwrap()), 1, "GF({q})");
                assert_eq!(f.add(a, f.neg(a)), 0, "GF({q})");
            }
            check_cyclic(&f);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Sampled triples in the fields larger than 128: associativity, commutativity,
        /// distributivity.
        #[test]
        fn large_fields_satisfy_the_axioms(i in 0usize..1000, a in 0u32..1024, b in 0u32..1024, c in 0u32..1024) {
            thread_local! {
                static FIELDS: Vec<Field> = large_fields().into_iter().map(|q| Field::new(q).unwrap()).collect();
            }
            FIELDS.with(|fields| {
                let f = &fields[i % fields.len()];
                let q = f.order();
                let (a, b, c) = (a % q, b % q, c % q);
                prop_assert_eq!(f.add(f.add(a, b), c), f.add(a, f.add(b, c)));
                prop_assert_eq!(f.mul(f.mul(a, b), c), f.mul(a, f.mul(b, c)));
                prop_assert_eq!(f.add(a, b), f.add(b, a));
                prop_assert_eq!(f.mul(a, b), f.mul(b, a));
                prop_assert_eq!(f.mul(a, f.add(b, c)), f.add(f.mul(a, b), f.mul(a, c)));
                prop_assert_eq!(f.sub(f.add(a, b), b), a);
                if b != 0 {
                    prop_assert_eq!(f.mul(f.div(a, b).unwrap(), b), a);
                }
                Ok(())
            })?;
        }
    }
}
