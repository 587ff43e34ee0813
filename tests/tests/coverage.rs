//! Coverage issue 17 asks for ("Coverage to add"): `status` and the coordinator's `--metrics`
//! while a distributed build is in progress, `--layers` subsets end to end, a missing (deleted)
//! checkpoint chunk on a worker, workers whose `--memory-budget` puts their cells in mapped files,
//! and the peak memory of a build held to its `--memory-budget`.
//!
//! Nothing here is judged by time. A run is held mid-layer by waiting for progress.json (or
//! checkpoint.json) to show a wave and then stopping a process with SIGSTOP ([`Stopped`]: it
//! returns once every thread is stopped): the coordinator itself when only files are read, or one
//! worker when the coordinator must stay alive (its metrics endpoint) and must not finish the
//! layer. Level 1 of cc3p (1,662 states) has only ~12 waves a layer, so its workers run with the
//! test-only `--wave-delay-ms` to make a wave seen in progress.json come well before its layer
//! ends; the delay only slows the run down, every check waits for an event.
//!
//! Every finished run is compared with an embedded reference build: values and depths of every
//! state (the layer files byte for byte) and the summary.

use kingmaker_e2e::{
    addrs, assert_same_tables, bin, kingmaker, kingmaker_ok, layer_names, metric, progress,
    read_json, reference_build, scrape_metrics, send_signal, wait_for_wave, Killed, Stopped,
    Worker,
};
use kingmaker_tablefmt::layer::LayerFile;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const TOKEN: &str = "e2e-coverage-token";
/// A hang guard for waiting on an event: generous, never a judge of speed.
const HANG: Duration = Duration::from_secs(120);
const CC3P: [&str; 3] = ["cc3p", "--level", "1"];
/// cc3p level 1: every state, and the legal ones (each layer decides all of them: no draws).
const CC3P_STATES: u64 = 1662;

/// The embedded build of cc3p level 1 (once per test binary).
fn cc3p_reference() -> &'static Path {
    static REF: OnceLock<PathBuf> = OnceLock::new();
    REF.get_or_init(|| {
        reference_build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "coverage-cc3p",
            &CC3P,
        )
    })
}

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

/// The run ended with the reference's tables (values and depths) and summary.
#[track_caller]
fn assert_like(run: &Path, reference: &Path, what: &str) {
    assert_same_tables(run, reference);
    assert_eq!(
        read_json(&run.join("summary.json"))["layers"],
        read_json(&reference.join("summary.json"))["layers"],
        "{what}"
    );
}

/// Two workers whose every wave starts 40 ms late (cc3p level 1 then lasts about 2 s).
fn slow_workers() -> Vec<Worker> {
    (0..2)
        .map(|_| Worker::start(TOKEN, &["--wave-delay-ms", "40"]))
        .collect()
}

/// `kingmaker ARGS...` in the background, stderr into `log` (stdout beside it), killed on drop.
fn spawn(args: &[String], log: &Path) -> Killed {
    Killed(
        Command::new(bin("kingmaker"))
            .args(args)
            .stdout(std::fs::File::create(log.with_extension("out")).unwrap())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .expect("starting kingmaker"),
    )
}

/// `build GAME... --out RUN --workers ... --token T --worker-timeout 60 EXTRA...`: the long
/// timeout lets a test hold a worker while it looks at the run.
/// A level-1 cc3p build on two slow workers into `dir/run` (log `dir/run.log`), small shards and a
/// checkpoint after every wave: the workers, the run, the log and the running coordinator.
fn checkpointed_distributed_build(dir: &Path) -> (Vec<Worker>, PathBuf, PathBuf, Killed) {
    let workers = slow_workers();
    let (run, log) = (dir.join("run"), dir.join("run.log"));
    let build = spawn(
        &distributed(
            &CC3P,
            &workers,
            &run,
            &["--shard-size", "256", "--checkpoint-every-waves", "1"],
        ),
        &log,
    );
    (workers, run, log, build)
}

fn distributed(game: &[&str], workers: &[Worker], run: &Path, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["build"]
        .iter()
        .chain(game)
        .map(|s| s.to_string())
        .collect();
    args.extend([
        "--out".into(),
        run.display().to_string(),
        "--workers".into(),
        addrs(workers),
        "--token".into(),
        TOKEN.into(),
        "--worker-timeout".into(),
        "60".into(),
    ]);
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// Wait for the build to end (a hang guard fails the test, with its log).
fn finish(build: &mut Killed, log: &Path) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = build.0.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < HANG,
            "the build did not end in {HANG:?}:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn log_text(log: &Path) -> String {
    std::fs::read_to_string(log).unwrap_or_default()
}

/// States of `layer` in the finished run `dir` decided by wave `wave` (W or L with depth at most
/// `wave`), and those decided in that wave (depth exactly `wave`): what a build's progress must
/// say after that wave, from the table alone.
fn decided_by_wave(dir: &Path, layer: &str, wave: u64) -> (u64, u64) {
    let table = LayerFile::open(&dir.join("layers").join(format!("{layer}.kmt"))).unwrap();
    let (mut total, mut at) = (0, 0);
    for i in 0..table.states() {
        let (value, depth) = table.get(i).unwrap();
        if value == 1 || value == 2 {
            total += u64::from(u64::from(depth) <= wave);
            at += u64::from(u64::from(depth) == wave);
        }
    }
    (total, at)
}

/// One wave line of a coordinator's log: `layer L wave N: decided D (total T), expanded E,
/// updates applied A, sent S[, B bytes on the wire], X.XXs`.
#[derive(Debug, Clone, PartialEq)]
struct WaveLine {
    layer: String,
    wave: u64,
    decided: u64,
    applied: u64,
    sent: u64,
    wire: u64,
}

/// The complete wave lines of a log so far.
fn wave_lines(log: &Path) -> Vec<WaveLine> {
    let text = log_text(log);
    let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    complete
        .lines()
        .filter_map(|line| {
            let (_, msg) = line.split_once(" layer ")?;
            let t: Vec<&str> = msg
                .split([' ', ',', '(', ')', ':'])
                .filter(|t| !t.is_empty())
                .collect();
            if t.len() < 14
                || (t[1], t[3], t[5], t[7], t[9], t[10], t[12])
                    != (
                        "wave", "decided", "total", "expanded", "updates", "applied", "sent",
                    )
            {
                return None;
            }
            let n = |i: usize| t[i].parse::<u64>().ok();
            Some(WaveLine {
                layer: t[0].to_string(),
                wave: n(2)?,
                decided: n(4)?,
                applied: n(11)?,
                sent: n(13)?,
                wire: if t.get(15) == Some(&"bytes") {
                    n(14)?
                } else {
                    0
                },
            })
        })
        .collect()
}

/// The coordinator's counters, as `/metrics` serves them or as its wave lines add up.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counters {
    waves: u64,
    wave: u64,
    decided: u64,
    applied: u64,
    sent: u64,
    wire: u64,
}

impl Counters {
    fn scraped(text: &str) -> Option<Counters> {
        Some(Counters {
            waves: metric(text, "kingmaker_waves_total")?,
            wave: metric(text, "kingmaker_wave")?,
            decided: metric(text, "kingmaker_states_decided_total")?,
            applied: metric(text, "kingmaker_updates_applied_total")?,
            sent: metric(text, "kingmaker_updates_sent_total")?,
            wire: metric(text, "kingmaker_wire_bytes_total")?,
        })
    }

    fn from_log(lines: &[WaveLine]) -> Counters {
        let sum = |f: fn(&WaveLine) -> u64| lines.iter().map(f).sum();
        Counters {
            waves: lines.len() as u64,
            wave: lines.last().map_or(0, |l| l.wave),
            decided: sum(|l| l.decided),
            applied: sum(|l| l.applied),
            sent: sum(|l| l.sent),
            wire: sum(|l| l.wire),
        }
    }
}

/// The address the coordinator's log says it serves metrics on (`metrics at http://ADDR/metrics`).
fn metrics_addr(log: &Path, build: &mut Killed) -> String {
    let start = Instant::now();
    loop {
        let text = log_text(log);
        if let Some(rest) = text.split_once("metrics at http://").map(|(_, r)| r) {
            if let Some((addr, _)) = rest.split_once("/metrics") {
                return addr.to_string();
            }
        }
        assert!(
            build.0.try_wait().unwrap().is_none() && start.elapsed() < HANG,
            "no metrics address in the log:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The per-layer metrics of a coordinator held in its `started`-th layer with `decided` of the
/// layer's states decided.
#[track_caller]
fn assert_layer_gauges(addr: &str, started: u64, decided: u64) {
    let text = scrape_metrics(addr).unwrap();
    assert_eq!(
        (
            metric(&text, "kingmaker_layers_started_total"),
            metric(&text, "kingmaker_layer_states"),
            metric(&text, "kingmaker_layer_decided")
        ),
        (Some(started), Some(CC3P_STATES), Some(decided)),
        "{text}"
    );
}

/// With a worker held, the coordinator can close at most the wave in flight: wait until a scrape
/// of `/metrics` agrees with its wave lines and progress.json names the last of them, and return
/// the counters with progress.json's (layer, wave). A counter that does not follow the waves
/// never agrees, and the test fails with both sides after 10 s (well before the run's worker
/// timeout of 60 s) or as soon as the endpoint is gone.
fn settled_counters(addr: &str, log: &Path, run: &Path) -> (Counters, String, u64) {
    let start = Instant::now();
    loop {
        let lines = wave_lines(log);
        let text = scrape_metrics(addr);
        let scraped = text.as_deref().ok().and_then(Counters::scraped);
        let expected = Counters::from_log(&lines);
        let at = progress(run).map(|(_, layer, wave)| (layer, wave));
        let last = lines.last().map(|l| (l.layer.clone(), l.wave));
        if let Some((layer, wave)) = at
            .clone()
            .filter(|_| scraped == Some(expected) && at == last)
        {
            return (expected, layer, wave);
        }
        assert!(
            text.is_ok() && start.elapsed() < Duration::from_secs(10),
            "the coordinator's metrics never agreed with its waves:\nscraped {scraped:?}\n\
             from the log {expected:?}\nprogress.json at {at:?}, last wave line {last:?}\n\
             {text:?}\nits log:\n{}",
            log_text(log)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// `kingmaker status RUN` and `status RUN --json` while a distributed build is in its second
/// layer (the coordinator held with SIGSTOP between the two): the phase and pid, the layer and wave,
/// the states decided (checked against the reference table's depths), the rate and the estimate
/// of the time left (checked against each other), the workers by address, the last checkpoint;
/// the text says the same as the JSON.
#[test]
fn status_of_a_distributed_build_in_progress() {
    let reference = cc3p_reference();
    let tmp = tempfile::tempdir().unwrap();
    let (workers, run, log, mut build) = checkpointed_distributed_build(tmp.path());
    assert!(
        wait_for_wave(&run, &mut build.0, Some("enable_ab"), 3, HANG),
        "the build ended before wave 3 of enable_ab:\n{}",
        log_text(&log)
    );
    let pid = build.0.id();
    let held = Stopped::hold(pid);
    let dir = run.to_str().unwrap();
    let status: Value = serde_json::from_str(&kingmaker_ok(&["status", dir, "--json"])).unwrap();
    let text = kingmaker_ok(&["status", dir]);
    drop(held);

    assert_eq!(status["phase"], "running", "{status}");
    assert_eq!(status["activity"], "running", "{status}");
    assert_eq!(status["pid"], pid, "{status}");
    assert_eq!(
        status["layers"],
        json!(["solo", "enable_ab", "enable_ac"]),
        "{status}"
    );
    assert_eq!(status["finished"], json!(["solo"]), "{status}");
    let p = &status["progress"];
    assert_eq!(
        (&p["layer"], &p["pid"], &p["phase"], &p["states"]),
        (
            &json!("enable_ab"),
            &json!(pid),
            &json!("running"),
            &json!(CC3P_STATES)
        ),
        "{status}"
    );
    assert_eq!(
        p["workers"],
        json!([workers[0].addr, workers[1].addr]),
        "{status}"
    );
    assert_eq!(p["layers_finished"], json!(["solo"]), "{status}");
    let wave = p["wave"].as_u64().unwrap();
    let max_depth = read_json(&reference.join("summary.json"))["layers"]["enable_ab"]["max_depth"]
        .as_u64()
        .unwrap();
    assert!(
        (3..max_depth).contains(&wave),
        "held mid-layer (enable_ab is decided by wave {max_depth}): {status}"
    );
    let (decided, in_wave) = decided_by_wave(reference, "enable_ab", wave);
    assert_eq!(
        (p["decided_total"].as_u64(), p["decided_in_wave"].as_u64()),
        (Some(decided), Some(in_wave)),
        "states decided by wave {wave}, from the reference's depths: {status}"
    );
    assert!(decided < CC3P_STATES, "{status}");
    let (rate, seconds) = (p["rate"].as_f64().unwrap(), p["seconds"].as_f64().unwrap());
    assert!(
        rate > 0.0 && (rate - decided as f64 / seconds).abs() <= 1e-9 * rate,
        "rate = decided / seconds: {status}"
    );
    let eta = status["eta_seconds"].as_f64().expect("an estimate");
    let left = (CC3P_STATES - decided) as f64 / rate;
    assert!(
        eta > 0.0 && (eta - left).abs() <= 1e-9 * left,
        "eta = states left / rate = {left}: {status}"
    );
    let checkpoint = &status["checkpoint"];
    let cp_wave = checkpoint["last"]["wave"].as_u64().unwrap();
    assert!(
        checkpoint["layer"] == "enable_ab" && (cp_wave == wave || cp_wave + 1 == wave),
        "checkpointed every wave: {status}"
    );

    for line in [
        format!(
            "run {dir}: running (pid {pid}, `kingmaker build`: running) ({CC3P_STATES} states)"
        ),
        "layers: solo, enable_ab, enable_ac — finished: solo".to_string(),
        format!(
            "layer enable_ab wave {wave}: {decided} of {CC3P_STATES} states decided ({:.1}%), \
             {rate:.0} states/s, last update ",
            100.0 * decided as f64 / CC3P_STATES as f64
        ),
        format!("workers: {}, {}", workers[0].addr, workers[1].addr),
        format!("last checkpoint: layer enable_ab after wave {cp_wave} ("),
        format!("eta for this layer: at most about {eta:.0}s (waves vary)"),
    ] {
        assert!(text.contains(&line), "status should say {line:?}:\n{text}");
    }

    let ended = finish(&mut build, &log);
    assert!(ended.success(), "{ended}:\n{}", log_text(&log));
    assert_like(&run, reference, "the build looked at by status");
    let status: Value = serde_json::from_str(&kingmaker_ok(&["status", dir, "--json"])).unwrap();
    assert_eq!(status["phase"], "complete", "{status}");
}

/// The coordinator's `--metrics` during a distributed build, scraped at two held points (a worker
/// stopped, so the coordinator stays up but cannot finish the layer): at wave 3+ of the first
/// layer and at wave 3+ of the second. Each time every counter equals what the coordinator's own
/// wave lines add up to, and `kingmaker_wave` is progress.json's wave; the states decided equal
/// the reference tables' count (every state of the finished layer, and those of depth up to the
/// wave in the current one), and the number of waves follows the first layer's depth; two
/// workers exchange updates, so updates sent and bytes on the wire are counted too; and every
/// counter moved between the two points. (No metric names the layer: there is no layer label.)
#[test]
fn coordinator_metrics_follow_the_waves_of_a_distributed_build() {
    let reference = cc3p_reference();
    let summary = read_json(&reference.join("summary.json"));
    let tmp = tempfile::tempdir().unwrap();
    let workers = slow_workers();
    let (run, log) = (tmp.path().join("run"), tmp.path().join("run.log"));
    let mut build = spawn(
        &distributed(
            &CC3P,
            &workers,
            &run,
            &["--shard-size", "256", "--metrics", "127.0.0.1:0"],
        ),
        &log,
    );
    let addr = metrics_addr(&log, &mut build);

    assert!(
        wait_for_wave(&run, &mut build.0, Some("solo"), 3, HANG),
        "the build ended before wave 3 of solo:\n{}",
        log_text(&log)
    );
    let (a, layer, wave) = {
        let _held = Stopped::hold(workers[1].pid());
        settled_counters(&addr, &log, &run)
    };
    assert_eq!(layer, "solo", "held in the first layer: {a:?}");
    assert_eq!(a.wave, wave);
    assert_eq!(a.waves, wave + 1, "waves 0..={wave} closed: {a:?}");
    assert_eq!(
        a.decided,
        decided_by_wave(reference, "solo", wave).0,
        "states decided by wave {wave} of solo, from the reference's depths: {a:?}"
    );
    assert!(
        a.sent > 0 && a.wire > 0,
        "two workers exchange updates: {a:?}"
    );
    assert_layer_gauges(&addr, 1, a.decided);

    assert!(
        wait_for_wave(&run, &mut build.0, Some("enable_ab"), 3, HANG),
        "the build ended before wave 3 of enable_ab:\n{}",
        log_text(&log)
    );
    let (b, layer, wave) = {
        let _held = Stopped::hold(workers[1].pid());
        settled_counters(&addr, &log, &run)
    };
    assert_eq!(layer, "enable_ab", "held in the second layer: {b:?}");
    let solo = &summary["layers"]["solo"];
    let solo_decided = solo["win"].as_u64().unwrap() + solo["loss"].as_u64().unwrap();
    // solo is decided by wave max_depth; one more, empty, wave ends it.
    let solo_waves = solo["max_depth"].as_u64().unwrap() + 2;
    assert_eq!(b.wave, wave);
    assert_eq!(b.waves, solo_waves + wave + 1, "{b:?}");
    assert_eq!(
        b.decided,
        solo_decided + decided_by_wave(reference, "enable_ab", wave).0,
        "all of solo's legal states and enable_ab's up to wave {wave}: {b:?}"
    );
    assert!(b.decided <= 2 * CC3P_STATES, "{b:?}");
    assert_layer_gauges(&addr, 2, decided_by_wave(reference, "enable_ab", wave).0);
    for (name, before, after) in [
        ("waves", a.waves, b.waves),
        ("states decided", a.decided, b.decided),
        ("updates applied", a.applied, b.applied),
        ("updates sent", a.sent, b.sent),
        ("bytes on the wire", a.wire, b.wire),
    ] {
        assert!(after > before, "{name} did not move: {a:?} then {b:?}");
    }

    let ended = finish(&mut build, &log);
    assert!(ended.success(), "{ended}:\n{}", log_text(&log));
    assert_like(&run, reference, "the build whose metrics were scraped");
}

/// A worker paused (SIGSTOP: a stalled host, a VM migration) for longer than a connection's HTTP/2
/// keep-alive (about 15 s) but well within the run's `--worker-timeout` (60 s) is waited for: no
/// connection to it is dropped behind the timeout's back, and the build ends with the reference's
/// tables.
#[test]
fn a_worker_paused_within_the_worker_timeout_is_waited_for() {
    let reference = cc3p_reference();
    let tmp = tempfile::tempdir().unwrap();
    let (workers, run, log, mut build) = checkpointed_distributed_build(tmp.path());
    assert!(
        wait_for_wave(&run, &mut build.0, Some("solo"), 3, HANG),
        "the build ended before wave 3 of solo:\n{}",
        log_text(&log)
    );
    {
        let _held = Stopped::hold(workers[1].pid());
        std::thread::sleep(Duration::from_secs(25));
        assert!(
            build.0.try_wait().unwrap().is_none(),
            "the build gave up on a worker paused for 25 s of a 60 s --worker-timeout:\n{}",
            log_text(&log)
        );
    }
    let status = finish(&mut build, &log);
    assert!(status.success(), "{status}:\n{}", log_text(&log));
    assert_like(&run, reference, "after a worker's pause");
}

/// `build cc3p --level 1 --layers solo,enable_ac` gives exactly those two tables, equal to the full
/// build's (values and depths), and a summary without control classes; `resume --layers
/// enable_ab` then adds the third, and the run is the full build: its layers in run.json (in the
/// game's order), its tables and its whole summary, classes included.
#[test]
fn layer_subsets_build_and_resume_to_the_full_build() {
    let reference = cc3p_reference();
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let dir = run.to_str().unwrap();
    kingmaker_ok(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--layers",
        "solo,enable_ac",
        "--out",
        dir,
    ]);
    assert_eq!(layer_names(&run), ["enable_ac", "solo"]);
    for name in ["solo", "enable_ac"] {
        let file = format!("layers/{name}.kmt");
        assert!(
            std::fs::read(run.join(&file)).unwrap()
                == std::fs::read(reference.join(&file)).unwrap(),
            "{file} differs from the full build's"
        );
    }
    let names: Vec<Value> = read_json(&run.join("run.json"))["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].clone())
        .collect();
    assert_eq!(names, [json!("solo"), json!("enable_ac")]);
    let partial = read_json(&run.join("summary.json"));
    let full = read_json(&reference.join("summary.json"));
    assert!(
        partial.get("classes").is_none(),
        "classes need all three layers: {partial}"
    );
    let layers = partial["layers"].as_object().unwrap();
    assert_eq!(
        layers.keys().collect::<Vec<_>>(),
        ["enable_ac", "solo"],
        "{partial}"
    );
    for (name, layer) in layers {
        assert_eq!(layer, &full["layers"][name], "{name}");
    }

    let out = kingmaker(&["resume", dir, "--layers", "enable_ab"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(layer_names(&run), ["enable_ab", "enable_ac", "solo"]);
    assert_eq!(
        read_json(&run.join("run.json"))["layers"],
        read_json(&reference.join("run.json"))["layers"],
        "run.json lists the layers in the game's order, as a build of all three does"
    );
    assert_same_tables(&run, reference);
    let summary = read_json(&run.join("summary.json"));
    assert!(summary["classes"].is_object(), "{summary}");
    assert_eq!(summary, full, "the summary of the full build");
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
        format!(
            "worker {}: restoring the checkpoint after wave {wave}",
            workers[1].addr
        ),
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
/// worker: about 1.7 million cells each, over the budget): held mid-layer, each worker has its
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
    let sizes = [1_000_000, 1_000_000, 1_000_000, 428_208];
    {
        // Worker 0 held: the layer cannot end, so both workers keep their arrays open.
        let _held = Stopped::hold(workers[0].pid());
        for (i, w) in workers.iter().enumerate() {
            let dir = w.data.join(&run_id).join("solo");
            let owned = [2 * i, 2 * i + 1];
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
                assert_eq!(len, sizes[s], "shard {s}: one byte per state");
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
/// space (`--no-symmetry`: 7,084,000 states, 6.76 MiB of cells), with an 8 MiB budget. The peak
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
            .contains("cells of layer solo: in mapped files under work/"),
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
