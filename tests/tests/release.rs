//! Packed releases end to end through the real binary: build cc3p level 1 → pack → verify → query
//! (equal to the run for every state), every kind of corruption, fetch from a local HTTP server
//! (complete, resumed, corrupted) and the explorer page in a real headless Chromium.

use kingmaker_e2e::{kingmaker, kingmaker_ok, packed_release, raw_get, start_serve};
use kingmaker_tablefmt::release::LayerFile;
use kingmaker_tablefmt::Lookup;
use serde_json::Value;
use std::collections::{HashSet, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The finished layer `layer` of the run directory `run`.
fn run_table(run: &Path, layer: &str) -> LayerFile {
    LayerFile::open(&run.join("layers").join(format!("{layer}.kmt"))).unwrap()
}

const LAYERS: [&str; 3] = ["solo", "enable_ab", "enable_ac"];

/// Build cc3p level 1 into `dir/run` and pack it into `dir/rel`.
fn build_and_pack(dir: &Path) -> (PathBuf, PathBuf) {
    let run = dir.join("run");
    let rel = dir.join("rel");
    kingmaker_ok(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--out",
        run.to_str().unwrap(),
    ]);
    kingmaker_ok(&[
        "pack",
        run.to_str().unwrap(),
        "--out",
        rel.to_str().unwrap(),
    ]);
    (run, rel)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `kingmaker verify ARGS...`: (success, stderr).
fn verify(rel: &Path, extra: &[&str]) -> (bool, String) {
    let mut args = vec!["verify", s(rel)];
    args.extend_from_slice(extra);
    let out = kingmaker(&args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Positions reachable from the start, breadth first, up to `limit` of them (through query --json).
fn sample_positions(dir: &Path, limit: usize) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut queue = VecDeque::from(["start".to_string()]);
    let mut out = Vec::new();
    while let Some(p) = queue.pop_front() {
        if out.len() == limit {
            break;
        }
        let v: Value =
            serde_json::from_str(&kingmaker_ok(&["query", s(dir), &p, "--json"])).unwrap();
        let canonical = v["position"].as_str().unwrap().to_string();
        if !seen.insert(canonical.clone()) {
            continue;
        }
        out.push(canonical);
        for m in v["moves"].as_array().unwrap() {
            queue.push_back(m["position"].as_str().unwrap().to_string());
        }
    }
    out
}

#[test]
fn pack_verify_and_query_equal_the_run_for_every_state() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, rel) = build_and_pack(tmp.path());
    let (ok, err) = verify(&rel, &[]);
    assert!(ok, "{err}");
    let out = kingmaker_ok(&["verify", s(&rel), "--deep"]);
    assert!(
        out.contains("OK") && out.contains("deep: every state"),
        "{out}"
    );
    let json: Value = serde_json::from_str(&kingmaker_ok(&["verify", s(&rel), "--json"])).unwrap();
    assert_eq!(json["ok"], true);
    assert_eq!(json["states"], 3 * 1662);

    // The manifest carries the run's digests and counts.
    let summary = kingmaker_e2e::read_json(&run.join("summary.json"));
    let manifest = kingmaker_e2e::read_json(&rel.join("manifest.json"));
    assert_eq!(manifest["format"], "kingmaker-release");
    assert_eq!(manifest["format_version"], 2);
    assert_eq!(manifest["game"]["game"], "cc3p");
    assert_eq!(manifest["game"]["level"], 1);
    assert_eq!(manifest["provenance"]["summary"], summary);
    for (i, layer) in LAYERS.iter().enumerate() {
        let l = &manifest["layers"][i];
        assert_eq!(l["name"], *layer);
        assert_eq!(l["digest"], summary["layers"][layer]["digest"]);
        assert_eq!(l["counts"]["win"], summary["layers"][layer]["win"]);
    }

    // Library level: every state of every layer.
    for layer in LAYERS {
        let table = run_table(&run, layer);
        let file = LayerFile::open(&rel.join(format!("{layer}.kmt"))).unwrap();
        assert_eq!(file.states(), table.states());
        for i in 0..table.states() {
            assert_eq!(
                file.lookup(i).unwrap(),
                table.get(i).unwrap(),
                "{layer} state {i}"
            );
        }
    }

    // Through the binary: query --json on a sample of reachable positions.
    for p in sample_positions(&run, 40) {
        let a = kingmaker_ok(&["query", s(&run), &p, "--json"]);
        let b = kingmaker_ok(&["query", s(&rel), &p, "--json"]);
        assert_eq!(a, b, "query {p}");
    }
    // And the text output.
    assert_eq!(
        kingmaker_ok(&["query", s(&run), "start"]),
        kingmaker_ok(&["query", s(&rel), "start"])
    );
}

#[test]
fn pack_refuses_unfinished_runs_and_existing_output() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, rel) = build_and_pack(tmp.path());
    let out = kingmaker(&["pack", s(&run), "--out", s(&rel)]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists and is not empty"));
    // An empty directory is fine.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    kingmaker_ok(&["pack", s(&run), "--out", s(&empty)]);
    assert!(verify(&empty, &[]).0);
    // A run without summary.json is unfinished.
    std::fs::remove_file(run.join("summary.json")).unwrap();
    let out = kingmaker(&["pack", s(&run), "--out", s(&tmp.path().join("rel2"))]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unfinished run"),
        "{out:?}"
    );
    assert!(!tmp.path().join("rel2").exists(), "nothing is left behind");
}

/// Offsets worth flipping in a layer file: header, header crc, index, index crc, first and last
/// block byte.
fn layer_offsets(path: &Path) -> Vec<(u64, &'static str)> {
    let len = std::fs::metadata(path).unwrap().len();
    let file = LayerFile::open(path).unwrap();
    let data = file.header().data_offset();
    vec![
        (0, "magic"),
        (20, "header"),
        (93, "header crc"),
        (100, "index"),
        (data - 1, "index crc"),
        (data, "block"),
        (data + 17, "block"),
        (len - 1, "last block"),
    ]
}

#[test]
fn verify_detects_every_corruption_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, rel) = build_and_pack(tmp.path());
    let mut cases: Vec<(String, u64, &'static str)> = Vec::new();
    for layer in LAYERS {
        let name = format!("{layer}.kmt");
        for (off, what) in layer_offsets(&rel.join(&name)) {
            cases.push((name.clone(), off, what));
        }
    }
    let manifest_len = std::fs::metadata(rel.join("manifest.json")).unwrap().len();
    for off in [0, 10, manifest_len / 2, manifest_len - 2] {
        cases.push(("manifest.json".into(), off, "manifest"));
    }
    for off in [0, 63, 66, 79] {
        cases.push(("manifest.sha256".into(), off, "manifest checksum"));
    }
    for (name, off, what) in &cases {
        let path = rel.join(name);
        let good = std::fs::read(&path).unwrap();
        let mut bad = good.clone();
        bad[*off as usize] ^= 0x04;
        std::fs::write(&path, &bad).unwrap();
        let (ok, err) = verify(&rel, &[]);
        assert!(!ok, "flipping byte {off} ({what}) of {name} went unnoticed");
        assert!(
            err.contains(name.as_str()),
            "flipping byte {off} ({what}) of {name}: {err}"
        );
        assert!(err.contains("failed verification"), "{err}");
        if name.ends_with(".kmt") {
            assert!(err.contains("sha256 mismatch"), "{name} {what}: {err}");
        }
        std::fs::write(&path, &good).unwrap();
    }
    assert!(verify(&rel, &[]).0, "restored");

    // A damaged block is located, and a query that needs it fails cleanly.
    let path = rel.join("solo.kmt");
    let good = std::fs::read(&path).unwrap();
    let data = LayerFile::open(&path).unwrap().header().data_offset() as usize;
    let mut bad = good.clone();
    bad[data + 5] ^= 0xff;
    std::fs::write(&path, &bad).unwrap();
    let (_, err) = verify(&rel, &[]);
    assert!(err.contains("solo.kmt: block 0: crc32 mismatch"), "{err}");
    let out = kingmaker(&["query", s(&rel), "start"]);
    assert!(!out.status.success());
    let qerr = String::from_utf8_lossy(&out.stderr);
    assert!(
        qerr.contains("crc32 mismatch") && !qerr.contains("panicked"),
        "{qerr}"
    );
    std::fs::write(&path, &good).unwrap();

    // Truncated.
    std::fs::write(&path, &good[..good.len() - 10]).unwrap();
    let (ok, err) = verify(&rel, &[]);
    assert!(!ok && err.contains("solo.kmt: truncated"), "{err}");
    std::fs::write(&path, &good[..50]).unwrap();
    let (ok, err) = verify(&rel, &[]);
    assert!(!ok && err.contains("solo.kmt: truncated"), "{err}");
    // Missing.
    std::fs::remove_file(&path).unwrap();
    let (ok, err) = verify(&rel, &[]);
    assert!(!ok && err.contains("solo.kmt: missing"), "{err}");
    std::fs::write(&path, &good).unwrap();
    std::fs::remove_file(rel.join("manifest.sha256")).unwrap();
    let (ok, err) = verify(&rel, &[]);
    assert!(!ok && err.contains("missing manifest.sha256"), "{err}");
}

#[test]
fn verify_deep_names_a_state_that_disagrees_with_its_children() {
    use kingmaker_tablefmt::release::manifest::{read_manifest, write_manifest};
    use kingmaker_tablefmt::release::{write_layer, write_values, PackOptions};
    let tmp = tempfile::tempdir().unwrap();
    let (run, rel) = build_and_pack(tmp.path());
    // Re-pack `solo` with the start position's value flipped (L → W), and a manifest that
    // matches: every checksum is right, only the rules can tell.
    let start: Value =
        serde_json::from_str(&kingmaker_ok(&["query", s(&run), "start", "--json"])).unwrap();
    let index = start["index"].as_u64().unwrap();
    assert_eq!(start["answers"]["solo"][0]["value"], "L");
    let table = run_table(&run, "solo");
    let path = rel.join("solo.kmt");
    std::fs::remove_file(&path).unwrap();
    let w = write_layer(
        &path,
        table.identity().unwrap(),
        table.states(),
        &PackOptions::default(),
        |first, v, d| {
            for k in 0..v.len() {
                let i = first + k as u64;
                (v[k], d[k]) = table.get(i).unwrap();
                if i == index {
                    v[k] = 1;
                }
            }
            Ok(())
        },
    )
    .unwrap();
    // The values-only file gets the same flip, so that it agrees with the manifest too.
    let values_path = rel.join("solo.values.kmt");
    std::fs::remove_file(&values_path).unwrap();
    let v = write_values(
        &values_path,
        table.identity().unwrap(),
        table.states(),
        &PackOptions::default(),
        1,
        |first, out| {
            table.read_states(first, out, &mut [])?;
            if (first..first + out.len() as u64).contains(&index) {
                out[(index - first) as usize] = 1;
            }
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(v.digest, w.digest);
    let mut m = read_manifest(&rel).unwrap();
    let f = m.files.iter_mut().find(|f| f.path == "solo.kmt").unwrap();
    (f.size, f.sha256) = (w.size, w.sha256.clone());
    let f = m
        .files
        .iter_mut()
        .find(|f| f.path == "solo.values.kmt")
        .unwrap();
    (f.size, f.sha256) = (v.size, v.sha256.clone());
    let l = m.layers.iter_mut().find(|l| l.name == "solo").unwrap();
    (l.counts, l.digest, l.max_depth) = (w.counts, w.digest.clone(), w.max_depth);
    std::fs::remove_file(rel.join("manifest.sha256")).unwrap();
    write_manifest(&rel, &m).unwrap();

    let (ok, err) = verify(&rel, &[]);
    assert!(ok, "the checksums all match: {err}");
    let (ok, err) = verify(&rel, &["--deep"]);
    assert!(!ok);
    let want = format!(
        "solo: {} (index {index}): stored W9, its children give L9",
        start["position"].as_str().unwrap()
    );
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("disagree with their children"), "{err}");
    // A sample that large (with replacement, from 1,662 states) draws every state, the flipped
    // one too; `--sample` means nothing without `--deep`.
    let (ok, err) = verify(&rel, &["--deep", "--sample", "100000"]);
    assert!(!ok && err.contains(&want), "{err}");
    let (ok, _) = verify(&rel, &["--sample", "10"]);
    assert!(!ok, "--sample needs --deep");
}

// ---- fetch ----

/// What the test server does.
#[derive(Default)]
struct ServerState {
    /// Files whose next full response is cut off halfway (then the name is removed).
    cut_once: HashSet<String>,
    /// Files served with one byte flipped.
    corrupt: HashSet<String>,
    /// Every request: (file, Range header).
    log: Vec<(String, Option<String>)>,
}

/// A minimal HTTP/1.1 file server on 127.0.0.1 (one request per connection, GET only, Range
/// `bytes=N-`), serving plain file names from `root`. Stops when the test process ends.
fn start_server(root: PathBuf) -> (String, Arc<Mutex<ServerState>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/rel/", listener.local_addr().unwrap());
    let state = Arc::new(Mutex::new(ServerState::default()));
    let st = state.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let root = root.clone();
            let st = st.clone();
            std::thread::spawn(move || {
                let _ = serve_one(stream, &root, &st);
            });
        }
    });
    (url, state)
}

fn serve_one(mut stream: TcpStream, root: &Path, st: &Mutex<ServerState>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut range = None;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        if line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let name = path.strip_prefix("/rel/").unwrap_or("").to_string();
    let (cut, corrupt) = {
        let mut s = st.lock().unwrap();
        s.log.push((name.clone(), range.clone()));
        (s.cut_once.remove(&name), s.corrupt.contains(&name))
    };
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let body = if plain {
        std::fs::read(root.join(&name)).ok()
    } else {
        None
    };
    let Some(mut body) = body else {
        let msg = "not found";
        write!(
            stream,
            "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{msg}",
            msg.len()
        )?;
        return Ok(());
    };
    if corrupt {
        let mid = body.len() / 2;
        body[mid] ^= 0x01;
    }
    let total = body.len();
    let start = range
        .as_deref()
        .and_then(|r| r.strip_prefix("bytes="))
        .and_then(|r| r.strip_suffix('-'))
        .and_then(|n| n.parse::<usize>().ok());
    let (status, from) = match start {
        Some(n) if n < total => ("206 Partial Content", n),
        Some(_) => {
            write!(stream, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")?;
            return Ok(());
        }
        None => ("200 OK", 0),
    };
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        total - from
    );
    if from > 0 {
        head += &format!("Content-Range: bytes {from}-{}/{total}\r\n", total - 1);
    }
    head += "\r\n";
    stream.write_all(head.as_bytes())?;
    if cut {
        // Half the body, then the connection drops.
        stream.write_all(&body[from..from + (total - from) / 2])?;
        stream.flush()?;
        stream.shutdown(std::net::Shutdown::Both)?;
        return Ok(());
    }
    stream.write_all(&body[from..])?;
    Ok(())
}

fn fetch(url: &str, dir: &Path, extra: &[&str]) -> (bool, String) {
    let mut args = vec!["fetch", url, s(dir)];
    args.extend_from_slice(extra);
    let out = kingmaker(&args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn same_files(a: &Path, b: &Path) {
    for name in [
        "manifest.json",
        "manifest.sha256",
        "solo.kmt",
        "enable_ab.kmt",
        "enable_ac.kmt",
    ] {
        assert_eq!(
            std::fs::read(a.join(name)).unwrap(),
            std::fs::read(b.join(name)).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn fetch_complete_resumed_and_corrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, rel) = build_and_pack(tmp.path());
    let (url, state) = start_server(rel.clone());

    // Complete.
    let dest = tmp.path().join("fetched");
    let (ok, err) = fetch(&url, &dest, &[]);
    assert!(ok, "{err}");
    same_files(&rel, &dest);
    assert!(verify(&dest, &[]).0);
    // Again: nothing to download.
    let (ok, err) = fetch(&url, &dest, &[]);
    assert!(ok && err.contains("already here"), "{err}");

    // Interrupted mid-file and resumed within one run (a Range request from where it broke off).
    let dest = tmp.path().join("resumed");
    state.lock().unwrap().cut_once.insert("solo.kmt".into());
    state.lock().unwrap().log.clear();
    let (ok, err) = fetch(&url, &dest, &[]);
    assert!(ok, "{err}");
    assert!(err.contains("resuming"), "{err}");
    same_files(&rel, &dest);
    let size = std::fs::metadata(rel.join("solo.kmt")).unwrap().len();
    let want = format!("bytes={}-", size / 2);
    let log = state.lock().unwrap().log.clone();
    assert!(
        log.iter()
            .any(|(f, r)| f == "solo.kmt" && r.as_deref() == Some(want.as_str())),
        "no resume request {want} in {log:?}"
    );

    // Interrupted, given up (no retries), and resumed by running fetch again.
    let dest = tmp.path().join("twice");
    state
        .lock()
        .unwrap()
        .cut_once
        .insert("enable_ab.kmt".into());
    let (ok, err) = fetch(&url, &dest, &["--retries", "0"]);
    assert!(!ok);
    assert!(
        err.contains("truncated download") && err.contains("run the same fetch again to resume"),
        "{err}"
    );
    assert!(dest.join("enable_ab.kmt.part").exists());
    assert!(
        !dest.join("manifest.sha256").exists(),
        "an incomplete release has no manifest.sha256"
    );
    let (ok, err) = fetch(&url, &dest, &["--retries", "0"]);
    assert!(ok, "{err}");
    same_files(&rel, &dest);
    assert!(!dest.join("enable_ab.kmt.part").exists());

    // Corrupted on the server: refused, nothing kept.
    let dest = tmp.path().join("corrupt");
    state.lock().unwrap().corrupt.insert("enable_ac.kmt".into());
    let (ok, err) = fetch(&url, &dest, &[]);
    assert!(!ok);
    assert!(
        err.contains("enable_ac.kmt") && err.contains("sha256 mismatch"),
        "{err}"
    );
    assert!(!dest.join("enable_ac.kmt").exists() && !dest.join("enable_ac.kmt.part").exists());
    assert!(!dest.join("manifest.json").exists());
    state.lock().unwrap().corrupt.clear();

    // Not a release: 404, said plainly.
    let bad_url = url.replace("/rel/", "/nothing/");
    let (ok, err) = fetch(&bad_url, &tmp.path().join("none"), &[]);
    assert!(!ok && err.contains("404"), "{err}");
    // A pinned manifest hash that does not match.
    let (ok, err) = fetch(
        &url,
        &tmp.path().join("pinned"),
        &["--manifest-sha256", &"0".repeat(64)],
    );
    assert!(!ok && err.contains("refusing"), "{err}");
}

// ---- serve ----

fn get(url: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut resp = agent
        .get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = resp.status().as_u16();
    (status, resp.body_mut().read_to_string().unwrap())
}

#[test]
fn serve_answers_the_api_and_refuses_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, rel) = build_and_pack(tmp.path());
    let (_server, url) = start_serve(&rel);
    let (status, info) = get(&format!("{url}api/info"));
    assert_eq!(status, 200);
    let info: Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["game"], "cc3p");
    assert_eq!(info["players"], serde_json::json!(["A", "B", "C"]));
    assert_eq!(info["board"]["cells"].as_array().unwrap().len(), 13);
    assert_eq!(info["source"], "release");

    let (status, pos) = get(&format!("{url}api/position?p=start"));
    assert_eq!(status, 200);
    let pos: Value = serde_json::from_str(&pos).unwrap();
    let q: Value =
        serde_json::from_str(&kingmaker_ok(&["query", s(&run), "start", "--json"])).unwrap();
    assert_eq!(pos["position"], q["position"]);
    assert_eq!(pos["labels"]["class"], q["answers"]["class"]);
    for (p, name) in ["A", "B", "C"].iter().enumerate() {
        assert_eq!(
            pos["labels"]["solo"][name]["value"],
            q["answers"]["solo"][p]["value"]
        );
    }
    let moves = pos["moves"].as_array().unwrap();
    assert_eq!(moves.len(), q["moves"].as_array().unwrap().len());
    for (m, qm) in moves.iter().zip(q["moves"].as_array().unwrap()) {
        assert_eq!(m["move"], qm["move"]);
        assert_eq!(m["position"], qm["position"]);
        assert_eq!(m["labels"]["class"], qm["answers"]["class"]);
    }

    let (status, body) = get(&format!("{url}api/position?p=A:zz;B:b1;C:e1;A"));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("unknown cell"), "{body}");
    let (status, body) = get(&format!("{url}api/position?p={}", "x".repeat(5000)));
    assert_eq!(status, 400, "{body}");
    // A misspelt parameter is an error, not the start position.
    let (status, body) = get(&format!("{url}api/position?q=A:zz;B:b1;C:e1;A"));
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("unknown field `q`"), "{body}");
    for path in [
        "/../manifest.json",
        "/..%2fmanifest.json",
        "/solo.kmt",
        "/api/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
    ] {
        let answer = raw_get(&url, path);
        assert!(
            answer.starts_with("HTTP/1.1 404") || answer.starts_with("HTTP/1.1 400"),
            "{path}: {answer}"
        );
        assert!(
            !answer.contains("KMLAYER") && !answer.contains("root:"),
            "{path} leaked a file"
        );
    }
    let (status, page) = get(&url);
    assert_eq!(status, 200);
    assert!(page.contains("<script src=\"app.js\">"));
}

#[test]
fn toppen_packs_verifies_queries_and_serves_its_draw_cycles() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let rel = tmp.path().join("rel");
    kingmaker_ok(&["build", "toppen", "--out", s(&run)]);
    kingmaker_ok(&["pack", s(&run), "--out", s(&rel)]);
    let (ok, err) = verify(&rel, &[]);
    assert!(ok, "{err}");
    let table = run_table(&run, "solo");
    let file = LayerFile::open(&rel.join("solo.kmt")).unwrap();
    for i in 0..table.states() {
        assert_eq!(file.lookup(i).unwrap(), table.get(i).unwrap(), "state {i}");
    }
    let ring = "####/#..#/####:AABBABABAB:A";
    let drawn = "####/#..#/####:AA,-,B,B,A,B,A,B,A,B:B";
    for p in [ring, drawn] {
        assert_eq!(
            kingmaker_ok(&["query", s(&run), p, "--json"]),
            kingmaker_ok(&["query", s(&rel), p, "--json"])
        );
    }

    let (_server, url) = start_serve(&rel);
    let (_, info) = get(&format!("{url}api/info"));
    let info: Value = serde_json::from_str(&info).unwrap();
    assert_eq!(info["game"], "toppen");
    assert_eq!(info["players"], serde_json::json!(["A", "B"]));
    let start = info["start"].as_str().unwrap().to_string();
    let q: Value =
        serde_json::from_str(&kingmaker_ok(&["query", s(&run), ring, "--json"])).unwrap();
    assert_eq!(
        start,
        q["position"].as_str().unwrap(),
        "the ring is the page's first position"
    );

    // A decided position: the line ends the game after exactly `depth` plies.
    let (status, body) = get(&format!("{url}api/position?p={}", ring.replace('#', "%23")));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["labels"]["value"], q["value"]);
    assert_eq!(v["grid"]["cells"].as_array().unwrap().len(), 10);
    let depth = q["depth"].as_u64().unwrap() as usize;
    assert_eq!(v["line"]["ending"]["kind"], "game_over");
    assert_eq!(v["line"]["plies"].as_array().unwrap().len(), depth + 1);
    assert_eq!(
        v["moves"].as_array().unwrap().len(),
        q["moves"].as_array().unwrap().len()
    );

    // A drawn one: the line is a draw cycle, every position on it drawn.
    let (status, body) = get(&format!(
        "{url}api/position?p={}",
        drawn.replace('#', "%23")
    ));
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["labels"]["value"], "D");
    assert_eq!(v["line"]["ending"]["kind"], "cycle");
    let plies = v["line"]["plies"].as_array().unwrap();
    assert!(plies.iter().all(|p| p["value"] == "D"));
    let from = v["line"]["ending"]["from"].as_u64().unwrap() as usize;
    assert_eq!(
        plies[from]["position"],
        plies.last().unwrap()["position"],
        "the cycle closes"
    );
    let (status, body) = get(&format!("{url}api/position?p=%23%23:AAAAA"));
    assert_eq!(status, 400, "{body}");
}

// ---- the page in a real browser ----

#[test]
fn the_page_in_headless_chromium_shows_the_labels_and_plays_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, rel) = build_and_pack(tmp.path());
    let (_server, url) = start_serve(&rel);
    let query = |p: &str| -> Value {
        serde_json::from_str(&kingmaker_ok(&["query", s(&run), p, "--json"])).unwrap()
    };

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use fantoccini::Locator;
        let (_driver, client) = kingmaker_e2e::browser_session(tmp.path(), "1280,900").await;
        let wait = |css: String| {
            let client = client.clone();
            async move { kingmaker_e2e::wait_for(&client, &css).await }
        };
        // The labels shown for a position are those of `kingmaker query`.
        let check_labels = |position: String| {
            let client = client.clone();
            let q = query(&position);
            async move {
                for (p, name) in ["A", "B", "C"].iter().enumerate() {
                    let cell = client
                        .find(Locator::Css(&format!(
                            "#labels tr[data-player=\"{name}\"] td.solo"
                        )))
                        .await
                        .unwrap();
                    assert_eq!(
                        cell.attr("data-value").await.unwrap().as_deref(),
                        q["answers"]["solo"][p]["value"].as_str(),
                        "{name}'s label at {position}"
                    );
                }
                let badge = client.find(Locator::Css("#labels .badge")).await.unwrap();
                assert_eq!(
                    badge.attr("data-class").await.unwrap().as_deref(),
                    q["answers"]["class"].as_str()
                );
                let moves = client
                    .find_all(Locator::Css("#moves li.move"))
                    .await
                    .unwrap();
                assert_eq!(
                    moves.len(),
                    q["moves"].as_array().unwrap().len(),
                    "moves listed at {position}"
                );
            }
        };

        client.goto(&url).await.unwrap();
        let start = query("start")["position"].as_str().unwrap().to_string();
        wait(format!("body[data-position=\"{start}\"]")).await;
        check_labels(start.clone()).await;

        // Click the first move in the list.
        let first = wait("#moves li.move".into()).await;
        let child = first.attr("data-position").await.unwrap().unwrap();
        first
            .find(Locator::Css("button.play"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait(format!("body[data-position=\"{child}\"]")).await;
        check_labels(child.clone()).await;
        let shown = client
            .find(Locator::Id("position"))
            .await
            .unwrap()
            .prop("value")
            .await
            .unwrap();
        assert_eq!(shown.as_deref(), Some(child.as_str()));

        // Click a piece of the side to move, then a highlighted cell.
        let piece = wait("circle.piece.movable".into()).await;
        let from = piece.attr("data-piece").await.unwrap().unwrap();
        piece.click().await.unwrap();
        let target = wait("circle.cell.target".into()).await;
        let to = target.attr("data-cell").await.unwrap().unwrap();
        let q = query(&child);
        let expected = q["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| {
                let text = m["move"].as_str().unwrap();
                let cells: Vec<&str> = text.split_once(' ').unwrap().1.split('-').collect();
                cells.first() == Some(&from.as_str()) && cells.last() == Some(&to.as_str())
            })
            .unwrap_or_else(|| panic!("no move {from}->{to} at {child}"))["position"]
            .as_str()
            .unwrap()
            .to_string();
        target.click().await.unwrap();
        wait(format!("body[data-position=\"{expected}\"]")).await;
        check_labels(expected.clone()).await;

        // A bad position in the box: the error is shown, the position stays.
        let input = client.find(Locator::Id("position")).await.unwrap();
        input.clear().await.unwrap();
        input.send_keys("A:q9;B:b1;C:e1;A").await.unwrap();
        client
            .find(Locator::Id("go"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let error = wait("#error:not([hidden])".into()).await;
        let text = error.text().await.unwrap();
        assert!(text.contains("unknown cell"), "{text}");
        // Back to a good one through the box.
        input.clear().await.unwrap();
        input.send_keys(&start).await.unwrap();
        client
            .find(Locator::Id("go"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait(format!("body[data-position=\"{start}\"]")).await;
        wait("#error[hidden]".into()).await;
        // Back to the child for the screenshot, with a piece selected.
        client
            .goto(&format!("{url}#p={}", child.replace(';', "%3B")))
            .await
            .unwrap();
        wait(format!("body[data-position=\"{child}\"]")).await;
        wait("circle.piece.movable".into())
            .await
            .click()
            .await
            .unwrap();
        wait("circle.cell.target".into()).await;

        let png = client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        let shot = kingmaker_e2e::artifacts_dir().join("serve-cc3p.png");
        std::fs::write(&shot, &png).unwrap();
        eprintln!("screenshot: {}", shot.display());
        client.close().await.unwrap();
    });
}

/// A release whose manifest names another game (with every checksum redone) is refused
/// by `verify`, `query` and `fetch`, since that game's index space has another size.
#[test]
fn a_release_relabelled_as_another_game_is_refused() {
    use kingmaker_tablefmt::release::manifest::{read_manifest, write_manifest};
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let mut m = read_manifest(&rel).unwrap();
    m.game = serde_json::json!({"game": "toppen", "first": 0, "diagonal": false});
    std::fs::remove_file(rel.join("manifest.sha256")).unwrap();
    write_manifest(&rel, &m).unwrap();
    let out = kingmaker(&["verify", s(&rel)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    // Refused by the game's size, or first by the layer files, which name the game they hold.
    assert!(
        err.contains("does not describe these tables")
            || err.contains(r#"holds layer solo of {"game":"cc3p","level":1}, not the layer solo of {"diagonal":false,"first":0,"game":"toppen"}"#),
        "{err}"
    );
    let out = kingmaker(&["query", s(&rel), "start"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not describe these tables"));
}

#[test]
fn verify_of_a_run_directory_says_to_pack_it_first() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, _) = build_and_pack(tmp.path());
    let (ok, err) = verify(&run, &[]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("is a run directory, not a release")
            && err.contains(&format!("kingmaker pack {}", run.display())),
        "{err}"
    );
}
