//! Compact encodings for what crosses the wire: predecessor updates, shard values and depths.
//! 1. Updates (`index << 1 | child_is_win`) travel in sorted batches, so a chunk is the varints of
//!    the differences between consecutive values, zstd-compressed when that saves an eighth.
//! 2. Values travel four to a byte (a finished value is 2 bits), depths as two bytes each.

use kingmaker_proto::v1::{DataChunk, Encoding, UpdateChunk};
use kingmaker_tablefmt::layer::{pack_values, unpack_values};
use std::cell::RefCell;

/// Updates per [`UpdateChunk`]: at most 320 KiB of varints per message.
pub const CHUNK_UPDATES: usize = 1 << 15;
/// Bytes per [`DataChunk`] before compression.
pub const CHUNK_BYTES: usize = 1 << 20;
/// Below this many encoded bytes, compression is not tried.
const COMPRESS_FROM: usize = 512;
/// zstd level: the fastest regular level; the data is either very regular or not worth more.
const ZSTD_LEVEL: i32 = 1;

/// What was wrong with a message.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The chunk's bytes do not parse.
    #[error("malformed update chunk: {0}")]
    Malformed(&'static str),
    /// The chunk holds another number of updates than it announces.
    #[error("update chunk announces {announced} updates but holds {found}")]
    Count {
        /// Updates announced.
        announced: usize,
        /// Updates found.
        found: usize,
    },
    /// An encoding this build does not know.
    #[error("unknown update encoding {0}")]
    Encoding(i32),
    /// The zstd stream is damaged.
    #[error("zstd: {0}")]
    Zstd(std::io::Error),
}

/// Append the delta-varint encoding of `values` to `out` (protobuf's varints, from prost), the
/// first from 0. Differences wrap, so an unsorted batch still round-trips (it just encodes worse).
pub fn encode_deltas(values: &[u64], out: &mut Vec<u8>) {
    let mut previous = 0u64;
    for &v in values {
        prost::encoding::encode_varint(v.wrapping_sub(previous), out);
        previous = v;
    }
}

/// Decode exactly `count` delta varints.
pub fn decode_deltas(mut data: &[u8], count: usize) -> Result<Vec<u64>, WireError> {
    let mut values = Vec::with_capacity(count.min(data.len()));
    let mut previous = 0u64;
    while !data.is_empty() {
        let d = prost::encoding::decode_varint(&mut data)
            .map_err(|_| WireError::Malformed("a varint truncated or longer than 64 bits"))?;
        previous = previous.wrapping_add(d);
        values.push(previous);
    }
    if values.len() != count {
        return Err(WireError::Count {
            announced: count,
            found: values.len(),
        });
    }
    Ok(values)
}

thread_local! {
    // One zstd context per thread, made once rather than per message.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// `raw` zstd-compressed at [`ZSTD_LEVEL`] with this thread's context.
fn compress(raw: &[u8]) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with_borrow_mut(|c| match c {
        Some(c) => c.compress(raw),
        None => c
            .insert(zstd::bulk::Compressor::new(ZSTD_LEVEL)?)
            .compress(raw),
    })
}

/// A zstd frame of at most `capacity` bytes decompressed with this thread's context.
fn decompress(data: &[u8], capacity: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with_borrow_mut(|d| match d {
        Some(d) => d.decompress(data, capacity),
        None => d
            .insert(zstd::bulk::Decompressor::new()?)
            .decompress(data, capacity),
    })
}

/// Compress `raw` when that saves at least an eighth of it.
fn maybe_compress(raw: Vec<u8>) -> (bool, Vec<u8>) {
    if raw.len() >= COMPRESS_FROM {
        if let Ok(packed) = compress(&raw) {
            if packed.len() <= raw.len() - raw.len() / 8 {
                return (true, packed);
            }
        }
    }
    (false, raw)
}

/// One chunk of updates (at most [`CHUNK_UPDATES`] of them), its header fields left empty.
pub fn encode_updates(values: &[u64]) -> UpdateChunk {
    let mut raw = Vec::with_capacity(values.len() * 3);
    encode_deltas(values, &mut raw);
    let (zstd, data) = maybe_compress(raw);
    let encoding = if zstd {
        Encoding::DeltaVarintZstd
    } else {
        Encoding::DeltaVarint
    };
    UpdateChunk {
        count: values.len() as u32,
        encoding: encoding as i32,
        data,
        ..Default::default()
    }
}

/// The updates of one chunk.
pub fn decode_updates(chunk: &UpdateChunk) -> Result<Vec<u64>, WireError> {
    let count = chunk.count as usize;
    if count > CHUNK_UPDATES {
        return Err(WireError::Malformed(
            "more updates in one chunk than the protocol allows",
        ));
    }
    match Encoding::try_from(chunk.encoding) {
        Ok(Encoding::DeltaVarint) => decode_deltas(&chunk.data, count),
        Ok(Encoding::DeltaVarintZstd) => {
            // A varint of a u64 takes at most 10 bytes: bound the output by what `count` allows.
            let raw = decompress(&chunk.data, count * 10).map_err(WireError::Zstd)?;
            decode_deltas(&raw, count)
        }
        _ => Err(WireError::Encoding(chunk.encoding)),
    }
}

/// Cut a byte array into compressed-when-it-pays chunks.
pub fn pack_bytes(raw: &[u8]) -> Vec<DataChunk> {
    raw.chunks(CHUNK_BYTES)
        .map(|piece| {
            let (zstd, data) = maybe_compress(piece.to_vec());
            DataChunk { zstd, data }
        })
        .collect()
}

/// The bytes of one chunk made by [`pack_bytes`].
pub fn unpack_bytes(chunk: DataChunk) -> Result<Vec<u8>, WireError> {
    if chunk.zstd {
        decompress(&chunk.data, CHUNK_BYTES).map_err(WireError::Zstd)
    } else if chunk.data.len() > CHUNK_BYTES {
        Err(WireError::Malformed(
            "data chunk larger than the protocol allows",
        ))
    } else {
        Ok(chunk.data)
    }
}

/// The chunks of a shard's values, four to a byte.
pub fn encode_values(values: &[u8]) -> Vec<DataChunk> {
    let mut packed = Vec::with_capacity(values_len(values.len()));
    pack_values(values, &mut packed);
    pack_bytes(&packed)
}

/// The chunks of a shard's depths, two little-endian bytes each.
pub fn encode_depth(depth: &[u16]) -> Vec<DataChunk> {
    let bytes: Vec<u8> = depth.iter().flat_map(|d| d.to_le_bytes()).collect();
    pack_bytes(&bytes)
}

/// Bytes of the values of `states` states, once their chunks are reassembled.
pub fn values_len(states: usize) -> usize {
    states.div_ceil(4)
}

/// Bytes of the depths of `states` states, once their chunks are reassembled.
pub fn depth_len(states: usize) -> usize {
    2 * states
}

/// The values of `states` states from their reassembled bytes ([`values_len`] of them).
pub fn decode_values(bytes: &[u8], states: usize) -> Vec<u8> {
    unpack_values(bytes, states)
}

/// The depths from their reassembled bytes.
pub fn decode_depth(bytes: &[u8]) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn updates_round_trip(mut values in proptest::collection::vec(any::<u64>(), 0..3000), sort in any::<bool>()) {
            if sort {
                values.sort_unstable();
            }
            let chunk = encode_updates(&values);
            prop_assert_eq!(decode_updates(&chunk).unwrap(), values);
        }

        #[test]
        fn bytes_round_trip(raw in proptest::collection::vec(0u8..4, 0..5000)) {
            let mut back = Vec::new();
            for chunk in pack_bytes(&raw) {
                back.extend(unpack_bytes(chunk).unwrap());
            }
            prop_assert_eq!(back, raw);
        }
    }

    /// Reassemble chunks as the coordinator does.
    fn reassemble(chunks: Vec<DataChunk>) -> Vec<u8> {
        chunks
            .into_iter()
            .flat_map(|c| unpack_bytes(c).unwrap())
            .collect()
    }

    proptest! {
        #[test]
        fn shard_arrays_round_trip(values in proptest::collection::vec(0u8..4, 0..5000), seed in any::<u16>()) {
            let bytes = reassemble(encode_values(&values));
            prop_assert_eq!(bytes.len(), values_len(values.len()));
            prop_assert_eq!(decode_values(&bytes, values.len()), values.clone());
            let depth: Vec<u16> = (0..values.len() as u16).map(|i| i.wrapping_mul(seed)).collect();
            let bytes = reassemble(encode_depth(&depth));
            prop_assert_eq!(bytes.len(), depth_len(depth.len()));
            prop_assert_eq!(decode_depth(&bytes), depth);
        }
    }

    #[test]
    fn dense_sorted_updates_are_small() {
        let values: Vec<u64> = (0..20_000u64).map(|i| (i * 37) << 1 | (i & 1)).collect();
        let chunk = encode_updates(&values);
        assert!(
            chunk.data.len() < values.len(),
            "{} bytes for {} updates",
            chunk.data.len(),
            values.len()
        );
        assert_eq!(decode_updates(&chunk).unwrap(), values);
    }

    #[test]
    fn malformed_chunks_are_refused() {
        let mut chunk = encode_updates(&[1, 2, 3]);
        chunk.count = 4;
        assert!(decode_updates(&chunk).is_err());
        let bad = UpdateChunk {
            count: 1,
            encoding: Encoding::DeltaVarint as i32,
            data: vec![0x80],
            ..Default::default()
        };
        assert!(decode_updates(&bad).is_err());
        let eleven = UpdateChunk {
            count: 1,
            encoding: Encoding::DeltaVarint as i32,
            data: vec![0xFF; 11],
            ..Default::default()
        };
        assert!(decode_updates(&eleven).is_err());
        let unknown = UpdateChunk {
            count: 0,
            encoding: 0,
            data: vec![],
            ..Default::default()
        };
        assert!(decode_updates(&unknown).is_err());
        let zip = UpdateChunk {
            count: 2,
            encoding: Encoding::DeltaVarintZstd as i32,
            data: vec![1, 2, 3],
            ..Default::default()
        };
        assert!(decode_updates(&zip).is_err());
    }
}
