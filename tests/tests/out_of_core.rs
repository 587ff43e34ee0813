//! Out of core for real: a build whose cells are larger than the memory cgroup (v1) it runs in,
//! which limits the page cache too, against the same build in memory. Needs root and a writable
//! `/sys/fs/cgroup/memory` (as on the development machines and in CI).

use kingmaker_e2e::{assert_same_tables, bin, read_json, reference_build};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use tempfile::TempDir;

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
    let (reference, tmp, stderr) = build_in_cgroup(&reference, &args);
    let states = read_json(&reference.join("summary.json"))["states"]
        .as_u64()
        .expect("states in summary.json");
    assert!(
        states > 2 * LIMIT,
        "{states} cells do not exceed twice the limit"
    );
    assert!(
        stderr.contains("mapped from files"),
        "the cells were not in files:\n{stderr}"
    );
    assert_same_tables(&reference, &tmp.path().join("run"));
}

/// cc2p 6×6 / 3 solved as its quarter (19,778,000 states) and expanded to the full table in the same
/// 32 MB cgroup: gathering the quarter into memory would take 39 MB, so it is routed to zones of
/// the full table as it is gathered, and each zone is filled from a file. The tables are the
/// in-memory build's byte for byte.
#[test]
fn a_reduced_build_expands_out_of_core_in_a_cgroup_smaller_than_the_reduced_table() {
    let (reference, tmp, stderr) = build_in_cgroup(quarter_reference(), &QUARTER);
    let quarter = 19_778_000u64;
    assert!(
        2 * quarter > LIMIT,
        "the quarter's values and depths fit the cgroup"
    );
    assert!(
        stderr.contains(&format!(
            "the {quarter} states of cc2p-6x6-3-quarter expanded"
        )),
        "not the quarter of 6x6 / 3:\n{stderr}"
    );
    assert!(
        stderr.contains("routing it to"),
        "the quarter was not expanded out of core:\n{stderr}"
    );
    assert_same_tables(&reference, &tmp.path().join("run"));
}

/// Build `args` in a [`LIMIT`] cgroup with a 16 MB memory budget (cells in files): the
/// reference run (the same build in memory), a temporary directory holding the cgroup's run
/// (`run`) and the cgroup build's log, after checking that the build succeeded and that the
/// cgroup was full (its peak usage reached the limit).
fn build_in_cgroup(reference: &Path, args: &[&str]) -> (PathBuf, TempDir, String) {
    let reference = reference.to_path_buf();
    // On the disk, not in /tmp: a tmpfs's pages are memory the cgroup cannot reclaim.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let run = tmp.path().join("run");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/in-cgroup.sh");
    let name = format!("e2e-{}-{}", std::process::id(), args.join("-"));
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
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let _ = std::fs::remove_dir(format!("/sys/fs/cgroup/memory/kingmaker-{name}"));
    assert!(
        out.status.success(),
        "the build in the cgroup failed:\n{stderr}"
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
    (reference, tmp, stderr)
}

/// cc2p 6×6 / 3, solved as its quarter.
const QUARTER: [&str; 5] = ["cc2p", "--board", "6x6", "--pieces", "3"];

/// The in-memory build of [`QUARTER`], made once for the tests of this file.
fn quarter_reference() -> &'static Path {
    static REFERENCE: OnceLock<PathBuf> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        reference_build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "out-of-core-cc2p-quarter",
            &QUARTER,
        )
    })
}

/// [`QUARTER`] with the expansion out of core (a 16 MB budget), killed with SIGKILL while the
/// quarter is routed to the zones, resumed and killed again while the zones are filled from the
/// routed file, then resumed to the end: the tables are the in-memory build's byte for byte.
#[test]
fn a_build_killed_while_expanding_out_of_core_resumes_to_the_same_tables() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let run = tmp.path().join("run");
    let routed = run.join("work/solo.routed.kmt");
    // Routing writes `solo.routed.kmt.tmp`; the zones are filled once it is renamed.
    let steps = [
        ("build", routed.with_extension("kmt.tmp")),
        ("resume", routed),
    ];
    for (command, sign) in steps {
        let mut cmd = Command::new(bin("kingmaker"));
        cmd.arg(command);
        // The budget is the operator's choice, not the run's: a resume is given it again.
        cmd.args(["--memory-budget", "16M"]);
        if command == "build" {
            cmd.args(QUARTER).args(["--shard-size", "1048576"]);
            cmd.args(["--checkpoint-every-waves", "8", "--out"]);
        }
        let started = std::time::SystemTime::now();
        let mut child = cmd
            .arg(&run)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let limit = std::time::Instant::now() + std::time::Duration::from_secs(300);
        // The file, written by this process (a resume finds the killed build's leftovers).
        while !std::fs::metadata(&sign)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t >= started)
        {
            assert!(
                child.try_wait().unwrap().is_none(),
                "`kingmaker {command}` ended before {} was written",
                sign.display()
            );
            assert!(
                std::time::Instant::now() < limit,
                "no {} in 300 s",
                sign.display()
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        // What `kingmaker status` shows of the killed process: the table being written.
        let progress = read_json(&run.join("progress.json"));
        assert_eq!(progress["phase"], "writing", "{progress}");
        let step = if command == "build" {
            "routing"
        } else {
            "filling"
        };
        assert_eq!(progress["writing"]["step"], step, "{progress}");
    }
    let out = Command::new(bin("kingmaker"))
        .arg("resume")
        .arg(&run)
        .args(["--memory-budget", "16M"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the last resume failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_same_tables(quarter_reference(), &run);
}
