//! Predecessor updates held back until the close of the wave, one bucket per owned shard.
//! 1. A worker whose cells live in files applies a wave's updates in one pass over its shards, each
//!    shard read and written once, not cells larger than memory at random (docs/kernel.md).
//! 2. A bucket keeps its latest updates in memory and appends the rest to a file whose frames are
//!    `kingmaker_tablefmt::update_bucket` (docs/format.md).

use super::memory::start_writeback;
use super::shard::ShardPlan;
use super::KernelError;
use kingmaker_tablefmt::fsio::open_regular_with;
use kingmaker_tablefmt::update_bucket::{each_frame, encode_frame, file_name, MAX_FRAME_UPDATES};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The fewest updates a bucket holds before it writes them out, whatever the number of shards:
/// smaller frames would cost a system call per few hundred bytes.
const MIN_PENDING: usize = 1 << 10;

/// Updates a bucket holds in memory before it writes them out, for a worker of `shards` shards
/// that may hold `held_bytes` of them in all.
pub fn spill_threshold(held_bytes: usize, shards: usize) -> usize {
    (held_bytes / 4 / shards.max(1)).clamp(MIN_PENDING, MAX_FRAME_UPDATES as usize)
}

/// The held-back updates of the shards one worker owns.
pub struct UpdateBuckets {
    /// Where the buckets spill; without a directory everything stays in memory.
    dir: Option<PathBuf>,
    /// Indexed by shard id: `Some` for owned shards.
    buckets: Vec<Option<Mutex<Bucket>>>,
    /// Updates a bucket holds in memory before it writes them out.
    spill_at: usize,
}

#[derive(Default)]
struct Bucket {
    /// Shard-local codes (`offset << 1 | child_is_win`), in arrival order.
    pending: Vec<u32>,
    /// Whether frames were written to the shard's file in this wave.
    spilled: bool,
    /// Updates held in this wave, pending or written.
    held: u64,
}

impl UpdateBuckets {
    /// Buckets for the shards of `plan` where `owned` is true, spilling to `dir` (the worker's
    /// directory for the layer) when one holds `spill_at` updates ([`spill_threshold`]); any
    /// bucket files left there by an interrupted wave are deleted. A shard's codes are u32s, so
    /// shards may hold at most 2^31 states.
    pub fn new(
        plan: &ShardPlan,
        owned: &[bool],
        dir: Option<&Path>,
        spill_at: usize,
    ) -> Result<UpdateBuckets, KernelError> {
        if plan.range(0).end > 1 << 31 {
            return Err(KernelError::Worker {
                worker: "this".into(),
                message: format!(
                    "shards of {} states are too large for cells in files (at most 2^31)",
                    plan.range(0).end
                ),
            });
        }
        let buckets = UpdateBuckets {
            dir: dir.map(Path::to_path_buf),
            buckets: owned
                .iter()
                .map(|&o| o.then(|| Mutex::new(Bucket::default())))
                .collect(),
            spill_at: spill_at.max(1),
        };
        buckets.clear()?;
        Ok(buckets)
    }

    fn path(&self, shard: usize) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(file_name(shard)))
    }

    /// Hold back `updates` (`index << 1 | child_is_win`, every index in an owned shard; grouped
    /// by shard here, so that each shard's bucket is locked once).
    pub fn add(&self, plan: &ShardPlan, updates: &mut [u64]) -> Result<(), KernelError> {
        radsort::sort_by_key(updates, |&u| plan.shard_of(u >> 1) as u32);
        let mut rest = &updates[..];
        while let Some(&first) = rest.first() {
            let shard = plan.shard_of(first >> 1);
            let range = plan.range(shard);
            let end = rest.partition_point(|&u| u >> 1 < range.end);
            let (run, tail) = rest.split_at(end);
            rest = tail;
            let bucket = self.buckets[shard]
                .as_ref()
                .unwrap_or_else(|| panic!("an update for shard {shard}, not owned here"));
            let mut bucket = bucket.lock().expect("bucket");
            let base = range.start << 1;
            bucket
                .pending
                .extend(run.iter().map(|&u| (u - base) as u32));
            bucket.held += run.len() as u64;
            if bucket.pending.len() >= self.spill_at {
                self.spill(shard, &mut bucket)?;
            }
        }
        Ok(())
    }

    /// Append the bucket's pending updates to its file (kept in memory without a directory).
    fn spill(&self, shard: usize, bucket: &mut Bucket) -> Result<(), KernelError> {
        let Some(path) = self.path(shard) else {
            return Ok(());
        };
        let mut frame = Vec::new();
        encode_frame(&mut bucket.pending, &mut frame).map_err(|e| KernelError::io(&path, e))?;
        let mut file =
            open_regular_with(&path, std::fs::OpenOptions::new().create(true).append(true))
                .map_err(|e| KernelError::io(&path, e))?;
        file.write_all(&frame)
            .map_err(|e| KernelError::io(&path, e))?;
        start_writeback(&file);
        bucket.pending.clear();
        bucket.spilled = true;
        Ok(())
    }

    /// How many updates `shard`'s bucket holds.
    pub fn held(&self, shard: usize) -> u64 {
        self.buckets[shard]
            .as_ref()
            .map_or(0, |b| b.lock().expect("bucket").held)
    }

    /// Hand every held-back update of `shard` to `apply` as shard-local codes, in runs (the
    /// file's frames, crc-checked, then the pending ones), and empty the bucket. Returns how many.
    pub fn drain(
        &self,
        shard: usize,
        mut apply: impl FnMut(&[u32]) -> Result<(), KernelError>,
    ) -> Result<u64, KernelError> {
        let Some(bucket) = &self.buckets[shard] else {
            return Ok(0);
        };
        let mut bucket = bucket.lock().expect("bucket");
        let mut count = 0;
        if bucket.spilled {
            let path = self.path(shard).expect("a spilled bucket has a file");
            let file = open_regular_with(&path, std::fs::OpenOptions::new().read(true))
                .map_err(|e| KernelError::io(&path, e))?;
            let reader = std::io::BufReader::with_capacity(1 << 16, file);
            each_frame(reader, &path.display().to_string(), |codes| {
                count += codes.len() as u64;
                apply(codes)
            })?;
            std::fs::remove_file(&path).map_err(|e| KernelError::io(&path, e))?;
            bucket.spilled = false;
        }
        count += bucket.pending.len() as u64;
        apply(&bucket.pending)?;
        bucket.pending = Vec::new();
        debug_assert_eq!(count, bucket.held);
        bucket.held = 0;
        Ok(count)
    }

    /// Forget every held-back update (their wave is being redone) and delete the files.
    pub fn clear(&self) -> Result<(), KernelError> {
        for (shard, bucket) in self.buckets.iter().enumerate() {
            let Some(bucket) = bucket else { continue };
            let mut bucket = bucket.lock().expect("bucket");
            bucket.pending = Vec::new();
            bucket.spilled = false;
            bucket.held = 0;
            if let Some(path) = self.path(shard) {
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(KernelError::io(&path, e))
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_come_back_per_shard_through_files_and_memory() {
        let dir = tempfile::tempdir().unwrap();
        let plan = ShardPlan::new(1000, 128);
        let owned: Vec<bool> = (0..plan.shards()).map(|s| s != 2).collect();
        let buckets = UpdateBuckets::new(&plan, &owned, Some(dir.path()), 5000).unwrap();
        let mut expected: Vec<Vec<u32>> = vec![Vec::new(); plan.shards()];
        // Enough updates that every bucket spills several frames.
        let mut batch = Vec::new();
        for i in 0..200_000u64 {
            let index = i * 7919 % 1000;
            if plan.shard_of(index) == 2 {
                continue;
            }
            let update = index << 1 | (i & 1);
            batch.push(update);
            let shard = plan.shard_of(index);
            expected[shard].push((update - (plan.range(shard).start << 1)) as u32);
            if batch.len() == 999 {
                buckets.add(&plan, &mut batch).unwrap();
                batch.clear();
            }
        }
        buckets.add(&plan, &mut batch).unwrap();
        let spilled = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(
            spilled,
            plan.shards() - 1,
            "every owned bucket wrote frames"
        );
        for (shard, expected) in expected.iter_mut().enumerate() {
            let mut got = Vec::new();
            let n = buckets
                .drain(shard, |c| {
                    got.extend_from_slice(c);
                    Ok(())
                })
                .unwrap();
            got.sort_unstable();
            expected.sort_unstable();
            assert_eq!(n as usize, got.len());
            assert_eq!(&got, expected, "shard {shard}");
        }
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "drained buckets leave no files"
        );
    }

    #[test]
    fn a_damaged_bucket_file_is_an_error_and_clear_forgets_everything() {
        let dir = tempfile::tempdir().unwrap();
        let plan = ShardPlan::new(1 << 20, 1 << 20);
        let buckets = UpdateBuckets::new(&plan, &[true], Some(dir.path()), 100).unwrap();
        let mut updates: Vec<u64> = (0..300).map(|i| i * 2).collect();
        buckets.add(&plan, &mut updates).unwrap();
        let path = dir.path().join(file_name(0));
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[20] ^= 4;
        std::fs::write(&path, &bytes).unwrap();
        let e = buckets.drain(0, |_| Ok(())).unwrap_err().to_string();
        assert!(
            e.contains("shard-00000.updates") && e.contains("crc32"),
            "{e}"
        );

        buckets.add(&plan, &mut updates).unwrap();
        buckets.clear().unwrap();
        assert!(!path.exists());
        assert_eq!(buckets.drain(0, |_| Ok(())).unwrap(), 0);
        // A new set of buckets deletes what an interrupted wave left.
        std::fs::write(&path, b"left over").unwrap();
        UpdateBuckets::new(&plan, &[true], Some(dir.path()), 100).unwrap();
        assert!(!path.exists());
    }
}
