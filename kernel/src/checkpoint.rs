//! Checkpoints of a worker's shard arrays at a wave boundary, and restoring them (docs/kernel.md).
//! 1. After a wave a worker's whole state is its cells (frontier included) and its wave logs; a
//!    chunk of [`CHUNK_STATES`] cells unchanged since the last checkpoint is shared, not rewritten.
//! 2. The two newest are kept, so a corrupt newest one falls back to the one before. The files are
//!    `kingmaker_tablefmt::checkpoint` (docs/format.md); this module decides when and what to save.

use super::cells::ShardArrays;
use super::engine::WorkerEngine;
use super::KernelError;
use crate::game::Game;
use kingmaker_tablefmt::checkpoint::{
    check_chunk, chunk_name, chunk_shard, crc32, is_manifest_of, manifest_name, read_chunk,
    read_manifest, write_chunk, write_manifest, ChunkRef,
};
pub use kingmaker_tablefmt::checkpoint::{
    manifest_path, ShardCheckpoint, WorkerCheckpoint, CHUNK_STATES,
};
use kingmaker_tablefmt::FormatError;
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A manifest that cannot be written or read: an I/O error on its file, or a checkpoint error
/// (a malformed manifest), as the kernel reports them.
fn manifest_error(e: FormatError) -> KernelError {
    match e {
        FormatError::Io { path, error } => KernelError::Io { path, error },
        FormatError::Corrupt(message) => KernelError::Checkpoint(message),
    }
}

/// Byte range of chunk `c` of a shard's cells.
fn chunk_range(shard: &ShardArrays, c: u64) -> std::ops::Range<usize> {
    let first = c * CHUNK_STATES;
    first as usize..(first + CHUNK_STATES).min(shard.len) as usize
}

impl<G: Game> WorkerEngine<G> {
    /// Save every owned shard after wave `wave` closed, into `dir`. Chunks identical to those of
    /// `previous` are shared, not rewritten. Must be called at a barrier (no wave running).
    pub fn checkpoint(
        &self,
        wave: u32,
        dir: &Path,
        previous: Option<&WorkerCheckpoint>,
    ) -> Result<WorkerCheckpoint, KernelError> {
        std::fs::create_dir_all(dir).map_err(|e| KernelError::io(dir, e))?;
        let mut shards = Vec::new();
        for id in self.owned_shards() {
            let arrays = self.shard(id);
            arrays.ensure_held()?;
            let old = previous.and_then(|p| p.shards.iter().find(|s| s.shard == id));
            let chunks = arrays.len.div_ceil(CHUNK_STATES).max(1);
            let cells = (0..chunks)
                .into_par_iter()
                .map(|c| {
                    // SAFETY: called at a barrier; nothing writes the cells meanwhile.
                    let bytes = &unsafe { arrays.raw() }[chunk_range(arrays, c)];
                    if let Some(r) = old.and_then(|o| o.cells.get(c as usize)) {
                        if r.raw_len == bytes.len() as u64 && r.raw_crc == crc32(bytes) {
                            return Ok(r.clone());
                        }
                    }
                    Ok(write_chunk(dir, &chunk_name(id, c, wave), bytes)?)
                })
                .collect::<Result<Vec<_>, KernelError>>()?;
            arrays.waves.sync()?;
            let (wave_log_len, wave_log_crc) = arrays.waves.fingerprint()?;
            shards.push(ShardCheckpoint {
                shard: id,
                cells,
                wave_log_len,
                wave_log_crc,
            });
        }
        let cp = WorkerCheckpoint {
            layer: self.layer().name.clone(),
            wave,
            worker: self.me(),
            shards,
        };
        write_manifest(&manifest_path(dir, self.me(), &cp.layer, wave), &cp)
            .map_err(manifest_error)?;
        Ok(cp)
    }

    /// Bytes `from..to` of an owned shard's wave log (for its replica).
    pub fn wave_log_bytes(&self, shard: usize, from: u64, to: u64) -> Result<Vec<u8>, KernelError> {
        self.shard(shard).waves.bytes_between(from, to)
    }

    /// Whether an owned shard's wave log begins with the `(len, crc)` a checkpoint recorded.
    pub fn wave_log_matches(&self, shard: usize, len: u64, crc: u32) -> Result<bool, KernelError> {
        self.shard(shard).waves.begins_with(len, crc)
    }

    /// Replace an owned shard's wave log (with a copy fetched from its replica).
    pub fn replace_wave_log(&self, shard: usize, bytes: &[u8]) -> Result<(), KernelError> {
        self.shard(shard).waves.replace(bytes)
    }

    /// Load the checkpoint of this worker's layer at `wave` from `dir`, checking every chunk's crc
    /// first: a missing or corrupt chunk is an error naming it, and nothing is loaded.
    pub fn restore(&self, wave: u32, dir: &Path) -> Result<WorkerCheckpoint, KernelError> {
        let path = manifest_path(dir, self.me(), &self.layer().name, wave);
        let cp = read_manifest(&path).map_err(manifest_error)?;
        let mut mine = self.owned_shards();
        mine.sort_unstable();
        let mut saved: Vec<usize> = cp.shards.iter().map(|s| s.shard).collect();
        saved.sort_unstable();
        if mine != saved || cp.wave != wave {
            return Err(KernelError::Checkpoint(format!(
                "{} holds shards {saved:?} at wave {}, but this worker owns {mine:?} at wave {wave}",
                path.display(),
                cp.wave
            )));
        }
        // Check everything before touching the arrays.
        let all: Vec<&ChunkRef> = cp.shards.iter().flat_map(|s| s.cells.iter()).collect();
        all.par_iter().try_for_each(|r| check_chunk(dir, r))?;
        for s in &cp.shards {
            self.shard(s.shard)
                .waves
                .rewind(s.wave_log_len, s.wave_log_crc)?;
        }
        for s in &cp.shards {
            let arrays = self.shard(s.shard);
            s.cells
                .par_iter()
                .enumerate()
                .try_for_each(|(c, r)| -> Result<(), KernelError> {
                    let bytes = read_chunk(dir, r)?;
                    // SAFETY: restoring happens at a barrier, chunks are disjoint ranges.
                    let target = &mut unsafe { arrays.raw_mut() }[chunk_range(arrays, c as u64)];
                    if target.len() != bytes.len() {
                        return Err(KernelError::Checkpoint(format!(
                            "chunk {} has the wrong size",
                            r.file
                        )));
                    }
                    target.copy_from_slice(&bytes);
                    Ok(())
                })?;
        }
        self.rebuild_block_flags()?;
        Ok(cp)
    }
}

/// A worker's checkpoints on disk: saves after a wave, keeps the two newest, restores one.
/// Used alike by in-process workers and by the gRPC worker service.
pub struct CheckpointStore {
    dir: PathBuf,
    /// The checkpoints kept on disk, oldest first (at most two).
    kept: std::sync::Mutex<Vec<WorkerCheckpoint>>,
}

impl CheckpointStore {
    /// A store in the checkpoint directory `dir`, with no checkpoint known yet.
    pub fn new(dir: PathBuf) -> CheckpointStore {
        CheckpointStore {
            dir,
            kept: Default::default(),
        }
    }

    /// The checkpoint directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Save `engine` after wave `wave` closed; drop checkpoints older than the previous one.
    /// Returns the new checkpoint's manifest.
    pub fn save<G: Game>(
        &self,
        engine: &WorkerEngine<G>,
        wave: u32,
    ) -> Result<WorkerCheckpoint, KernelError> {
        let mut kept = self.kept.lock().expect("checkpoint list");
        let cp = engine.checkpoint(wave, &self.dir, kept.last())?;
        kept.push(cp.clone());
        if kept.len() > 2 {
            kept.remove(0);
        }
        prune(&self.dir, engine.me(), &kept)?;
        Ok(cp)
    }

    /// Load `engine`'s arrays as they were after wave `wave` closed.
    pub fn load<G: Game>(&self, engine: &WorkerEngine<G>, wave: u32) -> Result<(), KernelError> {
        let cp = engine.restore(wave, &self.dir)?;
        *self.kept.lock().expect("checkpoint list") = vec![cp];
        Ok(())
    }
}

/// Delete this worker's checkpoints of `layer` other than the `keep` waves, and every chunk file
/// that no kept manifest references.
pub fn prune(dir: &Path, worker: usize, keep: &[WorkerCheckpoint]) -> Result<(), KernelError> {
    let kept_manifests: HashSet<String> = keep
        .iter()
        .map(|c| manifest_name(worker, &c.layer, c.wave))
        .collect();
    let kept_chunks: HashSet<&str> = keep
        .iter()
        .flat_map(|c| c.shards.iter())
        .flat_map(|s| s.cells.iter())
        .map(|r| r.file.as_str())
        .collect();
    let shards: HashSet<usize> = keep
        .iter()
        .flat_map(|c| c.shards.iter().map(|s| s.shard))
        .collect();
    for entry in std::fs::read_dir(dir).map_err(|e| KernelError::io(dir, e))? {
        let entry = entry.map_err(|e| KernelError::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().to_string();
        let stale_manifest = is_manifest_of(worker, &name) && !kept_manifests.contains(&name);
        let stale_chunk = chunk_shard(&name).is_some_and(|s| shards.contains(&s))
            && !kept_chunks.contains(name.as_str());
        if stale_manifest || stale_chunk {
            std::fs::remove_file(entry.path()).map_err(|e| KernelError::io(&entry.path(), e))?;
        }
    }
    Ok(())
}
