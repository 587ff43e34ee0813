//! How much memory a worker may use, and what follows from it: whether a worker's cells live in
//! memory or in mapped files ([`CellStorage`]), and, in files, how much memory holds the wave's
//! held-back updates before they go to disk. The send buffers do not follow it: they are fixed
//! ([`super::engine::SEND_BATCH`] updates per destination and parallel task, at most threads ×
//! (workers − 1) × 512 KiB), and [`CellStorage::for_budget`] only keeps an allowance for them.

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
    /// Memory if `states` cells (plus a wave's bitmap and working buffers) fit in `budget` bytes.
    /// The working buffers (update buffers, gathered tables) are not measured: 512 MiB is an
    /// allowance for them, not a bound. Otherwise files, with a quarter of the budget (at most
    /// 256 MiB) for held-back updates; the rest is left to the page cache, through which the
    /// cells pass.
    pub fn for_budget(states: u64, budget: u64) -> CellStorage {
        const BUFFERS: u64 = 512 << 20;
        if states + states / 8 + BUFFERS <= budget {
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

/// The memory limit of this process's cgroup (v2), e.g. a systemd unit's `MemoryMax`.
fn cgroup_memory_limit() -> Option<u64> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let max = std::fs::read_to_string(format!("/sys/fs/cgroup{path}/memory.max")).ok()?;
    max.trim().parse().ok() // "max" (no limit) does not parse
}

/// The memory budget when none is given: three quarters of physical memory, or of the cgroup's
/// limit when that is lower (a worker under systemd's `MemoryMax`).
pub fn default_memory_budget() -> u64 {
    let physical = physical_memory();
    cgroup_memory_limit().map_or(physical, |l| l.min(physical)) / 4 * 3
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
