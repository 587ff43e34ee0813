//! Out of core for real: a build whose cells are larger than the memory cgroup (v1) it runs in,
//! which limits the page cache too, against the same build in memory. Needs root and a writable
//! `/sys/fs/cgroup/memory` (as on the development machines and in CI).

use kingmaker_e2e::{assert_same_tables, bin, read_json, reference_build};
use std::path::Path;
use std::process::Command;

/// The cgroup's limit: the cells of the build below are more than twice as large.
const LIMIT: u64 = 32 << 20;

/// cc2p 6×6 / 3 over its whole index space (`--no-symmetry`: no reduction to gather; 77,911,680
/// states) with its cells in files, run by `scripts/in-cgroup.sh` in a 32 MB cgroup: the tables are the in-memory
/// build's byte for byte, the cells were more than twice the limit, and the cgroup was full (its
/// peak usage reached the limit), so the page cache could not hold them.
#[test]
fn a_build_in_a_cgroup_smaller_than_its_cells_gets_the_in_memory_tables() {
    let args = ["cc2p", "--board", "6x6", "--pieces", "3", "--no-symmetry"];
    let reference = reference_build(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        "out-of-core-cc2p",
        &args,
    );
    let states = read_json(&reference.join("summary.json"))["states"]
        .as_u64()
        .expect("states in summary.json");
    assert!(
        states > 2 * LIMIT,
        "{states} cells do not exceed twice the limit"
    );

    // On the disk, not in /tmp: a tmpfs's pages are memory the cgroup cannot reclaim.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let run = tmp.path().join("run");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/in-cgroup.sh");
    let name = format!("e2e-{}", std::process::id());
    let out = Command::new(script)
        .args([&name, &LIMIT.to_string(), "--"])
        .arg(bin("kingmaker"))
        .arg("build")
        .args(args)
        // Small shards: the close works on one per thread and the table is gathered a shard at
        // a time, so a shard's cells, values and depths must leave the cgroup room.
        .args([
            "--memory-budget",
            "16M",
            "--threads",
            "2",
            "--shard-size",
            "1048576",
        ])
        .arg("--out")
        .arg(&run)
        .output()
        .expect("running scripts/in-cgroup.sh");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let _ = std::fs::remove_dir(format!("/sys/fs/cgroup/memory/kingmaker-{name}"));
    assert!(
        out.status.success(),
        "the build in the cgroup failed:\n{stderr}"
    );
    assert!(
        stderr.contains("mapped from files"),
        "the cells were not in files:\n{stderr}"
    );
    let peak: u64 = stderr
        .split("peak ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no peak in the script's report:\n{stderr}"));
    assert!(
        (LIMIT - LIMIT / 8..=LIMIT).contains(&peak),
        "the cgroup's peak {peak} is not at its limit {LIMIT}: the build was not held to it"
    );
    assert_same_tables(&reference, &run);
}
