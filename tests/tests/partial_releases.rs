//! Every reader of a partial copy of a release (`fetch --values-only`, `fetch --layers solo`) answers truly or refuses clearly.

use fantoccini::{Client, Locator};
use kingmaker_e2e::{
    kingmaker, kingmaker_ok, packed_release, path_str, serve_files, start_serve, wait_for,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A packed level-1 cc3p release, served, and two partial copies of it fetched over HTTP.
struct Copies {
    tmp: tempfile::TempDir,
    /// The whole release.
    rel: PathBuf,
    /// Every layer's values, no depths.
    values_only: PathBuf,
    /// `solo` alone, with its depths.
    solo_only: PathBuf,
}

fn copies() -> Copies {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let url = serve_files(rel.clone(), Default::default());
    let values_only = tmp.path().join("values-only");
    let solo_only = tmp.path().join("solo-only");
    kingmaker_ok(&["fetch", &url, path_str(&values_only), "--values-only"]);
    kingmaker_ok(&["fetch", &url, path_str(&solo_only), "--layers", "solo"]);
    Copies {
        tmp,
        rel,
        values_only,
        solo_only,
    }
}

/// `kingmaker ARGS...` expected to fail: its stderr.
fn refused(args: &[&str]) -> String {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "kingmaker {args:?} answered from tables that cannot answer it:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

fn query(dir: &Path) -> Value {
    serde_json::from_str(&kingmaker_ok(&["query", path_str(dir), "start", "--json"])).unwrap()
}

fn get(base: &str, path: &str) -> Value {
    let (status, body) = kingmaker_e2e::http_get(base, path);
    assert!(status.contains(" 200 "), "{path}: {status} {body}");
    serde_json::from_str(&body).unwrap()
}

/// Every `depth` in `v`, wherever it is.
fn depths(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "depth" {
                    out.push(x.clone());
                } else {
                    depths(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| depths(x, out)),
        _ => {}
    }
}

#[test]
fn a_values_only_copy_answers_values_and_refuses_what_needs_depths() {
    let c = copies();
    let dir = path_str(&c.values_only);

    // query: the release's values, and no depth it does not hold.
    let (whole, part) = (query(&c.rel), query(&c.values_only));
    for p in 0..3 {
        let (w, v) = (&whole["answers"]["solo"][p], &part["answers"]["solo"][p]);
        assert_eq!(v["value"], w["value"], "solo {p}");
        assert!(w["depth"].is_u64() && v["depth"].is_null(), "solo {p}: {v}");
    }
    assert_eq!(part["answers"]["class"], whole["answers"]["class"]);
    assert!(
        part.get("rules").is_none(),
        "rule outcomes need depths: {part}"
    );

    // Lines and preference rules follow depths: refused, saying why.
    let err = refused(&["line", dir, "start"]);
    assert!(
        err.contains("without its depths") && err.contains("--values-only"),
        "{err}"
    );
    let err = refused(&["preferences", dir, "--rule", "self-interest"]);
    assert!(
        err.contains("without their depths") && err.contains("--values-only"),
        "{err}"
    );
    let err = refused(&["verify", dir, "--deep"]);
    assert!(err.contains("holds no layer's depths"), "{err}");
    kingmaker_ok(&["verify", dir]);

    // report: the layers' counts, each said to be values only.
    let page = c.values_only.join("report.html");
    kingmaker_ok(&["report", dir, "--out", path_str(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("values only").count(), 3, "one per layer");

    // serve: no depth anywhere (null), no line, no rule moves; the versioned API the same.
    let (_serve, base) = start_serve(&c.values_only);
    let info = get(&base, "/api/info");
    assert_eq!(info["depths"], false, "{info}");
    let here = get(&base, "/api/position?p=start");
    let mut found = Vec::new();
    depths(&here, &mut found);
    assert!(found.len() > 9, "the answers and the moves' have depths");
    assert!(found.iter().all(Value::is_null), "{found:?}");
    assert!(here.get("line").is_none() && here["labels"].get("choices").is_none());
    let probe = get(&base, "/api/v1/probe?position=start");
    let mut found = Vec::new();
    depths(&probe, &mut found);
    assert!(found.iter().all(Value::is_null), "{found:?}");
}

#[test]
fn a_copy_of_one_layer_answers_from_it_and_refuses_the_others() {
    let c = copies();
    let dir = path_str(&c.solo_only);

    // line: solo's line as the whole release gives it; the layers not here are named.
    let whole = kingmaker_ok(&["line", path_str(&c.rel), "start", "--json"]);
    assert_eq!(kingmaker_ok(&["line", dir, "start", "--json"]), whole);
    let err = refused(&["line", dir, "start", "--layer", "enable_ab"]);
    assert!(err.contains("no layer enable_ab"), "{err}");

    // cc3p's answers read all three layers: query gives solo's alone, saying what is missing,
    // or refuses, naming it.
    let out = kingmaker(&["query", dir, "start", "--json"]);
    if out.status.success() {
        let part: Value = serde_json::from_slice(&out.stdout).unwrap();
        let solo = part["layers"]
            .as_array()
            .and_then(|l| l.iter().find(|l| l["layer"] == "solo"))
            .unwrap_or_else(|| panic!("no solo answer: {part}"));
        assert_eq!(
            solo["answer"],
            query(&c.rel)["answers"]["solo"][0],
            "{part}"
        );
        assert_eq!(part["verdict"]["kind"], "incomplete", "{part}");
        assert!(part["verdict"].to_string().contains("enable_ab"), "{part}");
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("enable_ab"), "{err}");
    }
    // The preference rules and the explorer read the three: refused, naming what is missing.
    let err = refused(&["preferences", dir]);
    assert!(err.contains("enable_ab"), "{err}");
    let err = refused(&["serve", dir, "--listen", "127.0.0.1:0"]);
    assert!(
        err.contains("partial copy without layers enable_ab, enable_ac"),
        "{err}"
    );

    // verify checks what is here, --deep re-derives it.
    kingmaker_ok(&["verify", dir]);
    let deep: Value =
        serde_json::from_str(&kingmaker_ok(&["verify", dir, "--deep", "--json"])).unwrap();
    assert_eq!(deep["deep_states_checked"], 1662, "{deep}");
    let page = c.solo_only.join("report.html");
    kingmaker_ok(&["report", dir, "--out", path_str(&page)]);
}

#[test]
fn verify_checks_every_layer_file_a_reader_would_open() {
    let c = copies();
    let copy = &c.values_only;
    let dir = path_str(copy);
    let parts_file = copy.join("parts.json");
    let parts = std::fs::read(&parts_file).unwrap();
    let values = copy.join("solo.values.kmt");
    let good = std::fs::read(&values).unwrap();
    let mut damaged = good.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x10;

    // An empty parts list would have nothing checked: refused.
    std::fs::write(&values, &damaged).unwrap();
    std::fs::write(
        &parts_file,
        r#"{"format": "kingmaker-release-parts", "format_version": 1, "files": []}"#,
    )
    .unwrap();
    let err = refused(&["verify", dir]);
    assert!(err.contains("parts.json: lists no file"), "{err}");

    // A damaged file the parts list leaves out is still read by query: checked, and caught.
    std::fs::write(
        &parts_file,
        r#"{"format": "kingmaker-release-parts", "format_version": 1,
            "files": ["enable_ab.values.kmt", "enable_ac.values.kmt"]}"#,
    )
    .unwrap();
    let err = refused(&["verify", dir]);
    assert!(err.contains("solo.values.kmt: sha256 mismatch"), "{err}");
    std::fs::write(&values, &good).unwrap();
    std::fs::write(&parts_file, &parts).unwrap();
    kingmaker_ok(&["verify", dir]);

    // Another layer's file under solo's name, where query would read it first.
    std::fs::copy(c.rel.join("enable_ab.kmt"), copy.join("solo.kmt")).unwrap();
    let err = refused(&["query", dir, "start"]);
    assert!(err.contains("solo.kmt"), "{err}");
    let err = refused(&["verify", dir]);
    assert!(err.contains("solo.kmt"), "{err}");
    std::fs::remove_file(copy.join("solo.kmt")).unwrap();

    // A good file of the release here but not listed: checked, said, and fine.
    std::fs::copy(c.rel.join("solo.kmt"), copy.join("solo.kmt")).unwrap();
    let out = kingmaker(&["verify", dir]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("solo.kmt: here although parts.json does not list it"),
        "{err}"
    );
}

/// The texts of the elements matching `css`.
async fn texts(client: &Client, css: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in client.find_all(Locator::Css(css)).await.unwrap() {
        out.push(e.text().await.unwrap());
    }
    out
}

#[test]
fn the_explorer_shows_no_depth_for_a_values_only_copy() {
    let c = copies();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let start = query(&c.rel)["position"].as_str().unwrap().to_string();
    let at = format!("body[data-position=\"{start}\"]");
    runtime.block_on(async {
        let (_driver, client) = kingmaker_e2e::browser_session(c.tmp.path(), "1280,900").await;
        // The whole release: every answer with its depth.
        let (_whole, url) = start_serve(&c.rel);
        client.goto(&url).await.unwrap();
        wait_for(&client, &at).await;
        let solo = texts(&client, "#labels td.solo .v").await;
        assert!(
            solo.iter()
                .all(|t| t.len() > 1 && t[1..].parse::<u16>().is_ok()),
            "{solo:?}"
        );

        // The values-only copy: the values alone, no computer play.
        let (_part, url) = start_serve(&c.values_only);
        client.goto(&url).await.unwrap();
        wait_for(&client, &at).await;
        let solo = texts(&client, "#labels td.solo .v").await;
        assert_eq!(
            solo,
            ["L", "L", "L"],
            "the start: every player can be forced out"
        );
        let chips = texts(&client, "#moves .chip").await;
        assert!(!chips.is_empty());
        for chip in &chips {
            assert!(
                !chip.chars().any(|ch| ch.is_ascii_digit()),
                "{chip:?} in {chips:?}"
            );
        }
        let hands = texts(&client, "#labels td.enable").await;
        assert!(
            hands
                .iter()
                .all(|h| !h.chars().any(|ch| ch.is_ascii_digit())),
            "{hands:?}"
        );
        let seat = client.find(Locator::Id("seat-A")).await.unwrap();
        assert!(
            !seat.is_enabled().await.unwrap(),
            "the computer plays by depths"
        );
        let legend = client.find(Locator::Id("legend")).await.unwrap();
        assert!(legend.text().await.unwrap().contains("values alone"));
        let png = client.screenshot().await.unwrap();
        std::fs::write(
            kingmaker_e2e::artifacts_dir().join("explorer-values-only.png"),
            png,
        )
        .unwrap();
        client.close().await.unwrap();
    });
}
