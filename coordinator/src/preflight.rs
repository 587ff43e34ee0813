//! What a build will need (states, memory, disk), checked before anything is allocated: a job
//! that cannot fit is refused with its numbers, not found out by the kernel's OOM killer.

use crate::digits::{human_bytes, thousands};
use anyhow::{bail, Result};
use std::path::Path;

/// A build's needs, from its state counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Needs {
    /// States of the index space the kernel solves (a reduced game's, for a game solved as one).
    pub states: u64,
    /// Bytes of cells while a layer is solved (six bits per solved state, five to a 32-bit word).
    pub cells: u64,
    /// Whether the cells fit the memory budget (else they are files mapped from the run
    /// directory, and count as disk).
    pub cells_in_memory: bool,
    /// Bytes of disk: mapped cells, the finished layers' values (2 bits a state of the full game,
    /// before compression), one checkpoint generation of compressed cells (bounded by the
    /// cells), and for a reduced game expanded out of core the routed file (one table's worth).
    pub disk: u64,
}

/// The needs of solving `layers` layers of `solved` states, whose tables have `full` states
/// (more than `solved` for a reduced game), with `budget` bytes of memory, in process (`remote`:
/// on workers, which hold the cells and check their own budgets).
pub fn needs(solved: u64, full: u64, layers: usize, budget: u64, remote: bool) -> Needs {
    let cells = kingmaker_kernel::cell_code::cell_bytes(solved);
    let cells_in_memory = remote || cells <= budget;
    let mapped = if cells_in_memory { 0 } else { cells };
    let values = (full / 4).saturating_mul(layers as u64);
    let checkpoint = if remote { 0 } else { cells / 4 };
    let routed = if full > solved && crate::expansion::is_out_of_core(solved, budget) {
        full / 4
    } else {
        0
    };
    Needs {
        states: solved,
        cells,
        cells_in_memory,
        disk: mapped
            .saturating_add(values)
            .saturating_add(checkpoint)
            .saturating_add(routed),
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

/// Refuse a build whose needs exceed the disk at `out`; say what it will use otherwise.
pub fn check(needs: &Needs, budget: u64, out: &Path) -> Result<()> {
    let where_cells = if needs.cells_in_memory {
        format!("in memory (budget {})", human_bytes(budget))
    } else {
        format!(
            "more than the memory budget of {}, so mapped from files in the run directory",
            human_bytes(budget)
        )
    };
    let plan = format!(
        "{} states: cells of {} {where_cells}; about {} of disk",
        thousands(needs.states),
        human_bytes(needs.cells),
        human_bytes(needs.disk)
    );
    match free_disk(out) {
        Some(free) if needs.disk > free => bail!(
            "this build does not fit: {plan}, and {} has {} free. Give it a smaller game, a disk \
             with room (--out), more memory (--memory-budget), or workers (--workers)",
            out.display(),
            human_bytes(free)
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

    #[test]
    fn cells_fit_the_budget_or_count_as_disk() {
        use kingmaker_kernel::cell_code::cell_bytes;
        let small = needs(1000, 1000, 3, 1 << 20, false);
        assert!(small.cells_in_memory);
        assert_eq!(small.cells, 800, "six bits a state, five to a word");
        assert_eq!(small.disk, 750 + 200);
        let big = needs(1 << 40, 1 << 40, 1, 1 << 30, false);
        assert!(!big.cells_in_memory);
        let cells = cell_bytes(1 << 40);
        assert_eq!(big.disk, cells + (1 << 38) + cells / 4);
        // On workers the coordinator keeps only the finished values.
        let remote = needs(1 << 40, 1 << 40, 2, 1 << 30, true);
        assert!(remote.cells_in_memory);
        assert_eq!(remote.disk, 2 << 38);
        // A reduced game: cells of the states it solves, tables of the full game's, and the
        // routed file once its reduced table outgrows half the budget.
        let quarter = needs(1 << 32, 1 << 34, 1, 1 << 40, false);
        let cells = cell_bytes(1 << 32);
        assert_eq!((quarter.states, quarter.cells), (1 << 32, cells));
        assert_eq!(quarter.disk, (1 << 32) + cells / 4);
        let routed = needs(1 << 32, 1 << 34, 1, 1 << 33, false);
        assert_eq!(routed.disk, (1 << 32) + (1 << 32) + cells / 4);
        // No overflow at absurd sizes.
        assert_eq!(needs(u64::MAX, u64::MAX, 64, 0, false).disk, u64::MAX);
    }

    #[test]
    fn a_build_larger_than_the_disk_is_refused_with_its_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let huge = needs(
            42_001_790_947_308_396,
            42_001_790_947_308_396,
            1,
            17 << 30,
            false,
        );
        let err = check(&huge, 17 << 30, &dir.path().join("run"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("42,001,790,947,308,396 states")
                && err.contains("the memory budget of 17.0 GiB")
                && err.contains("free"),
            "{err}"
        );
        check(&needs(1000, 1000, 1, 1 << 20, false), 1 << 20, dir.path()).unwrap();
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
