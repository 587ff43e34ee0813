//! Wave logs (`shard-SSSSS.waves`, version 1): which states of a shard each closed wave decided.
//! 1. The finished table's depths are rebuilt from them: no depth is kept per state while solving.
//! 2. Append-only: a checkpoint records a log's length and crc32, a resume cuts it back to them.
//!    Every byte: docs/format.md, "Wave logs"; `kernel/src/wave_log.rs` keeps the logs.

/// Version of the wave-log layout in docs/format.md (the file carries no header: a change means
/// new file names).
pub const WAVE_LOG_VERSION: u32 = 1;
/// Bytes of a frame header: wave, payload length, payload crc32.
pub const FRAME_HEADER: usize = 12;
/// zstd level of the bitmaps: fast, the log is written while the workers wait.
pub const ZSTD_LEVEL: i32 = 1;

/// The frame of one closed wave: `bitmap` holds the shard's states decided in `wave`.
pub fn encode_frame(wave: u32, bitmap: &[u64]) -> std::io::Result<Vec<u8>> {
    let payload = if bitmap.iter().all(|&w| w == 0) {
        Vec::new()
    } else {
        // Word by word: a byte-by-byte iterator costs more than the compression.
        let mut bytes = Vec::with_capacity(8 * bitmap.len());
        for w in bitmap {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        zstd::bulk::compress(&bytes, ZSTD_LEVEL)?
    };
    let mut frame = Vec::with_capacity(FRAME_HEADER + payload.len());
    frame.extend_from_slice(&wave.to_le_bytes());
    frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    frame.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    frame.extend_from_slice(&payload);
    Ok(frame)
}

/// Call `f` on every frame of a log in order, with its wave and bitmap of `words` words (an empty
/// slice for an empty payload: the wave decided none of the shard's states), each frame's crc32
/// checked first. One buffer serves every frame. The error says what is wrong (the caller names
/// the log).
pub fn each_frame(
    bytes: &[u8],
    words: usize,
    mut f: impl FnMut(u32, &[u64]),
) -> Result<(), String> {
    let mut bitmap = vec![0u64; words];
    let mut zstd = zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?;
    let mut at = 0;
    while at < bytes.len() {
        if bytes.len() - at < FRAME_HEADER {
            return Err("truncated frame header".into());
        }
        let word =
            |i: usize| u32::from_le_bytes(bytes[at + i..at + i + 4].try_into().expect("4 bytes"));
        let (wave, len, crc) = (word(0), word(4) as usize, word(8));
        let payload = bytes
            .get(at + FRAME_HEADER..at + FRAME_HEADER + len)
            .ok_or("truncated frame")?;
        if crc32fast::hash(payload) != crc {
            return Err(format!("frame of wave {wave} fails its crc32"));
        }
        if payload.is_empty() {
            f(wave, &[]);
        } else {
            // SAFETY: any bytes are a valid u64; the view covers exactly the buffer.
            let raw = unsafe {
                std::slice::from_raw_parts_mut(bitmap.as_mut_ptr() as *mut u8, words * 8)
            };
            let got = zstd
                .decompress_to_buffer(payload, raw)
                .map_err(|e| format!("zstd: {e}"))?;
            if got != words * 8 {
                return Err(format!(
                    "frame of wave {wave} holds {got} bytes of bitmap, not {}",
                    words * 8
                ));
            }
            for w in bitmap.iter_mut() {
                *w = u64::from_le(*w); // the bytes are little-endian words
            }
            f(wave, &bitmap);
        }
        at += FRAME_HEADER + len;
    }
    Ok(())
}

/// File name of shard `shard`'s wave log in a worker's directory for the layer (and in a replica
/// directory, `tablefmt::checkpoint::replica_dir`).
pub fn file_name(shard: usize) -> String {
    format!("shard-{shard:05}.waves")
}

/// The shard of a wave-log file name, when it is exactly one [`file_name`] writes (so it has no
/// `/` and stays inside its directory).
pub fn parse_file_name(name: &str) -> Option<usize> {
    let digits = name.strip_prefix("shard-")?.strip_suffix(".waves")?;
    let shard = digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())??;
    (file_name(shard) == name).then_some(shard)
}

/// Length and crc32 of a log as it stands: what a checkpoint records.
pub fn fingerprint(bytes: &[u8]) -> (u64, u32) {
    (bytes.len() as u64, crc32fast::hash(bytes))
}

/// Whether `bytes` begin with the log a checkpoint recorded as `(len, crc)`.
pub fn starts_with(bytes: &[u8], len: u64, crc: u32) -> bool {
    bytes.len() as u64 >= len && crc32fast::hash(&bytes[..len as usize]) == crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_round_trip_and_nothing_else_parses() {
        for shard in [0, 7, 99_999, 123_456] {
            assert_eq!(parse_file_name(&file_name(shard)), Some(shard));
        }
        for bad in [
            "shard-1.waves",
            "shard-00001.waves/..",
            "../shard-00001.waves",
            "shard-0000a.waves",
            "shard-00001.values",
            "shard-.waves",
            "shard-+0001.waves",
        ] {
            assert_eq!(parse_file_name(bad), None, "{bad}");
        }
    }

    /// Every frame of a log, in order: (wave, bitmap of `words` words, all zero for an empty
    /// payload); see [`each_frame`].
    fn decode_frames(bytes: &[u8], words: usize) -> Result<Vec<(u32, Vec<u64>)>, String> {
        let mut out = Vec::new();
        each_frame(bytes, words, |wave, bitmap| {
            let bitmap = if bitmap.is_empty() {
                vec![0; words]
            } else {
                bitmap.to_vec()
            };
            out.push((wave, bitmap));
        })?;
        Ok(out)
    }

    #[test]
    fn frames_round_trip_and_damage_is_named() {
        let words = 5;
        let mut bitmap = vec![0u64; words];
        bitmap[1] = 0b1011;
        bitmap[4] = 1 << 63;
        let mut log = encode_frame(0, &bitmap).unwrap();
        let empty = encode_frame(1, &[0; 5]).unwrap();
        assert_eq!(
            empty.len(),
            FRAME_HEADER,
            "a wave deciding nothing has no payload"
        );
        assert_eq!(&empty[..4], &1u32.to_le_bytes());
        log.extend_from_slice(&empty);
        let frames = decode_frames(&log, words).unwrap();
        assert_eq!(frames, vec![(0, bitmap.clone()), (1, vec![0; 5])]);

        let (len, crc) = fingerprint(&log);
        assert!(starts_with(&log, len, crc));
        let cut = len - FRAME_HEADER as u64;
        assert!(starts_with(
            &log,
            cut,
            crc32fast::hash(&log[..cut as usize])
        ));
        assert!(!starts_with(&log[..cut as usize], len, crc));

        // A bitmap of another shard size is an error, not a shorter bitmap.
        assert_eq!(
            decode_frames(&log, words + 1).unwrap_err(),
            "frame of wave 0 holds 40 bytes of bitmap, not 48"
        );

        let mut bad = log.clone();
        bad[FRAME_HEADER + 1] ^= 1;
        assert!(decode_frames(&bad, words)
            .unwrap_err()
            .contains("wave 0 fails its crc32"));
        assert_eq!(
            decode_frames(&log[..log.len() - 3], words).unwrap_err(),
            "truncated frame header"
        );
        assert_eq!(
            decode_frames(&log[..FRAME_HEADER + 2], words).unwrap_err(),
            "truncated frame"
        );
    }
}
