//! A checkpoint chunk missing on a worker (and in its replica): the resume names it and falls
//! back to the checkpoint before, ending with the reference's tables.

use kingmaker_e2e::{
    assert_like, cc3p_reference_in, checkpointed_distributed_build, finish, kingmaker, log_text,
    read_json, send_signal, Stopped, HANG, TOKEN,
};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// The embedded build of cc3p level 1 (once per test binary).
fn cc3p_reference() -> &'static Path {
    cc3p_reference_in(Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// A chunk deleted from a worker's newest checkpoint (one that checkpoint wrote, not one it shares
/// with the checkpoint before), and from its replica on the other worker: the resume names the
/// chunk and the worker, says it falls back, resumes after the wave before, and ends with the
/// reference's tables.
#[test]
fn a_deleted_chunk_on_a_worker_is_named_and_the_resume_falls_back() {
    let reference = cc3p_reference();
    let tmp = tempfile::tempdir().unwrap();
    let (workers, run, log, mut build) = checkpointed_distributed_build(tmp.path());
    // Checkpoints of solo after waves 2 and 3 at least, then a graceful stop: the worker held
    // while SIGTERM arrives, so the coordinator is mid-wave and stops after it.
    let start = Instant::now();
    while read_json_opt(&run.join("checkpoint.json"))
        .and_then(|s| s["current"]["last"]["wave"].as_u64())
        .is_none_or(|w| w < 3)
    {
        assert!(
            build.0.try_wait().unwrap().is_none() && start.elapsed() < HANG,
            "no checkpoint after wave 3:\n{}",
            log_text(&log)
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    {
        let _held = Stopped::hold(workers[0].pid());
        send_signal(build.0.id(), libc::SIGTERM);
    }
    let ended = finish(&mut build, &log);
    assert!(
        ended.success(),
        "a graceful stop exits 0: {ended}\n{}",
        log_text(&log)
    );
    assert!(!run.join("summary.json").exists(), "stopped mid-run");
    let state = read_json(&run.join("checkpoint.json"));
    assert_eq!(state["current"]["layer"], "solo", "{state}");
    let wave = state["current"]["last"]["wave"].as_u64().unwrap();
    assert!(wave >= 3, "{state}");

    let run_id = read_json(&run.join("run.json"))["distributed"]["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    let cpdir = workers[1]
        .data
        .join(&run_id)
        .join("solo")
        .join("checkpoint");
    let chunks = |w: u64| -> Vec<String> {
        let manifest = read_json(&cpdir.join(format!("worker-1.solo.w{w:05}.json")));
        manifest["shards"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["cells"].as_array().unwrap().iter())
            .map(|c| c["file"].as_str().unwrap().to_string())
            .collect()
    };
    let before: HashSet<String> = chunks(wave - 1).into_iter().collect();
    let chunk = chunks(wave)
        .into_iter()
        .find(|c| !before.contains(c))
        .expect("worker 1's newest checkpoint wrote a chunk of its own");
    std::fs::remove_file(cpdir.join(&chunk)).unwrap();
    // And its copy in the replica on worker 0 (alone, the replica would stand in for it: the
    // distributed resume tests).
    let replica = workers[0]
        .data
        .join(&run_id)
        .join("solo/replicas/worker-1")
        .join(&chunk);
    std::fs::remove_file(&replica)
        .unwrap_or_else(|e| panic!("worker 0 holds a replica of {chunk}: {e}"));

    let out = kingmaker(&["resume", run.to_str().unwrap(), "--token", TOKEN]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume recovers: {stderr}");
    for said in [
        // The worker named by its address, then its host and data directory.
        format!("worker {} (host ", workers[1].addr),
        format!("): restoring the checkpoint after wave {wave}"),
        format!("{chunk}: missing"),
        format!("checkpoint after wave {wave} cannot be restored"),
        "falling back".to_string(),
    ] {
        assert!(
            stderr.contains(&said),
            "resume should say {said:?}:\n{stderr}"
        );
    }
    // It tries the newest checkpoint first, then goes on from the one before.
    let last_start = stderr
        .rsplit("resuming after wave ")
        .next()
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok());
    assert_eq!(
        last_start,
        Some(wave - 1),
        "the incomplete checkpoint of wave {wave} must not be resumed from:\n{stderr}"
    );
    assert_like(&run, reference, "resumed past a deleted chunk");
}

fn read_json_opt(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}
