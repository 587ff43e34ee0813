//! What a build will need (states, memory, disk), checked before anything is allocated: a job
//! that cannot fit is refused with its numbers, not found out by the kernel's OOM killer or a full
//! disk after hours of waves. Every figure is an upper bound: what cannot be known before the
//! layers are solved (how well tables and wave logs compress) is counted at a rate above the
//! most any game has needed (docs/cli.md, "What a build needs").

use crate::digits::{human_bytes, thousands};
use anyhow::{bail, Result};
use kingmaker_kernel::cell_code::cell_bytes;
use std::path::Path;

/// Bits a state of a finished layer file takes at most (values and depths, zstd level 1): the
/// most measured is 3.9 (TOPPEN); cc2p takes 2.2 at 3 and 4 pieces and 3.7 at 6, cc3p level 2
/// 2.5. The routed file of an out-of-core expansion is such a file too.
pub const TABLE_BITS_PER_STATE: u64 = 4;
/// Bits a solved state's wave logs take at most (a zstd'd bitmap per shard and wave): the most
/// measured is 5.1 (TOPPEN, 49 waves); cc2p 6×6 / 3 takes 2.7.
pub const WAVE_LOG_BITS_PER_STATE: u64 = 6;
/// Checkpoint generations on disk at once: the last two (a damaged one falls back to the one
/// before), and the one being written before the oldest is pruned. A generation is at most the
/// cells themselves (zstd never grows them by more than its frame), and chunks that did not
/// change are shared, so the three together are counted as two generations of cells.
pub const CHECKPOINT_GENERATIONS: u64 = 2;
/// Bytes a file takes beyond its length at most (the filesystem's block).
const FILE_SLACK: u64 = 4096;
/// The small files of a run directory (run.json, checkpoint.json, progress.json, waves.jsonl,
/// summary.json, the lock) together, at most.
const FIXED_BYTES: u64 = 1 << 20;
/// Frames a shard's wave log is counted for (waves), each with its header and zstd's frame.
const FRAMED_WAVES: u64 = 256;
const FRAME_BYTES: u64 = 40;

/// What is being built, as far as its costs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// States of the index space the kernel solves (a reduced game's, for a game solved as one).
    pub solved: u64,
    /// States of the finished tables (more than `solved` for a reduced game).
    pub full: u64,
    /// Layers to solve.
    pub layers: usize,
    /// States per shard.
    pub shard_size: u64,
    /// The memory budget of whoever holds the cells.
    pub budget: u64,
    /// Whether remote workers hold the cells (and check their own disks).
    pub remote: bool,
}

/// A build's needs, from its state counts: each a bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needs {
    /// States of the index space the kernel solves.
    pub states: u64,
    /// Bytes of cells while a layer is solved (six bits per solved state, five to a 32-bit word).
    pub cells: u64,
    /// Whether the cells fit the memory budget (else they are files mapped from the run
    /// directory, and count as disk).
    pub cells_in_memory: bool,
    /// Bytes of disk at the peak, at most: the largest of [`Needs::phases`].
    pub disk: u64,
    /// What is on disk at once in each phase of the last layer (the earlier layers' tables
    /// included), each part named: the waves, then the gathering, then the writing of the table.
    pub phases: Vec<(&'static str, Vec<(&'static str, u64)>)>,
}

/// Bytes of a finished layer file of `states` states, at most.
pub fn table_bytes(states: u64) -> u64 {
    let blocks = states.div_ceil(65_536);
    (states.saturating_mul(TABLE_BITS_PER_STATE) / 8)
        .saturating_add(blocks.saturating_mul(16 + 32))
        .saturating_add(8192 + FILE_SLACK)
}

/// The needs of `job`.
pub fn needs(job: &Job) -> Needs {
    let cells = cell_bytes(job.solved);
    let cells_in_memory = job.remote || cells <= job.budget;
    let shards = job.solved.div_ceil(job.shard_size.max(1));
    let table = table_bytes(job.full);
    let finished = table.saturating_mul(job.layers.saturating_sub(1) as u64);
    let mut phases = Vec::new();
    if job.remote {
        // The workers hold cells, logs and checkpoints; the coordinator writes the tables.
        phases.push((
            "writing the table",
            vec![("tables", finished), ("table", table)],
        ));
    } else {
        let mapped = if cells_in_memory {
            0
        } else {
            cells.saturating_add(shards * FILE_SLACK)
        };
        // Out of core, each wave's updates wait in buckets (the largest wave measured sent 0.2
        // updates a state, at 1 to 2 bytes each) and its decided states in frontier files.
        let (buckets, frontier) = if cells_in_memory {
            (0, 0)
        } else {
            (
                job.solved.saturating_add(shards * FILE_SLACK),
                (job.solved / 4).saturating_add(shards * (FILE_SLACK + 2 * FRAME_BYTES)),
            )
        };
        let logs = (job.solved.saturating_mul(WAVE_LOG_BITS_PER_STATE) / 8)
            .saturating_add(shards * (FILE_SLACK + FRAMED_WAVES * FRAME_BYTES));
        let chunks = cells.div_ceil(kingmaker_tablefmt::checkpoint::CHUNK_BYTES) + shards;
        let checkpoints = cells
            .saturating_add(chunks * FILE_SLACK)
            .saturating_mul(CHECKPOINT_GENERATIONS);
        let routed =
            if job.full > job.solved && crate::expansion::is_out_of_core(job.solved, job.budget) {
                table
            } else {
                0
            };
        phases.push((
            "the waves",
            vec![
                ("tables", finished),
                ("cells", mapped),
                ("update buckets", buckets),
                ("frontiers", frontier),
                ("wave logs", logs),
                ("checkpoints", checkpoints),
            ],
        ));
        // Gathering reads cells and logs (released shard by shard, counted whole) and, for a
        // reduced game expanded out of core, routes the table to a file; the layer's final
        // checkpoint stands until its table is written.
        phases.push((
            "gathering",
            vec![
                ("tables", finished),
                ("cells", mapped),
                ("wave logs", logs),
                ("checkpoints", checkpoints),
                ("routed", routed),
                ("table", if routed > 0 { 0 } else { table }),
            ],
        ));
        if routed > 0 {
            phases.push((
                "writing the table",
                vec![
                    ("tables", finished),
                    ("checkpoints", checkpoints),
                    ("routed", routed),
                    ("table", table),
                ],
            ));
        }
    }
    for (_, parts) in &mut phases {
        parts.retain(|(_, b)| *b > 0);
        parts.push(("run files", FIXED_BYTES));
    }
    let disk = phases
        .iter()
        .map(|(_, parts)| parts.iter().fold(0u64, |a, (_, b)| a.saturating_add(*b)))
        .max()
        .unwrap_or(0);
    Needs {
        states: job.solved,
        cells,
        cells_in_memory,
        disk,
        phases,
    }
}

impl Needs {
    /// The phase at the peak and its parts, e.g. "gathering: tables 1.2 GiB, wave logs …".
    pub fn peak_parts(&self) -> String {
        let sum = |parts: &[(&str, u64)]| parts.iter().fold(0u64, |a, (_, b)| a.saturating_add(*b));
        self.phases
            .iter()
            .max_by_key(|(_, parts)| sum(parts))
            .map(|(phase, parts)| {
                let parts: Vec<String> = parts
                    .iter()
                    .map(|(what, b)| format!("{what} {}", human_bytes(*b)))
                    .collect();
                format!("{phase}: {}", parts.join(", "))
            })
            .unwrap_or_default()
    }
}

/// Free bytes on the filesystem holding `path` (or its nearest existing ancestor).
pub fn free_disk(path: &Path) -> Option<u64> {
    // Absolute first: a relative path that does not exist yet (`--out huge`) has the working
    // directory as its nearest existing ancestor, which walking up its own components never
    // reaches (the parent of `huge` is "", and "" does not exist).
    let absolute = std::path::absolute(path).ok()?;
    let mut at = absolute.as_path();
    while !at.exists() {
        at = at.parent()?;
    }
    let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let ok = unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0;
    ok.then(|| (s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
}

/// Refuse a build whose needs exceed the disk at `out` (unless `ignore_disk`, which only warns);
/// say what it will use otherwise.
pub fn check(needs: &Needs, budget: u64, out: &Path, ignore_disk: bool) -> Result<()> {
    let where_cells = if needs.cells_in_memory {
        format!("in memory (budget {})", human_bytes(budget))
    } else {
        format!(
            "more than the memory budget of {}, so mapped from files in the run directory",
            human_bytes(budget)
        )
    };
    let plan = format!(
        "{} states: cells of {} {where_cells}; at most {} of disk ({})",
        thousands(needs.states),
        human_bytes(needs.cells),
        human_bytes(needs.disk),
        needs.peak_parts()
    );
    match free_disk(out) {
        Some(free) if needs.disk > free && !ignore_disk => bail!(
            "this build may not fit: {plan}, and {} has {} free. Give it a disk with room (--out), \
             a smaller game, more memory (--memory-budget) or workers (--workers). The bound \
             counts tables at {TABLE_BITS_PER_STATE} bits a state, the most any game has needed; \
             --ignore-disk-estimate builds anyway (a build that runs out of disk stops with its \
             solved cells checkpointed: free space and resume)",
            out.display(),
            human_bytes(free)
        ),
        Some(free) if needs.disk > free => tracing::warn!(
            "this build may not fit ({} free at {}); going on as --ignore-disk-estimate asks",
            human_bytes(free),
            out.display()
        ),
        Some(_) => {}
        None => tracing::warn!(
            "the free disk space at {} cannot be read: the build's {} of disk are not checked",
            out.display(),
            human_bytes(needs.disk)
        ),
    }
    tracing::info!("{plan}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(solved: u64, full: u64, layers: usize, shard_size: u64, budget: u64) -> Job {
        Job {
            solved,
            full,
            layers,
            shard_size,
            budget,
            remote: false,
        }
    }

    #[test]
    fn cells_fit_the_budget_or_count_as_disk() {
        let small = needs(&job(1000, 1000, 3, 1 << 20, 1 << 20));
        assert!(small.cells_in_memory);
        assert_eq!(small.cells, 800, "six bits a state, five to a word");
        let big = needs(&job(1 << 40, 1 << 40, 1, 1 << 24, 1 << 30));
        assert!(!big.cells_in_memory);
        assert!(big.disk > cell_bytes(1 << 40) + table_bytes(1 << 40));
        assert!(big.peak_parts().contains("cells"), "{}", big.peak_parts());
        // On workers the coordinator keeps only the finished tables.
        let remote = needs(&Job {
            remote: true,
            ..job(1 << 40, 1 << 40, 2, 1 << 24, 1 << 30)
        });
        assert!(remote.cells_in_memory);
        assert_eq!(remote.disk, 2 * table_bytes(1 << 40) + FIXED_BYTES);
        // A reduced game expanded out of core: the routed file beside the table being written.
        let routed = needs(&job(1 << 32, 1 << 34, 1, 1 << 24, 1 << 33));
        assert!(
            routed.peak_parts().contains("routed"),
            "{}",
            routed.peak_parts()
        );
        let in_memory = needs(&job(1 << 32, 1 << 34, 1, 1 << 24, 1 << 40));
        assert!(routed.disk > in_memory.disk);
        // No overflow at absurd sizes.
        assert_eq!(needs(&job(u64::MAX, u64::MAX, 64, 1, 0)).disk, u64::MAX);
    }

    /// The bound holds over the peaks measured (`du` of the run directory, sampled; the large
    /// ones in docs/benchmarks) with the shard sizes those builds chose.
    #[test]
    fn the_bound_is_above_every_peak_measured() {
        let gib = 1u64 << 30;
        for (what, j, peak) in [
            // docs/benchmarks/cc2p.md: 7×7 / 4 in memory, `--memory-budget 16G`.
            (
                "cc2p 7x7/4",
                job(15_835_337_595, 63_136_929_240, 1, 1 << 24, 16 * gib),
                43_472_976_357,
            ),
            // docs/benchmarks/cc3p-level2.md: level 2's three layers; the race's four.
            (
                "cc3p level 2",
                job(14_841_300_390, 14_841_300_390, 3, 1 << 24, 17 * gib),
                22_600_000_000,
            ),
            (
                "cc3p_race level 2",
                job(14_841_300_390, 14_841_300_390, 4, 1 << 24, 17 * gib),
                32_500_000_000,
            ),
            // Sampled every 50 ms on this machine (2026-12-07), default options.
            (
                "cc2p 6x6/3",
                job(19_778_000, 77_911_680, 1, 1 << 20, 17 * gib),
                29_131_322,
            ),
            (
                "cc2p 5x5/3",
                job(1_817_200, 7_084_000, 1, 1 << 20, 17 * gib),
                2_904_471,
            ),
            (
                "toppen",
                job(3_428_208, 3_428_208, 1, 1 << 20, 17 * gib),
                5_226_052,
            ),
            (
                "connect4 5x4",
                job(28_629_151, 28_629_151, 2, 1 << 20, 17 * gib),
                12_612_291,
            ),
            (
                "cc3p level 1",
                job(1_662, 1_662, 3, 1 << 20, 17 * gib),
                27_817,
            ),
        ] {
            let bound = needs(&j).disk;
            assert!(
                bound >= peak,
                "{what}: bound {bound} below the measured {peak}"
            );
        }
    }

    #[test]
    fn a_build_larger_than_the_disk_is_refused_with_its_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let n = 42_001_790_947_308_396;
        let huge = needs(&job(n, n, 1, 1 << 24, 17 << 30));
        let err = check(&huge, 17 << 30, &dir.path().join("run"), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("42,001,790,947,308,396 states")
                && err.contains("the memory budget of 17.0 GiB")
                && err.contains("free")
                && err.contains("--ignore-disk-estimate"),
            "{err}"
        );
        check(&huge, 17 << 30, &dir.path().join("run"), true).unwrap();
        let small = needs(&job(1000, 1000, 1, 1 << 20, 1 << 20));
        check(&small, 1 << 20, dir.path(), false).unwrap();
    }

    /// A relative path that does not exist yet is measured where it would be made (the working
    /// directory's filesystem), as its absolute form is.
    #[test]
    fn free_disk_is_read_for_relative_paths_not_yet_made() {
        let here = free_disk(Path::new(".")).expect("the working directory's free disk");
        for relative in ["kingmaker-no-such-run", "kingmaker-no-such/run/below"] {
            let free = free_disk(Path::new(relative))
                .unwrap_or_else(|| panic!("no free disk read for {relative}"));
            // Other processes write meanwhile: the same filesystem, within a gigabyte.
            assert!(
                free.abs_diff(here) < 1 << 30,
                "{relative}: {free} vs {here}"
            );
        }
    }
}
