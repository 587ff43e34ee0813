//! `kingmaker slurm` end to end, on a real SLURM cluster (munged, slurmctld, a slurmd in each of
//! two lab hosts): a distributed cc3p level-1 build (its shards spread over both workers) as batch
//! jobs, whose tables equal the embedded build's after a cancel, a time limit and a node's crash.
//! 1. Every node and the submit host share this machine's file system: the job's directory (the
//!    script, the logs, the run directory and the workers' data) is on a "shared file system".

use kingmaker_e2e::lab::reference;
use kingmaker_e2e::progress;
use kingmaker_e2e::slurm_lab::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const GAME: [&str; 3] = ["cc3p", "--level", "1"];

/// The run: shards of 256 states (7, on both workers), checkpoints after every wave, a lost worker
/// noticed within 2 s, each wave slowed to `wave_delay_ms` (about 35 waves in all).
fn run_section(wave_delay_ms: u32) -> String {
    format!(
        "game = \"cc3p\"\noptions = [\"--level\", \"1\"]\nworker_port = 7070\n\
         checkpoint_every_waves = 1\ncheckpoint_every_secs = 0\n\
         build_args = [\"--worker-timeout\", \"2\", \"--shard-size\", \"256\"]\n\
         worker_args = [\"--wave-delay-ms\", \"{wave_delay_ms}\"]"
    )
}

fn run_dir(cluster: &Cluster, name: &str) -> PathBuf {
    cluster.lab.dir().join(name).join("run")
}

fn job_ids(cluster: &Cluster, name: &str) -> Vec<String> {
    std::fs::read_to_string(cluster.lab.dir().join(name).join("jobs"))
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

fn job_log(cluster: &Cluster, name: &str, id: &str) -> String {
    let path = cluster
        .lab
        .dir()
        .join(name)
        .join(format!("logs/slurm-{id}.out"));
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `scontrol show job ID`'s JobState and Restarts.
fn job_state(cluster: &Cluster, id: &str) -> (String, u64) {
    let out = cluster.slurm("scontrol", &["show", "job", "-o", id]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let field = |k: &str| {
        text.split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
            .unwrap_or("")
            .to_string()
    };
    (field("JobState"), field("Restarts").parse().unwrap_or(0))
}

fn submit(cluster: &Cluster, inv: &Path, name: &str) -> String {
    let out = cluster.kingmaker_slurm_ok(inv, &["submit"]);
    eprintln!("$ kingmaker slurm submit\n{out}");
    let id = job_ids(cluster, name).last().cloned().expect("a job id");
    assert!(out.contains(&format!("submitted job {id}")), "{out}");
    id
}

/// Wait until the run's coordinator has reached wave `wave` (of any layer), still unfinished.
fn wait_mid_run(cluster: &Cluster, name: &str, wave: u64, secs: u64) {
    let run = run_dir(cluster, name);
    wait_until(&format!("run {name} at wave {wave}"), secs, || {
        progress(&run).is_some_and(|(_, _, w)| w >= wave)
    });
    assert!(
        !run.join("summary.json").exists(),
        "run {name} finished before it could be interrupted: slow its waves more"
    );
}

fn wait_job_done(cluster: &Cluster, id: &str, secs: u64) -> String {
    let mut state = String::new();
    wait_until(&format!("job {id} to end"), secs, || {
        state = job_state(cluster, id).0;
        !matches!(
            state.as_str(),
            "PENDING" | "RUNNING" | "COMPLETING" | "REQUEUED" | "CONFIGURING" | ""
        )
    });
    state
}

fn wait_complete(cluster: &Cluster, name: &str, secs: u64) {
    let run = run_dir(cluster, name);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !run.join("summary.json").exists() {
        if std::time::Instant::now() > deadline {
            let logs: String = job_ids(cluster, name)
                .iter()
                .map(|id| format!("--- job {id}\n{}", job_log(cluster, name, id)))
                .collect();
            panic!(
                "run {name} not complete after {secs}s; status:\n{:#}\n{logs}\n{}",
                cluster.status(&cluster.lab.dir().join(format!("{name}.toml"))),
                cluster.logs()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

fn assert_reference_tables(cluster: &Cluster, name: &str, reference: &Value) {
    // What the batch script said, job by job: the path the run took.
    for id in job_ids(cluster, name) {
        for line in job_log(cluster, name, &id).lines() {
            if line.contains("kingmaker job") {
                eprintln!("{line}");
            }
        }
    }
    assert_eq!(
        &run_digests(&run_dir(cluster, name)),
        reference,
        "run {name}: the tables differ from the embedded build's"
    );
}

#[test]
fn slurm_jobs_build_the_embedded_tables_through_a_cancel_a_time_limit_and_a_requeue() {
    kingmaker_e2e::lab::require_prerequisites();
    require_slurm();
    let mut cluster = Cluster::start(2);
    let reference = reference(&GAME, &cluster.lab.dir().join("ref"));

    // --- scancel mid-run, then a continued job ------------------------------------------------
    // Plain scancel: SLURM sends TERM to every process of the job; the coordinator checkpoints
    // within KillWait while the workers (TERM ignored) serve it. Then `kingmaker slurm cancel`
    // (the batch shell stops the coordinator itself: no KillWait to race). Then a last submit.
    let inv = cluster.inventory(
        "cancel",
        &run_section(300),
        "time = \"10\"\nsignal_secs = 60",
    );
    let first = submit(&cluster, &inv, "cancel");
    wait_mid_run(&cluster, "cancel", 2, 120);
    let again = cluster.kingmaker_slurm(&inv, &["submit"]);
    assert!(
        !again.status.success(),
        "a second job of a running run is refused"
    );
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already has job"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let token_file = cluster.lab.dir().join(format!("cancel/token-{first}"));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the job's token file has mode {mode:o}");
    }
    let out = cluster.slurm("scancel", &[&first]);
    assert!(out.status.success());
    assert_eq!(wait_job_done(&cluster, &first, 60), "CANCELLED");
    let log = job_log(&cluster, "cancel", &first);
    assert!(
        log.contains("the coordinator ended (exit status 0)"),
        "scancel: the coordinator should have checkpointed and ended cleanly:\n{log}"
    );
    assert!(
        !token_file.exists(),
        "the job's token file outlives the job"
    );
    let s = cluster.status(&inv);
    assert_eq!(s["jobs"][0]["state"], "CANCELLED", "{s:#}");
    assert!(
        s["progress"]["phase"]
            .as_str()
            .is_some_and(|p| p.starts_with("stopped")),
        "{s:#}"
    );
    let waves_done = progress(&run_dir(&cluster, "cancel")).unwrap();

    let second = submit(&cluster, &inv, "cancel");
    // Past the wave it restored (a coordinator still restoring exits at once, keeping the
    // checkpoint it restores from; one running waves checkpoints first, as asked here).
    wait_until("the continued job to run waves", 120, || {
        progress(&run_dir(&cluster, "cancel"))
            .is_some_and(|p| p.0 != waves_done.0 && (p.1 != waves_done.1 || p.2 > waves_done.2 + 1))
    });
    let out = cluster.kingmaker_slurm_ok(&inv, &["cancel", "--wait-secs", "60"]);
    assert!(out.contains("stopped at its last checkpoint"), "{out}");
    let log = job_log(&cluster, "cancel", &second);
    assert!(log.contains("resuming"), "{log}");
    assert!(
        log.contains("the coordinator ended (exit status 0)")
            && log.contains("stopped at a new checkpoint"),
        "kingmaker slurm cancel: the coordinator should have checkpointed and ended cleanly:\n{log}"
    );
    assert!(!run_dir(&cluster, "cancel").join("summary.json").exists());
    submit(&cluster, &inv, "cancel");
    wait_complete(&cluster, "cancel", 240);
    assert_reference_tables(&cluster, "cancel", &reference);
    let s = cluster.status(&inv);
    assert_eq!(s["progress"]["phase"], "complete", "{s:#}");

    // --- a time limit mid-run, then the chained job --------------------------------------------
    // 2 minutes, the signal 30 s before (SLURM sends it up to 30 s earlier still): the build,
    // slowed to well over that, checkpoints and submits its next job, which finishes it.
    // Its layers are kept on the workers, across the jobs, and collected by the last one.
    let run = run_section(3000).replace("\"256\"]", "\"256\", \"--keep-layers-on-workers\"]");
    let inv = cluster.inventory("timelimit", &run, "time = \"2\"\nsignal_secs = 30");
    let first = submit(&cluster, &inv, "timelimit");
    wait_until("the time-limited job to end", 200, || {
        let (state, _) = job_state(&cluster, &first);
        state == "COMPLETED" || state == "FAILED" || state == "TIMEOUT"
    });
    let log = job_log(&cluster, "timelimit", &first);
    assert!(
        log.contains("the time limit is near") && log.contains("continues it"),
        "the first job should have checkpointed before its time limit and chained:\n{log}"
    );
    assert_eq!(job_state(&cluster, &first).0, "COMPLETED", "{log}");
    assert!(job_ids(&cluster, "timelimit").len() >= 2);
    wait_complete(&cluster, "timelimit", 400);
    let ids = job_ids(&cluster, "timelimit");
    let log = job_log(&cluster, "timelimit", &ids[1]);
    assert!(log.contains("resuming"), "{log}");
    assert_eq!(
        wait_job_done(&cluster, ids.last().unwrap(), 120),
        "COMPLETED"
    );
    let log = job_log(&cluster, "timelimit", ids.last().unwrap());
    assert!(
        log.contains("collected the layers kept on the workers"),
        "{log}"
    );
    assert_reference_tables(&cluster, "timelimit", &reference);

    // --- a node lost mid-run, then the requeue -------------------------------------------------
    // h1's slurmd, its step and its worker are killed at once (a crash); the coordinator on h0
    // stops with its last checkpoint, the job requeues itself and, once h1 is back, resumes.
    let inv = cluster.inventory(
        "requeue",
        &run_section(300),
        "time = \"10\"\nsignal_secs = 60",
    );
    let job = submit(&cluster, &inv, "requeue");
    wait_mid_run(&cluster, "requeue", 2, 120);
    cluster.crash_node(1);
    wait_until("the job to be requeued", 120, || {
        job_state(&cluster, &job).1 >= 1
    });
    let s = cluster.status(&inv);
    assert!(s["jobs"][0]["restarts"].as_u64() >= Some(1), "{s:#}");
    cluster.start_slurmd(1);
    wait_complete(&cluster, "requeue", 300);
    let log = job_log(&cluster, "requeue", &job);
    assert!(
        log.contains("(restart 1)") && log.contains("resuming"),
        "the requeued job should have resumed:\n{log}"
    );
    assert_eq!(
        job_ids(&cluster, "requeue"),
        vec![job.clone()],
        "one job, requeued"
    );
    assert_reference_tables(&cluster, "requeue", &reference);
}
