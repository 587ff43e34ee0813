//! Fault tolerance of embedded builds: broken, then resumed to the uninterrupted build's tables.
//! 1. The game is TOPPEN (3.4 million states, ~50 waves, a few seconds): long enough to be killed
//!    mid-run, short enough to be rebuilt many times.
//! 2. A stop while the layer is written takes cc2p 6×6 / 3, whose layer takes about two seconds to
//!    write (TOPPEN's a tenth of one).

use kingmaker_e2e::{
    assert_interrupted_share, assert_same_tables, bin, kingmaker, kingmaker_ok, kingmaker_status,
    read_json, reference_build, seeded, send_signal, wait_for_wave, Tmpfs,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// An uninterrupted build (once per test binary): its tables and summary are what every broken
/// run must end with.
fn reference() -> &'static Path {
    static REF: OnceLock<PathBuf> = OnceLock::new();
    REF.get_or_init(|| {
        reference_build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "resume-reference",
            &["toppen"],
        )
    })
}

/// The run ended with the reference's tables (values and depths of every state) and summary.
#[track_caller]
fn assert_like_reference(dir: &Path, what: &str) {
    let expected = reference();
    assert_same_tables(dir, expected);
    assert_eq!(
        read_json(&dir.join("summary.json"))["layers"],
        read_json(&expected.join("summary.json"))["layers"],
        "{what}"
    );
}

/// A hang guard for waiting on a wave: generous, never a judge of speed.
const HANG: Duration = Duration::from_secs(300);
/// TOPPEN's one layer is decided in 49 waves (50 with the empty last one).
const LAST_WAVE: u64 = 49;

/// `kingmaker build toppen` with a checkpoint after every wave (and `extra` options).
fn start_build_with(dir: &Path, extra: &[&str]) -> Child {
    Command::new(bin("kingmaker"))
        .args([
            "build",
            "toppen",
            "--checkpoint-every-waves",
            "1",
            "--out",
            dir.to_str().unwrap(),
        ])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting kingmaker build")
}

fn start_build(dir: &Path) -> Child {
    start_build_with(dir, &[])
}

/// The wave of the run's last checkpoint (checkpoint.json), if it has one.
fn checkpointed_wave(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("checkpoint.json")).ok()?;
    serde_json::from_str::<Value>(&text).ok()?["current"]["last"]["wave"].as_u64()
}

/// `kingmaker resume DIR` to the end; when the run had a checkpoint, the resume must say it
/// started after that wave (and not from the start of the layer).
fn resume_to_end(dir: &Path) {
    let from = checkpointed_wave(dir);
    let out = kingmaker(&["resume", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume failed: {stderr}");
    if let Some(wave) = from {
        assert!(
            stderr.contains(&format!("resuming after wave {wave}")),
            "the resume should start after the checkpointed wave {wave}: {stderr}"
        );
    }
}

/// kill -9 right after a wave seen in progress.json (the wave is drawn at random, seeded; every
/// third run's resume is killed too, a few waves later), then resume: the tables must be those of
/// an uninterrupted build, values and depths. At least three quarters of the kills must land
/// before the run finished (in practice all do: the last kill is at wave 45 of 49).
#[test]
fn kill_9_at_random_waves_then_resume_gives_identical_tables() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let waves = seeded(8, 1, 46);
    let mut interrupted = 0;
    for (i, &k) in waves.iter().enumerate() {
        let dir = tmp.path().join(format!("run{i}"));
        let mut child = start_build(&dir);
        let seen = wait_for_wave(&dir, &mut child, None, k, HANG);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        if dir.join("summary.json").exists() {
            eprintln!(
                "kill {i} (after wave {k}, seen: {seen}) came too late: the build had finished"
            );
            assert_like_reference(&dir, &format!("uninterrupted run {i}"));
            continue;
        }
        interrupted += 1;
        assert!(seen, "the build ended without a summary before wave {k}");
        if i % 3 == 2 {
            // Kill the resume too, a few waves further on, then resume again.
            let mut again = Command::new(bin("kingmaker"))
                .args(["resume", dir.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let target = (k + 2).min(LAST_WAVE - 1);
            wait_for_wave(&dir, &mut again, None, target, HANG);
            again.kill().unwrap();
            again.wait().unwrap();
        }
        if !dir.join("summary.json").exists() {
            resume_to_end(&dir);
        }
        assert_like_reference(&dir, &format!("killed after wave {k} (kill {i})"));
    }
    assert_interrupted_share(interrupted, waves.len(), 3, 4);
}

#[test]
fn sigterm_stops_cleanly_with_a_checkpoint_and_resume_finishes() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut child = start_build(&dir);
    assert!(
        wait_for_wave(&dir, &mut child, None, 5, HANG),
        "the build ended before wave 5"
    );
    // `status` of a run in progress: freeze the build (SIGSTOP: alive, in its waves) and ask.
    let signal = |sig: &str| {
        assert!(Command::new("kill")
            .args([sig, &child.id().to_string()])
            .status()
            .unwrap()
            .success());
    };
    signal("-STOP");
    let status: Value =
        serde_json::from_str(&kingmaker_status(&[dir.to_str().unwrap(), "--json"])).unwrap();
    let text = kingmaker_status(&[dir.to_str().unwrap()]);
    signal("-CONT");
    assert_eq!(status["phase"], "running", "{status}");
    assert_eq!(status["progress"]["layer"], "solo", "{status}");
    let wave = status["progress"]["wave"].as_u64().unwrap();
    assert!(wave >= 5, "{status}");
    assert_eq!(status["progress"]["pid"], child.id(), "{status}");
    assert!(
        status["finished"].as_array().unwrap().is_empty(),
        "{status}"
    );
    assert!(
        status["checkpoint"]["last"]["wave"]
            .as_u64()
            .is_some_and(|w| w + 1 >= wave && w <= wave),
        "checkpointed every wave: {status}"
    );
    assert!(
        text.contains(&format!(": running (pid {}, `kingmaker build`", child.id()))
            && text.contains("(3428208 states)")
            && text.contains("finished: none")
            && text.contains(&format!("layer solo wave {wave}:"))
            && text.contains("last checkpoint: layer solo after wave"),
        "{text}"
    );
    signal("-TERM");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "a graceful stop exits 0, got {}",
        out.status
    );
    // Stopped at wave 5 or 6 of 49: the stop must not have run the build to its end.
    assert!(
        !dir.join("summary.json").exists(),
        "SIGTERM after wave 5 should stop the build, not finish it"
    );
    assert!(
        stdout.contains("resume"),
        "the stop says how to resume: {stdout}"
    );
    let status: Value =
        serde_json::from_str(&kingmaker_status(&[dir.to_str().unwrap(), "--json"])).unwrap();
    assert!(
        status["phase"].as_str().unwrap().starts_with("stopped"),
        "{status}"
    );
    let wave = status["checkpoint"]["last"]["wave"].as_u64();
    assert!(
        wave.is_some_and(|w| w >= 5),
        "the stop checkpoints the wave it finished: {status}"
    );
    resume_to_end(&dir);
    assert_like_reference(&dir, "stopped with SIGTERM");
    let status: Value =
        serde_json::from_str(&kingmaker_status(&[dir.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(status["phase"], "complete");
}

#[test]
fn a_flipped_byte_in_a_checkpoint_chunk_is_named_and_survived() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut child = start_build(&dir);
    // A few checkpoints, so there is one before the damaged one to fall back to.
    assert!(
        wait_for_wave(&dir, &mut child, None, 4, HANG),
        "the build ended before wave 4"
    );
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait_with_output().unwrap();
    assert!(
        !dir.join("summary.json").exists(),
        "SIGTERM after wave 4 should stop the build, not finish it"
    );
    let state = read_json(&dir.join("checkpoint.json"));
    let wave = state["current"]["last"]["wave"].as_u64().unwrap();
    let cpdir = dir.join("work/worker-0/checkpoint");
    let manifest = read_json(&cpdir.join(format!("worker-0.solo.w{wave:05}.json")));
    let chunk = manifest["shards"][0]["cells"][0]["file"]
        .as_str()
        .unwrap()
        .to_string();
    let path = cpdir.join(&chunk);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&path, bytes).unwrap();

    let out = kingmaker(&["resume", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume recovers: {stderr}");
    assert!(
        stderr.contains(&chunk),
        "the damaged chunk is named: {stderr}"
    );
    // The damaged checkpoint is set aside: the run goes on from an earlier one.
    let last_start = stderr
        .rsplit("resuming after wave ")
        .next()
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok());
    assert!(
        last_start.is_some_and(|w| w < wave),
        "the damaged checkpoint of wave {wave} must not be resumed from: {stderr}"
    );
    assert_like_reference(&dir, "resumed past a damaged chunk");
}

#[test]
fn a_missing_checkpoint_chunk_is_named_and_survived() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let mut child = start_build(&dir);
    assert!(
        wait_for_wave(&dir, &mut child, None, 4, HANG),
        "the build ended before wave 4"
    );
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait_with_output().unwrap();
    assert!(
        !dir.join("summary.json").exists(),
        "SIGTERM after wave 4 should stop the build, not finish it"
    );
    let wave = checkpointed_wave(&dir).expect("a checkpoint");
    let cpdir = dir.join("work/worker-0/checkpoint");
    let manifest = read_json(&cpdir.join(format!("worker-0.solo.w{wave:05}.json")));
    let chunk = manifest["shards"][0]["cells"][0]["file"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::remove_file(cpdir.join(&chunk)).unwrap();

    let out = kingmaker(&["resume", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume recovers: {stderr}");
    assert!(
        stderr.contains(&chunk),
        "the missing chunk is named: {stderr}"
    );
    let last_start = stderr
        .rsplit("resuming after wave ")
        .next()
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok());
    assert!(
        last_start.is_some_and(|w| w < wave),
        "the incomplete checkpoint of wave {wave} must not be resumed from: {stderr}"
    );
    assert_like_reference(&dir, "resumed past a missing chunk");
}

#[test]
fn a_full_disk_gives_a_clear_error_and_a_resumable_run() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let mnt = tmp.path().join("small");
    // The shard arrays (3.4 MB; files, as the memory budget is too small to hold them) fit in
    // 6 MB, the wave logs and checkpoints beside them do not (the whole run peaks near 8 MB; its
    // finished table is 0.7 MB).
    let disk = Tmpfs::mount(&mnt, 6 << 20);
    let dir = mnt.join("run");
    let out = kingmaker(&[
        "build",
        "toppen",
        "--checkpoint-every-waves",
        "5",
        "--memory-budget",
        "1M",
        // The disk bound (about 20 MB) would refuse it up front: the disk is to fill mid-build.
        "--ignore-disk-estimate",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("No space left on device"),
        "a clear error: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    // Make room, then resume to the right tables.
    disk.resize(256 << 20);
    resume_to_end(&dir);
    assert_like_reference(&dir, "resumed after a full disk");
}

/// A second signal exits at once (status 130), without finishing the wave or writing a new
/// checkpoint; the checkpoint before it still stands and the run resumes to the right tables.
#[test]
fn a_second_signal_exits_at_once_and_the_last_checkpoint_stands() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    // The build takes about a second: on a loaded machine it can finish between the test seeing
    // wave 5 and freezing it. Such an attempt tests nothing and is made again.
    let (dir, mut child) = (1..=5)
        .find_map(|attempt| {
            let dir = tmp.path().join(format!("run-{attempt}"));
            let mut child = start_build(&dir);
            assert!(
                wait_for_wave(&dir, &mut child, None, 5, HANG),
                "the build ended before wave 5"
            );
            send_signal(child.id(), libc::SIGSTOP);
            std::thread::sleep(Duration::from_millis(200));
            let finished = dir.join("summary.json").exists() || child.try_wait().unwrap().is_some();
            if finished {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            Some((dir, child))
        })
        .expect("five builds in a row ended before they could be frozen");
    // Frozen, the build receives SIGINT then SIGTERM (two different signals, so they cannot merge
    // into one); on SIGCONT both are delivered: the first asks for a clean stop, the second finds
    // the stop already asked for and exits at once.
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGCONT] {
        send_signal(child.id(), sig);
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "the second signal exits at once");
    assert!(!dir.join("summary.json").exists());
    let checkpoint = read_json(&dir.join("checkpoint.json"));
    let last = checkpoint["current"]["last"]["wave"].as_u64();
    assert!(last.is_some_and(|w| w >= 4), "{checkpoint}");
    let out = kingmaker(&["resume", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("resuming after wave {}", last.unwrap())),
        "{stderr}"
    );
    assert_like_reference(&dir, "after a second signal");
}

/// Build TOPPEN (a checkpoint every wave, `extra` options), kill -9 it after wave 5 was seen.
fn build_killed_after_wave_5(dir: &Path, extra: &[&str]) {
    let mut child = start_build_with(dir, extra);
    assert!(
        wait_for_wave(dir, &mut child, None, 5, HANG),
        "the build ended before wave 5"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!dir.join("summary.json").exists());
}

/// A missing or malformed worker checkpoint manifest, or a malformed
/// checkpoint.json, makes resume fall back (to the checkpoint before, or to the start of the
/// layer), say so, and end with the right tables; never block the run.
#[test]
fn damaged_checkpoint_manifests_fall_back_and_say_so() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    for (case, damage) in ["missing", "malformed", "run manifest"].iter().enumerate() {
        let dir = tmp.path().join(format!("run{case}"));
        build_killed_after_wave_5(&dir, &[]);
        let wave = checkpointed_wave(&dir).expect("a checkpoint");
        let manifest = dir
            .join("work/worker-0/checkpoint")
            .join(format!("worker-0.solo.w{wave:05}.json"));
        assert!(manifest.exists(), "{}", manifest.display());
        match *damage {
            "missing" => std::fs::remove_file(&manifest).unwrap(),
            "malformed" => std::fs::write(&manifest, b"{\"wave\": ").unwrap(),
            _ => std::fs::write(dir.join("checkpoint.json"), b"not json").unwrap(),
        }
        let out = kingmaker(&["resume", dir.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{damage}: {stderr}");
        if *damage == "run manifest" {
            assert!(
                stderr.contains("rebuilt checkpoint.json") && stderr.contains("starts again"),
                "{damage}: {stderr}"
            );
            assert!(dir.join("checkpoint.json.damaged").exists());
        } else {
            assert!(
                stderr.contains(&format!("checkpoint after wave {wave} cannot be restored"))
                    && stderr.contains("falling back")
                    && stderr.contains(&format!("resuming after wave {}", wave - 1)),
                "{damage}: {stderr}"
            );
        }
        assert_like_reference(&dir, damage);
    }
}

/// A run places its shards as its `run.json` says (`shard_placement`): told they were in runs,
/// a resume of checkpoints made interleaved meets shards its workers do not own and refuses them;
/// with the file as the build wrote it, it finishes with the reference's tables.
#[test]
fn resume_places_the_shards_as_run_json_says() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    build_killed_after_wave_5(&dir, &["--local-workers", "2", "--shard-size", "1000000"]);
    let path = dir.join("run.json");
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(read_json(&path)["shard_placement"], "interleaved");
    let runs = written.replace("\"interleaved\"", "\"runs\"");
    std::fs::write(&path, runs).unwrap();
    let out = kingmaker(&["resume", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("holds shards") && stderr.contains("owns shards"),
        "{stderr}"
    );
    std::fs::write(&path, written).unwrap();
    resume_to_end(&dir);
    assert_like_reference(&dir, "resumed with the build's placement");
}

/// Resume uses the build's --local-workers (run.json), and refuses another number with a hint
/// instead of an internal message.
#[test]
fn resume_uses_the_builds_local_workers() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    build_killed_after_wave_5(&dir, &["--local-workers", "2", "--shard-size", "1000000"]);
    let wave = checkpointed_wave(&dir).expect("a checkpoint");
    let out = kingmaker(&["resume", dir.to_str().unwrap(), "--local-workers", "3"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("built with --local-workers 2") && stderr.contains("--local-workers 2"),
        "{stderr}"
    );
    let out = kingmaker(&["resume", dir.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("resuming after wave {wave}")),
        "{stderr}"
    );
    assert_like_reference(&dir, "resumed on the build's two in-process workers");
}

/// A checkpoint manifest whose chunk file name leaves its directory (`../x`,
/// an absolute path) is refused with an error naming the file, and resume treats it as a damaged
/// checkpoint: it falls back to the one before. The named file is a valid copy of the chunk, so
/// without the check the forged manifest would be restored from outside the directory.
#[test]
fn a_checkpoint_manifest_naming_a_file_outside_its_directory_is_refused() {
    reference();
    let tmp = tempfile::tempdir().unwrap();
    for (case, how) in ["parent", "absolute"].iter().enumerate() {
        let dir = tmp.path().join(format!("run{case}"));
        build_killed_after_wave_5(&dir, &[]);
        let wave = checkpointed_wave(&dir).expect("a checkpoint");
        let cpdir = dir.join("work/worker-0/checkpoint");
        let path = cpdir.join(format!("worker-0.solo.w{wave:05}.json"));
        let mut manifest = read_json(&path);
        let chunk = manifest["shards"][0]["cells"][0]["file"]
            .as_str()
            .unwrap()
            .to_string();
        let outside = dir.join("work/outside.zst");
        std::fs::copy(cpdir.join(&chunk), &outside).unwrap();
        let forged = match *how {
            "parent" => "../../outside.zst".to_string(),
            _ => outside.to_str().unwrap().to_string(),
        };
        manifest["shards"][0]["cells"][0]["file"] = Value::String(forged.clone());
        std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();

        let out = kingmaker(&["resume", dir.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{how}: {stderr}");
        assert!(
            stderr.contains(&format!("checkpoint after wave {wave} cannot be restored"))
                && stderr.contains(&forged)
                && stderr.contains("falling back")
                && stderr.contains(&format!("resuming after wave {}", wave - 1)),
            "{how}: the forged name {forged} must be refused and named: {stderr}"
        );
        assert_like_reference(&dir, how);
    }
}

/// A stop asked for while the last layer is written ends the build once the layer is, before its
/// summary (at level 2 the summary and its census are the longest part of a build's end): exit 0,
/// every layer kept, no summary.json; `resume` writes it from the layers, the same as an
/// uninterrupted build's. The build is frozen (SIGSTOP) as soon as it is seen writing, so that
/// the SIGTERM lands there and not in a wave.
#[test]
fn a_stop_while_the_last_layer_is_written_leaves_the_summary_to_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["cc2p", "--board", "6x6", "--pieces", "3"];
    let whole = tmp.path().join("whole");
    let mut args = vec!["build"];
    args.extend(game);
    args.extend(["--out", whole.to_str().unwrap()]);
    kingmaker_ok(&args);
    let dir = tmp.path().join("run");
    let mut child = Command::new(bin("kingmaker"))
        .arg("build")
        .args(game)
        .args(["--out", dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        let progress = std::fs::read_to_string(dir.join("progress.json")).unwrap_or_default();
        if progress.contains("\"phase\": \"writing\"") {
            send_signal(child.id(), libc::SIGSTOP);
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the build ended before it wrote its layer"
        );
        assert!(start.elapsed() < HANG, "no writing phase: {progress}");
        std::thread::sleep(Duration::from_millis(2));
    }
    send_signal(child.id(), libc::SIGTERM);
    send_signal(child.id(), libc::SIGCONT);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "a stop exits 0, got {}: {stdout}",
        out.status
    );
    assert!(stdout.contains("every layer is written"), "{stdout}");
    assert!(
        !dir.join("summary.json").exists(),
        "the stop ran the summary: {stdout}"
    );
    assert!(
        dir.join("layers/solo.kmt").exists(),
        "the layer was not kept"
    );
    kingmaker_ok(&["resume", dir.to_str().unwrap()]);
    assert_eq!(
        read_json(&dir.join("summary.json"))["layers"],
        read_json(&whole.join("summary.json"))["layers"]
    );
    assert_same_tables(&dir, &whole);
}
