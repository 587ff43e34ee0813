//! Every estimate is an upper bound: a build given just the disk its bound names, or the smallest
//! memory its default budget accepts, finishes; one given less is refused before it writes
//! anything, or, where it goes on regardless, keeps its solved layer for `resume`.

use kingmaker_e2e::{kingmaker, kingmaker_in_cgroup, read_json, Tmpfs};

/// One small build of every game of the registry (`kingmaker build --help` lists them), with
/// options that reach each part of the bound: several layers, a reduced game, cells out of core
/// with a routed expansion, a layer count chosen from the answers (Go).
const BUILDS: &[&[&str]] = &[
    &["cc3p", "--level", "1"],
    &["cc3p_race", "--level", "1"],
    &["toppen", "--checkpoint-every-waves", "1"],
    &["cc2p", "--board", "6x6", "--pieces", "3"],
    &[
        "cc2p",
        "--board",
        "5x5",
        "--pieces",
        "3",
        "--memory-budget",
        "1M",
    ],
    &["connect4", "--board", "5x4"],
    &["go", "--surface", "torus", "--size", "3x3"],
];

/// The bound a build prints ("at most 83.0 MiB of disk"), in bytes, rounded up.
fn printed_bound(log: &str) -> u64 {
    let at = log
        .find("at most ")
        .unwrap_or_else(|| panic!("no disk bound printed:\n{log}"));
    let mut words = log[at + 8..].split_whitespace();
    let number: f64 = words.next().unwrap().parse().unwrap();
    let unit: u64 = match words.next().unwrap() {
        "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        other => panic!("unit {other}"),
    };
    // One decimal: up to half a tenth of the unit was rounded away.
    ((number + 0.05) * unit as f64).ceil() as u64
}

#[test]
fn every_game_in_the_registry_is_covered() {
    let out = kingmaker(&["build", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    let games: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|g| *g != "help")
        .collect();
    assert!(games.len() >= 6, "{help}");
    for game in games {
        assert!(
            BUILDS.iter().any(|b| b[0] == game),
            "{game} has no build in BUILDS: add one"
        );
    }
}

/// Each build, on a tmpfs of exactly the bound it printed when built elsewhere, finishes.
#[test]
fn every_game_builds_within_its_disk_bound() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, args) in BUILDS.iter().enumerate() {
        let mut build = vec!["build"];
        build.extend_from_slice(args);
        let probe = tmp.path().join(format!("probe-{i}"));
        let mut first = build.clone();
        first.extend(["--out", probe.to_str().unwrap()]);
        let out = kingmaker(&first);
        let log = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}:\n{log}");
        let bound = printed_bound(&log);
        let mnt = tmp.path().join(format!("disk-{i}"));
        let _disk = Tmpfs::mount(&mnt, bound);
        let run = mnt.join("run");
        build.extend(["--out", run.to_str().unwrap()]);
        let out = kingmaker(&build);
        assert!(
            out.status.success(),
            "{args:?} on a tmpfs of its bound ({bound} bytes) failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            read_json(&run.join("summary.json"))["layers"],
            read_json(&probe.join("summary.json"))["layers"],
            "{args:?}"
        );
    }
}

/// cc2p 6×6 / 3 on 32 MB with 9 MB taken: the bound (about 83 MiB) refuses it before anything is
/// written. Built anyway, it runs out of disk writing its table after 41 waves; the solved layer
/// was checkpointed first, so once there is room `resume` only writes the table (no wave runs
/// again) and the digest is the published one.
#[test]
fn a_build_short_of_disk_is_refused_up_front_and_loses_nothing_if_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("disk");
    let disk = Tmpfs::mount(&mnt, 32 << 20);
    std::fs::write(mnt.join("fill"), vec![1u8; 9 << 20]).unwrap();
    let run = mnt.join("run");
    let game = ["build", "cc2p", "--board", "6x6", "--pieces", "3"];
    let mut args = game.to_vec();
    args.extend(["--out", run.to_str().unwrap()]);
    let out = kingmaker(&args);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        log.contains("this build may not fit") && log.contains("--ignore-disk-estimate"),
        "{log}"
    );
    assert!(!run.exists(), "a refused build wrote {}", run.display());

    args.push("--ignore-disk-estimate");
    let out = kingmaker(&args);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "it fit after all:\n{log}");
    assert!(
        log.contains("No space left on device")
            && log.contains("layer solo is solved but writing its table failed")
            && log.contains("without solving it again"),
        "{log}"
    );
    let checkpoint = read_json(&run.join("checkpoint.json"));
    assert_eq!(
        checkpoint["current"]["last"]["settled"], true,
        "{checkpoint}"
    );

    std::fs::remove_file(mnt.join("fill")).unwrap();
    disk.resize(64 << 20);
    let out = kingmaker(&["resume", run.to_str().unwrap()]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(!log.contains(" wave 1:"), "resume solved again:\n{log}");
    let summary = read_json(&run.join("summary.json"));
    let digest = summary["layers"]["solo"]["digest"]
        .as_str()
        .unwrap_or_default();
    assert!(digest.starts_with("54e483b0"), "{summary}");
    assert!(log.contains("solved in 40 waves"), "{log}");
}

/// A memory cgroup too small for any build is refused before anything is written; the smallest
/// one the default budget accepts builds cc2p 6×6 / 3 (cells out of core, a routed expansion).
#[test]
fn the_smallest_memory_a_build_accepts_is_enough() {
    let tmp = tempfile::tempdir().unwrap();
    let small = tmp.path().join("small");
    let game = ["build", "cc2p", "--board", "6x6", "--pieces", "3", "--out"];
    let mut args = game.to_vec();
    args.push(small.to_str().unwrap());
    let (ok, log) = kingmaker_in_cgroup("small", 16 << 20, &args);
    assert!(!ok);
    assert!(
        log.contains("too little for a build") && log.contains("raise the limit to 24.0 MiB"),
        "{log}"
    );
    assert!(!small.exists(), "a refused build wrote {}", small.display());
    let enough = tmp.path().join("enough");
    let mut args = game.to_vec();
    args.push(enough.to_str().unwrap());
    let (ok, log) = kingmaker_in_cgroup("enough", 24 << 20, &args);
    assert!(ok, "{log}");
    assert!(log.contains("routing it to"), "not out of core:\n{log}");
    let summary = read_json(&enough.join("summary.json"));
    let digest = summary["layers"]["solo"]["digest"]
        .as_str()
        .unwrap_or_default();
    assert!(digest.starts_with("54e483b0"), "{summary}");
}
