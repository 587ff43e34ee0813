//! The file mechanics every format shares: durable replacement of a file, its crc32 and sha256,
//! and the two checks on files the tool did not just write: a file read is regular and bounded
//! ([`open_regular`], [`read_bounded`]), and a destination is looked at before the first write
//! ([`destination`]).

use crate::FormatError;
use sha2::{Digest, Sha256};
use std::fs::{File, FileType, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The most a metadata file may hold when it is read whole (`run.json`, `checkpoint.json`,
/// progress, summaries, wave histories, a release's manifest, parts lists, kept-layer records):
/// far above any the tool writes, far below what would exhaust a machine's memory. `fetch` takes a
/// served manifest up to the same size.
pub const METADATA_CAP: u64 = 64 << 20;

/// A size in bytes with one decimal in the largest binary unit it reaches, up to TiB:
/// "512 B", "1.5 KiB", "3.0 GiB".
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// What a file is, as messages name it: "a regular file", "a directory", "a FIFO", ...
pub fn kind_of(t: FileType) -> &'static str {
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "not a file"
    }
}

fn not_regular(path: &Path, t: FileType) -> FormatError {
    let what = format!("not a regular file ({})", kind_of(t));
    FormatError::io(path, std::io::Error::new(ErrorKind::InvalidInput, what))
}

fn too_large(path: &Path, len: u64, cap: u64, what: &str) -> FormatError {
    let why = format!(
        "{}, more than the {} {what} may be",
        human_bytes(len),
        // A cap is a round number: "64 MiB".
        human_bytes(cap).replace(".0 ", " ")
    );
    FormatError::io(path, std::io::Error::new(ErrorKind::InvalidData, why))
}

/// Open `path` for reading if it is a regular file (a symbolic link is followed), and refuse a
/// FIFO, a device, a socket or a directory before a byte is read ("PATH: not a regular file (a
/// FIFO)"). The type is checked before opening (opening some devices acts) and again on the
/// open file, which is opened without blocking, so a FIFO put there in between never hangs.
/// A missing file is an [`FormatError::Io`] of kind `NotFound`.
pub fn open_regular(path: &Path) -> Result<File, FormatError> {
    let meta = std::fs::metadata(path).map_err(|e| FormatError::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| FormatError::io(path, e))?;
    let meta = file.metadata().map_err(|e| FormatError::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    Ok(file)
}

/// Open `path` with `options` (to write, to append, to map), refusing anything but a regular
/// file where one exists, as [`open_regular`] does for reading: a FIFO or a device planted where a
/// wave log, a bucket or a cell file lies is an error, not a hang. The error is the I/O error's,
/// for the caller to name the path in its own terms.
pub fn open_regular_with(path: &Path, options: &OpenOptions) -> std::io::Result<File> {
    let refuse = |t: FileType| {
        let what = format!("not a regular file ({})", kind_of(t));
        std::io::Error::new(ErrorKind::InvalidInput, what)
    };
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(refuse(meta.file_type())),
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut options = options.clone();
    let file = options
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refuse(meta.file_type()));
    }
    Ok(file)
}

/// The bytes of `path`, a regular file ([`open_regular`]) of at most `cap` bytes; a larger one
/// is refused before it is read, naming `what` it was read as: "PATH: 3.0 GiB, more than the
/// 64 MiB a run.json may be". A file that grows while it is read stops at `cap` + 1 bytes and is
/// refused the same way.
pub fn read_bounded(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>, FormatError> {
    let file = open_regular(path)?;
    let len = file.metadata().map_err(|e| FormatError::io(path, e))?.len();
    if len > cap {
        return Err(too_large(path, len, cap, what));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| FormatError::io(path, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_large(path, bytes.len() as u64, cap, what));
    }
    Ok(bytes)
}

/// Everything `reader` gives (a pipe, standard input, a device), or `None` as soon as it gives
/// more than `cap` bytes: the most held is `cap` bytes (rounded up to a power of two).
pub fn read_capped(mut reader: impl Read, cap: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    let mut piece = vec![0u8; 1 << 16];
    loop {
        let n = match reader.read(&mut piece) {
            Ok(0) => return Ok(Some(bytes)),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if (bytes.len() + n) as u64 > cap {
            return Ok(None);
        }
        bytes.extend_from_slice(&piece[..n]);
    }
}

/// [`read_bounded`], with `None` for a file that does not exist.
pub fn read_bounded_if_any(
    path: &Path,
    cap: u64,
    what: &str,
) -> Result<Option<Vec<u8>>, FormatError> {
    match read_bounded(path, cap, what) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(FormatError::Io { error, .. }) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_bounded_text(path: &Path, cap: u64, what: &str) -> Result<String, FormatError> {
    String::from_utf8(read_bounded(path, cap, what)?)
        .map_err(|_| FormatError::Corrupt(format!("{}: not UTF-8 text", path.display())))
}

/// What a destination holds before the first byte is written to it (symbolic links followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Nothing: it will be created.
    Nothing,
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Something no command writes into: a FIFO, a device, a socket ([`kind_of`] names it).
    Other(&'static str),
}

/// What is at `path`, a destination about to be written, so that a command refuses a wrong one
/// before it writes (or computes) anything.
pub fn destination(path: &Path) -> Result<Existing, FormatError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => Ok(Existing::File),
        Ok(m) if m.is_dir() => Ok(Existing::Dir),
        Ok(m) => Ok(Existing::Other(kind_of(m.file_type()))),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Existing::Nothing),
        Err(e) => Err(FormatError::io(path, e)),
    }
}

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
    let mut f = open_regular(path)?;
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

    #[test]
    fn only_a_regular_file_within_its_cap_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("run.json");
        std::fs::write(&small, b"{}").unwrap();
        assert_eq!(read_bounded(&small, 2, "a run.json").unwrap(), b"{}");
        let e = read_bounded(&small, 1, "a run.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("run.json: 2 B, more than the 1 B a run.json may be"),
            "{e}"
        );
        // Sparse: its size is refused before a byte is read.
        let big = dir.path().join("big.json");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(3 << 30)
            .unwrap();
        let e = read_bounded(&big, METADATA_CAP, "a run.json")
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("big.json: 3.0 GiB, more than the 64 MiB a run.json may be"),
            "{e}"
        );
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_regular(&fifo).unwrap_err().to_string();
        assert!(e.ends_with("fifo: not a regular file (a FIFO)"), "{e}");
        let e = read_bounded(Path::new("/dev/zero"), 10, "x").unwrap_err();
        assert!(e.to_string().ends_with("(a character device)"), "{e}");
        let e = open_regular(dir.path()).unwrap_err().to_string();
        assert!(e.ends_with("not a regular file (a directory)"), "{e}");
        let zero = std::fs::File::open("/dev/zero").unwrap();
        assert_eq!(read_capped(zero, 1 << 20).unwrap(), None);
        assert_eq!(read_capped(&b"abc"[..], 3).unwrap().unwrap(), b"abc");
        let gone = dir.path().join("gone");
        assert!(read_bounded_if_any(&gone, 1, "x").unwrap().is_none());
        assert_eq!(destination(&gone).unwrap(), Existing::Nothing);
        assert_eq!(destination(&small).unwrap(), Existing::File);
        assert_eq!(destination(dir.path()).unwrap(), Existing::Dir);
        assert_eq!(
            destination(Path::new("/dev/null")).unwrap(),
            Existing::Other("a character device")
        );
    }
}
