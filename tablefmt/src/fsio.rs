//! The file mechanics every format shares: durable replacement of a file, its crc32 and sha256.

use crate::FormatError;
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// crc32 (IEEE, as zlib and crc32fast compute it): the checksum of every Kingmaker file.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// The temporary name `path` is written under before it is renamed into place: `.NAME.tmp`
/// beside it (hidden, and never a name any format reads).
pub fn temporary_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp"))
}

/// Write `bytes` to `path` durably: to a temporary file beside it, fsync, rename into place,
/// fsync of the directory. A crash leaves the old file or the new one, never half of one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), FormatError> {
    let tmp = temporary_name(path);
    let mut f = std::fs::File::create(&tmp).map_err(|e| FormatError::io(&tmp, e))?;
    f.write_all(bytes).map_err(|e| FormatError::io(&tmp, e))?;
    f.sync_all().map_err(|e| FormatError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| FormatError::io(path, e))?;
    sync_dir_of(path)
}

/// fsync the directory holding `path`, so that a rename into it survives a crash.
pub fn sync_dir_of(path: &Path) -> Result<(), FormatError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| FormatError::io(dir, e))
}

/// Size and sha256 (hex) of a file, read in 1 MiB pieces.
pub fn file_sha256(path: &Path) -> Result<(u64, String), FormatError> {
    let mut f = std::fs::File::open(path).map_err(|e| FormatError::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(|e| FormatError::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, hex::encode(hasher.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_hashed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        write_atomically(&path, b"old").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert!(!temporary_name(&path).exists());
        let (size, sha) = file_sha256(&path).unwrap();
        assert_eq!(size, 3);
        assert_eq!(
            sha,
            "11507a0e2f5e69d5dfa40a62a1bd7b6ee57e6bcd85c67c9b8431b36fff21c437"
        );
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }
}
