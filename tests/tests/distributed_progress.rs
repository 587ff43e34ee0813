//! A distributed build in progress as `status` and the coordinator's `--metrics` report it, and
//! a worker paused within the run's `--worker-timeout`, which the build waits for.

// Nothing here is judged by time. A run is held mid-layer by waiting for progress.json to show a
// wave and then stopping a process with SIGSTOP ([`Stopped`]: it returns once every thread is
// stopped): the coordinator itself when only files are read, or one worker when the coordinator
// must stay alive (its metrics endpoint) and must not finish the layer. Level 1 of cc3p (1,662
// states) has only ~12 waves a layer, so its workers run with the test-only `--wave-delay-ms` to
// make a wave seen in progress.json come well before its layer ends; the delay only slows the run
// down, every check waits for an event. Every finished run is compared with an embedded reference
// build: values and depths of every state (the layer files byte for byte) and the summary.

use kingmaker_e2e::{
    assert_like, cc3p_reference_in, checkpointed_distributed_build, distributed, finish,
    kingmaker_status, log_text, metric, progress, read_json, scrape_metrics, slow_workers, spawn,
    wait_for_wave, Killed, Stopped, CC3P, HANG,
};
use kingmaker_tablefmt::layer::LayerFile;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

/// cc3p level 1: every state, and the legal ones (each layer decides all of them: no draws).
const CC3P_STATES: u64 = 1662;

/// The embedded build of cc3p level 1 (once per test binary).
fn cc3p_reference() -> &'static Path {
    cc3p_reference_in(Path::new(env!("CARGO_TARGET_TMPDIR")))
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
    let status: Value = serde_json::from_str(&kingmaker_status(&[dir, "--json"])).unwrap();
    let text = kingmaker_status(&[dir]);
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
    // The time left is at the pace of the finished layer (solo), its tail waves and table
    // included.
    let eta = status["eta"].as_str().expect("an estimate");
    let seconds = status["eta_seconds"]
        .as_f64()
        .expect("an estimate in seconds");
    assert!(
        seconds > 0.0
            && eta.starts_with("about ")
            && eta.contains("at the pace of the 1 finished layer"),
        "{status}"
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
        format!("eta: {eta}"),
    ] {
        assert!(text.contains(&line), "status should say {line:?}:\n{text}");
    }

    let ended = finish(&mut build, &log);
    assert!(ended.success(), "{ended}:\n{}", log_text(&log));
    assert_like(&run, reference, "the build looked at by status");
    let status: Value = serde_json::from_str(&kingmaker_status(&[dir, "--json"])).unwrap();
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
