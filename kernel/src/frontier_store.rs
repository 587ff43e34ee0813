//! The frontier of a worker whose cells live in files: for each shard, the states the last closed
//! wave decided and which of them are W, written as the wave closes and read by the next wave, so
//! that expanding a frontier reads no cell. A file `shard-SSSSS.frontier` in the worker's
//! directory (two wave-log frames, `kingmaker_tablefmt::wave_log`: the decided states, then the
//! won ones; docs/format.md), or memory for a build without one.

use super::KernelError;
use kingmaker_tablefmt::wave_log::{each_frame, encode_frame};
use kingmaker_tablefmt::FormatError;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The last closed wave's frontier, shard by shard.
pub struct FrontierStore {
    dir: Option<PathBuf>,
    /// Without a directory: the encoded frontier of each shard.
    memory: Vec<Mutex<Vec<u8>>>,
}

/// A shard's frontier: the states decided in one wave, and the W among them (bitmaps of the
/// shard's states, as in a wave log).
#[derive(Debug)]
pub struct ShardFrontier {
    /// Bit `i`: state `i` of the shard was decided in the wave.
    pub decided: Vec<u64>,
    /// Bit `i`: it was decided W.
    pub won: Vec<u64>,
}

impl FrontierStore {
    /// A store for `shards` shards, in `dir` or in memory.
    pub fn new(shards: usize, dir: Option<&Path>) -> FrontierStore {
        FrontierStore {
            dir: dir.map(Path::to_path_buf),
            memory: (0..if dir.is_some() { 0 } else { shards })
                .map(|_| Mutex::new(Vec::new()))
                .collect(),
        }
    }

    fn path(&self, shard: usize) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("shard-{shard:05}.frontier")))
    }

    /// Keep the frontier `wave` left in `shard` (replacing the previous one).
    pub fn write(
        &self,
        shard: usize,
        wave: u32,
        decided: &[u64],
        won: &[u64],
    ) -> Result<(), KernelError> {
        let name = self.path(shard);
        let err = |e| KernelError::io(name.as_deref().unwrap_or(Path::new("<frontier>")), e);
        let mut bytes = encode_frame(wave, decided).map_err(err)?;
        bytes.extend(encode_frame(wave, won).map_err(err)?);
        match &name {
            Some(path) => std::fs::write(path, bytes).map_err(|e| KernelError::io(path, e)),
            None => {
                *self.memory[shard].lock().expect("frontier") = bytes;
                Ok(())
            }
        }
    }

    /// The frontier `wave` left in `shard` (bitmaps of `words` words), crc-checked; `None` if
    /// none was kept for that wave (a restored checkpoint: the caller reads the cells instead).
    pub fn read(
        &self,
        shard: usize,
        wave: u32,
        words: usize,
    ) -> Result<Option<ShardFrontier>, KernelError> {
        let bytes = match self.path(shard) {
            Some(path) => match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(KernelError::io(&path, e)),
            },
            None => self.memory[shard].lock().expect("frontier").clone(),
        };
        let mut frames = Vec::new();
        each_frame(&bytes, words, |w, bitmap| {
            let bitmap = if bitmap.is_empty() {
                vec![0; words]
            } else {
                bitmap.to_vec()
            };
            frames.push((w, bitmap));
        })
        .map_err(|e| {
            let name = self
                .path(shard)
                .map_or("<frontier>".into(), |p| p.display().to_string());
            KernelError::Format(FormatError::Corrupt(format!("{name}: {e}")))
        })?;
        match <[_; 2]>::try_from(frames) {
            Ok([(w1, decided), (w2, won)]) if w1 == wave && w2 == wave => {
                Ok(Some(ShardFrontier { decided, won }))
            }
            _ => Ok(None),
        }
    }

    /// Forget every kept frontier (the cells changed behind the store's back).
    pub fn clear(&self) -> Result<(), KernelError> {
        for shard in 0..self.memory.len() {
            self.memory[shard].lock().expect("frontier").clear();
        }
        let Some(dir) = &self.dir else { return Ok(()) };
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(KernelError::io(dir, e)),
        };
        for entry in entries {
            let path = entry.map_err(|e| KernelError::io(dir, e))?.path();
            if path.extension().is_some_and(|x| x == "frontier") {
                std::fs::remove_file(&path).map_err(|e| KernelError::io(&path, e))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frontier_comes_back_for_its_wave_only() {
        let dir = tempfile::tempdir().unwrap();
        for store in [
            FrontierStore::new(3, Some(dir.path())),
            FrontierStore::new(3, None),
        ] {
            let decided = vec![0b1011, 0, 1 << 63];
            let won = vec![0b0010, 0, 0];
            store.write(1, 7, &decided, &won).unwrap();
            let f = store.read(1, 7, 3).unwrap().expect("kept");
            assert_eq!((f.decided, f.won), (decided, won));
            assert!(store.read(1, 8, 3).unwrap().is_none(), "another wave's");
            assert!(store.read(0, 7, 3).unwrap().is_none(), "never written");
            store.clear().unwrap();
            assert!(store.read(1, 7, 3).unwrap().is_none(), "cleared");
        }
        let store = FrontierStore::new(3, Some(dir.path()));
        store.write(2, 1, &[5], &[4]).unwrap();
        let path = dir.path().join("shard-00002.frontier");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, bytes).unwrap();
        let e = store.read(2, 1, 1).unwrap_err().to_string();
        assert!(
            e.contains("shard-00002.frontier") && e.contains("crc32"),
            "{e}"
        );
    }
}
