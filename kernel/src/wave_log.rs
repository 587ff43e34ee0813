//! A shard's wave log, kept where the worker keeps its arrays: a file `shard-NNNNN.waves` in the
//! worker's directory, or memory for a build without one. The bytes are the format of
//! `kingmaker_tablefmt::wave_log` (docs/format.md, "Wave logs"): one frame per closed wave with
//! the zstd-compressed bitmap of the states it decided and a crc32.

use super::KernelError;
use kingmaker_tablefmt::fsio::open_regular_with;
use kingmaker_tablefmt::wave_log::{each_frame, encode_frame, fingerprint, starts_with};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The states each closed wave decided in one shard: an append-only sequence of frames (see
/// `kingmaker_tablefmt::wave_log`). A frame is never changed once written; resuming from a
/// checkpoint cuts the log back to the checkpoint's length.
pub struct WaveLog {
    path: Option<PathBuf>,
    store: Mutex<LogStore>,
    /// One more than the offset of the frame this log's last [`WaveLog::append`] wrote, 0 when
    /// unknown (nothing appended since it was opened, cut back or replaced): the next wave reads
    /// its frontier there ([`WaveLog::last_frame`]).
    last_frame_at: AtomicU64,
}

enum LogStore {
    File(File),
    Memory(Vec<u8>),
}

impl WaveLog {
    pub(super) fn open(path: Option<&Path>) -> Result<WaveLog, KernelError> {
        let store = match path {
            None => LogStore::Memory(Vec::new()),
            Some(p) => LogStore::File(
                open_regular_with(
                    p,
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .create(true)
                        .truncate(false),
                )
                .map_err(|e| KernelError::io(p, e))?,
            ),
        };
        Ok(WaveLog {
            path: path.map(Path::to_path_buf),
            store: Mutex::new(store),
            last_frame_at: AtomicU64::new(0),
        })
    }

    fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or("<in-memory wave log>".into(), |p| p.display().to_string())
    }

    fn err(&self, source: std::io::Error) -> KernelError {
        KernelError::Io {
            path: self.name(),
            error: source,
        }
    }

    /// Append the bitmap of the states decided in `wave` (an empty slice when it decided none);
    /// returns the log's new length.
    pub fn append(&self, wave: u32, bitmap: &[u64]) -> Result<u64, KernelError> {
        let frame = encode_frame(wave, bitmap).map_err(|e| self.err(e))?;
        let mut store = self.store.lock().expect("wave log");
        let end = match &mut *store {
            LogStore::Memory(v) => {
                v.extend_from_slice(&frame);
                v.len() as u64 - frame.len() as u64
            }
            LogStore::File(f) => {
                let end = f.seek(SeekFrom::End(0)).map_err(|e| self.err(e))?;
                f.write_all(&frame).map_err(|e| self.err(e))?;
                end
            }
        };
        self.last_frame_at.store(end + 1, Relaxed);
        Ok(end + frame.len() as u64)
    }

    /// The wave and bitmap (`words` words; empty if the wave decided none of the shard's states)
    /// of the frame the last [`WaveLog::append`] wrote, its crc checked; None if not known.
    pub fn last_frame(&self, words: usize) -> Result<Option<(u32, Vec<u64>)>, KernelError> {
        let mut store = self.store.lock().expect("wave log");
        let Some(at) = self.last_frame_at.load(Relaxed).checked_sub(1) else {
            return Ok(None);
        };
        let bytes = match &mut *store {
            LogStore::Memory(v) => v[at as usize..].to_vec(),
            LogStore::File(f) => {
                let mut out = Vec::new();
                f.seek(SeekFrom::Start(at)).map_err(|e| self.err(e))?;
                f.read_to_end(&mut out).map_err(|e| self.err(e))?;
                out
            }
        };
        drop(store);
        let mut last = None;
        each_frame(&bytes, words, |wave, bitmap| {
            last = Some((wave, bitmap.to_vec()))
        })
        .map_err(|what| KernelError::Checkpoint(format!("wave log {}: {what}", self.name())))?;
        Ok(last)
    }

    /// The whole log as bytes.
    fn bytes(&self) -> Result<Vec<u8>, KernelError> {
        let mut store = self.store.lock().expect("wave log");
        match &mut *store {
            LogStore::Memory(v) => Ok(v.clone()),
            LogStore::File(f) => {
                let mut out = Vec::new();
                f.seek(SeekFrom::Start(0)).map_err(|e| self.err(e))?;
                f.read_to_end(&mut out).map_err(|e| self.err(e))?;
                Ok(out)
            }
        }
    }

    /// Bytes `from..to` of the log (what a replica lacks of it).
    pub fn bytes_between(&self, from: u64, to: u64) -> Result<Vec<u8>, KernelError> {
        let mut store = self.store.lock().expect("wave log");
        let (from, to) = (from as usize, to as usize);
        match &mut *store {
            LogStore::Memory(v) => Ok(v.get(from..to).unwrap_or_default().to_vec()),
            LogStore::File(f) => {
                let mut out = vec![0; to.saturating_sub(from)];
                f.seek(SeekFrom::Start(from as u64))
                    .map_err(|e| self.err(e))?;
                f.read_exact(&mut out).map_err(|e| self.err(e))?;
                Ok(out)
            }
        }
    }

    /// Replace the whole log with `bytes` (a copy fetched from a replica), durably.
    pub fn replace(&self, bytes: &[u8]) -> Result<(), KernelError> {
        let mut store = self.store.lock().expect("wave log");
        self.last_frame_at.store(0, Relaxed);
        match &mut *store {
            LogStore::Memory(v) => *v = bytes.to_vec(),
            LogStore::File(f) => {
                f.set_len(0).map_err(|e| self.err(e))?;
                f.seek(SeekFrom::Start(0)).map_err(|e| self.err(e))?;
                f.write_all(bytes).map_err(|e| self.err(e))?;
                f.sync_data().map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }

    /// Length and crc32 of the log as it stands (recorded by checkpoints).
    pub fn fingerprint(&self) -> Result<(u64, u32), KernelError> {
        Ok(fingerprint(&self.bytes()?))
    }

    /// Whether the log's first `len` bytes have `crc` (one read of the log).
    pub fn begins_with(&self, len: u64, crc: u32) -> Result<bool, KernelError> {
        Ok(starts_with(&self.bytes()?, len, crc))
    }

    /// Cut the log back to `len` bytes after checking that its first `len` bytes have `crc`.
    pub fn rewind(&self, len: u64, crc: u32) -> Result<(), KernelError> {
        let bytes = self.bytes()?;
        if !starts_with(&bytes, len, crc) {
            return Err(KernelError::Checkpoint(format!(
                "wave log {} does not match the checkpoint ({} bytes on disk, {len} expected, or altered)",
                self.name(),
                bytes.len()
            )));
        }
        let mut store = self.store.lock().expect("wave log");
        self.last_frame_at.store(0, Relaxed);
        match &mut *store {
            LogStore::Memory(v) => v.truncate(len as usize),
            LogStore::File(f) => f.set_len(len).map_err(|e| self.err(e))?,
        }
        Ok(())
    }

    /// Start afresh (a new layer on these arrays).
    pub fn clear(&self) -> Result<(), KernelError> {
        let mut store = self.store.lock().expect("wave log");
        self.last_frame_at.store(0, Relaxed);
        match &mut *store {
            LogStore::Memory(v) => v.clear(),
            LogStore::File(f) => f.set_len(0).map_err(|e| self.err(e))?,
        }
        Ok(())
    }

    /// Call `f` on every frame in order with its wave and bitmap of `words` words (empty for a
    /// wave that decided none of the shard's states), checking each frame's crc.
    pub fn each_frame(&self, words: usize, f: impl FnMut(u32, &[u64])) -> Result<(), KernelError> {
        let bytes = self.bytes()?;
        each_frame(&bytes, words, f)
            .map_err(|what| KernelError::Checkpoint(format!("wave log {}: {what}", self.name())))
    }

    /// Flush a file log to disk (nothing to do for one in memory).
    pub fn sync(&self) -> Result<(), KernelError> {
        match &*self.store.lock().expect("wave log") {
            LogStore::Memory(_) => Ok(()),
            LogStore::File(f) => f.sync_data().map_err(|e| self.err(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_frame_is_the_last_appended_until_the_log_is_cut_or_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("shard-00000.waves");
        for log in [
            WaveLog::open(None).unwrap(),
            WaveLog::open(Some(&file)).unwrap(),
        ] {
            assert!(log.last_frame(2).unwrap().is_none());
            log.append(0, &[1, 2]).unwrap();
            let (len, crc) = log.fingerprint().unwrap();
            assert_eq!(log.last_frame(2).unwrap(), Some((0, vec![1, 2])));
            log.append(1, &[]).unwrap();
            assert_eq!(log.last_frame(2).unwrap(), Some((1, vec![])));
            log.append(2, &[u64::MAX, 0]).unwrap();
            assert_eq!(log.last_frame(2).unwrap(), Some((2, vec![u64::MAX, 0])));
            // Cut back to a checkpoint, the frame is not known: the cells say.
            log.rewind(len, crc).unwrap();
            assert!(log.last_frame(2).unwrap().is_none());
            log.append(1, &[4, 0]).unwrap();
            assert_eq!(log.last_frame(2).unwrap(), Some((1, vec![4, 0])));
            log.replace(&log.bytes().unwrap()).unwrap();
            assert!(log.last_frame(2).unwrap().is_none());
            log.append(2, &[0, 8]).unwrap();
            log.clear().unwrap();
            assert!(log.last_frame(2).unwrap().is_none());
        }
    }
}
