//! The run-directory lock of `build` and `resume` (see `kingmaker_process::lock`): one process at
//! a time works on a run directory; a second one is refused with the holder's pid, and `status`
//! tells a running build from a stopped one by trying the lock. `fetch` locks the directory it
//! downloads into the same way, and `pack` the directory it writes a release into.

use anyhow::Result;
use kingmaker_process::lock::{DirLock, LockError};
use std::path::Path;

pub use kingmaker_process::lock::{Holder, LOCK_FILE};

/// Lock the run directory `dir` for `command` (e.g. `kingmaker resume`) for as long as the
/// returned lock lives, or refuse with who holds it and what to do.
pub fn lock_run(dir: &Path, command: &str) -> Result<DirLock> {
    DirLock::acquire(dir, command).map_err(|e| match &e {
        LockError::Held { holder, .. } => {
            let pid = holder
                .as_ref()
                .map_or("its pid".to_string(), |h| h.pid.to_string());
            anyhow::anyhow!(
                "{e}: only one `kingmaker build` or `kingmaker resume` may work on a run directory at a \
                 time. Watch it with `kingmaker status {dir}`; to take over, stop it first \
                 (`kill -TERM {pid}` finishes the wave, checkpoints and exits), then `kingmaker resume {dir}`",
                dir = dir.display()
            )
        }
        LockError::Io { .. } => anyhow::Error::new(e),
    })
}

/// Lock the directory `kingmaker fetch` downloads into for as long as the returned lock lives, or
/// refuse with who holds it: two fetches there would write the same `.part` files.
pub fn lock_fetch(dir: &Path) -> Result<DirLock> {
    DirLock::acquire(dir, "kingmaker fetch").map_err(|e| match &e {
        LockError::Held { holder, .. } => {
            let pid = holder
                .as_ref()
                .map_or("its pid".to_string(), |h| h.pid.to_string());
            anyhow::anyhow!(
                "{e}: fetch downloads into a directory only when nothing else works there (two \
                 fetches would write the same .part files). Wait for it to end, or stop it \
                 (`kill {pid}`) and run this fetch again: it resumes what was downloaded"
            )
        }
        LockError::Io { .. } => anyhow::Error::new(e),
    })
}

/// Lock the directory `kingmaker pack` writes a release into for as long as the returned lock
/// lives, or refuse with who holds it: two packs into one directory would each write a whole
/// staging copy, and only one could take its place.
pub fn lock_pack(dir: &Path) -> Result<DirLock> {
    DirLock::acquire(dir, "kingmaker pack").map_err(|e| match &e {
        LockError::Held { holder, .. } => {
            let pid = holder
                .as_ref()
                .map_or("its pid".to_string(), |h| h.pid.to_string());
            anyhow::anyhow!(
                "{e}: another pack is writing a release there. Wait for it to end (then the \
                 directory holds its release), or stop it (`kill {pid}`) and pack again"
            )
        }
        LockError::Io { .. } => anyhow::Error::new(e),
    })
}

/// The process working on the run directory `dir`, if any (trying its lock).
pub fn run_holder(dir: &Path) -> Result<Option<Holder>> {
    DirLock::holder(dir)
        .map_err(|e| anyhow::anyhow!("cannot check the lock of {}: {e}", dir.display()))
}
