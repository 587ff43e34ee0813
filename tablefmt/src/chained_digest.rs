//! A layer's sha256 computed part by part, where each part is held by a different process: the
//! hash state after a prefix (the eight words after its whole 64-byte blocks, and the bytes of a
//! last partial block not yet compressed) is handed to whoever holds the next part, which goes on
//! from it. The digest is the same as the sha256 of the whole byte stream, so a layer kept in
//! parts on its workers keeps today's digest (docs/format.md, "The digest of a layer in parts").

use serde::{Deserialize, Serialize};
use sha2::digest::generic_array::GenericArray;

/// sha256's initial hash value (FIPS 180-4, 5.3.3).
const INITIAL: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The sha256 state after some bytes of a stream: what one part hands to the next (at most 104
/// bytes; JSON `{"words": [...], "bytes": N, "pending": [...]}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainedDigest {
    /// The eight 32-bit words of the hash state after the whole blocks.
    pub words: [u32; 8],
    /// Bytes compressed into `words` (a multiple of 64).
    pub bytes: u64,
    /// The bytes after them, fewer than 64: the start of the next block.
    #[serde(default)]
    pub pending: Vec<u8>,
}

impl Default for ChainedDigest {
    fn default() -> Self {
        ChainedDigest::start()
    }
}

impl ChainedDigest {
    /// The state before any byte.
    pub fn start() -> ChainedDigest {
        ChainedDigest {
            words: INITIAL,
            bytes: 0,
            pending: Vec::new(),
        }
    }

    /// A state handed over by another process, checked: `bytes` whole blocks, fewer than 64
    /// bytes pending.
    pub fn checked(self) -> Result<ChainedDigest, String> {
        if !self.bytes.is_multiple_of(64) || self.pending.len() >= 64 {
            return Err(format!(
                "not a sha256 state: {} bytes compressed (must be whole 64-byte blocks), {} pending (must be fewer than 64)",
                self.bytes,
                self.pending.len()
            ));
        }
        Ok(self)
    }

    /// Bytes of the stream so far.
    pub fn len(&self) -> u64 {
        self.bytes + self.pending.len() as u64
    }

    /// Whether no byte was hashed yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Go on with `data`, of any length.
    pub fn update(&mut self, mut data: &[u8]) {
        if !self.pending.is_empty() {
            let k = (64 - self.pending.len()).min(data.len());
            self.pending.extend_from_slice(&data[..k]);
            data = &data[k..];
            if self.pending.len() < 64 {
                return;
            }
            let block = std::mem::take(&mut self.pending);
            self.compress(&block);
        }
        let whole = data.len() - data.len() % 64;
        self.compress(&data[..whole]);
        self.pending.extend_from_slice(&data[whole..]);
    }

    fn compress(&mut self, blocks: &[u8]) {
        let blocks: Vec<GenericArray<u8, _>> = blocks
            .chunks_exact(64)
            .map(GenericArray::clone_from_slice)
            .collect();
        sha2::compress256(&mut self.words, &blocks);
        self.bytes += 64 * blocks.len() as u64;
    }

    /// The sha256 of the whole stream, as 64 hex digits.
    pub fn finish(mut self) -> String {
        let total_bits = self.len() * 8;
        // The padding: 0x80, zeros up to 56 mod 64, the length in bits, big-endian.
        let mut last = std::mem::take(&mut self.pending);
        last.push(0x80);
        while last.len() % 64 != 56 {
            last.push(0);
        }
        last.extend_from_slice(&total_bits.to_be_bytes());
        self.compress(&last);
        self.words.iter().map(|w| format!("{w:08x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sha2::{Digest, Sha256};

    fn sha256(data: &[u8]) -> String {
        hex::encode(Sha256::digest(data))
    }

    #[test]
    fn the_tails_around_the_padding_boundary_give_sha256() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for n in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 300] {
            let mut state = ChainedDigest::start();
            state.update(&data[..n]);
            assert_eq!(state.finish(), sha256(&data[..n]), "{n}");
        }
    }

    proptest! {
        /// Cut anywhere, the state passed on as JSON (as between processes): the digest of the
        /// whole.
        #[test]
        fn parts_chained_give_the_digest_of_the_whole(
            data in proptest::collection::vec(any::<u8>(), 0..2000),
            cuts in proptest::collection::vec(0usize..32, 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| (c * 37).min(data.len())).collect();
            cuts.sort_unstable();
            let mut state = ChainedDigest::start();
            let mut from = 0;
            for c in cuts {
                state.update(&data[from..c]);
                let handed = serde_json::to_string(&state).unwrap();
                state = serde_json::from_str::<ChainedDigest>(&handed).unwrap().checked().unwrap();
                from = c;
            }
            state.update(&data[from..]);
            prop_assert_eq!(state.finish(), sha256(&data));
        }
    }
}
