//! A layer's sha256 computed part by part, where each part is held by a different process: the
//! hash state after a prefix whose length is a multiple of 64 bytes (one sha256 block) is handed
//! to whoever holds the next part, which goes on from it. The digest is the same as the sha256
//! of the whole byte stream, so a layer kept in parts on its workers keeps today's digest
//! (docs/format.md, "The digest of a layer in parts").

use serde::{Deserialize, Serialize};
use sha2::digest::generic_array::GenericArray;

/// sha256's initial hash value (FIPS 180-4, 5.3.3).
const INITIAL: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The sha256 state after `bytes` bytes of a stream, `bytes` a multiple of 64: what one part
/// hands to the next (40 bytes; JSON `{"words": [...], "bytes": N}`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChainedDigest {
    /// The eight 32-bit words of the hash state.
    pub words: [u32; 8],
    /// Bytes hashed so far.
    pub bytes: u64,
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
        }
    }

    /// Go on with `data`, whose length must be a multiple of 64 (a part that is not the last).
    pub fn update(&mut self, data: &[u8]) {
        assert!(
            data.len().is_multiple_of(64),
            "a part handed on must be whole sha256 blocks: {} bytes",
            data.len()
        );
        let blocks: Vec<GenericArray<u8, _>> = data
            .chunks_exact(64)
            .map(GenericArray::clone_from_slice)
            .collect();
        sha2::compress256(&mut self.words, &blocks);
        self.bytes += data.len() as u64;
    }

    /// The sha256 of the whole stream, `tail` (any length) its last bytes, as 64 hex digits.
    pub fn finish(mut self, tail: &[u8]) -> String {
        let whole = tail.len() - tail.len() % 64;
        self.update(&tail[..whole]);
        let total_bits = (self.bytes + (tail.len() - whole) as u64) * 8;
        // The padding: 0x80, zeros up to 56 mod 64, the length in bits, big-endian.
        let mut last = tail[whole..].to_vec();
        last.push(0x80);
        while last.len() % 64 != 56 {
            last.push(0);
        }
        last.extend_from_slice(&total_bits.to_be_bytes());
        let blocks: Vec<GenericArray<u8, _>> = last
            .chunks_exact(64)
            .map(GenericArray::clone_from_slice)
            .collect();
        sha2::compress256(&mut self.words, &blocks);
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
            assert_eq!(
                ChainedDigest::start().finish(&data[..n]),
                sha256(&data[..n]),
                "{n}"
            );
        }
    }

    proptest! {
        /// Cut anywhere at whole blocks, the state passed on as JSON (as between processes):
        /// the digest of the whole.
        #[test]
        fn parts_chained_give_the_digest_of_the_whole(
            data in proptest::collection::vec(any::<u8>(), 0..2000),
            cuts in proptest::collection::vec(0usize..32, 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| (c * 64).min(data.len() - data.len() % 64)).collect();
            cuts.sort_unstable();
            let mut state = ChainedDigest::start();
            let mut from = 0;
            for c in cuts {
                state.update(&data[from..c]);
                let handed = serde_json::to_string(&state).unwrap();
                state = serde_json::from_str(&handed).unwrap();
                from = c;
            }
            prop_assert_eq!(state.finish(&data[from..]), sha256(&data));
        }
    }
}
