//! Depth codes: a cheap, rule-free way to store depths in fewer bits (docs/format.md, "Blocks").
//! 1. Where the index gives the mover with a period M, a won line's length is fixed modulo M, so
//!    the classes `(index % M, value)` whose depths share a residue store about `depth / M`.
//! 2. [`DepthCodeFinder`] finds them in the data and the header carries them: no game is needed.

use crate::FormatError;

/// "No residue": the class stores plain depths.
pub const NONE: u8 = 0xFF;
/// Largest modulus the header can describe.
pub const MAX_MODULUS: u8 = 8;
/// Size of the depth code in the layer header: modulus, reserved byte, 8 × 4 residues.
pub const DEPTH_CODE_LEN: usize = 2 + 32;

/// The depth transform of one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DepthCode {
    /// 1 (no transform) to [`MAX_MODULUS`].
    pub modulus: u8,
    /// `residue[index % modulus][value]`, or [`NONE`].
    pub residue: [[u8; 4]; 8],
}

impl DepthCode {
    /// Depths stored as they are.
    pub fn plain() -> DepthCode {
        DepthCode {
            modulus: 1,
            residue: [[NONE; 4]; 8],
        }
    }

    /// No depth class coded, the modulus naming the index's period alone (encoding 3 groups a
    /// values-only file's states by it).
    pub fn period(modulus: u8) -> DepthCode {
        DepthCode {
            modulus,
            residue: [[NONE; 4]; 8],
        }
    }

    /// Whether every class stores plain depths (`encode` and `decode` are the identity).
    pub fn is_plain(&self) -> bool {
        self.residue.iter().flatten().all(|&r| r == NONE)
    }

    #[inline]
    fn class(&self, index: u64, value: u8) -> u8 {
        // Modulus 1 (a run's own tables) skips the 64-bit division: it runs once per state.
        let row = if self.modulus == 1 {
            0
        } else {
            (index % self.modulus as u64) as usize
        };
        self.residue[row][(value & 3) as usize]
    }

    /// The code stored for `depth`. `depth` must be 0 or congruent to the class residue (the
    /// finder guarantees it for the data it saw).
    #[inline]
    pub fn encode(&self, index: u64, value: u8, depth: u16) -> u16 {
        let r = self.class(index, value);
        let m = self.modulus as u16;
        match (r, depth) {
            (NONE, d) => d,
            (_, 0) => 0,
            (0, d) => d / m,
            (r, d) => (d - r as u16) / m + 1,
        }
    }

    /// Whether `depth` can be encoded in its class (`decode(encode(d)) == d`).
    pub fn fits(&self, index: u64, value: u8, depth: u16) -> bool {
        let r = self.class(index, value);
        r == NONE || depth == 0 || depth % self.modulus as u16 == r as u16
    }

    /// The depth a stored `code` stands for (the inverse of [`Self::encode`]).
    #[inline]
    pub fn decode(&self, index: u64, value: u8, code: u16) -> u16 {
        let r = self.class(index, value);
        let m = self.modulus as u16;
        match (r, code) {
            (NONE, c) => c,
            (_, 0) => 0,
            (0, c) => c.wrapping_mul(m),
            (r, c) => (c - 1).wrapping_mul(m).wrapping_add(r as u16),
        }
    }

    /// The code as stored in the layer header ([`DEPTH_CODE_LEN`] bytes).
    pub fn to_bytes(&self) -> [u8; DEPTH_CODE_LEN] {
        let mut out = [0u8; DEPTH_CODE_LEN];
        out[0] = self.modulus;
        for (row, r) in self.residue.iter().enumerate() {
            out[2 + 4 * row..6 + 4 * row].copy_from_slice(r);
        }
        out
    }

    /// Parse and check: modulus 1..=8, residues below the modulus, unused rows all [`NONE`].
    pub fn parse(bytes: &[u8], name: &str) -> Result<DepthCode, FormatError> {
        let bad = |what: String| Err(FormatError::Corrupt(format!("{name}: depth code: {what}")));
        let modulus = bytes[0];
        if !(1..=MAX_MODULUS).contains(&modulus) || bytes[1] != 0 {
            return bad(format!("modulus {modulus} (must be 1 to {MAX_MODULUS})"));
        }
        let mut residue = [[NONE; 4]; 8];
        for (row, r) in residue.iter_mut().enumerate() {
            r.copy_from_slice(&bytes[2 + 4 * row..6 + 4 * row]);
            for &x in r.iter() {
                let unused = row >= modulus as usize || modulus == 1;
                if x != NONE && (unused || x >= modulus) {
                    return bad(format!("residue {x} in row {row} with modulus {modulus}"));
                }
            }
        }
        Ok(DepthCode { modulus, residue })
    }
}

/// Finds the best depth code for a layer from its data (one pass, in index order or not).
pub struct DepthCodeFinder {
    /// For each candidate modulus `m` (index `m - 2`): per class, a bitmask of the residues seen
    /// among non-zero depths and the number of such states.
    seen: Vec<[[(u8, u64); 4]; 8]>,
}

/// Moduli tried: 2 to this.
const MAX_TRIED: u8 = 4;

impl Default for DepthCodeFinder {
    fn default() -> DepthCodeFinder {
        DepthCodeFinder {
            seen: vec![[[(0, 0); 4]; 8]; (MAX_TRIED - 1) as usize],
        }
    }
}

impl DepthCodeFinder {
    /// Account for states `first ..` with these values and depths.
    pub fn add(&mut self, first: u64, values: &[u8], depth: &[u16]) {
        for (k, seen) in self.seen.iter_mut().enumerate() {
            let m = k as u64 + 2;
            let mut row = (first % m) as usize;
            for (&v, &d) in values.iter().zip(depth) {
                if d != 0 {
                    let e = &mut seen[row][(v & 3) as usize];
                    e.0 |= 1 << (d as u64 % m);
                    e.1 += 1;
                }
                row += 1;
                if row == m as usize {
                    row = 0;
                }
            }
        }
    }

    /// The modulus that predicts the most states, with its residues (plain if none helps).
    pub fn finish(&self) -> DepthCode {
        let mut best = (0u64, DepthCode::plain());
        for (k, seen) in self.seen.iter().enumerate() {
            let m = k as u8 + 2;
            let mut code = DepthCode {
                modulus: m,
                residue: [[NONE; 4]; 8],
            };
            let mut predicted = 0;
            for (row, classes) in seen.iter().enumerate().take(m as usize) {
                for (v, &(mask, n)) in classes.iter().enumerate() {
                    if mask.count_ones() == 1 {
                        code.residue[row][v] = mask.trailing_zeros() as u8;
                        predicted += n;
                    }
                }
            }
            if predicted > best.0 {
                best = (predicted, code);
            }
        }
        best.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_shrink_predicted_depths() {
        // Period 3; value 1 at row 0 always has depth ≡ 1 (mod 3), value 2 at row 1 ≡ 0.
        let mut values = Vec::new();
        let mut depth = Vec::new();
        for i in 0..3000u64 {
            let (v, d) = match i % 3 {
                0 => (
                    1,
                    if i % 7 == 0 {
                        0
                    } else {
                        1 + 3 * (i % 11) as u16
                    },
                ),
                1 => (2, 3 * (i % 13) as u16),
                _ => (2, (i % 17) as u16),
            };
            values.push(v);
            depth.push(d);
        }
        let mut f = DepthCodeFinder::default();
        f.add(0, &values[..1000], &depth[..1000]);
        f.add(1000, &values[1000..], &depth[1000..]);
        let code = f.finish();
        assert_eq!(code.modulus, 3);
        assert_eq!(code.residue[0][1], 1);
        assert_eq!(code.residue[1][2], 0);
        assert_eq!(code.residue[2][2], NONE);
        for (i, (&v, &d)) in values.iter().zip(&depth).enumerate() {
            let i = i as u64;
            assert!(code.fits(i, v, d));
            let c = code.encode(i, v, d);
            assert_eq!(code.decode(i, v, c), d);
            if i % 3 != 2 {
                assert!(c <= d / 3 + 1);
            }
        }
        assert_eq!(DepthCode::parse(&code.to_bytes(), "x").unwrap(), code);
        let mut bad = code.to_bytes();
        bad[0] = 9;
        assert!(DepthCode::parse(&bad, "x").is_err());
        let mut bad = code.to_bytes();
        bad[2 + 4 * 5] = 0;
        assert!(DepthCode::parse(&bad, "x").is_err());
    }

    #[test]
    fn no_pattern_means_plain() {
        let values = vec![1u8; 100];
        let depth: Vec<u16> = (0..100u64)
            .map(|i| ((i * i * 31 + 7 * i + 5) % 29) as u16 + 1)
            .collect();
        let mut f = DepthCodeFinder::default();
        f.add(0, &values, &depth);
        assert_eq!(f.finish(), DepthCode::plain());
    }
}
