//! Publishing a layer kept on its workers where it lies, on loopback: `pack-part` packs each
//! worker's parts, `serve` serves them, `pack --parts-at` writes the manifest from their records
//! without their bytes, and the release in parts verifies, fetches and answers like the whole
//! one. Every record that is not the kept part's, and every host that does not answer, is refused.

use kingmaker_e2e::{
    addrs, assert_failed_saying, kingmaker_ok, path_str, read_json, start_serve, Worker, TOKEN,
};
use std::path::{Path, PathBuf};

fn fails_with(args: &[&str], expect: &[&str]) -> String {
    assert_failed_saying(&kingmaker_env(args), args, expect)
}

/// `kingmaker ARGS` with the run's token, as on the coordinator.
fn kingmaker_env(args: &[&str]) -> std::process::Output {
    std::process::Command::new(kingmaker_e2e::bin("kingmaker"))
        .args(args)
        .env("KINGMAKER_TOKEN", TOKEN)
        .output()
        .unwrap()
}

fn ok_env(args: &[&str]) -> String {
    let out = kingmaker_env(args);
    assert!(
        out.status.success(),
        "kingmaker {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every part file the workers kept.
fn part_files(workers: &[Worker]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for w in workers {
        for run in std::fs::read_dir(&w.data).unwrap().flatten() {
            let layers = run.path().join("layers");
            for f in std::fs::read_dir(&layers).into_iter().flatten().flatten() {
                if f.file_name().to_string_lossy().ends_with(".kmt") {
                    files.push(f.path());
                }
            }
        }
    }
    files.sort();
    files
}

fn layer_digests(release: &Path) -> Vec<(String, String)> {
    let m = read_json(&release.join("manifest.json"));
    m["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap().into(),
                l["digest"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn kept_parts_are_published_where_they_lie_and_nothing_else_is_believed() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p);
    let workers: Vec<Worker> = (0..3).map(|_| Worker::start(TOKEN, &[])).collect();
    let run = t("run");
    ok_env(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--out",
        path_str(&run),
        "--workers",
        &addrs(&workers),
        "--token",
        TOKEN,
        "--keep-layers-on-workers",
        "--shard-size",
        "256",
    ]);
    kingmaker_ok(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--out",
        path_str(&t("whole-run")),
    ]);
    kingmaker_ok(&[
        "pack",
        path_str(&t("whole-run")),
        "--out",
        path_str(&t("whole")),
    ]);
    let parts = part_files(&workers);
    assert_eq!(parts.len(), 9, "three layers on three workers: {parts:?}");

    // Only parts are packed: a whole layer file is refused, as is a file that is not there.
    let whole_layer = t("whole-run/layers/solo.kmt");
    fails_with(
        &[
            "pack-part",
            path_str(&whole_layer),
            "--out",
            path_str(&t("pub")),
        ],
        &["not a part"],
    );
    fails_with(
        &[
            "pack-part",
            path_str(&t("nothing.part-0000.kmt")),
            "--out",
            path_str(&t("pub")),
        ],
        &["nothing.part-0000.kmt"],
    );
    let publish = t("pub");
    let mut args: Vec<&str> = vec!["pack-part"];
    args.extend(parts.iter().map(|p| path_str(p)));
    args.extend(["--out", path_str(&publish)]);
    let out = kingmaker_ok(&args);
    assert_eq!(out.matches("states packed into").count(), 9, "{out}");
    let again = kingmaker_ok(&args);
    assert_eq!(again.matches("already packed").count(), 9, "{again}");

    let (server, url) = start_serve(&t("pub"));
    let template = format!("{}release/", url.replace("127.0.0.1", "{host}"));
    // Refused before anything is written: a URL that names no directory, a run with no kept
    // layer.
    fails_with(
        &[
            "pack",
            path_str(&run),
            "--out",
            path_str(&t("r0")),
            "--parts-at",
            url.trim_end_matches('/'),
        ],
        &["must end with '/'"],
    );
    fails_with(
        &[
            "pack",
            path_str(&t("whole-run")),
            "--out",
            path_str(&t("r1")),
            "--parts-at",
            &template,
        ],
        &["has none"],
    );

    // The release in parts: format 3, three parts a layer at their URLs, the whole one's digests.
    let rel = t("rel");
    ok_env(&[
        "pack",
        path_str(&run),
        "--out",
        path_str(&rel),
        "--parts-at",
        &template,
    ]);
    let m = read_json(&rel.join("manifest.json"));
    assert_eq!(m["format_version"], 3);
    for l in m["layers"].as_array().unwrap() {
        assert_eq!(l["parts"].as_array().unwrap().len(), 3, "{l:#}");
    }
    assert!(m["files"].as_array().unwrap().iter().all(|f| f["url"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{url}release/"))));
    assert_eq!(layer_digests(&rel), layer_digests(&t("whole")));
    let copy = t("copy");
    let (_manifest_server, manifest_url) = start_serve(&rel);
    kingmaker_ok(&["fetch", &format!("{manifest_url}release/"), path_str(&copy)]);
    kingmaker_ok(&["verify", path_str(&copy)]);
    for layer in ["solo", "enable_ab", "enable_ac"] {
        let line = |dir: &Path| {
            kingmaker_ok(&["line", path_str(dir), "start", "--layer", layer, "--json"])
        };
        assert_eq!(line(&copy), line(&t("whole")), "layer {layer}");
    }

    // A record that is not the kept part's: another part's record in its place.
    let record = t("pub/solo.part-0001.json");
    let good = std::fs::read(&record).unwrap();
    std::fs::copy(t("pub/enable_ab.part-0001.json"), &record).unwrap();
    fails_with(
        &[
            "pack",
            path_str(&run),
            "--out",
            path_str(&t("r2")),
            "--parts-at",
            &template,
        ],
        &[
            "solo.part-0001",
            "does not describe the part the build kept",
        ],
    );
    // The record of a part packed from another file (its source's sha256 changed).
    let mut other: serde_json::Value = serde_json::from_slice(&good).unwrap();
    other["source"]["sha256"] = "0".repeat(64).into();
    std::fs::write(&record, serde_json::to_vec_pretty(&other).unwrap()).unwrap();
    fails_with(
        &[
            "pack",
            path_str(&run),
            "--out",
            path_str(&t("r3")),
            "--parts-at",
            &template,
        ],
        &["was packed from a file of sha256 0000"],
    );
    std::fs::write(&record, &good).unwrap();
    assert!(
        !t("r2").exists() && !t("r3").exists(),
        "a refused pack left its --out"
    );

    // The host down: named, with the part and its worker.
    drop(server);
    fails_with(
        &[
            "pack",
            path_str(&run),
            "--out",
            path_str(&t("r4")),
            "--parts-at",
            &template,
        ],
        &["solo.part-0000", "is that host up"],
    );
}
