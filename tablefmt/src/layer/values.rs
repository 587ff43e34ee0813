//! Every value of a layer in memory, 2 bits per state.

use super::pack_values;

/// All values of a layer in memory, 2 bits per state (3.7 GB for the 14.8 billion states of
/// level 2 of cc3p).
pub struct ValuesPlane {
    states: u64,
    bytes: Vec<u8>,
}

impl ValuesPlane {
    /// The plane of `states` states from its packed bytes (four states a byte, the first in the
    /// low bits).
    pub(super) fn from_packed(states: u64, bytes: Vec<u8>) -> ValuesPlane {
        ValuesPlane { states, bytes }
    }

    /// A plane from values (0..=3) in index order.
    pub fn from_values(values: &[u8]) -> ValuesPlane {
        let mut bytes = Vec::with_capacity(values.len().div_ceil(4));
        pack_values(values, &mut bytes);
        ValuesPlane {
            states: values.len() as u64,
            bytes,
        }
    }

    /// Number of states in the plane.
    pub fn states(&self) -> u64 {
        self.states
    }

    /// The value of state `index` (< states).
    #[inline]
    pub fn get(&self, index: u64) -> u8 {
        (self.bytes[(index / 4) as usize] >> (2 * (index % 4))) & 3
    }
}
