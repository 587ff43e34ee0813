//! Checkpoints of a worker's shard arrays at a wave boundary, and restoring them (docs/kernel.md):
//! its cells, their overflowing counts and its wave logs; chunks unchanged since the last one are
//! shared. The two newest are kept (a corrupt one falls back). Every manifest names its game and
//! layer, and a worker restores only its own. The files are `kingmaker_tablefmt::checkpoint`
//! (docs/format.md); this module decides when and what to save.

use super::cell_code::{cell_bytes, Cell, CELL_MAX_COUNTER, CELL_OVERFLOW, CELL_WIN_OLD};
use super::engine::WorkerEngine;
use super::KernelError;
use crate::game::Game;
use kingmaker_tablefmt::checkpoint::{
    check_chunk, chunk_format, chunk_name, chunk_shard, crc32, identity_problem, is_manifest_of,
    manifest_name, read_chunk, read_manifest, write_chunk, write_manifest, CellsFormat, ChunkRef,
    CHECKPOINT_VERSION,
};
pub use kingmaker_tablefmt::checkpoint::{
    manifest_path, ShardCheckpoint, WorkerCheckpoint, CHUNK_BYTES,
};
use kingmaker_tablefmt::layer::LayerIdentity;
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

/// Sorted shard numbers in words, consecutive ones as ranges: `0-16`, `0, 2, 4`.
fn shard_list(shards: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &s in shards {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == s => *last = s,
            _ => runs.push((s, s)),
        }
    }
    let words: Vec<String> = runs
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if words.is_empty() {
        "none".to_string()
    } else {
        words.join(", ")
    }
}

/// Byte range of chunk `c` of a shard's cells, in `bytes` bytes.
fn chunk_range(bytes: usize, c: u64) -> std::ops::Range<usize> {
    let first = (c * CHUNK_BYTES) as usize;
    first..(first + CHUNK_BYTES as usize).min(bytes)
}

/// A cell of a version-1 checkpoint (one byte) as a cell now: its code, and its count when that
/// is more than a cell holds.
fn cell_of_byte(byte: u8) -> (u8, Option<u32>) {
    const V1_MAX_COUNTER: u8 = 248;
    match byte {
        0..=CELL_MAX_COUNTER => (byte, None),
        _ if byte <= V1_MAX_COUNTER => (CELL_OVERFLOW, Some(byte as u32)),
        // 249–255: W / L old, current, new, illegal, in the same order.
        _ => (byte - (V1_MAX_COUNTER + 1) + CELL_WIN_OLD, None),
    }
}

impl<G: Game> WorkerEngine<G> {
    /// Save every owned shard after wave `wave` closed, into `dir`, as arrays of `game` (its JSON,
    /// which the manifest records). Chunks identical to those of `previous` are shared, not
    /// rewritten. Must be called at a barrier (no wave running).
    pub fn checkpoint(
        &self,
        wave: u32,
        dir: &Path,
        previous: Option<&WorkerCheckpoint>,
        game: &serde_json::Value,
    ) -> Result<WorkerCheckpoint, KernelError> {
        std::fs::create_dir_all(dir).map_err(|e| KernelError::io(dir, e))?;
        let mut shards = Vec::new();
        for id in self.owned_shards() {
            let arrays = self.shard(id);
            arrays.ensure_held()?;
            let old = previous.and_then(|p| p.shards.iter().find(|s| s.shard == id));
            // SAFETY: called at a barrier; nothing writes the cells meanwhile.
            let raw = unsafe { arrays.raw() };
            let chunks = (raw.len() as u64).div_ceil(CHUNK_BYTES).max(1);
            let cells = (0..chunks)
                .into_par_iter()
                .map(|c| {
                    let bytes = &raw[chunk_range(raw.len(), c)];
                    // Only a chunk of this format covers the same cells.
                    let same_format =
                        |r: &&ChunkRef| chunk_format(&r.file) == Some(CellsFormat::Packed);
                    if let Some(r) = old
                        .and_then(|o| o.cells.get(c as usize))
                        .filter(same_format)
                    {
                        if r.raw_len == bytes.len() as u64 && r.raw_crc == crc32(bytes) {
                            return Ok(r.clone());
                        }
                    }
                    Ok(write_chunk(dir, &chunk_name(id, c, wave), bytes)?)
                })
                .collect::<Result<Vec<_>, KernelError>>()?;
            let range = arrays.start..arrays.start + arrays.len;
            let overflow = self.overflow_counts(range);
            arrays.waves.sync()?;
            let (wave_log_len, wave_log_crc) = arrays.waves.fingerprint()?;
            shards.push(ShardCheckpoint {
                shard: id,
                cells,
                overflow,
                wave_log_len,
                wave_log_crc,
            });
        }
        let cp = WorkerCheckpoint {
            version: CHECKPOINT_VERSION,
            game: game.clone(),
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

    /// Load the checkpoint of this worker's layer of `game` (its JSON) at `wave` from `dir`,
    /// checking every chunk's crc first: a missing or corrupt chunk is an error naming it, a
    /// manifest of another game or layer is refused ([`KernelError::CheckpointRefused`]), and
    /// nothing is loaded.
    pub fn restore(
        &self,
        wave: u32,
        dir: &Path,
        game: &serde_json::Value,
    ) -> Result<WorkerCheckpoint, KernelError> {
        let path = manifest_path(dir, self.me(), &self.layer().name, wave);
        let cp = read_manifest(&path).map_err(manifest_error)?;
        let expected = LayerIdentity::new(game.clone(), &self.layer().name);
        if let Some(problem) = identity_problem(&cp, &expected, &path.display().to_string()) {
            return Err(KernelError::CheckpointRefused(problem));
        }
        let mut mine = self.owned_shards();
        mine.sort_unstable();
        let mut saved: Vec<usize> = cp.shards.iter().map(|s| s.shard).collect();
        saved.sort_unstable();
        // Another placement of the shards (a kingmaker from before they were interleaved): its
        // cells would land on the wrong workers, and falling back would solve the layer again.
        if mine != saved {
            return Err(KernelError::CheckpointRefused(format!(
                "{} holds shards {}, but this worker owns shards {}: the checkpoint was written \
                 by a kingmaker that placed the shards on the workers otherwise (before \
                 2026-12-07 each worker owned one contiguous run of them); resume with the \
                 kingmaker that started the run (run.json names its version), or build anew \
                 into another directory",
                path.display(),
                shard_list(&saved),
                shard_list(&mine)
            )));
        }
        if cp.wave != wave {
            return Err(KernelError::Checkpoint(format!(
                "{} holds shards {saved:?} at wave {}, but this worker owns {mine:?} at wave {wave}",
                path.display(),
                cp.wave
            )));
        }
        // Check everything before touching the arrays.
        for s in &cp.shards {
            let len = self.shard(s.shard).len;
            let bytes = match s.format() {
                CellsFormat::Packed => cell_bytes(len),
                CellsFormat::Bytes => len,
            };
            if s.cells.len() as u64 != bytes.div_ceil(CHUNK_BYTES).max(1) {
                return Err(KernelError::Checkpoint(format!(
                    "{}: shard {} has {} chunks of cells, not {}",
                    path.display(),
                    s.shard,
                    s.cells.len(),
                    bytes.div_ceil(CHUNK_BYTES).max(1)
                )));
            }
        }
        let all: Vec<&ChunkRef> = cp.shards.iter().flat_map(|s| s.cells.iter()).collect();
        all.par_iter().try_for_each(|r| check_chunk(dir, r))?;
        for s in &cp.shards {
            self.shard(s.shard)
                .waves
                .rewind(s.wave_log_len, s.wave_log_crc)?;
        }
        for s in &cp.shards {
            let arrays = self.shard(s.shard);
            self.forget_overflow(arrays.start..arrays.start + arrays.len);
            let wrong_size = |r: &ChunkRef| {
                KernelError::Checkpoint(format!("chunk {} has the wrong size", r.file))
            };
            match s.format() {
                CellsFormat::Packed => {
                    s.cells.par_iter().enumerate().try_for_each(
                        |(c, r)| -> Result<(), KernelError> {
                            let bytes = read_chunk(dir, r)?;
                            // SAFETY: restoring happens at a barrier, chunks are disjoint ranges.
                            let raw = unsafe { arrays.raw_mut() };
                            let range = chunk_range(raw.len(), c as u64);
                            let target = &mut raw[range];
                            if target.len() != bytes.len() {
                                return Err(wrong_size(r));
                            }
                            target.copy_from_slice(&bytes);
                            Ok(())
                        },
                    )?;
                    for &(i, n) in &s.overflow {
                        if i >= arrays.len || arrays.cell(i as usize).load() != CELL_OVERFLOW {
                            return Err(KernelError::Checkpoint(format!(
                                "{}: shard {} lists a count for cell {i}, which does not overflow",
                                path.display(),
                                s.shard
                            )));
                        }
                        self.keep_overflow(arrays.start + i, n);
                    }
                    let overflowing = arrays.codes().filter(|&c| c == CELL_OVERFLOW).count();
                    if overflowing != s.overflow.len() {
                        return Err(KernelError::Checkpoint(format!(
                            "{}: shard {} has {overflowing} cells that count outside the cell and \
                             {} counts: a cell without its count cannot count down",
                            path.display(),
                            s.shard,
                            s.overflow.len()
                        )));
                    }
                }
                CellsFormat::Bytes => {
                    let states = arrays.len as usize;
                    s.cells.par_iter().enumerate().try_for_each(
                        |(c, r)| -> Result<(), KernelError> {
                            let bytes = read_chunk(dir, r)?;
                            let first = c * CHUNK_BYTES as usize;
                            if bytes.len() != chunk_range(states, c as u64).len() {
                                return Err(wrong_size(r));
                            }
                            // Chunks of bytes do not end on words: neighbours share one.
                            for (k, &byte) in bytes.iter().enumerate() {
                                let (code, count) = cell_of_byte(byte);
                                Cell::of(arrays.words(), first + k).store(code);
                                if let Some(n) = count {
                                    self.keep_overflow(arrays.start + (first + k) as u64, n);
                                }
                            }
                            Ok(())
                        },
                    )?;
                }
            }
        }
        self.rebuild_block_flags()?;
        Ok(cp)
    }
}

/// A worker's checkpoints on disk: saves after a wave, keeps the two newest, restores one.
/// Used alike by in-process workers and by the gRPC worker service.
pub struct CheckpointStore {
    dir: PathBuf,
    /// The game whose arrays are saved, as JSON: every manifest names it, and only a manifest
    /// naming it is restored.
    game: serde_json::Value,
    /// The checkpoints kept on disk, oldest first (at most two).
    kept: std::sync::Mutex<Vec<WorkerCheckpoint>>,
}

impl CheckpointStore {
    /// A store in the checkpoint directory `dir` for arrays of `game` (its JSON, `{"game":
    /// FAMILY, ...}`; null where no run names one: tests, solves in memory), with no checkpoint
    /// known yet.
    pub fn new(dir: PathBuf, game: serde_json::Value) -> CheckpointStore {
        CheckpointStore {
            dir,
            game,
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
        let cp = engine.checkpoint(wave, &self.dir, kept.last(), &self.game)?;
        kept.push(cp.clone());
        if kept.len() > 2 {
            kept.remove(0);
        }
        prune(&self.dir, engine.me(), &kept)?;
        Ok(cp)
    }

    /// Load `engine`'s arrays as they were after wave `wave` closed.
    pub fn load<G: Game>(&self, engine: &WorkerEngine<G>, wave: u32) -> Result<(), KernelError> {
        let cp = engine.restore(wave, &self.dir, &self.game)?;
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
