//! How much memory a worker may use, and what follows: where the cells live, and the defaults.
//! 1. [`CellStorage`] puts the cells in memory or in mapped files, and in files sizes the memory
//!    for held-back updates; the default budget is the machine's memory or its cgroup's limit.
//! 2. The send buffers are fixed, not budgeted ([`super::engine::SEND_BATCH`],
//!    [`super::engine::STATES_BATCH`]); [`CellStorage::for_budget`] keeps an allowance for them.

use std::path::{Path, PathBuf};

/// Where a worker keeps its cells while solving.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CellStorage {
    /// Anonymous memory (huge pages where the system allows): the fastest, for cells that fit
    /// the memory budget.
    Memory,
    /// A shared map of a file in the data directory, for cells larger than the budget. Each
    /// wave's updates are held back in buckets (`super::update_buckets`) and applied shard by
    /// shard when it closes, so the cells are read and written in order, once per wave.
    File {
        /// Memory for the held-back updates before they are written to the buckets' files.
        held_bytes: usize,
    },
}

impl CellStorage {
    /// Memory if `states` cells (and working buffers) fit in `budget` bytes. The working buffers
    /// (update buffers, the bitmaps of the shards a wave is closing or expanding, gathered
    /// tables) are not measured: 512 MiB is an allowance for them, not a bound. Otherwise files,
    /// with a quarter of the budget (at most 256 MiB) for held-back updates; the rest is left to
    /// the page cache, through which the cells pass.
    pub fn for_budget(states: u64, budget: u64) -> CellStorage {
        const BUFFERS: u64 = 512 << 20;
        if super::cell_code::cell_bytes(states) + BUFFERS <= budget {
            CellStorage::Memory
        } else {
            CellStorage::File {
                held_bytes: (budget / 4).clamp(1 << 20, 256 << 20) as usize,
            }
        }
    }

    /// Cells in files with the most memory for held-back updates: for tests and tools.
    pub const FILE: CellStorage = CellStorage::File {
        held_bytes: 256 << 20,
    };
}

/// Physical memory of this machine in bytes (from /proc/meminfo; 0 where unavailable).
pub fn physical_memory() -> u64 {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// What this process may use: the machine's memory, or its memory cgroup's limit where that is
/// lower (a container, a systemd unit's `MemoryMax`, `scripts/in-cgroup.sh`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    /// Bytes.
    pub bytes: u64,
    /// Where the number comes from, for the log: `physical memory`, or the cgroup's file.
    pub source: String,
}

/// This process's [`MemoryLimit`].
pub fn memory_limit() -> MemoryLimit {
    let physical = physical_memory();
    match cgroup_memory_limit() {
        Some((limit, file)) if physical == 0 || limit < physical => MemoryLimit {
            bytes: limit,
            source: format!(
                "the limit of this process's memory cgroup ({})",
                file.display()
            ),
        },
        _ => MemoryLimit {
            bytes: physical,
            source: "physical memory".into(),
        },
    }
}

/// Memory a process needs beside its budget (its code, threads and runtime, the fixed buffers
/// of the table writer and of the transports), left out of the default budget: below 64 MiB of
/// limit a quarter is less than this.
pub const PROCESS_RESERVE: u64 = 16 << 20;

/// The smallest default budget: with less, a build does not fit its limit (measured: cc2p 6×6 / 3
/// builds in a 24 MiB cgroup, with an 8 MiB budget; a 20 MiB cgroup kills it).
pub const MIN_DEFAULT_BUDGET: u64 = 8 << 20;

/// The memory budget when none is given: three quarters of `limit`, and at most `limit` less
/// [`PROCESS_RESERVE`].
pub fn default_budget_of(limit: u64) -> u64 {
    (limit / 4 * 3).min(limit.saturating_sub(PROCESS_RESERVE))
}

/// The memory budget when none is given: [`default_budget_of`] [`memory_limit`].
pub fn default_memory_budget() -> u64 {
    default_budget_of(memory_limit().bytes)
}

/// Budgets under this return large freed buffers to the system at once ([`fit_allocator_to`]).
pub const SMALL_BUDGET: u64 = 1 << 30;

/// Under a [`SMALL_BUDGET`], make glibc's malloc give blocks over 128 KiB back to the system
/// when they are freed: its default threshold grows to the largest block freed (up to 32 MiB), and
/// blocks under it stay in the heap, so a worker filling zones one after another held some 10 MB
/// it had freed and was killed in a 24 MiB cgroup (docs/benchmarks/out-of-core.md). Above it,
/// memory is plentiful and the heap's reuse saves page faults.
pub fn fit_allocator_to(budget: u64) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if budget < SMALL_BUDGET {
        // SAFETY: mallopt only changes a tunable of the allocator.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = budget;
}

/// The memory budget: `given` (`--memory-budget`), else [`default_memory_budget`]; with a line
/// for the log that says which, and from what limit. A limit too small for any build is refused
/// here, before anything is allocated or written (a build would be killed partway).
pub fn choose_memory_budget(given: Option<u64>) -> Result<(u64, String), String> {
    let gib = |b: u64| format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64);
    let mib = |b: u64| format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64);
    match given {
        Some(bytes) => Ok((
            bytes,
            format!("memory budget {} (--memory-budget)", gib(bytes)),
        )),
        None => {
            let limit = memory_limit();
            let budget = default_budget_of(limit.bytes);
            if limit.bytes > 0 && budget < MIN_DEFAULT_BUDGET {
                return Err(format!(
                    "{} allows {}: too little for a build, which needs {} for the process itself \
                     and a memory budget of at least {} (raise the limit to {} or more)",
                    limit.source,
                    mib(limit.bytes),
                    mib(PROCESS_RESERVE),
                    mib(MIN_DEFAULT_BUDGET),
                    mib(PROCESS_RESERVE + MIN_DEFAULT_BUDGET)
                ));
            }
            let line = format!(
                "memory budget {}: three quarters of {} ({}), {} kept for the process itself at \
                 the least; --memory-budget sets it",
                gib(budget),
                limit.source,
                gib(limit.bytes),
                mib(PROCESS_RESERVE)
            );
            Ok((budget, line))
        }
    }
}

/// The lowest memory limit of this process's cgroup and the cgroups above it (v1
/// `memory.limit_in_bytes`, v2 `memory.max`), with the file that sets it.
fn cgroup_memory_limit() -> Option<(u64, PathBuf)> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    cgroup_limit_in(&cgroups, &mounts, |p| std::fs::read_to_string(p).ok())
}

/// [`cgroup_memory_limit`] from the texts of `/proc/self/cgroup` and `/proc/self/mountinfo`,
/// reading the limit files with `read`.
fn cgroup_limit_in(
    cgroups: &str,
    mountinfo: &str,
    read: impl Fn(&Path) -> Option<String>,
) -> Option<(u64, PathBuf)> {
    let mut lowest: Option<(u64, PathBuf)> = None;
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        // v2 lists no controllers; v1 has a hierarchy per controller, memory's among them.
        let v2 = controllers.is_empty();
        if !v2 && !controllers.split(',').any(|c| c == "memory") {
            continue;
        }
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        for (mount, own) in cgroup_dirs(mountinfo, v2, path) {
            // A limit anywhere above the process's cgroup holds it too.
            let mut at = own;
            loop {
                let limit_file = at.join(file);
                // "max" (v2: no limit) does not parse.
                let limit = read(&limit_file).and_then(|t| t.trim().parse::<u64>().ok());
                if let Some(limit) = limit {
                    if lowest.as_ref().is_none_or(|(l, _)| limit < *l) {
                        lowest = Some((limit, limit_file));
                    }
                }
                if at == mount || !at.pop() {
                    break;
                }
            }
        }
    }
    lowest
}

/// Where the cgroup `path` of a hierarchy (v2, or v1's memory controller) is mounted: (mount
/// point, the cgroup's directory), from `mountinfo`; the usual mount points where it lists none.
fn cgroup_dirs(mountinfo: &str, v2: bool, path: &str) -> Vec<(PathBuf, PathBuf)> {
    let under = |mount: &Path, root: &str| {
        // A mount of a cgroup below the hierarchy's root (a container's): the path below it.
        let rel = path.strip_prefix(root).unwrap_or(path);
        let own = mount.join(rel.trim_start_matches('/'));
        (mount.to_path_buf(), own)
    };
    let mut dirs: Vec<(PathBuf, PathBuf)> = mountinfo
        .lines()
        .filter_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            let mount: Vec<&str> = mount.split(' ').collect();
            let fs: Vec<&str> = fs.split(' ').collect();
            let (root, point) = (*mount.get(3)?, *mount.get(4)?);
            let ours = match (v2, fs.first()?) {
                (true, &"cgroup2") => true,
                (false, &"cgroup") => fs.get(2)?.split(',').any(|o| o == "memory"),
                _ => false,
            };
            ours.then(|| under(Path::new(point), root))
        })
        .collect();
    if dirs.is_empty() {
        let usual: &[&str] = if v2 {
            &["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
        } else {
            &["/sys/fs/cgroup/memory"]
        };
        dirs = usual.iter().map(|m| under(Path::new(m), "/")).collect();
    }
    dirs
}

/// The largest shard size the default allows: 16,777,216 states.
pub const DEFAULT_SHARD_SIZE: u64 = 1 << 24;
/// The smallest shard size a budget makes the default: smaller shards cost more per state than
/// they save (each has its files, its wave-log frame and a few kilobytes of bookkeeping).
pub const MIN_DEFAULT_SHARD_SIZE: u64 = 1 << 16;
/// Bytes a shard's state takes at a time, per thread, and then some: out of core a thread closes
/// a whole shard (its cells through the page cache, the bitmaps of the states it decided and
/// won: about 1.25 bytes a state), and a table is gathered a shard at a time (its values,
/// depths and the writer's copy: about 9 bytes a state of one shard).
const SHARD_BYTES_PER_STATE: u64 = 16;

/// The shard size when none is given: [`DEFAULT_SHARD_SIZE`], or less where `threads` threads
/// closing a shard each within `budget` bytes ask for it (a power of two, at least
/// [`MIN_DEFAULT_SHARD_SIZE`]).
pub fn default_shard_size(budget: u64, threads: usize) -> u64 {
    let fits = budget / (SHARD_BYTES_PER_STATE * threads.max(1) as u64);
    if fits >= DEFAULT_SHARD_SIZE {
        DEFAULT_SHARD_SIZE
    } else {
        power_of_two_at_most(fits).max(MIN_DEFAULT_SHARD_SIZE)
    }
}

/// Shards a table of `states` states is cut into at the least, where the default shard size
/// allows: the layer is gathered a shard at a time beside what is already gathered, so a shard of
/// a small table would otherwise add a large part of it to the peak (a 16 M-state shard of a
/// 141 M-state table adds a third; a 2 M-state one, 3 bytes a state in flight, 5 %).
pub const MIN_DEFAULT_SHARDS: u64 = 64;

/// The smallest shard [`MIN_DEFAULT_SHARDS`] asks for: below it the table is small enough that
/// a shard's share of the peak does not matter, and its files and bookkeeping would.
pub const MIN_TABLE_SHARD_SIZE: u64 = 1 << 20;

/// [`default_shard_size`] for a table of `states` states: no more than a [`MIN_DEFAULT_SHARDS`]th
/// of it (a power of two, at least [`MIN_TABLE_SHARD_SIZE`]). Large tables are unchanged.
pub fn default_table_shard_size(budget: u64, threads: usize, states: u64) -> u64 {
    let share = power_of_two_at_most(states / MIN_DEFAULT_SHARDS);
    default_shard_size(budget, threads).min(share.max(MIN_TABLE_SHARD_SIZE))
}

/// The largest power of two not above `x` (1 for 0).
fn power_of_two_at_most(x: u64) -> u64 {
    1 << x.max(1).ilog2()
}

/// Read a size such as `16G`, `16GiB`, `800M`, `512k` or `1000000` (bytes). Units are binary:
/// K = 1024, M = 1024², G = 1024³, T = 1024⁴; an optional `i`/`iB`/`B` after the unit is ignored.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 16G, 800M, 1000000)"))?;
    let unit = unit.trim().to_ascii_lowercase();
    let shift = match unit.trim_end_matches('b').trim_end_matches('i') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (use K, M, G or T)"
            ))
        }
    };
    let bytes = number * (1u64 << shift) as f64;
    // 2^64 and above would saturate to u64::MAX silently.
    if bytes >= u64::MAX as f64 {
        return Err(format!("{text:?} is too large a size"));
    }
    Ok(bytes as u64)
}

/// Start writing a file's dirty pages now, without waiting. Under a memory limit that counts the
/// page cache (a cgroup), pages already written are cheap to reclaim, while dirty ones stall the
/// reclaim that the next read needs.
pub fn start_writeback(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain system call on an open descriptor; only advice, errors ignored.
        unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("16G").unwrap(), 16 << 30);
        assert_eq!(parse_size("16 GiB").unwrap(), 16 << 30);
        assert_eq!(parse_size("1.5g").unwrap(), 3 << 29);
        assert_eq!(parse_size("800M").unwrap(), 800 << 20);
        assert_eq!(parse_size("512kB").unwrap(), 512 << 10);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5X").is_err());
        assert!(parse_size("99999999T").unwrap_err().contains("too large"));
        assert!(parse_size("16777216T").is_err());
        assert_eq!(parse_size("16777215T").unwrap(), 16777215 << 40);
    }

    /// Three quarters of a large limit; of a small one, what the process itself leaves.
    #[test]
    fn the_default_budget_leaves_the_process_its_reserve() {
        assert_eq!(default_budget_of(24 << 30), 18 << 30);
        assert_eq!(default_budget_of(64 << 20), 48 << 20);
        assert_eq!(default_budget_of(32 << 20), 16 << 20);
        assert_eq!(default_budget_of(24 << 20), MIN_DEFAULT_BUDGET);
        assert!(default_budget_of(16 << 20) < MIN_DEFAULT_BUDGET);
        assert_eq!(default_budget_of(1 << 20), 0);
    }

    /// The lowest limit from the process's cgroup up to its hierarchy's mount, in v1 (a
    /// controller's hierarchy, found in mountinfo) and v2; "max" and other hierarchies ignored.
    #[test]
    fn cgroup_limits_are_read_in_v1_and_v2_up_the_hierarchy() {
        let mounts = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                      36 31 0:33 / /sys/fs/cgroup/devices rw,relatime - cgroup cgroup rw,devices\n\
                      41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let files = |pairs: &'static [(&'static str, &'static str)]| {
            move |p: &Path| {
                pairs
                    .iter()
                    .find(|(f, _)| Path::new(f) == p)
                    .map(|(_, t)| t.to_string())
            }
        };
        let v1 = "4:memory:/jobs/build\n5:devices:/jobs/build\n0::/\n";
        let got = cgroup_limit_in(
            v1,
            mounts,
            files(&[
                (
                    "/sys/fs/cgroup/memory/jobs/build/memory.limit_in_bytes",
                    "209715200\n",
                ),
                (
                    "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
                    "9223372036854771712\n",
                ),
                (
                    "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                    "9223372036854771712\n",
                ),
                (
                    "/sys/fs/cgroup/devices/jobs/build/memory.limit_in_bytes",
                    "1",
                ),
            ]),
        );
        assert_eq!(
            got,
            Some((
                200 << 20,
                PathBuf::from("/sys/fs/cgroup/memory/jobs/build/memory.limit_in_bytes")
            ))
        );
        // A parent's lower limit holds the child too.
        let got = cgroup_limit_in(
            v1,
            mounts,
            files(&[
                (
                    "/sys/fs/cgroup/memory/jobs/build/memory.limit_in_bytes",
                    "209715200",
                ),
                (
                    "/sys/fs/cgroup/memory/jobs/memory.limit_in_bytes",
                    "104857600",
                ),
            ]),
        );
        assert_eq!(got.map(|g| g.0), Some(100 << 20));
        // v2 (unified, mounted at /sys/fs/cgroup): "max" is no limit.
        let v2_mounts = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let unit = files(&[
            (
                "/sys/fs/cgroup/system.slice/w.service/memory.max",
                "1073741824\n",
            ),
            ("/sys/fs/cgroup/system.slice/memory.max", "max\n"),
        ]);
        let got = cgroup_limit_in("0::/system.slice/w.service\n", v2_mounts, unit);
        assert_eq!(got.map(|g| g.0), Some(1 << 30));
        // Without mountinfo, the usual mount points.
        let got = cgroup_limit_in("0::/system.slice/w.service\n", "", unit);
        assert_eq!(got.map(|g| g.0), Some(1 << 30));
        assert_eq!(cgroup_limit_in("0::/\n", v2_mounts, files(&[])), None);
    }

    #[test]
    fn a_small_table_is_cut_into_at_least_64_shards() {
        let (budget, threads) = (64 << 30, 2);
        // cc2p 7×7 / 3's quarter: 141,219,540 states → 2 M-state shards (68 of them).
        assert_eq!(
            default_table_shard_size(budget, threads, 141_219_540),
            1 << 21
        );
        // Level 2 (14.8 × 10⁹ states): the default.
        assert_eq!(
            default_table_shard_size(budget, threads, 14_841_300_390),
            DEFAULT_SHARD_SIZE
        );
        assert_eq!(
            default_table_shard_size(budget, threads, 100),
            MIN_TABLE_SHARD_SIZE
        );
        // The budget still has the last word.
        assert_eq!(
            default_table_shard_size(36 << 20, 2, 14_841_300_390),
            1 << 20
        );
    }

    #[test]
    fn the_default_shard_size_follows_the_budget() {
        assert_eq!(default_shard_size(64 << 30, 32), DEFAULT_SHARD_SIZE);
        assert_eq!(default_shard_size(u64::MAX, 1), DEFAULT_SHARD_SIZE);
        // 36 MiB on 2 threads: 1,179,648 states fit, so shards of 2^20.
        assert_eq!(default_shard_size(36 << 20, 2), 1 << 20);
        assert_eq!(default_shard_size(150 << 20, 2), 1 << 22);
        assert_eq!(default_shard_size(1 << 20, 8), MIN_DEFAULT_SHARD_SIZE);
        assert_eq!(default_shard_size(0, 0), MIN_DEFAULT_SHARD_SIZE);
        for (budget, threads) in [(1u64 << 28, 3), (5 << 30, 7), (123_456_789, 1)] {
            let s = default_shard_size(budget, threads);
            assert!(s.is_power_of_two() && s <= DEFAULT_SHARD_SIZE, "{s}");
            assert!(
                s * 16 * threads as u64 <= budget.max(MIN_DEFAULT_SHARD_SIZE * 16 * threads as u64)
            );
        }
    }

    #[test]
    fn storage_follows_the_budget() {
        assert_eq!(
            CellStorage::for_budget(1 << 30, 4 << 30),
            CellStorage::Memory
        );
        assert_eq!(
            CellStorage::for_budget(1 << 30, 1 << 30),
            CellStorage::File {
                held_bytes: 256 << 20
            }
        );
        assert_eq!(
            CellStorage::for_budget(1 << 30, 32 << 20),
            CellStorage::File {
                held_bytes: 8 << 20
            }
        );
    }
}
