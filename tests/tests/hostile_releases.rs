//! Releases, copies and URLs as a hostile or careless user gives them to `fetch`, `status` and
//! `verify`: a manifest that lists a name the tool writes itself, a destination that is not the
//! release, a partial copy, bad URLs and credentials in them, links out of a release, a layer
//! asked for twice.

use kingmaker_e2e::{kingmaker, kingmaker_ok, packed_release, path_str, serve_files};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// A packed cc3p level-1 release in `tmp/rel`, served: its URL.
fn served_release(tmp: &Path) -> (PathBuf, String) {
    let rel = packed_release(tmp);
    let url = serve_files(rel.clone(), Arc::default());
    (rel, url)
}

/// `kingmaker ARGS...`, which must fail without a panic: its stderr.
fn refused(args: &[&str]) -> String {
    let out = kingmaker(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "kingmaker {args:?} succeeded:\n{}\n{err}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    err
}

fn status_json(dir: &Path) -> Value {
    serde_json::from_str(&kingmaker_ok(&["status", path_str(dir), "--json"])).unwrap()
}

fn names(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

/// Every file in `dir` and its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap_or_default())
        })
        .collect();
    files.sort();
    files
}

#[test]
fn status_of_a_partial_copy_names_the_layers_it_holds_and_does_not_call_it_complete() {
    let tmp = tempfile::tempdir().unwrap();
    let (rel, url) = served_release(tmp.path());
    let two = tmp.path().join("two");
    kingmaker_ok(&["fetch", &url, path_str(&two), "--layers", "solo,enable_ab"]);
    let text = kingmaker_ok(&["status", path_str(&two)]);
    assert!(
        text.contains(": partial: ") && !text.contains("complete") && !text.contains("every layer"),
        "{text}"
    );
    assert!(
        text.contains("layers here: solo (values and depths), enable_ab (values and depths)")
            && text.contains("layers absent: enable_ac"),
        "{text}"
    );
    let s = status_json(&two);
    assert_eq!(s["phase"], "partial", "{s}");
    assert_eq!(names(&s["present"]), ["solo", "enable_ab"], "{s}");
    assert_eq!(names(&s["finished"]), ["solo", "enable_ab"], "{s}");
    assert_eq!(names(&s["absent"]), ["enable_ac"], "{s}");
    assert!(names(&s["values_only"]).is_empty(), "{s}");

    // Values alone of every layer: every layer is here, none with its depths.
    let values = tmp.path().join("values");
    kingmaker_ok(&["fetch", &url, path_str(&values), "--values-only"]);
    let text = kingmaker_ok(&["status", path_str(&values)]);
    assert!(
        text.contains(": partial: ") && text.contains("enable_ac (values only)"),
        "{text}"
    );
    let s = status_json(&values);
    assert_eq!(s["phase"], "partial", "{s}");
    assert_eq!(
        names(&s["values_only"]),
        ["solo", "enable_ab", "enable_ac"],
        "{s}"
    );
    assert!(names(&s["absent"]).is_empty(), "{s}");
    // Its files and bytes are those here, not the release's.
    let here: u64 = std::fs::read_dir(&values)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "kingmaker.lock")
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert_eq!(s["bytes"], here, "{s}");

    // The whole release is still complete.
    let s = status_json(&rel);
    assert_eq!(s["phase"], "complete", "{s}");
    assert!(names(&s["absent"]).is_empty(), "{s}");
}

/// The release in `rel`, its manifest edited by `edit` and its checksum file rewritten to match.
fn republish(rel: &Path, edit: impl FnOnce(&mut Value)) {
    let path = rel.join("manifest.json");
    let mut manifest: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut manifest);
    let mut bytes = serde_json::to_vec_pretty(&manifest).unwrap();
    bytes.push(b'\n');
    std::fs::write(&path, &bytes).unwrap();
    let line = kingmaker_tablefmt::release::manifest::manifest_sha256_line(&bytes);
    std::fs::write(rel.join("manifest.sha256"), line).unwrap();
}

#[test]
fn a_manifest_that_lists_a_name_the_tool_writes_itself_is_refused_by_fetch_and_verify() {
    let tmp = tempfile::tempdir().unwrap();
    let (rel, url) = served_release(tmp.path());
    let published =
        ["manifest.json", "manifest.sha256"].map(|n| std::fs::read(rel.join(n)).unwrap());
    for (i, reserved) in ["parts.json", "kingmaker.lock", "run.json", "solo.kmt.part"]
        .into_iter()
        .enumerate()
    {
        // A file of that name, listed with its true size and sha256: nothing but its name is
        // wrong.
        for (n, bytes) in ["manifest.json", "manifest.sha256"].iter().zip(&published) {
            std::fs::write(rel.join(n), bytes).unwrap();
        }
        std::fs::write(rel.join(reserved), format!("{{\"crafted\": {i}}}\n")).unwrap();
        let (size, sha) = kingmaker_tablefmt::release::file_sha256(&rel.join(reserved)).unwrap();
        republish(&rel, |m| {
            let files = m["files"].as_array_mut().unwrap();
            files.push(serde_json::json!({"path": reserved, "size": size, "sha256": sha}));
        });
        let copy = tmp.path().join(format!("copy-{i}"));
        let err = refused(&["fetch", &url, path_str(&copy)]);
        assert!(
            err.contains(&format!(
                "lists {reserved}, which no file of a release may be named"
            )),
            "{reserved}: {err}"
        );
        assert!(!copy.exists(), "{reserved}: a refused fetch left {copy:?}");
        // The publisher's `verify` refuses it too, rather than read it as what the tool writes.
        let err = refused(&["verify", path_str(&rel)]);
        assert!(
            err.contains(&format!("lists {reserved}")),
            "{reserved}: {err}"
        );
        std::fs::remove_file(rel.join(reserved)).unwrap();
    }
}

#[test]
fn fetch_refuses_a_destination_that_is_not_the_same_release_before_writing_there() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |name: &str| tmp.path().join(name);
    // The case: another game's release into a run's layers/.
    kingmaker_ok(&[
        "build",
        "cc3p",
        "--level",
        "1",
        "--out",
        path_str(&t("run")),
    ]);
    kingmaker_ok(&[
        "build",
        "connect4",
        "--board",
        "3x3",
        "--out",
        path_str(&t("c4")),
    ]);
    kingmaker_ok(&["pack", path_str(&t("c4")), "--out", path_str(&t("www"))]);
    let url = serve_files(t("www"), Arc::default());
    let layers = t("run").join("layers");
    let before = snapshot(&layers);
    let err = refused(&["fetch", &url, path_str(&layers)]);
    assert!(
        err.contains("solo.kmt (not the release's file of that name)"),
        "{err}"
    );
    // Not a byte written: no table replaced, no lock file left.
    assert_eq!(snapshot(&layers), before);
    kingmaker_ok(&["query", path_str(&t("run")), "start"]);

    // Any other file, of any name: refused, and left alone.
    let notes = t("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("todo.txt"), "mine").unwrap();
    let err = refused(&["fetch", &url, path_str(&notes)]);
    assert!(err.contains("holds todo.txt, not the release"), "{err}");
    assert_eq!(snapshot(&notes), [("todo.txt".into(), b"mine".to_vec())]);
    // A manifest.json that is endless: refused, not read.
    let zero = t("zero");
    std::fs::create_dir(&zero).unwrap();
    std::os::unix::fs::symlink("/dev/zero", zero.join("manifest.json")).unwrap();
    let err = refused(&["fetch", &url, path_str(&zero)]);
    assert!(err.contains("not a regular file"), "{err}");
    // A lock file that is a link: the lock would write through it.
    let linked = t("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(notes.join("todo.txt"), linked.join("kingmaker.lock")).unwrap();
    let err = refused(&["fetch", &url, path_str(&linked)]);
    assert!(
        err.contains("holds kingmaker.lock (not a regular file)"),
        "{err}"
    );
    assert_eq!(std::fs::read(notes.join("todo.txt")).unwrap(), b"mine");
    // A file where the directory should be.
    let err = refused(&["fetch", &url, path_str(&notes.join("todo.txt"))]);
    assert!(err.contains("is a file, not a directory"), "{err}");

    // The same release, interrupted (its manifest not yet written, a file half downloaded):
    // resumed, and whole.
    let copy = t("copy");
    kingmaker_ok(&["fetch", &url, path_str(&copy)]);
    std::fs::remove_file(copy.join("manifest.sha256")).unwrap();
    std::fs::remove_file(copy.join("manifest.json")).unwrap();
    let half = std::fs::read(copy.join("solo.kmt")).unwrap();
    std::fs::remove_file(copy.join("solo.kmt")).unwrap();
    std::fs::write(copy.join("solo.kmt.part"), &half[..half.len() / 2]).unwrap();
    kingmaker_ok(&["fetch", &url, path_str(&copy)]);
    kingmaker_ok(&["verify", path_str(&copy)]);
    // ... but not when a file of its names is not the release's.
    std::fs::remove_file(copy.join("manifest.sha256")).unwrap();
    std::fs::remove_file(copy.join("manifest.json")).unwrap();
    std::fs::write(copy.join("solo.values.kmt"), b"not the release's").unwrap();
    let err = refused(&["fetch", &url, path_str(&copy)]);
    assert!(
        err.contains("holds solo.values.kmt (not the release's file of that name)"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(copy.join("solo.values.kmt")).unwrap(),
        b"not the release's"
    );
}

#[test]
fn fetch_refuses_bad_ports_queries_and_fragments_and_never_prints_credentials() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("d");
    let d = path_str(&dest);
    let err = refused(&["fetch", "http://127.0.0.1:99999/x/", d]);
    assert!(
        err.contains("invalid port") && !err.contains("refused"),
        "{err}"
    );
    for url in ["http://127.0.0.1:1/rel/?x=1", "http://127.0.0.1:1/rel/#top"] {
        let err = refused(&["fetch", url, d]);
        assert!(err.contains("has a query or a fragment"), "{url}: {err}");
        assert!(!err.contains("manifest.json"), "{url}: {err}");
    }
    assert!(!dest.exists());

    // Credentials go to the server, never into a message.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let rel = packed_release(tmp.path());
    let url = serve_files(rel, seen.clone());
    let with = url.replace("http://", "http://alice:s3cret@");
    let missing = format!("{with}nothing/");
    for args in [
        vec!["fetch", &missing, d],
        vec!["fetch", "http://alice:s3cret@127.0.0.1:99999/x/", d],
        vec!["fetch", "http://alice:s3cret@127.0.0.1:1/x/?y", d],
        vec!["fetch", "http://alice:s3cret@127.0.0.1:1/x/", d],
    ] {
        let err = refused(&args);
        assert!(!err.contains("s3cret") && !err.contains("alice"), "{err}");
        assert!(err.contains("***@"), "{err}");
    }
    let out = kingmaker(&["fetch", &with, d]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("s3cret"), "{said}");
    // HTTP basic authentication: "alice:s3cret" in base64.
    let seen = seen.lock().unwrap();
    assert!(
        seen.iter()
            .any(|r| r.contains("manifest.json") && r.contains("Basic YWxpY2U6czNjcmV0")),
        "{seen:?}"
    );
}

#[test]
fn verify_mentions_a_file_that_links_outside_the_release() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let outside = tmp.path().join("elsewhere.kmt");
    std::fs::rename(rel.join("enable_ab.kmt"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, rel.join("enable_ab.kmt")).unwrap();
    let out = kingmaker(&["verify", path_str(&rel)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("warning: enable_ab.kmt: a symbolic link to")
            && err.contains("outside the release"),
        "{err}"
    );
    let json: Value =
        serde_json::from_slice(&kingmaker(&["verify", path_str(&rel), "--json"]).stdout).unwrap();
    assert!(
        json["warnings"].to_string().contains("outside the release"),
        "{json}"
    );
}

#[test]
fn fetch_refuses_a_layer_asked_for_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, url) = served_release(tmp.path());
    let dest = tmp.path().join("d");
    let err = refused(&["fetch", &url, path_str(&dest), "--layers", "solo,solo"]);
    assert!(err.contains("--layers names \"solo\" twice"), "{err}");
    assert!(!dest.exists());
}
