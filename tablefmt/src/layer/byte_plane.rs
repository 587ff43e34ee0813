//! A layer in memory, value and depth in one byte per state (14.8 GB a layer at level 2 of cc3p).
//! 1. A pass that looks up random states of every state's children (the preference rules' census)
//!    would decompress a block of a file per lookup; this decodes each block once.
//! 2. Byte 0 is illegal, 1 a draw, 2 + 2·depth a win and 3 + 2·depth a loss, so depths up to
//!    [`BYTE_PLANE_MAX_DEPTH`] fit (level 2's deepest result is 75 plies).

use super::LayerTable;
use crate::{FormatError, Lookup};
use rayon::prelude::*;

/// The deepest win or loss a byte holds.
pub const BYTE_PLANE_MAX_DEPTH: u16 = 126;

/// States decoded together: whole blocks of the default size.
const CHUNK_STATES: usize = 1 << 20;

/// Every value and depth of a layer in memory, one byte per state.
pub struct BytePlane {
    name: String,
    bytes: Vec<u8>,
}

impl BytePlane {
    /// The plane of `table`, its blocks decoded in parallel. Refused for a table without depths,
    /// and for one holding a result deeper than [`BYTE_PLANE_MAX_DEPTH`] or a draw or illegal
    /// state with a depth.
    pub fn of(table: &LayerTable) -> Result<BytePlane, FormatError> {
        let name = table.name().to_string();
        if !table.has_depths() {
            return Err(FormatError::Corrupt(format!(
                "{name}: holds values only, no depths to hold in memory"
            )));
        }
        let mut bytes = vec![0u8; table.states() as usize];
        bytes
            .par_chunks_mut(CHUNK_STATES)
            .enumerate()
            .try_for_each(|(k, out)| -> Result<(), FormatError> {
                let first = (k * CHUNK_STATES) as u64;
                let mut values = vec![0u8; out.len()];
                let mut depths = vec![0u16; out.len()];
                table.read_states(first, &mut values, &mut depths)?;
                for (i, (o, (&v, &d))) in out.iter_mut().zip(values.iter().zip(&depths)).enumerate()
                {
                    *o = encode(v, d).ok_or_else(|| {
                        FormatError::Corrupt(format!(
                            "{name}: state {} (value {v}, depth {d}) does not fit a byte: wins \
                             and losses up to {BYTE_PLANE_MAX_DEPTH} plies, draws and illegal \
                             states without a depth",
                            first + i as u64
                        ))
                    })?;
                }
                Ok(())
            })?;
        Ok(BytePlane { name, bytes })
    }
}

/// The byte of value code `v` (0 illegal, 1 W, 2 L, 3 D) at depth `d`, if it has one.
fn encode(v: u8, d: u16) -> Option<u8> {
    match (v, d) {
        (0, 0) => Some(0),
        (3, 0) => Some(1),
        (1 | 2, d) if d <= BYTE_PLANE_MAX_DEPTH => Some(2 + 2 * d as u8 + (v - 1)),
        _ => None,
    }
}

/// (value code, depth) of a byte.
#[inline]
fn decode(b: u8) -> (u8, u16) {
    match b {
        0 => (0, 0),
        1 => (3, 0),
        b => (1 + ((b - 2) & 1), u16::from((b - 2) >> 1)),
    }
}

impl Lookup for BytePlane {
    fn states(&self) -> u64 {
        self.bytes.len() as u64
    }

    #[inline]
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        match self.bytes.get(index as usize) {
            Some(&b) => Ok(decode(b)),
            None => Err(FormatError::Corrupt(format!(
                "{}: index {index} out of range (the layer has {} states)",
                self.name,
                self.bytes.len()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_decodes_to_what_it_encodes() {
        let mut seen = std::collections::HashSet::new();
        for v in 0..4u8 {
            for d in 0..=300u16 {
                if let Some(b) = encode(v, d) {
                    assert_eq!(decode(b), (v, d));
                    assert!(seen.insert(b), "two results share byte {b}");
                }
            }
        }
        assert_eq!(seen.len(), 256, "every byte is used");
        assert_eq!(encode(1, BYTE_PLANE_MAX_DEPTH + 1), None);
        assert_eq!(encode(3, 1), None);
    }
}
