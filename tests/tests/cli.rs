//! The operator CLI's edges, through the real `kingmaker` binary: options given twice, pack's
//! leftovers, `status` and `summarize` on finished runs and on releases, what `pack` and `verify`
//! report, illegal states in `query`, `deck` and `deck verify`, `bfs` past the last new state,
//! and the HTTP API's parameters.

use kingmaker_e2e::{grouped, kingmaker, kingmaker_ok, read_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `kingmaker ARGS...` must fail with a message containing `want`, without panicking; its stderr.
#[track_caller]
fn refused(args: &[&str], want: &str) -> String {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} was accepted: {err}");
    assert!(err.contains(want), "{args:?}: expected {want:?} in {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

/// Build cc3p level 1 into `dir/run`.
fn build_level_1(dir: &Path) -> PathBuf {
    let run = dir.join("run");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&run)]);
    run
}

/// Build cc3p level 1 into `dir/run` and pack it into `dir/rel`.
fn build_and_pack(dir: &Path) -> (PathBuf, PathBuf) {
    let run = build_level_1(dir);
    let rel = dir.join("rel");
    kingmaker_ok(&["pack", s(&run), "--out", s(&rel)]);
    (run, rel)
}

// ---- layers and thresholds given twice ----

#[test]
fn a_layer_or_threshold_given_twice_is_refused_before_the_run_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    refused(
        &[
            "build",
            "cc3p",
            "--level",
            "1",
            "--layers",
            "solo,solo",
            "--out",
            s(&out),
        ],
        "\"solo\" twice",
    );
    assert!(!out.exists(), "the refused build created its run directory");
    refused(
        &[
            "build",
            "go",
            "--surface",
            "plane",
            "--size",
            "2x2",
            "--thresholds",
            "1,1",
            "--out",
            s(&out),
        ],
        "1 twice",
    );
    assert!(!out.exists(), "the refused build created its run directory");
    // Distinct ones still build and pack.
    kingmaker_ok(&[
        "build",
        "go",
        "--surface",
        "plane",
        "--size",
        "2x2",
        "--thresholds",
        "0,1",
        "--out",
        s(&out),
    ]);
    kingmaker_ok(&["pack", s(&out), "--out", s(&tmp.path().join("rel"))]);
    // A resume given a layer twice is refused the same way.
    let run = build_level_1(&tmp.path().join("cc3p"));
    refused(
        &["resume", s(&run), "--layers", "enable_ab,enable_ab"],
        "\"enable_ab\" twice",
    );
}

// ---- what a killed pack leaves behind ----

/// The pid of a process that has exited (and was reaped): no process has it, for a while.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_pack_killed_with_sigkill_leaves_a_staging_directory_that_the_next_pack_removes() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("toppen");
    kingmaker_ok(&["build", "toppen", "--out", s(&run)]);
    let rel = tmp.path().join("rel");
    // A slow pack (zstd level 22), killed as soon as its staging directory exists.
    let mut child = std::process::Command::new(kingmaker_e2e::bin("kingmaker"))
        .args(["pack", s(&run), "--out", s(&rel), "--zstd-level", "22"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let staging = tmp.path().join(format!(".rel.packing-{}", child.id()));
    let started = std::time::Instant::now();
    while !staging.exists() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the pack ended before it could be killed"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(staging.exists(), "kill -9 left no staging directory");
    // The destination holds at most the killed pack's lock (nobody holds it now): no release.
    let left: Vec<_> = std::fs::read_dir(&rel)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.iter().all(|n| n == "kingmaker.lock"), "{left:?}");

    // Leftovers of other kinds, beside it: a dead pid's; a live pid's (this test's) whose lock
    // nobody holds; a live pid's without a lock file (perhaps a pack about to rename: kept);
    // another release's.
    let dead = tmp.path().join(format!(".rel.packing-{}", dead_pid()));
    std::fs::create_dir(&dead).unwrap();
    std::fs::write(dead.join("solo.kmt"), b"half a table").unwrap();
    let unlocked = tmp
        .path()
        .join(format!(".rel.packing-{}", std::process::id()));
    std::fs::create_dir(&unlocked).unwrap();
    std::fs::write(unlocked.join("kingmaker.lock"), b"{}").unwrap();
    let parent_pid = tmp.path().join(format!(
        ".rel.packing-{}",
        std::os::unix::process::parent_id()
    ));
    std::fs::create_dir(&parent_pid).unwrap();
    let other = tmp.path().join(format!(".other.packing-{}", dead_pid()));
    std::fs::create_dir(&other).unwrap();

    let out = kingmaker(&["pack", s(&run), "--out", s(&rel)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = String::from_utf8_lossy(&out.stderr);
    for gone in [&staging, &dead, &unlocked] {
        assert!(!gone.exists(), "{} was not removed", gone.display());
        assert!(
            log.contains(s(gone)),
            "the removal of {} is not logged: {log}",
            gone.display()
        );
    }
    assert!(
        parent_pid.exists(),
        "a live pack's staging directory was removed"
    );
    assert!(
        other.exists(),
        "another release's staging directory was removed"
    );
    kingmaker_ok(&["verify", s(&rel)]);
    // No lock file in the release.
    assert!(!rel.join("kingmaker.lock").exists());
}

// ---- a finished run's progress and status ----

/// progress.json of a finished run: phase `finished`, every layer finished, all states decided.
#[track_caller]
fn assert_progress_finished(run: &Path, layers: &[&str]) {
    let p = read_json(&run.join("progress.json"));
    assert_eq!(p["phase"], "finished", "{p}");
    assert_eq!(p["layers_finished"], serde_json::json!(layers), "{p}");
    assert_eq!(p["decided_total"], p["states"], "{p}");
}

/// `status` on a finished run: complete, with the summary's counts, for text and JSON.
#[track_caller]
fn assert_status_finished(run: &Path) {
    let summary = read_json(&run.join("summary.json"));
    let text = kingmaker_ok(&["status", s(run)]);
    assert!(
        text.contains("complete") && text.contains("finished"),
        "{text}"
    );
    assert!(!text.contains("states decided"), "{text}");
    assert!(!text.contains("last update"), "{text}");
    for (name, l) in summary["layers"].as_object().unwrap() {
        let line = format!("W {:>12}  L {:>12}", l["win"], l["loss"]);
        assert!(
            text.lines()
                .any(|t| t.contains(name.as_str()) && t.contains(&line)),
            "{name}: {line:?} not in {text}"
        );
    }
    let v: Value = serde_json::from_str(&kingmaker_ok(&["status", s(run), "--json"])).unwrap();
    assert_eq!(v["phase"], "complete", "{v}");
    assert_eq!(v["progress"]["phase"], "finished", "{v}");
    assert_eq!(v["progress"]["layers_finished"], v["layers"], "{v}");
    assert_eq!(v["summary"]["states"], summary["states"], "{v}");
    assert_eq!(v["summary"]["illegal"], summary["illegal"], "{v}");
    for (name, l) in summary["layers"].as_object().unwrap() {
        for count in ["win", "loss", "draw"] {
            assert_eq!(
                v["summary"]["layers"][name][count], l[count],
                "{name} {count}: {v}"
            );
        }
    }
}

#[test]
fn a_finished_build_or_resume_says_so_in_progress_and_status() {
    let tmp = tempfile::tempdir().unwrap();
    let all = ["solo", "enable_ab", "enable_ac"];
    let run = build_level_1(tmp.path());
    assert_progress_finished(&run, &all);
    assert_status_finished(&run);

    // A resume that gives a run its missing layers ends the same way.
    let part = tmp.path().join("part");
    kingmaker_ok(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--layers",
        "solo",
        "--out",
        s(&part),
    ]);
    assert_progress_finished(&part, &["solo"]);
    kingmaker_ok(&["resume", s(&part), "--layers", "enable_ab,enable_ac"]);
    assert_progress_finished(&part, &all);
    assert_status_finished(&part);

    // A run finished by an older kingmaker, whose progress.json still shows its last wave.
    let mut p = read_json(&run.join("progress.json"));
    p["phase"] = "running".into();
    p["layers_finished"] = serde_json::json!(["solo", "enable_ab"]);
    p["decided_total"] = 1587.into();
    std::fs::write(run.join("progress.json"), p.to_string()).unwrap();
    assert_status_finished(&run);
}

// ---- status and summarize on a release ----

/// The bytes of every file in a directory.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn status_and_summarize_describe_a_release() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, rel) = build_and_pack(tmp.path());
    let manifest = read_json(&rel.join("manifest.json"));
    let bytes = dir_bytes(&rel);

    let text = kingmaker_ok(&["status", s(&rel)]);
    assert!(
        text.contains("complete") && text.contains("release"),
        "{text}"
    );
    for l in manifest["layers"].as_array().unwrap() {
        let c = &l["counts"];
        let words = format!(
            "W {} L {} D {} illegal {}",
            grouped(c["win"].as_u64().unwrap()),
            grouped(c["loss"].as_u64().unwrap()),
            grouped(c["draw"].as_u64().unwrap()),
            grouped(c["illegal"].as_u64().unwrap())
        );
        let name = l["name"].as_str().unwrap();
        assert!(
            text.lines().any(|t| t.contains(name) && t.contains(&words)),
            "{name}: {words:?} not in {text}"
        );
    }
    assert!(
        text.contains(&format!("{} bytes", grouped(bytes))),
        "{text}"
    );
    let v: Value = serde_json::from_str(&kingmaker_ok(&["status", s(&rel), "--json"])).unwrap();
    assert_eq!(v["kind"], "release", "{v}");
    assert_eq!(v["phase"], "complete", "{v}");
    assert_eq!(v["states"], 1662, "{v}");
    assert_eq!(
        v["layers"],
        serde_json::json!(["solo", "enable_ab", "enable_ac"])
    );
    assert_eq!(v["bytes"], bytes, "{v}");
    for l in manifest["layers"].as_array().unwrap() {
        let name = l["name"].as_str().unwrap();
        for count in ["win", "loss", "draw", "illegal"] {
            assert_eq!(
                v["counts"][name][count], l["counts"][count],
                "{name} {count}"
            );
        }
    }

    // summarize prints the release's summary (the run's, as packed), and writes nothing.
    let summary = read_json(&run.join("summary.json"));
    let v: Value = serde_json::from_str(&kingmaker_ok(&["summarize", s(&rel), "--json"])).unwrap();
    assert_eq!(v, summary);
    let from_run = kingmaker_ok(&["summarize", s(&run), "--reachable"]);
    let from_rel = kingmaker_ok(&["summarize", s(&rel)]);
    let counts = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("  ") || l.starts_with("cc3p"))
            .map(str::to_string)
            .collect()
    };
    assert!(!counts(&from_rel).is_empty(), "{from_rel}");
    assert_eq!(counts(&from_rel), counts(&from_run), "{from_rel}");
    assert!(from_rel.contains("release"), "{from_rel}");
    assert_eq!(dir_bytes(&rel), bytes, "summarize wrote into the release");
    kingmaker_ok(&["verify", s(&rel)]);

    // --reachable needs the run when the packed summary has no reachable counts.
    let bare = tmp.path().join("bare");
    kingmaker_ok(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--reachable",
        "false",
        "--out",
        s(&bare),
    ]);
    let bare_rel = tmp.path().join("bare-rel");
    kingmaker_ok(&["pack", s(&bare), "--out", s(&bare_rel)]);
    refused(
        &["summarize", s(&bare_rel), "--reachable"],
        "summarize RUN_DIR --reachable",
    );
}

// ---- what pack and verify report ----

/// The number (digits grouped by commas) just before `suffix` in `text`.
fn number_before(text: &str, suffix: &str) -> u64 {
    let at = text
        .find(suffix)
        .unwrap_or_else(|| panic!("{suffix:?} not in {text}"));
    let digits: String = text[..at]
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .filter(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number before {suffix:?} in {text}"))
}

/// Write `manifest` as the release's manifest.json and its manifest.sha256 to match.
fn rewrite_manifest(rel: &Path, manifest: &Value) {
    let text = serde_json::to_string_pretty(manifest).unwrap() + "\n";
    std::fs::write(rel.join("manifest.json"), &text).unwrap();
    let out = std::process::Command::new("sha256sum")
        .arg("manifest.json")
        .current_dir(rel)
        .output()
        .expect("sha256sum");
    assert!(out.status.success());
    std::fs::write(rel.join("manifest.sha256"), &out.stdout).unwrap();
}

#[test]
fn pack_and_verify_report_the_same_bytes_and_what_was_sampled() {
    let tmp = tempfile::tempdir().unwrap();
    let run = build_level_1(tmp.path());
    let rel = tmp.path().join("rel");
    let packed = kingmaker_ok(&["pack", s(&run), "--out", s(&rel)]);
    let bytes = dir_bytes(&rel);
    assert_eq!(number_before(&packed, " bytes in all"), bytes, "{packed}");
    let verified = kingmaker_ok(&["verify", s(&rel)]);
    assert_eq!(
        number_before(&verified, " bytes in all"),
        bytes,
        "{verified}"
    );
    let json_rel = tmp.path().join("rel-json");
    let v: Value = serde_json::from_str(&kingmaker_ok(&[
        "pack",
        s(&run),
        "--out",
        s(&json_rel),
        "--json",
    ]))
    .unwrap();
    assert_eq!(v["bytes"], dir_bytes(&json_rel), "{v}");
    let v: Value = serde_json::from_str(&kingmaker_ok(&["verify", s(&rel), "--json"])).unwrap();
    assert_eq!(v["bytes"], bytes, "{v}");

    // A sample of 0 checks nothing: refused.
    refused(
        &["verify", s(&rel), "--deep", "--sample", "0"],
        "checks nothing",
    );
    // A sample: the states actually checked, by name.
    let v: Value = serde_json::from_str(&kingmaker_ok(&[
        "verify",
        s(&rel),
        "--deep",
        "--sample",
        "100",
        "--json",
    ]))
    .unwrap();
    assert_eq!(v["deep_sample_per_layer"], 100, "{v}");
    assert_eq!(v["deep_states_checked"], 300, "{v}");
    assert_eq!(v["states_decoded"], 3 * 1662, "{v}");
    let text = kingmaker_ok(&["verify", s(&rel), "--deep", "--sample", "100"]);
    assert!(text.contains("100 distinct states of each layer"), "{text}");
    assert!(!text.contains("every state of every layer"), "{text}");
    // A whole pass, and a sample as large as a layer, check every state.
    for extra in [&[][..], &["--sample", "5000"][..]] {
        let mut args = vec!["verify", s(&rel), "--deep", "--json"];
        args.extend_from_slice(extra);
        let v: Value = serde_json::from_str(&kingmaker_ok(&args)).unwrap();
        assert_eq!(v["deep_states_checked"], 3 * 1662, "{extra:?}: {v}");
        assert_eq!(v["deep_sample_per_layer"], Value::Null, "{extra:?}: {v}");
    }

    // Counts that differ are written in words, not as a Rust structure.
    let mut manifest = read_json(&rel.join("manifest.json"));
    let win = manifest["layers"][0]["counts"]["win"].as_u64().unwrap();
    manifest["layers"][0]["counts"]["win"] = (win + 1000).into();
    rewrite_manifest(&rel, &manifest);
    let c = &manifest["layers"][0]["counts"];
    let err = refused(&["verify", s(&rel)], "solo.kmt");
    let want = format!(
        "W {} L {} D {} illegal {}",
        grouped(win + 1000),
        grouped(c["loss"].as_u64().unwrap()),
        c["draw"],
        c["illegal"]
    );
    assert!(err.contains(&want), "{want:?} not in {err}");
    assert!(!err.contains("ValueCounts"), "{err}");
}

// ---- illegal states in query ----

#[test]
fn query_calls_an_illegal_state_illegal() {
    let tmp = tempfile::tempdir().unwrap();
    let run = build_level_1(tmp.path());
    // A and B both on their goals: illegal.
    let pos = "A:d1;B:d4;C:e1;A";
    let text = kingmaker_ok(&["query", s(&run), pos]);
    assert!(!text.contains("-0"), "{text}");
    assert!(
        text.contains("A=illegal") && text.contains("A>B=illegal"),
        "{text}"
    );
    let v: Value = serde_json::from_str(&kingmaker_ok(&["query", s(&run), pos, "--json"])).unwrap();
    let a = &v["answers"];
    for p in 0..3 {
        assert_eq!(a["solo"][p]["value"], "illegal", "{v}");
        assert_eq!(a["enable"][p][p], Value::Null, "unused: {v}");
        for q in (0..3).filter(|&q| q != p) {
            assert_eq!(a["enable"][p][q]["value"], "illegal", "{v}");
        }
    }
    // A legal state is unchanged.
    let v: Value =
        serde_json::from_str(&kingmaker_ok(&["query", s(&run), "start", "--json"])).unwrap();
    assert_eq!(v["answers"]["solo"][0]["value"], "L", "{v}");
    assert_eq!(v["answers"]["enable"][0][1]["value"], "W", "{v}");

    // A two-player game: both pieces on their goals.
    let cc2p = tmp.path().join("cc2p");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        "4x4",
        "--pieces",
        "1",
        "--out",
        s(&cc2p),
    ]);
    let pos = "0:15;1:0;0";
    let text = kingmaker_ok(&["query", s(&cc2p), pos]);
    assert!(text.contains("value illegal"), "{text}");
    assert!(!text.contains("-0"), "{text}");
    let v: Value =
        serde_json::from_str(&kingmaker_ok(&["query", s(&cc2p), pos, "--json"])).unwrap();
    assert_eq!(v["value"], "illegal", "{v}");
}

// ---- deck and deck verify ----

/// `kingmaker deck verify FILE` on `text` written to `dir/name`: (success, stdout, stderr).
fn deck_verify(dir: &Path, name: &str, text: &str) -> (bool, String, String) {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let out = kingmaker(&["deck", "verify", s(&file)]);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn deck_speaks_of_one_card_in_the_singular() {
    let out = kingmaker_ok(&["deck", "--order", "2", "--cards", "1"]);
    assert!(out.contains("1 card of 3 pictures"), "{out}");
    assert!(out.contains("(each on 1 card)"), "{out}");
    assert!(out.contains("for 1 card of 3"), "{out}");
    assert!(!out.contains("1 cards"), "{out}");
    let tmp = tempfile::tempdir().unwrap();
    let (ok, out, err) = deck_verify(tmp.path(), "pair.txt", "0\n0\n");
    assert!(ok, "{err}");
    assert!(
        out.contains("2 cards of 1 picture, 1 distinct picture (on 2 cards)"),
        "{out}"
    );
}

#[test]
fn deck_verify_names_bad_numbers_and_empty_cards() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, text, want) in [
        (
            "big.json",
            r#"{"cards": [[0, 100000000000000000000000]]}"#,
            "picture id 100000000000000000000000 is too large",
        ),
        (
            "big.txt",
            "0 1\n0 4294967296\n",
            "line 2: picture id 4294967296 is too large",
        ),
        (
            "half.json",
            r#"{"cards": [[0, 1.5]]}"#,
            "not a whole number",
        ),
        (
            "empty.json",
            r#"{"cards": [[]]}"#,
            "card 0 shows no picture",
        ),
        (
            "empty2.json",
            r#"{"cards": [[0, 1], [1, 2], []]}"#,
            "card 2 shows no picture",
        ),
    ] {
        let (ok, _, err) = deck_verify(tmp.path(), name, text);
        assert!(!ok, "{name} was accepted");
        assert!(err.contains(want), "{name}: {want:?} not in {err}");
        assert!(!err.contains("floating point"), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

#[test]
fn deck_verify_checks_a_200000_card_deck_quickly() {
    let tmp = tempfile::tempdir().unwrap();
    // A pencil: picture 0 on every card, two pictures of its own on each (every deck of more
    // than m² − m + 1 cards is one). Pairwise, 2·10^10 pairs of cards.
    let k = 200_000u32;
    let text: String = (0..k)
        .map(|i| format!("0 {} {}\n", 2 * i + 1, 2 * i + 2))
        .collect();
    let started = std::time::Instant::now();
    let (ok, out, err) = deck_verify(tmp.path(), "pencil.txt", &text);
    let took = started.elapsed();
    assert!(ok, "{err}");
    assert!(
        out.contains("200000 cards of 3 pictures") && out.contains("valid"),
        "{out}"
    );
    // The last card loses the common picture: it still meets card 0 (in picture 1), but not
    // card 1.
    let mut bad: Vec<String> = text.lines().map(str::to_string).collect();
    bad[k as usize - 1] = "1 900000 900001".into();
    let (ok, _, err) = deck_verify(tmp.path(), "bad.txt", &(bad.join("\n") + "\n"));
    assert!(!ok);
    assert!(
        err.contains(&format!("cards 1 and {} share no picture", k - 1)),
        "{err}"
    );
    let took_both = started.elapsed();
    // 22 s for the first alone when every pair of cards was walked.
    assert!(
        took < std::time::Duration::from_secs(5) && took_both < std::time::Duration::from_secs(10),
        "{took:?}, {took_both:?}"
    );
}

// ---- bfs past the last new state ----

#[test]
fn bfs_stops_at_the_last_depth_with_a_new_state_and_says_so() {
    let started = std::time::Instant::now();
    let text = kingmaker_ok(&["bfs", "cc3p", "--level", "1", "--depth", "1000000"]);
    assert!(text.lines().count() < 20, "{} lines", text.lines().count());
    assert!(
        text.contains("depth 12:") && !text.contains("depth 13:"),
        "{text}"
    );
    assert!(text.contains("the search ended at depth 12"), "{text}");
    let v: Value = serde_json::from_str(&kingmaker_ok(&[
        "bfs", "cc3p", "--level", "1", "--depth", "1000000", "--json",
    ]))
    .unwrap();
    assert_eq!(
        v["new_per_depth"],
        serde_json::json!([2, 4, 8, 20, 53, 143, 261, 324, 256, 132, 34, 7])
    );
    assert_eq!(v["total_with_start"], 1245);
    assert_eq!(v["last_depth"], 12);
    assert_eq!(v["exhausted"], true);
    // Asked for no more than there is: not exhausted (depth 13 was not looked at).
    let v: Value = serde_json::from_str(&kingmaker_ok(&[
        "bfs", "cc3p", "--level", "1", "--depth", "12", "--json",
    ]))
    .unwrap();
    assert_eq!(v["exhausted"], false);
    let text = kingmaker_ok(&["bfs", "cc3p", "--level", "1", "--depth", "5"]);
    assert!(!text.contains("ended"), "{text}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

// ---- the HTTP API's parameters ----

/// `GET url` over a fresh connection (`url` as `start_serve` gives it, plus a path): the status
/// code and the body.
fn http_get(base: &str, path: &str) -> (u16, String) {
    let (status, body) = kingmaker_e2e::http_get(base, path);
    let code = status
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, body)
}

#[test]
fn serve_refuses_unknown_and_missing_parameters() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, rel) = build_and_pack(tmp.path());
    let (_server, url) = kingmaker_e2e::start_serve(&rel);
    let (code, body) = http_get(&url, "/api/info");
    assert_eq!(code, 200, "{body}");
    let info: Value = serde_json::from_str(&body).unwrap();
    let (code, _) = http_get(&url, "/api/info?");
    assert_eq!(code, 200);
    for (path, want) in [
        ("/api/info?x=1", "`x`"),
        ("/api/info?p=start", "`p`"),
        ("/api/position", "missing parameter `p`"),
        ("/api/position?", "missing parameter `p`"),
        ("/api/position?x=1", "`x`"),
    ] {
        let (code, body) = http_get(&url, path);
        assert_eq!(code, 400, "{path}: {body}");
        let v: Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {body}"));
        let error = v["error"].as_str().unwrap_or_else(|| panic!("{path}: {v}"));
        assert!(error.contains(want), "{path}: {want:?} not in {error}");
    }
    // p=start still answers for the start.
    let (code, body) = http_get(&url, "/api/position?p=start");
    assert_eq!(code, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["position"], info["start"], "{v}");
}
