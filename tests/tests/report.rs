//! `kingmaker report`: one self-contained HTML page per run or release. Its numbers are checked
//! against what the build recorded elsewhere: the states decided at each depth against the waves
//! of `waves.jsonl` (a state's depth is the wave that decided it), the layer counts and the
//! control classes against `summary.json`.

use kingmaker_e2e::{grouped, kingmaker_ok, packed_release, path_str, read_json};
use std::path::Path;

fn report(dir: &Path, out: &Path) -> String {
    kingmaker_ok(&["report", path_str(dir), "--out", path_str(out)]);
    std::fs::read_to_string(out).unwrap()
}

fn number(text: &str) -> u64 {
    text.replace(',', "").parse().unwrap()
}

/// The rows `<tr><td>D</td><td>W</td><td>L</td></tr>` of the depth table of `layer`.
fn depth_rows(html: &str, layer: &str) -> Vec<(u64, u64)> {
    let section = html
        .split(&format!("<h2>Layer {layer}: depths</h2>"))
        .nth(1)
        .unwrap()
        .split("</section>")
        .next()
        .unwrap();
    let body = section.split("<tbody>").nth(1).unwrap();
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            let cells: Vec<&str> = row
                .split("<td>")
                .skip(1)
                .map(|c| c.split("</td>").next().unwrap())
                .collect();
            (number(cells[1]), number(cells[2]))
        })
        .collect()
}

#[test]
fn a_cc3p_run_and_its_release() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let run = tmp.path().join("run");
    let html = report(&run, &tmp.path().join("run.html"));
    assert!(html.starts_with("<!doctype html>"));
    assert!(
        !html.contains("<script") && !html.contains(" src="),
        "self-contained"
    );
    assert_eq!(
        html.matches("<svg").count(),
        5,
        "three depth charts, the time, the classes"
    );

    // The states decided at depth d are the states wave d decided.
    let waves: Vec<serde_json::Value> = std::fs::read_to_string(run.join("waves.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = read_json(&run.join("summary.json"));
    for layer in ["solo", "enable_ab", "enable_ac"] {
        let rows = depth_rows(&html, layer);
        let decided: Vec<u64> = waves
            .iter()
            .filter(|w| w["layer"] == layer)
            .map(|w| w["decided"].as_u64().unwrap())
            .collect();
        let by_depth: Vec<u64> = rows.iter().map(|(w, l)| w + l).collect();
        assert_eq!(
            by_depth,
            decided[..by_depth.len()],
            "{layer}: decided per depth against per wave"
        );
        assert!(decided[by_depth.len()..].iter().all(|&d| d == 0), "{layer}");
        let (w, l): (u64, u64) = rows.iter().fold((0, 0), |t, r| (t.0 + r.0, t.1 + r.1));
        assert_eq!(w, summary["layers"][layer]["win"].as_u64().unwrap());
        assert_eq!(l, summary["layers"][layer]["loss"].as_u64().unwrap());
    }
    // The classes, as summary.json has them (docs/results.md: kingmaker 240 of the reachable).
    assert!(
        html.contains("<tr><th>kingmaker</th><td>240</td><td>19.3 %</td></tr>"),
        "{html}"
    );

    // A release has no wave history: the same page without the time.
    let html = report(&rel, &tmp.path().join("rel.html"));
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(!html.contains("Where the time went"));
    assert_eq!(depth_rows(&html, "solo").len(), 10, "solo's depths 0 to 9");
}

#[test]
fn go_and_toppen_show_their_own_results() {
    let tmp = tempfile::tempdir().unwrap();
    let go = tmp.path().join("go");
    kingmaker_ok(&[
        "build",
        "go",
        "--surface",
        "plane",
        "--size",
        "2x2",
        "--out",
        path_str(&go),
    ]);
    let html = report(&go, &tmp.path().join("go.html"));
    assert!(html.contains("The start at each threshold"), "{html}");
    let toppen = tmp.path().join("toppen");
    kingmaker_ok(&["build", "toppen", "--out", path_str(&toppen)]);
    let html = report(&toppen, &tmp.path().join("toppen.html"));
    assert!(
        html.contains("The census of every starting layout"),
        "{html}"
    );
    let census = kingmaker_ok(&["census", path_str(&toppen), "--all", "--json"]);
    let census: serde_json::Value = serde_json::from_str(&census).unwrap();
    let terrains = census["terrains"].as_u64().unwrap();
    assert!(
        html.contains(&format!("<p>{} terrains", grouped(terrains))),
        "the census's {terrains} terrains"
    );
}
