//! `--memory-budget`: workers whose budget puts their cells in mapped files, the peak memory of a
//! build held to its budget, and the defaults that follow the memory cgroup a process runs in
//! (those tests need root and a writable `/sys/fs/cgroup/memory`, as `tests/out_of_core.rs`).

use kingmaker_e2e::{
    addrs, assert_like, assert_same_tables, bin, distributed, finish, kingmaker_in_cgroup,
    log_text, read_json, reference_build, spawn, wait_for_wave, Stopped, Worker, HANG, TOKEN,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The embedded build of TOPPEN (once per test binary).
fn toppen_reference() -> &'static Path {
    static REF: OnceLock<PathBuf> = OnceLock::new();
    REF.get_or_init(|| {
        reference_build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "coverage-toppen",
            &["toppen"],
        )
    })
}

/// The files of `dir` that process `pid` has mapped and whose names end in `.cells`.
fn mapped_cells(pid: u32, dir: &Path) -> BTreeSet<String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .map(Path::new)
        .filter(|p| p.starts_with(dir) && p.extension().is_some_and(|e| e == "cells"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

/// Two workers with `--memory-budget 1M` build TOPPEN (3,428,208 states in four shards, two a
/// worker: 1.4 to 2 million cells each, over the budget): held mid-layer, each worker has its
/// own shards' cells mapped from files in its data directory (seen in /proc/PID/maps), of the
/// shards' sizes; the build ends with the embedded build's tables and the workers delete the
/// files.
#[test]
fn workers_with_a_small_memory_budget_map_their_cells_from_files() {
    let reference = toppen_reference();
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2)
        .map(|_| Worker::start(TOKEN, &["--memory-budget", "1M"]))
        .collect();
    let (run, log) = (tmp.path().join("run"), tmp.path().join("run.log"));
    let mut build = spawn(
        &distributed(&["toppen"], &workers, &run, &["--shard-size", "1000000"]),
        &log,
    );
    assert!(
        wait_for_wave(&run, &mut build.0, None, 3, HANG),
        "the build ended before wave 3:\n{}",
        log_text(&log)
    );
    let run_id = read_json(&run.join("run.json"))["distributed"]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let sizes: [u64; 4] = [1_000_000, 1_000_000, 1_000_000, 428_208];
    {
        // Worker 0 held: the layer cannot end, so both workers keep their arrays open.
        let _held = Stopped::hold(workers[0].pid());
        for (i, w) in workers.iter().enumerate() {
            let dir = w.data.join(&run_id).join("solo");
            // Four shards dealt out in turn: worker 0 owns 0 and 2, worker 1 owns 1 and 3.
            let owned = [i, i + 2];
            let expected: BTreeSet<String> = owned
                .iter()
                .map(|s| format!("shard-{s:05}.cells"))
                .collect();
            assert_eq!(
                mapped_cells(w.pid(), &dir),
                expected,
                "worker {i} ({}) should map its shards' cells from {}; its log:\n{}",
                w.addr,
                dir.display(),
                w.log_text()
            );
            for s in owned {
                let len = std::fs::metadata(dir.join(format!("shard-{s:05}.cells")))
                    .unwrap()
                    .len();
                // Six-bit cells, five to a 32-bit word.
                assert_eq!(
                    len,
                    4 * sizes[s].div_ceil(5),
                    "shard {s}: 0.8 bytes per state"
                );
            }
        }
    }
    let ended = finish(&mut build, &log);
    assert!(ended.success(), "{ended}:\n{}", log_text(&log));
    assert_like(&run, reference, "built on workers with a 1M budget");
    for w in &workers {
        let dir = w.data.join(&run_id).join("solo");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(
            !left.iter().any(|n| n.to_string_lossy().ends_with(".cells")),
            "the shard files are deleted after a successful build: {left:?}"
        );
    }
}

/// What a build's process took at its peak: `ru_maxrss` from wait4 (the kernel's VmHWM at exit:
/// resident anonymous and file-backed pages, mapped cells included), and whether its cells were
/// seen mapped from files (`/proc/PID/maps`, sampled while it ran).
struct Measured {
    peak_bytes: u64,
    cells_files_mapped: usize,
    log: String,
}

fn measure(args: &[&str], log: &Path) -> Measured {
    let child = Command::new(bin("kingmaker"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .expect("starting kingmaker");
    let pid = child.id();
    let proc_dir = PathBuf::from(format!("/proc/{pid}"));
    let start = Instant::now();
    let mut cells_files_mapped = 0;
    // Until the process has exited (a zombie, not yet reaped: its pid cannot be reused).
    loop {
        let stat = std::fs::read_to_string(proc_dir.join("stat")).unwrap();
        let state = stat.rsplit_once(')').unwrap().1.trim_start().chars().next();
        if state == Some('Z') {
            break;
        }
        if let Ok(maps) = std::fs::read_to_string(proc_dir.join("maps")) {
            let n = maps.lines().filter(|l| l.ends_with(".cells")).count();
            cells_files_mapped = cells_files_mapped.max(n);
        }
        assert!(start.elapsed() < HANG, "{args:?} did not end in {HANG:?}");
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut status = 0;
    // SAFETY: plain system calls on our own child; rusage is plain data.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let reaped = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid as libc::pid_t, "wait4");
    drop(child);
    let log = log_text(log);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?} failed ({status}):\n{log}"
    );
    Measured {
        peak_bytes: usage.ru_maxrss as u64 * 1024,
        cells_files_mapped,
        log,
    }
}

/// A build's peak memory held to its `--memory-budget`: cc2p 5×5 with 3 pieces, the whole index
/// space (`--no-symmetry`: 7,084,000 states, 5.4 MiB of cells), with an 8 MiB budget. The peak
/// (VmHWM at exit, from wait4) must stay under the budget, plus the peak of the same build on
/// the 480 states of 4×4 with 1 piece, plus 8 MiB.
///
/// Why that allowance: VmHWM counts resident pages, the cells mapped from files included, so the
/// budget here covers the cells (which the build puts in files under `work/`, checked: below
/// 512 MiB every budget does, memory.rs). The 480-state build measures what does not depend on
/// the game's size (binary and libraries, runtime, two threads: 9.2 MB on the development
/// machine). The 8 MiB is for what a 480-state build never fills and a large one does: the
/// layer writer's pending group (about 576 Ki states × 3 bytes), one shard's gathered values and
/// depths (65,536 × 3 bytes), the kernel's update batches, allocator arenas, more code pages, and
/// about 12 KB per shard (108 shards here). Measured on the development machine: peaks of
/// 14.0 / 16.2 / 21.4-21.8 MB for 0.7 / 2.5 / 7.1 million states, i.e. 4.1 / 4.5 / 5.3-5.7 MB
/// above the small build and the cells. Anything kept per state beyond the cells (half a byte a
/// state: 3.4 MB) breaks the bound.
///
/// `--shard-size 65536` keeps the gathered shard small: the gather holds about 9 bytes per
/// state of one shard (values, depths, the layer writer's copy), which the budget does not
/// govern; with the default shard size (16 Mi states, all 7 million in one shard) this build
/// peaks at 68 MB (a finding reported with the test).
#[test]
fn a_builds_peak_memory_stays_within_its_budget() {
    const BUDGET: u64 = 8 << 20;
    const ALLOWANCE: u64 = 8 << 20;
    let tmp = tempfile::tempdir().unwrap();
    let build = |board: &str, pieces: &str, name: &str| {
        let out = tmp.path().join(name);
        let args = [
            "build",
            "cc2p",
            "--board",
            board,
            "--pieces",
            pieces,
            "--no-symmetry",
            "--memory-budget",
            "8M",
            "--shard-size",
            "65536",
            "--threads",
            "2",
            "--out",
            out.to_str().unwrap(),
        ];
        let m = measure(&args, &tmp.path().join(format!("{name}.log")));
        let states = read_json(&out.join("summary.json"))["states"]
            .as_u64()
            .unwrap();
        (m, states)
    };
    let (small, small_states) = build("4x4", "1", "small");
    let (large, states) = build("5x5", "3", "large");
    assert_eq!((small_states, states), (480, 7_084_000));
    assert!(states <= BUDGET, "the budget covers the cells");
    assert!(
        large
            .log
            .contains("cells of layer solo: in files under work/, out of core"),
        "{}",
        large.log
    );
    assert!(
        large.cells_files_mapped > 0,
        "the cells were never seen mapped from files"
    );
    let limit = BUDGET + small.peak_bytes + ALLOWANCE;
    let mib = |b: u64| b as f64 / (1 << 20) as f64;
    eprintln!(
        "peak {:.1} MiB for {states} states (budget {:.1} MiB, the 480-state build {:.1} MiB, \
         allowance {:.1} MiB: limit {:.1} MiB)",
        mib(large.peak_bytes),
        mib(BUDGET),
        mib(small.peak_bytes),
        mib(ALLOWANCE),
        mib(limit)
    );
    assert!(
        large.peak_bytes <= limit,
        "peak {:.1} MiB over budget {:.1} MiB + the 480-state build's {:.1} MiB + {:.1} MiB",
        mib(large.peak_bytes),
        mib(BUDGET),
        mib(small.peak_bytes),
        mib(ALLOWANCE)
    );
}

/// The defaults follow the memory cgroup: a coordinator in a 64 MiB cgroup builds cc2p 6×6 / 3
/// (solved as its quarter, 19,778,000 states) on two workers without `--memory-budget` or
/// `--shard-size`: its budget is three quarters of the cgroup's limit (the log names the file),
/// so the quarter's values and depths (39 MB) are routed, not gathered into memory, and its
/// shards are small enough to gather within it. And the same build in process with a 36 MiB
/// budget in a 48 MiB cgroup gets shards that fit that budget (with the former 16 Mi states per
/// shard a wave thrashed for seconds and the build was killed). Both give the same tables.
#[test]
fn the_default_budget_and_shards_follow_the_memory_cgroup() {
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let game = ["cc2p", "--board", "6x6", "--pieces", "3"];
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
    let on_workers = tmp.path().join("on-workers");
    let mut args = vec!["build"];
    args.extend(game);
    let list = addrs(&workers);
    args.extend([
        "--workers",
        &list,
        "--token",
        TOKEN,
        "--worker-timeout",
        "60",
    ]);
    args.extend(["--out", on_workers.to_str().unwrap()]);
    let (ok, log) = kingmaker_in_cgroup("coordinator", 64 << 20, &args);
    assert!(ok, "the coordinator in a 64 MiB cgroup failed:\n{log}");
    assert!(
        log.contains("three quarters of the limit of this process's memory cgroup")
            && log.contains("memory.limit_in_bytes"),
        "the budget does not come from the cgroup:\n{log}"
    );
    assert!(
        log.contains("routing it to"),
        "the quarter was not routed:\n{log}"
    );

    let in_process = tmp.path().join("in-process");
    let mut args = vec!["build"];
    args.extend(game);
    args.extend(["--memory-budget", "36M", "--threads", "2"]);
    args.extend(["--out", in_process.to_str().unwrap()]);
    let (ok, log) = kingmaker_in_cgroup("shards", 48 << 20, &args);
    assert!(
        ok,
        "the build with a 36 MiB budget in a 48 MiB cgroup failed:\n{log}"
    );
    assert!(
        log.contains("shards of 1048576 states"),
        "the shards do not follow the budget:\n{log}"
    );
    assert_same_tables(&on_workers, &in_process);
}
