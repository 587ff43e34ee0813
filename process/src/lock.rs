//! The lock of a directory one process at a time works in: a run directory, or a worker's run.
//! 1. An exclusive `flock` on [`LOCK_FILE`], which names its holder (pid, command, start time).
//! 2. The kernel drops it when the holder exits, even by kill -9: a stale file never blocks, and
//!    trying the lock ([`DirLock::holder`]) says whether a run is going on, where a pid in a file
//!    might be stale or reused.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The lock file's name in a locked directory.
pub const LOCK_FILE: &str = "kingmaker.lock";

/// Who holds a lock (as the holder wrote it into the lock file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The holder's process id.
    pub pid: u32,
    /// What it is doing, e.g. `kingmaker resume`.
    pub command: String,
    /// When it took the lock (seconds since the Unix epoch).
    pub since_unix: u64,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let age = unix_now().saturating_sub(self.since_unix);
        write!(f, "pid {} (`{}`, for {age}s)", self.pid, self.command)
    }
}

/// Why a directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock. `holder` is None when it has not written its pid yet.
    #[error("{} is in use by {}", dir.display(), holder.as_ref().map_or("another process (its pid is not written yet)".to_string(), |h| h.to_string()))]
    Held {
        /// The locked directory.
        dir: PathBuf,
        /// Who holds it, when known.
        holder: Option<Holder>,
    },
    /// The lock file could not be opened, locked or written.
    #[error("cannot lock {}: {source}", path.display())]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What the operating system reported.
        source: std::io::Error,
    },
}

/// A held lock; dropping it (or the process ending) releases it. A run directory's is held by
/// `kingmaker build` and `kingmaker resume` for their whole life, a worker's `DATA_DIR/<run id>/`'s
/// by `kingmaker-worker` while it works on that run.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
}

fn flock(file: &File, op: libc::c_int) -> std::io::Result<bool> {
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), op | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(err)
    }
}

fn read_holder(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.rewind().ok()?;
    // A holder is one short line: anything longer is no holder's, and is not read on.
    file.take(4096).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

impl DirLock {
    /// Lock `dir` (which must exist) for `command`, or say who holds it. A process that only
    /// looks ([`DirLock::holder`]) holds a shared lock for an instant: that is waited out.
    pub fn acquire(dir: &Path, command: &str) -> Result<DirLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        let mut tries = 0;
        while !flock(&file, libc::LOCK_EX).map_err(io)? {
            tries += 1;
            if tries == 10 {
                return Err(LockError::Held {
                    dir: dir.to_path_buf(),
                    holder: read_holder(&mut file),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let holder = Holder {
            pid: std::process::id(),
            command: command.to_string(),
            since_unix: unix_now(),
        };
        let text = serde_json::to_string(&holder).expect("plain struct") + "\n";
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        file.write_all(text.as_bytes()).map_err(io)?;
        Ok(DirLock { _file: file, path })
    }

    /// Who holds the lock of `dir`, if anyone: a running build, resume or worker. Tries the lock
    /// (shared, released at once) rather than trusting the pid in the file.
    pub fn holder(dir: &Path) -> std::io::Result<Option<Holder>> {
        let path = dir.join(LOCK_FILE);
        // A regular file only: a FIFO put there would block the open.
        let mut file = match kingmaker_tablefmt::fsio::open_regular(&path) {
            Ok(f) => f,
            Err(kingmaker_tablefmt::FormatError::Io { error, .. })
                if error.kind() == std::io::ErrorKind::NotFound =>
            {
                return Ok(None)
            }
            Err(e) => return Err(std::io::Error::other(e.to_string())),
        };
        if flock(&file, libc::LOCK_SH)? {
            // Nobody holds it; ours goes with the file.
            return Ok(None);
        }
        Ok(Some(read_holder(&mut file).unwrap_or(Holder {
            pid: 0,
            command: "unknown".into(),
            since_unix: 0,
        })))
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

pub use kingmaker_tablefmt::run::unix_now;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_the_refusal_names_it() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(DirLock::holder(tmp.path()).unwrap(), None);
        let lock = DirLock::acquire(tmp.path(), "kingmaker build").unwrap();
        let holder = DirLock::holder(tmp.path()).unwrap().expect("held");
        assert_eq!(holder.pid, std::process::id());
        assert_eq!(holder.command, "kingmaker build");
        // A second open file description conflicts even in the same process.
        let err = DirLock::acquire(tmp.path(), "kingmaker resume").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains(&format!("pid {}", std::process::id())) && text.contains("build"),
            "{text}"
        );
        drop(lock);
        // Released (the file stays, with the old holder in it: not a holder any more).
        assert!(tmp.path().join(LOCK_FILE).exists());
        assert_eq!(DirLock::holder(tmp.path()).unwrap(), None);
        let _again = DirLock::acquire(tmp.path(), "kingmaker resume").unwrap();
    }

    #[test]
    fn verify_knows_the_lock_file_by_name() {
        assert_eq!(
            LOCK_FILE,
            kingmaker_tablefmt::release::verify::DIR_LOCK_FILE
        );
    }
}
