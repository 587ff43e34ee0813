//! Checkpoint chunks: a slice of a shard array saved as one zstd frame in its own file, described
//! by a [`ChunkRef`] (kept in the checkpoint manifest) that carries the crc32 of the frame on disk
//! and of the raw bytes, so a flipped, truncated or missing chunk is named, never loaded.
//!
//! Files are written to a temporary name, fsynced and renamed into place; a chunk file is never
//! modified after that, so an unchanged chunk is shared by consecutive checkpoints.

use crate::FormatError;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;

/// zstd level for checkpoint chunks: fast, and shard arrays compress well even so.
const LEVEL: i32 = 1;

/// Where a chunk lives and how to check it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    /// File name inside the checkpoint directory.
    pub file: String,
    /// Length and crc32 of the raw (decompressed) bytes.
    pub raw_len: u64,
    pub raw_crc: u32,
    /// Length and crc32 of the compressed frame as stored.
    pub frame_len: u64,
    pub frame_crc: u32,
}

/// crc32 of a byte slice (the checksum used throughout the checkpoint format).
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// Compress `data` into `dir/file` durably and describe it.
pub fn write_chunk(dir: &Path, file: &str, data: &[u8]) -> Result<ChunkRef, FormatError> {
    let path = dir.join(file);
    let tmp = dir.join(format!("{file}.tmp"));
    let frame = zstd::bulk::compress(data, LEVEL).map_err(|e| FormatError::io(&path, e))?;
    let mut f = std::fs::File::create(&tmp).map_err(|e| FormatError::io(&tmp, e))?;
    f.write_all(&frame).map_err(|e| FormatError::io(&tmp, e))?;
    f.sync_all().map_err(|e| FormatError::io(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| FormatError::io(&path, e))?;
    Ok(ChunkRef {
        file: file.to_string(),
        raw_len: data.len() as u64,
        raw_crc: crc32(data),
        frame_len: frame.len() as u64,
        frame_crc: crc32(&frame),
    })
}

/// Read a chunk back, checking the frame and the raw bytes against `r`.
pub fn read_chunk(dir: &Path, r: &ChunkRef) -> Result<Vec<u8>, FormatError> {
    let path = dir.join(&r.file);
    let bad =
        |what: String| FormatError::Corrupt(format!("checkpoint chunk {}: {what}", path.display()));
    let frame = std::fs::read(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => bad("missing".into()),
        _ => FormatError::io(&path, e),
    })?;
    if frame.len() as u64 != r.frame_len {
        return Err(bad(format!(
            "{} bytes on disk, {} expected (truncated?)",
            frame.len(),
            r.frame_len
        )));
    }
    if crc32(&frame) != r.frame_crc {
        return Err(bad("crc32 mismatch (the file was altered)".into()));
    }
    let raw = zstd::bulk::decompress(&frame, r.raw_len as usize)
        .map_err(|e| bad(format!("zstd: {e}")))?;
    if raw.len() as u64 != r.raw_len || crc32(&raw) != r.raw_crc {
        return Err(bad("decompressed bytes do not match their crc32".into()));
    }
    Ok(raw)
}

/// Check a chunk without keeping its bytes.
pub fn check_chunk(dir: &Path, r: &ChunkRef) -> Result<(), FormatError> {
    read_chunk(dir, r).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip_and_corruption_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 7) as u8).collect();
        let r = write_chunk(dir.path(), "c0.zst", &data).unwrap();
        assert_eq!(read_chunk(dir.path(), &r).unwrap(), data);
        assert!(r.frame_len < r.raw_len / 10, "repetitive arrays compress");

        let path = dir.path().join("c0.zst");
        let mut bytes = std::fs::read(&path).unwrap();
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x10;
        std::fs::write(&path, &bytes).unwrap();
        let err = read_chunk(dir.path(), &r).unwrap_err().to_string();
        assert!(err.contains("c0.zst") && err.contains("crc32"), "{err}");

        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(read_chunk(dir.path(), &r)
            .unwrap_err()
            .to_string()
            .contains("truncated"));

        std::fs::remove_file(&path).unwrap();
        assert!(read_chunk(dir.path(), &r)
            .unwrap_err()
            .to_string()
            .contains("missing"));
    }
}
