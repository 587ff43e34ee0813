//! Update buckets (`shard-SSSSS.updates`, version 1): a shard's held-back predecessor updates.
//! 1. A bucket lives only while a wave runs: the close applies and deletes it, and a resumed run
//!    deletes any it finds (their wave is being redone), so the file has no header.
//! 2. Frames of sorted, delta-encoded LEB128 codes, crc-checked: docs/format.md, "Update buckets".

use crate::FormatError;

/// Version of the bucket layout in docs/format.md (the file carries no header: a change means
/// new file names).
pub const UPDATE_BUCKET_VERSION: u32 = 1;
/// Bytes of a frame header: count, payload length, crc32, encoding.
pub const FRAME_HEADER: usize = 16;
const RAW: u32 = 0;
const ZSTD: u32 = 1;
/// zstd level: the fastest regular one (the sorted varints are regular or not worth more).
const ZSTD_LEVEL: i32 = 1;

/// Append the frame of `codes` (sorted here) to `out`.
pub fn encode_frame(codes: &mut [u32], out: &mut Vec<u8>) -> std::io::Result<()> {
    radsort::sort(codes);
    let mut varints = Vec::with_capacity(codes.len() * 2);
    let mut previous = 0;
    for &code in codes.iter() {
        prost::encoding::encode_varint((code - previous) as u64, &mut varints);
        previous = code;
    }
    let packed = zstd::bulk::compress(&varints, ZSTD_LEVEL)?;
    let (encoding, payload) = if packed.len() < varints.len() - varints.len() / 8 {
        (ZSTD, packed)
    } else {
        (RAW, varints)
    };
    let (count, len) = (codes.len() as u32, payload.len() as u32);
    for word in [count, len, crc(count, len, encoding, &payload), encoding] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&payload);
    Ok(())
}

/// The frame's crc32: its header fields and payload, so a damaged count or encoding is caught too.
fn crc(count: u32, len: u32, encoding: u32, payload: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    for word in [count, len, encoding] {
        hasher.update(&word.to_le_bytes());
    }
    hasher.update(payload);
    hasher.finalize()
}

/// The most updates a frame may announce: writers spill far sooner, and the bound keeps a forged
/// header from asking a reader for gigabytes.
pub const MAX_FRAME_UPDATES: u32 = 1 << 26;

/// Call `f` on the codes of every frame of a bucket read from `reader`, in order, one frame in
/// memory at a time, each frame's crc32 and count checked first; stops at the first error.
/// `name` names the bucket in errors.
pub fn each_frame<E: From<FormatError>>(
    mut reader: impl std::io::Read,
    name: &str,
    mut f: impl FnMut(&[u32]) -> Result<(), E>,
) -> Result<(), E> {
    use std::io::Read;
    let corrupt = |what: String| FormatError::Corrupt(format!("update bucket {name}: {what}"));
    let io = |e: std::io::Error| corrupt(format!("reading: {e}"));
    let (mut codes, mut payload, mut unpacked) = (Vec::new(), Vec::new(), Vec::new());
    let mut at = 0u64;
    loop {
        let mut header = [0u8; FRAME_HEADER];
        let got = (&mut reader)
            .take(FRAME_HEADER as u64)
            .read(&mut header)
            .map_err(io)?;
        if got == 0 {
            return Ok(());
        }
        if got < FRAME_HEADER {
            reader
                .read_exact(&mut header[got..])
                .map_err(|_| corrupt("truncated frame header".into()))?;
        }
        let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
        let (count, len, expected, encoding) = (word(0), word(4), word(8), word(12));
        if count > MAX_FRAME_UPDATES {
            return Err(corrupt(format!("a frame announces {count} updates")).into());
        }
        payload.clear();
        (&mut reader)
            .take(len as u64)
            .read_to_end(&mut payload)
            .map_err(io)?;
        if payload.len() < len as usize {
            return Err(corrupt("truncated frame".into()).into());
        }
        if crc(count, len, encoding, &payload) != expected {
            return Err(corrupt(format!("the frame at byte {at} fails its crc32")).into());
        }
        let count = count as usize;
        let mut varints = match encoding {
            RAW => &payload[..],
            ZSTD => {
                // The varint of a u32 takes at most 5 bytes: more output is damage.
                let most = 5 * count as u64;
                unpacked.clear();
                zstd::stream::read::Decoder::new(&payload[..])
                    .map_err(io)?
                    .take(most + 1)
                    .read_to_end(&mut unpacked)
                    .map_err(|e| corrupt(format!("zstd: {e}")))?;
                if unpacked.len() as u64 > most {
                    return Err(corrupt("a zstd frame of the wrong size".into()).into());
                }
                &unpacked[..]
            }
            other => return Err(corrupt(format!("unknown encoding {other}")).into()),
        };
        codes.clear();
        let mut previous = 0u32;
        while !varints.is_empty() {
            let d = prost::encoding::decode_varint(&mut varints)
                .map_err(|_| corrupt("a varint truncated or longer than 64 bits".into()))?;
            previous = u32::try_from(d)
                .ok()
                .and_then(|d| previous.checked_add(d))
                .ok_or_else(|| corrupt("a code past 2^32".into()))?;
            codes.push(previous);
        }
        if codes.len() != count {
            return Err(corrupt(format!(
                "a frame announces {count} updates but holds {}",
                codes.len()
            ))
            .into());
        }
        f(&codes)?;
        at += (FRAME_HEADER + payload.len()) as u64;
    }
}

/// File name of shard `shard`'s bucket in a worker's directory for the layer.
pub fn file_name(shard: usize) -> String {
    format!("shard-{shard:05}.updates")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode(bytes: &[u8]) -> Result<Vec<Vec<u32>>, FormatError> {
        let mut frames = Vec::new();
        each_frame(bytes, "b", |codes| {
            frames.push(codes.to_vec());
            Ok::<_, FormatError>(())
        })?;
        Ok(frames)
    }

    proptest! {
        /// Frames come back sorted, duplicates kept, whatever the encoding chosen.
        #[test]
        fn frames_round_trip(frames in prop::collection::vec(
            prop::collection::vec(any::<u32>(), 0..3000), 0..4)) {
            let mut bytes = Vec::new();
            for frame in &frames {
                encode_frame(&mut frame.clone(), &mut bytes).unwrap();
            }
            let back = decode(&bytes).unwrap();
            let sorted: Vec<Vec<u32>> = frames.iter().map(|f| {
                let mut f = f.clone();
                f.sort_unstable();
                f
            }).collect();
            prop_assert_eq!(back, sorted);
        }

        /// Damage anywhere is an error, never other updates.
        #[test]
        fn damage_is_caught(flip in 0usize..10_000, bit in 0u8..8) {
            let mut codes: Vec<u32> = (0..2000).map(|i| i * 37 % 5003).collect();
            let mut bytes = Vec::new();
            encode_frame(&mut codes, &mut bytes).unwrap();
            let at = flip % bytes.len();
            bytes[at] ^= 1 << bit;
            prop_assert!(decode(&bytes).is_err(), "damage at byte {} went unnoticed", at);
        }
    }

    #[test]
    fn dense_updates_compress_and_truncation_is_named() {
        let mut codes: Vec<u32> = (0..100_000).map(|i| (i * 7919) % 200_000).collect();
        let mut bytes = Vec::new();
        encode_frame(&mut codes, &mut bytes).unwrap();
        assert!(bytes.len() < 100_000, "{} bytes", bytes.len());
        let e = decode(&bytes[..bytes.len() - 1]).unwrap_err().to_string();
        assert!(e.contains("update bucket b: truncated frame"), "{e}");
        let e = decode(&bytes[..5]).unwrap_err().to_string();
        assert!(e.contains("truncated frame header"), "{e}");
    }
}
