//! Layers kept where they were computed (`build --workers ... --keep-layers-on-workers`): real
//! `kingmaker-worker` processes write the parts of every finished layer into their data
//! directories, the coordinator writes only their list, and the parts read in row order are the
//! embedded build's table, state for state, with its digest (carried from part to part).

use kingmaker_e2e::{
    addrs, assert_ok, bin, kingmaker, read_json, slow_workers, wait_for_wave, Stopped, Worker,
    TOKEN,
};
use kingmaker_tablefmt::fsio::file_sha256;
use kingmaker_tablefmt::kept::read_kept;
use kingmaker_tablefmt::layer::LayerFile;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// `build GAME... --workers ... --keep-layers-on-workers` into `run`, shards of `shard_size`.
fn build_kept(game: &[&str], run: &Path, workers: &[Worker], shard_size: &str) -> Output {
    let list = addrs(workers);
    let kept = [
        "--workers",
        &list,
        "--token",
        TOKEN,
        "--keep-layers-on-workers",
    ];
    let mut extra = kept.to_vec();
    extra.extend(["--shard-size", shard_size, "--worker-timeout", "30"]);
    build(game, run, &extra)
}

fn build(args: &[&str], run: &Path, extra: &[&str]) -> Output {
    let mut all = vec!["build"];
    all.extend(args);
    all.extend(["--out", run.to_str().unwrap()]);
    all.extend(extra);
    kingmaker(&all)
}

/// Every layer of `reference` (a run with its tables gathered) is kept in `run` on `workers`:
/// the list of parts names each worker's file, whose size and sha256 it records, and the parts
/// read in order hold the reference table's values and depths; the summaries' digests agree.
fn assert_kept_like(run: &Path, workers: &[Worker], reference: &Path) {
    let expected = read_json(&reference.join("summary.json"));
    let got = read_json(&run.join("summary.json"));
    assert_eq!(got["kept_on_workers"], true, "{got}");
    let layers = expected["layers"].as_object().unwrap();
    for (name, want) in layers {
        assert_eq!(
            got["layers"][name]["digest"], want["digest"],
            "layer {name}"
        );
        assert!(
            !run.join("layers").join(format!("{name}.kmt")).exists(),
            "layer {name} was gathered into the run directory"
        );
        let kept = read_kept(&run.join("layers"), name)
            .unwrap()
            .unwrap_or_else(|| panic!("layer {name} has no list of parts"));
        assert_eq!(kept.summary.digest, want["digest"].as_str().unwrap());
        assert!(
            kept.parts.len() >= 2,
            "layer {name}: {} part(s) on {} workers",
            kept.parts.len(),
            workers.len()
        );
        let table = LayerFile::open(&reference.join("layers").join(format!("{name}.kmt"))).unwrap();
        assert_eq!(kept.summary.states, table.states());
        for part in &kept.parts {
            let worker = workers
                .iter()
                .find(|w| w.addr == part.worker)
                .unwrap_or_else(|| panic!("part on unknown worker {}", part.worker));
            let path = worker.data.join(&part.file);
            assert_eq!(
                file_sha256(&path).unwrap(),
                (part.size, part.sha256.clone()),
                "{}",
                path.display()
            );
            let file = LayerFile::open(&path).unwrap();
            assert_eq!(file.states(), part.states);
            let n = part.states as usize;
            let (mut v, mut d) = (vec![0u8; n], vec![0u16; n]);
            let (mut tv, mut td) = (vec![0u8; n], vec![0u16; n]);
            file.read_states(0, &mut v, &mut d).unwrap();
            table.read_states(part.first, &mut tv, &mut td).unwrap();
            assert!(
                v == tv && d == td,
                "layer {name}: the part of {} from row {} differs from the table",
                part.worker,
                part.first
            );
        }
    }
}

/// A game solved in full: each worker's part is its own shards' rows; the coordinator's list and
/// digest match an embedded build's table. The workers' shard files go at the end of the run,
/// their parts stay; and a command that reads tables says where they are.
#[test]
fn cc3p_layers_stay_on_two_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["cc3p", "--level", "1"];
    let embedded = tmp.path().join("embedded");
    assert_ok(&build(&game, &embedded, &[]), "embedded build");
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
    let run = tmp.path().join("kept");
    let out = build_kept(&game, &run, &workers, "128");
    assert_ok(&out, "build with the layers kept on 2 workers");
    assert_kept_like(&run, &workers, &embedded);
    for w in &workers {
        // The run's directory, beside the worker's own lock of its data directory.
        let runs: Vec<_> = std::fs::read_dir(&w.data)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name() != "kingmaker.lock")
            .collect();
        assert_eq!(runs.len(), 1, "one run on {}", w.addr);
        let left: Vec<String> = std::fs::read_dir(runs[0].path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            left,
            ["layers"],
            "what the end of the run left on {}",
            w.addr
        );
    }
    let query = kingmaker(&["query", run.to_str().unwrap(), "start"]);
    assert!(!query.status.success());
    let said = String::from_utf8_lossy(&query.stderr);
    assert!(said.contains("kept in parts on the workers"), "{said}");

    // `collect` brings them home, each part checked: a flipped byte in a part on its worker is
    // named and nothing is written; mended, the run holds the embedded build's tables.
    let kept = read_kept(&run.join("layers"), "solo").unwrap().unwrap();
    let part = &kept.parts[1];
    let worker = workers.iter().find(|w| w.addr == part.worker).unwrap();
    let path = worker.data.join(&part.file);
    let good = std::fs::read(&path).unwrap();
    let mut bad = good.clone();
    let at = bad.len() - 10;
    bad[at] ^= 0x40;
    std::fs::write(&path, &bad).unwrap();
    let collect = || kingmaker(&["collect", run.to_str().unwrap(), "--token", TOKEN]);
    let out = collect();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("sha256") && said.contains(&part.sha256),
        "{said}"
    );
    assert!(!run.join("layers/solo.kmt").exists());
    std::fs::write(&path, &good).unwrap();
    // In parts first: the summary's classes (three layers' values read whole, across parts) are
    // the embedded build's; then assembled from the copies already here.
    let in_parts = kingmaker(&[
        "collect",
        run.to_str().unwrap(),
        "--token",
        TOKEN,
        "--in-parts",
    ]);
    assert_ok(&in_parts, "collect --in-parts");
    let got = read_json(&run.join("summary.json"));
    let want = read_json(&embedded.join("summary.json"));
    assert!(want["classes"].is_object(), "{want}");
    assert_eq!(got["classes"], want["classes"]);
    assert_ok(&collect(), "collect");
    kingmaker_e2e::assert_same_tables(&run, &embedded);
    let left: Vec<String> = std::fs::read_dir(run.join("layers"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".kmt") || n.contains(".part-"))
        .collect();
    assert!(left.is_empty(), "left in layers/ after collect: {left:?}");
    // The summary is written again from the tables, as the gathered build wrote it.
    let got = read_json(&run.join("summary.json"));
    let want = read_json(&embedded.join("summary.json"));
    assert!(got.get("kept_on_workers").is_none(), "{got}");
    assert_eq!(got["layers"], want["layers"]);
    assert!(want["classes"].is_object(), "{want}");
    assert_eq!(got["classes"], want["classes"]);
    assert_ok(
        &kingmaker(&["query", run.to_str().unwrap(), "start"]),
        "query after collect",
    );
}

/// `kingmaker ARGS...` with `KINGMAKER_TOKEN` set to `token` (or unset).
fn with_token(args: &[&str], token: Option<&str>) -> Output {
    let mut command = Command::new(bin("kingmaker"));
    command.args(args).env_remove("KINGMAKER_TOKEN");
    if let Some(token) = token {
        command.env("KINGMAKER_TOKEN", token);
    }
    command.output().unwrap()
}

/// cc3p level 1 built in process into `tmp/embedded` and with its layers kept on `workers` into
/// `tmp/kept`.
fn embedded_and_kept(tmp: &Path, workers: &[Worker]) -> (std::path::PathBuf, std::path::PathBuf) {
    let game = ["cc3p", "--level", "1"];
    let embedded = tmp.join("embedded");
    assert_ok(&build(&game, &embedded, &[]), "embedded build");
    let run = tmp.join("kept");
    assert_ok(&build_kept(&game, &run, workers, "128"), "kept build");
    (embedded, run)
}

/// The build of a kept run writes only the layers' counts (the coordinator reads no table); the
/// readers that need the rest compute it from the parts on the workers, as a gathered build
/// writes it: `pack`'s manifest has the embedded build's summary (classes, reachable counts),
/// `report` shows who controls the game, and `summarize --reachable` writes the embedded build's
/// summary.
#[test]
fn readers_compute_what_a_kept_runs_summary_lacks_from_the_parts() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
    let (embedded, run) = embedded_and_kept(tmp.path(), &workers);
    let run_s = run.to_str().unwrap();
    let want = read_json(&embedded.join("summary.json"));
    assert!(
        want["classes"].is_object() && want["reachable"].is_object(),
        "{want}"
    );
    assert!(read_json(&run.join("summary.json"))["classes"].is_null());
    let rel = tmp.path().join("rel");
    let out = with_token(
        &["pack", run_s, "--out", rel.to_str().unwrap()],
        Some(TOKEN),
    );
    assert_ok(&out, "pack in place");
    let packed = read_json(&rel.join("manifest.json"));
    assert_eq!(packed["provenance"]["summary"], want);
    let page = tmp.path().join("report.html");
    let out = with_token(
        &["report", run_s, "--out", page.to_str().unwrap()],
        Some(TOKEN),
    );
    assert_ok(&out, "report in place");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("Who controls the game"),
        "no classes in the report"
    );
    let out = with_token(&["summarize", run_s, "--reachable"], Some(TOKEN));
    assert_ok(&out, "summarize --reachable in place");
    assert_eq!(read_json(&run.join("summary.json")), want);
    assert!(
        !run.join("layers/solo.kmt").exists(),
        "a reader gathered the table"
    );
}

/// A kept run read in place fails in words that are true and say what to do: without a token,
/// every reader names `KINGMAKER_TOKEN`; with a wrong one, the readers (which have no `--token`)
/// name it too; a part's path is named once; a record whose size disagrees with the part is
/// called the recorded size; a stopped worker fails the read within seconds, naming it.
#[test]
fn reading_a_kept_run_in_place_fails_in_true_words() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
    let (_, run) = embedded_and_kept(tmp.path(), &workers);
    let run_s = run.to_str().unwrap();
    let page = tmp.path().join("report.html");
    let rel = tmp.path().join("rel");
    let readers: [&[&str]; 6] = [
        &["query", run_s, "start"],
        &["line", run_s, "start"],
        &["serve", run_s, "--listen", "127.0.0.1:0"],
        &["report", run_s, "--out", page.to_str().unwrap()],
        &["summarize", run_s],
        &["pack", run_s, "--out", rel.to_str().unwrap()],
    ];
    let fails = |args: &[&str], token: Option<&str>| {
        let out = with_token(args, token);
        assert!(
            !out.status.success(),
            "{args:?} with token {token:?} worked"
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for args in readers {
        let said = fails(args, None);
        assert!(said.contains("KINGMAKER_TOKEN"), "{args:?}: {said}");
    }
    let kept = read_kept(&run.join("layers"), "solo").unwrap().unwrap();
    let once = |said: &str, what: &str| {
        assert_eq!(
            said.matches(&kept.parts[0].file).count() + said.matches(&kept.parts[1].file).count(),
            1,
            "{what}: the part is named once: {said}"
        );
    };
    for args in [readers[0], readers[2], readers[5]] {
        let said = fails(args, Some("not-the-token"));
        assert!(
            said.contains("KINGMAKER_TOKEN") && !said.contains("--token"),
            "{args:?}: {said}"
        );
        once(&said, "a wrong token");
    }
    // The first part's record says it is shorter than it is.
    let list = run.join("layers/solo.kept.json");
    let good = std::fs::read_to_string(&list).unwrap();
    let mut bad: serde_json::Value = serde_json::from_str(&good).unwrap();
    let size = kept.parts[0].size;
    bad["parts"][0]["size"] = (size - 100).into();
    std::fs::write(&list, bad.to_string()).unwrap();
    let said = fails(readers[0], Some(TOKEN));
    assert!(
        said.contains(&format!("recorded size is {} bytes", size - 100))
            && said.contains(&format!("end at byte {size}"))
            && !said.contains("the file has"),
        "{said}"
    );
    once(&said, "a wrong record");
    std::fs::write(&list, &good).unwrap();
    // The part itself cut short on its worker.
    let worker = workers
        .iter()
        .find(|w| w.addr == kept.parts[0].worker)
        .unwrap();
    let path = worker.data.join(&kept.parts[0].file);
    let whole = std::fs::read(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    let said = fails(readers[0], Some(TOKEN));
    assert!(said.contains(&worker.addr), "{said}");
    once(&said, "a part cut short");
    std::fs::write(&path, &whole).unwrap();
    assert_ok(&with_token(readers[0], Some(TOKEN)), "query once mended");
    // A stopped worker: the read fails in seconds, naming it (not after keep-alives give up).
    let stopped = &workers[1];
    let started = Instant::now();
    let said = {
        let _held = Stopped::hold(stopped.pid());
        fails(readers[0], Some(TOKEN))
    };
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "a read of a stopped worker took {:?}",
        started.elapsed()
    );
    assert!(said.contains(&stopped.addr), "{said}");
}

/// A layer whose parts, read together, are not what its record says is refused by `collect` in
/// words: counts and digests, as the rest of the tools print them.
#[test]
fn collect_names_a_layer_that_disagrees_with_its_record_in_words() {
    let tmp = tempfile::tempdir().unwrap();
    let workers: Vec<Worker> = (0..2).map(|_| Worker::start(TOKEN, &[])).collect();
    let (_, run) = embedded_and_kept(tmp.path(), &workers);
    let list = run.join("layers/solo.kept.json");
    let mut kept: serde_json::Value = read_json(&list);
    let recorded = "ab".repeat(32);
    kept["summary"]["digest"] = recorded.clone().into();
    std::fs::write(&list, kept.to_string()).unwrap();
    let out = kingmaker(&[
        "collect",
        run.to_str().unwrap(),
        "--token",
        TOKEN,
        "--in-parts",
    ]);
    assert!(
        !out.status.success(),
        "a layer unlike its record was collected"
    );
    let said = String::from_utf8_lossy(&out.stderr);
    let win = kept["summary"]["counts"]["win"].as_u64().unwrap();
    assert!(
        said.contains(&recorded) && said.contains(&format!("W {win}")),
        "{said}"
    );
    assert!(
        !said.contains("ValueCounts") && !said.contains("win:"),
        "debug text: {said}"
    );
}

/// A reduced game (cc2p's quarter) is expanded on the workers: each routes its shards to the
/// zones of the full table, each fills its own zones; the parts are the full solve's table.
#[test]
fn cc2p_quarter_is_expanded_on_three_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["cc2p", "--board", "7x7", "--pieces", "2"];
    let full = tmp.path().join("full");
    assert_ok(
        &build(&game, &full, &["--no-symmetry"]),
        "full embedded build",
    );
    let mut workers: Vec<Worker> = (0..3).map(|_| Worker::start(TOKEN, &[])).collect();
    let run = tmp.path().join("kept");
    let out = build_kept(&game, &run, &workers, "4096");
    assert_ok(&out, "cc2p with the layers kept on 3 workers");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("states routed to"), "{log}");
    assert_kept_like(&run, &workers, &full);
    readers_read_the_parts(&run, &full, &mut workers);
}

/// Workers in 24 MiB memory cgroups (an 8 MiB budget each) expand a reduced layer within them:
/// the coordinator cuts zones and runs to the smallest budget, each worker routes its shards a
/// slice at a time and hashes its part in small groups, and large freed buffers go back to the
/// system. Before, routing and the part's digest held whole shards and 4 M-state groups, and the
/// cgroup killed both workers once the waves were done.
#[test]
fn workers_in_24_mib_cgroups_expand_a_kept_layer_within_them() {
    let tmp = tempfile::tempdir().unwrap();
    let groups: Vec<String> = (0..2)
        .map(|i| format!("e2e-kept-{}-{i}", std::process::id()))
        .collect();
    let workers: Vec<Worker> = groups
        .iter()
        .map(|g| Worker::start_in_cgroup(TOKEN, g, 24 << 20, &[]))
        .collect();
    let run = tmp.path().join("kept");
    let list = addrs(&workers);
    let out = build(
        &["cc2p", "--board", "6x6", "--pieces", "3"],
        &run,
        &[
            "--workers",
            &list,
            "--token",
            TOKEN,
            "--keep-layers-on-workers",
        ],
    );
    let logs: Vec<String> = workers.iter().map(Worker::log_text).collect();
    drop(workers);
    for g in &groups {
        let _ = std::fs::remove_dir(format!("/sys/fs/cgroup/memory/{g}"));
    }
    assert!(
        logs.iter().all(|l| l.contains("memory budget 0.01 GiB")),
        "the workers' budgets did not come from their cgroups:\n{}",
        logs.join("\n")
    );
    assert_ok(&out, "cc2p 6×6 / 3 kept on two workers in 24 MiB each");
    let summary = read_json(&run.join("summary.json"));
    let digest = summary["layers"]["solo"]["digest"].as_str().unwrap_or("");
    // The embedded build's digest (tests/tests/estimates.rs builds it the same way).
    assert!(digest.starts_with("54e483b0"), "{summary}");
    assert_eq!(summary["kept_on_workers"], true, "{summary}");
}

/// A table cut in parts wherever the zones fell is read as the one table of `full` — by `query`,
/// `line` and `pack` (whose release has the full build's digest) — first on the workers (with
/// the token), then from copies here (`collect --in-parts`, which also writes the summary again).
fn readers_read_the_parts(run: &Path, full: &Path, workers: &mut [Worker]) {
    let run_s = run.to_str().unwrap();
    let full_s = full.to_str().unwrap();
    // `kingmaker ARGS[0] DIR ARGS[1..]`, with the workers' token or without.
    let at = |dir: &str, args: &[&str], token: bool| {
        let mut command = Command::new(bin("kingmaker"));
        command.arg(args[0]).arg(dir).args(&args[1..]);
        if token {
            command.env("KINGMAKER_TOKEN", TOKEN);
        }
        let out = command.output().unwrap();
        assert_ok(&out, &format!("{args:?} on {dir}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let reads = [
        vec!["query", "start", "--json"],
        vec!["query", "0:1,3;1:47,48;1", "--json"],
        vec!["line", "start", "--json"],
    ];
    let want = read_json(&full.join("summary.json"));
    let release_digest = |rel: &Path| {
        assert_ok(&kingmaker(&["verify", rel.to_str().unwrap()]), "verify");
        read_json(&rel.join("manifest.json"))["layers"][0]["digest"].clone()
    };
    let parts_here = || {
        std::fs::read_dir(run.join("layers"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".part-"))
            .count()
    };
    // Without the token and without copies: refused, saying how to read the parts.
    let out = kingmaker(&["query", run_s, "start"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("--in-parts"), "{said}");
    // A worker that is down is named, not skipped; back up, it serves its part again.
    workers[1].kill();
    let out = Command::new(bin("kingmaker"))
        .args(["query", run_s, "start"])
        .env("KINGMAKER_TOKEN", TOKEN)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(&workers[1].addr), "{said}");
    workers[1].restart();
    // Every read, and a pack, give the full build's answers and digest (`token`: on the workers).
    let all_agree = |token: bool, release: &str| {
        for args in &reads {
            assert_eq!(
                at(run_s, args, token),
                at(full_s, args, false),
                "{args:?} (with the token: {token})"
            );
        }
        let rel = run.parent().unwrap().join(release);
        at(run_s, &["pack", "--out", rel.to_str().unwrap()], token);
        assert_eq!(release_digest(&rel), want["layers"]["solo"]["digest"]);
        // The release's summary is the full build's: the start's value, the witnesses.
        let packed = read_json(&rel.join("manifest.json"))["provenance"]["summary"].clone();
        assert_eq!(packed["start"], want["start"], "{packed}");
        assert_eq!(packed["layers"], want["layers"], "{packed}");
    };
    // With the token: read on the workers, block by block, nothing copied.
    all_agree(true, "rel-on-workers");
    assert_eq!(parts_here(), 0, "reading on the workers copied a part");
    // Copied here and left in parts: read here, without the token.
    assert_ok(
        &kingmaker(&["collect", run_s, "--token", TOKEN, "--in-parts"]),
        "collect --in-parts",
    );
    assert!(!run.join("layers/solo.kmt").exists());
    let kept = read_kept(&run.join("layers"), "solo").unwrap().unwrap();
    assert_eq!(parts_here(), kept.parts.len());
    let got = read_json(&run.join("summary.json"));
    assert!(got.get("kept_on_workers").is_none(), "{got}");
    assert_eq!(got["layers"], want["layers"]);
    assert_eq!(got["start"], want["start"]);
    all_agree(false, "rel-from-parts");
}

/// A worker killed (kill -9) in the second layer, after the first was kept: the build stops
/// naming it; restarted on its data directory, the run resumes from run.json (its workers, and
/// that its layers stay on them) and ends with every layer kept and the embedded digests — the
/// first layer's part written before the kill among them.
#[test]
fn a_worker_killed_after_a_kept_layer_is_resumed_and_keeps_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["cc3p", "--level", "1"];
    let embedded = tmp.path().join("embedded");
    assert_ok(&build(&game, &embedded, &[]), "embedded build");
    let mut workers = slow_workers();
    let run = tmp.path().join("kept");
    let log = tmp.path().join("kept.log");
    let mut child = Command::new(bin("kingmaker"))
        .args(["build", "cc3p", "--level", "1", "--out"])
        .arg(&run)
        .args(["--workers", &addrs(&workers), "--token", TOKEN])
        .args(["--keep-layers-on-workers", "--shard-size", "128"])
        .args(["--checkpoint-every-waves", "1", "--worker-timeout", "10"])
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let seen = wait_for_wave(
        &run,
        &mut child,
        Some("enable_ab"),
        2,
        Duration::from_secs(300),
    );
    assert!(seen, "the build ended before its second layer");
    assert!(read_kept(&run.join("layers"), "solo").unwrap().is_some());
    let victim = workers[1].addr.clone();
    workers[1].kill();
    let status = child.wait().unwrap();
    assert!(!status.success(), "the build went on without a worker");
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(said.contains(&format!("worker {victim}")), "{said}");
    workers[1].restart();
    let out = kingmaker(&["resume", run.to_str().unwrap(), "--token", TOKEN]);
    assert_ok(&out, "resume");
    assert_kept_like(&run, &workers, &embedded);
}

/// Workers that moved (a worker restarted on its data directory at another address, recorded
/// in run.json as a resume on moved workers records it): `collect` finds each part by the
/// worker's number in its name, not by the address the list of parts was written with.
#[test]
fn collect_follows_workers_that_moved() {
    let tmp = tempfile::tempdir().unwrap();
    let game = ["cc3p", "--level", "1"];
    let embedded = tmp.path().join("embedded");
    assert_ok(&build(&game, &embedded, &[]), "embedded build");
    let data: Vec<_> = (0..2).map(|i| tmp.path().join(format!("w{i}"))).collect();
    let mut workers: Vec<Worker> = data
        .iter()
        .map(|d| Worker::start_on(TOKEN, d, "127.0.0.1:0"))
        .collect();
    let run = tmp.path().join("kept");
    let list = addrs(&workers);
    let out = build(
        &game,
        &run,
        &[
            "--workers",
            &list,
            "--token",
            TOKEN,
            "--keep-layers-on-workers",
            "--shard-size",
            "128",
        ],
    );
    assert_ok(&out, "build");
    workers[1].kill();
    let moved = Worker::start_on(TOKEN, &data[1], "127.0.0.1:0");
    assert_ne!(moved.addr, workers[1].addr);
    let info_path = run.join("run.json");
    let mut info = read_json(&info_path);
    info["distributed"]["workers"] = serde_json::json!([workers[0].addr, moved.addr]);
    std::fs::write(&info_path, serde_json::to_string_pretty(&info).unwrap()).unwrap();
    let out = kingmaker(&["collect", run.to_str().unwrap(), "--token", TOKEN]);
    assert_ok(&out, "collect from the moved workers");
    kingmaker_e2e::assert_same_tables(&run, &embedded);
}
