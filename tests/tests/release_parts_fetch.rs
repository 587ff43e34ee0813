//! A release in parts (format 3) fetched from where its parts lie: whole, by layers and by parts,
//! verified against the whole release's digests; a parts' host that stops answering, then comes
//! back (the fetch resumes); a part served with other bytes (refused).

use kingmaker_e2e::parts_release::split_release;
use kingmaker_e2e::{
    kingmaker, kingmaker_ok, packed_release, path_str, serve_files, start_serve_at, Killed,
};
use kingmaker_tablefmt::release::manifest::{read_manifest, write_manifest, Manifest};
use std::path::{Path, PathBuf};

/// `kingmaker serve DIR --listen LISTEN`, killed on drop; its address (`127.0.0.1:PORT`).
fn serve_at(dir: &Path, listen: &str) -> (Killed, String) {
    let (server, url) = start_serve_at(dir, listen);
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let addr = addr.to_string();
    (server, addr)
}

/// A level-1 cc3p release cut into 3 parts per layer, the parts served by two `kingmaker serve`
/// of their directory (solo's at `a`, the other layers' at `b`), and its manifest alone, with
/// those urls, served by a third server at `url`.
struct Published {
    tmp: tempfile::TempDir,
    /// The whole release it was cut from.
    whole: Manifest,
    /// The parts' files (and a manifest without urls, which `serve` reads).
    parts: PathBuf,
    /// The manifest with urls.
    manifest: Manifest,
    a: (Killed, String),
    b: (Killed, String),
    url: String,
    /// Requests the manifest's server answered.
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

fn publish() -> Published {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let whole = read_manifest(&rel).unwrap();
    let parts = tmp.path().join("parts");
    split_release(&rel, &parts, 3, None);
    let a = serve_at(&parts, "127.0.0.1:0");
    let b = serve_at(&parts, "127.0.0.1:0");
    let mut manifest = read_manifest(&parts).unwrap();
    for f in &mut manifest.files {
        let host = if f.path.starts_with("solo.") {
            &a.1
        } else {
            &b.1
        };
        f.url = Some(format!("http://{host}/release/{}", f.path));
    }
    let public = tmp.path().join("public");
    std::fs::create_dir(&public).unwrap();
    write_manifest(&public, &manifest).unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let url = serve_files(public, seen.clone());
    Published {
        tmp,
        whole,
        parts,
        manifest,
        a,
        b,
        url,
        seen,
    }
}

impl Published {
    fn dir(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }
}

/// `kingmaker verify DIR --json`, which must pass.
fn verified(dir: &Path) -> serde_json::Value {
    let out = kingmaker_ok(&["verify", path_str(dir), "--json"]);
    serde_json::from_str(&out).unwrap()
}

/// `kingmaker ARGS`, which must fail: its stderr.
fn refused(args: &[&str]) -> String {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} succeeded:\n{err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

/// Files of `dir` but the copy's own.
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !matches!(
                n.as_str(),
                "manifest.json" | "manifest.sha256" | "parts.json"
            )
        })
        .filter(|n| n != "kingmaker.lock")
        .collect();
    n.sort();
    n
}

#[test]
fn a_release_in_parts_is_fetched_whole_by_layers_and_by_parts_and_verifies() {
    let p = publish();
    let url = p.url.as_str();

    // The manifest alone: nothing here to check, every file said to lie at its url.
    let public = p.tmp.path().join("public");
    let out = kingmaker_ok(&["verify", path_str(&public)]);
    assert!(
        out.contains("18 files lie at their URLs and are not here: not checked; `kingmaker fetch` brings them"),
        "{out}"
    );
    let status = kingmaker_ok(&["status", path_str(&public)]);
    assert!(
        status.contains(": partial: ")
            && status.contains("layers absent: solo, enable_ab, enable_ac"),
        "{status}"
    );

    // Whole: every part from its host; the layers' digests are the whole release's.
    let whole = p.dir("whole");
    kingmaker_ok(&["fetch", url, path_str(&whole)]);
    let v = verified(&whole);
    assert_eq!(v["files_at_urls"], 0, "{v}");
    assert_eq!(v["digests_unchecked"], serde_json::json!([]), "{v}");
    assert_eq!(v["states"], 3 * p.whole.states, "{v}");
    let fetched = read_manifest(&whole).unwrap();
    for (l, w) in fetched.layers.iter().zip(&p.whole.layers) {
        assert_eq!((l.parts.len(), &l.digest), (3, &w.digest), "{}", l.name);
    }
    let status = kingmaker_ok(&["status", path_str(&whole)]);
    assert!(status.contains(": complete: "), "{status}");
    // The manifest's server was asked for the manifest, never for a part.
    let seen = p.seen.lock().unwrap().clone();
    assert!(seen.iter().all(|r| !r.contains(".part-")), "{seen:?}");

    // A part's file damaged after the fetch: verify names it.
    let damaged = whole.join("enable_ab.part-0001.kmt");
    let mut bytes = std::fs::read(&damaged).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x40;
    std::fs::write(&damaged, &bytes).unwrap();
    let err = refused(&["verify", path_str(&whole)]);
    assert!(
        err.contains("enable_ab.part-0001.kmt: sha256 mismatch"),
        "{err}"
    );

    // --layers: every part of the layers named.
    let solo = p.dir("solo");
    kingmaker_ok(&["fetch", url, path_str(&solo), "--layers", "solo"]);
    let v = verified(&solo);
    assert_eq!(v["digests_unchecked"], serde_json::json!([]), "{v}");
    assert_eq!(v["parts"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(
        names(&solo),
        [
            "solo.part-0000.kmt",
            "solo.part-0001.kmt",
            "solo.part-0002.kmt"
        ]
    );
    let status = kingmaker_ok(&["status", path_str(&solo)]);
    assert!(
        status.contains("layers here: solo (values and depths)")
            && status.contains("layers absent: enable_ab, enable_ac"),
        "{status}"
    );

    // --parts: those parts alone (values only, or both files), added to by a second fetch.
    let some = p.dir("some");
    kingmaker_ok(&[
        "fetch",
        url,
        path_str(&some),
        "--parts",
        "enable_ab.part-0001",
        "--values-only",
    ]);
    assert_eq!(names(&some), ["enable_ab.part-0001.values.kmt"]);
    kingmaker_ok(&[
        "fetch",
        url,
        path_str(&some),
        "--parts",
        "enable_ab.part-0002,solo.part-0000",
    ]);
    assert_eq!(
        names(&some),
        [
            "enable_ab.part-0001.values.kmt",
            "enable_ab.part-0002.kmt",
            "enable_ab.part-0002.values.kmt",
            "solo.part-0000.kmt",
            "solo.part-0000.values.kmt"
        ]
    );
    let out = kingmaker_ok(&["verify", path_str(&some)]);
    assert!(
        out.contains(
            "layers with some of their parts here: solo, enable_ab: each part here checked"
        ),
        "{out}"
    );
    let status = kingmaker_ok(&["status", path_str(&some)]);
    assert!(
        status.contains("layers in part here: solo, enable_ab")
            && status.contains(
                "their parts here: solo.part-0000 (values and depths), enable_ab.part-0001 \
                 (values only), enable_ab.part-0002 (values and depths)"
            )
            && status.contains(
                "their parts absent: solo.part-0001, solo.part-0002, enable_ab.part-0000"
            )
            && status.contains("layers absent: enable_ac"),
        "{status}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&kingmaker_ok(&["status", path_str(&some), "--json"])).unwrap();
    assert_eq!(json["phase"], "partial", "{json}");
    assert_eq!(json["parts_absent"].as_array().unwrap().len(), 3, "{json}");
    let err = refused(&[
        "fetch",
        url,
        path_str(&p.dir("x")),
        "--parts",
        "solo.part-0007",
    ]);
    assert!(
        err.contains("has no part solo.part-0007 (its parts: solo.part-0000 .. solo.part-0002"),
        "{err}"
    );
    assert!(!p.dir("x").exists());
}

#[test]
fn a_parts_host_down_is_named_and_the_fetch_resumes_when_it_is_back() {
    let mut p = publish();
    let url = p.url.clone();
    let dest = p.dir("copy");
    let a_addr = p.a.1.clone();

    // solo's host stops: its files fail, named with their parts and the host; the others are
    // fetched and kept.
    let _ = p.a.0 .0.kill();
    let _ = p.a.0 .0.wait();
    let err = refused(&[
        "fetch",
        &url,
        path_str(&dest),
        "--retries",
        "1",
        "--timeout",
        "5",
    ]);
    assert!(
        err.contains(&format!(
            "solo.part-0000.kmt (part solo.part-0000 of layer solo), at {a_addr}: http://{a_addr}/release/solo.part-0000.kmt: connection failed"
        )),
        "{err}"
    );
    assert!(err.contains("nothing of it was downloaded"), "{err}");
    assert!(
        err.contains(&format!(
            "solo.part-0001.kmt (part solo.part-0001 of layer solo): not asked for: {a_addr} did not answer"
        )),
        "{err}"
    );
    assert!(
        err.contains("6 of the 18 files to fetch could not be fetched")
            && err.contains("the other 12 are here, checked, and kept")
            && err.contains(&format!(
                "run the same fetch again once {a_addr} answers to resume"
            )),
        "{err}"
    );
    assert!(!dest.join("manifest.json").exists());
    assert_eq!(names(&dest).len(), 12, "{:?}", names(&dest));
    assert!(names(&dest).iter().all(|n| !n.starts_with("solo.")));

    // Back at the same address; half of one of its files downloaded already: resumed.
    let solo0 = std::fs::read(p.parts.join("solo.part-0000.kmt")).unwrap();
    std::fs::write(
        dest.join("solo.part-0000.kmt.part"),
        &solo0[..solo0.len() / 2],
    )
    .unwrap();
    p.a = serve_at(&p.parts, &a_addr);
    let out = kingmaker(&["fetch", &url, path_str(&dest)]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches(": already here").count(), 12, "{stderr}");
    let solo_bytes: u64 = (p.manifest.files.iter())
        .filter(|f| f.path.starts_with("solo."))
        .map(|f| f.size)
        .sum();
    let resumed = solo_bytes - (solo0.len() / 2) as u64;
    assert!(
        stdout.contains(&format!("{resumed} bytes downloaded")),
        "{stdout}"
    );
    let v = verified(&dest);
    assert_eq!(v["files"], 20, "{v}");

    // A part served with other bytes: refused by its sha256, and nothing of it kept.
    let served = p.parts.join("enable_ac.part-0001.kmt");
    let good = std::fs::read(&served).unwrap();
    let mut other = good.clone();
    let at = other.len() / 2;
    other[at] ^= 0x01;
    std::fs::write(&served, &other).unwrap();
    let again = p.dir("again");
    let err = refused(&["fetch", &url, path_str(&again), "--layers", "enable_ac"]);
    let b_addr = &p.b.1;
    assert!(
        err.contains(&format!(
            "enable_ac.part-0001.kmt (part enable_ac.part-0001 of layer enable_ac), at {b_addr}: http://{b_addr}/release/enable_ac.part-0001.kmt: sha256 mismatch"
        )) && err.contains("nothing was kept"),
        "{err}"
    );
    assert!(!again.join("enable_ac.part-0001.kmt").exists());
    assert!(!again.join("enable_ac.part-0001.kmt.part").exists());
    std::fs::write(&served, &good).unwrap();
    kingmaker_ok(&["fetch", &url, path_str(&again), "--layers", "enable_ac"]);
    verified(&again);
}
