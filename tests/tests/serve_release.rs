//! `kingmaker serve` publishes its release's files at `/release/`: `kingmaker fetch` copies the
//! release from it (resuming with Range), and nothing but the manifest's names is served.

use kingmaker_e2e::{
    http_get, kingmaker, kingmaker_ok, packed_release, path_str, raw_get, start_serve,
};
use std::path::Path;

/// The files of two directories are the same bytes.
fn same_file(a: &Path, b: &Path, name: &str) {
    assert_eq!(
        std::fs::read(a.join(name)).unwrap(),
        std::fs::read(b.join(name)).unwrap(),
        "{name} differs"
    );
}

#[test]
fn fetch_copies_a_release_from_serve_and_only_its_files_are_served() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let (_serve, url) = start_serve(&rel);
    let files = format!("{url}release/");

    // The list of names, then a fetch from it, verified as fetch verifies every copy.
    let (status, list) = http_get(&url, "/release/");
    assert!(status.contains("200"), "{status}: {list}");
    assert!(list.lines().any(|l| l == "manifest.json"), "{list}");
    let copy = tmp.path().join("copy");
    let out = kingmaker_ok(&["fetch", &files, path_str(&copy)]);
    assert!(out.contains("every sha256 matches"), "{out}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(rel.join("manifest.json")).unwrap()).unwrap();
    for f in manifest["files"].as_array().unwrap() {
        same_file(&rel, &copy, f["path"].as_str().unwrap());
    }

    // A range, as a resumed fetch asks for it.
    let name = manifest["files"][0]["path"].as_str().unwrap();
    let whole = std::fs::read(rel.join(name)).unwrap();
    let addr = url.trim_start_matches("http://").trim_end_matches('/');
    let answer = ranged_get(addr, &format!("/release/{name}"), "bytes=5-9");
    let (head, body) =
        answer.split_at(answer.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4);
    let head = String::from_utf8_lossy(head);
    assert!(head.starts_with("HTTP/1.1 206"), "{head}");
    assert!(
        head.contains(&format!("bytes 5-9/{}", whole.len())),
        "{head}"
    );
    assert_eq!(body, &whole[5..10]);

    // Nothing else: not a file beside the release, not a path out of it.
    std::fs::write(rel.join("notes.txt"), "private").unwrap();
    for path in [
        "/release/notes.txt",
        "/release/..%2Frun%2Frun.json",
        "/release/../run/run.json",
    ] {
        let (status, body) = http_get(&url, path);
        assert!(status.contains("404"), "{path}: {status} {body}");
        assert!(!body.contains("private"), "{path}: {body}");
    }
}

#[test]
fn a_run_directory_and_a_partial_copy_say_what_they_lack() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());

    // A finished run is explored but has no release files: the answer says to pack it.
    let (_serve, url) = start_serve(&tmp.path().join("run"));
    let (status, body) = http_get(&url, "/release/manifest.json");
    assert!(
        status.contains("404") && body.contains("kingmaker pack"),
        "{status} {body}"
    );

    // A copy without depths serves its files, and names the ones it lacks.
    let (_full, full_url) = start_serve(&rel);
    let part = tmp.path().join("part");
    let out = kingmaker(&[
        "fetch",
        &format!("{full_url}release/"),
        path_str(&part),
        "--values-only",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let missing = std::fs::read_dir(&rel)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.ends_with(".kmt") && !part.join(n).exists())
        .expect("a depths file the values-only copy lacks");
    drop(_serve);
    let (_part, part_url) = start_serve(&part);
    let answer = raw_get(&part_url, &format!("/release/{missing}"));
    assert!(
        answer.starts_with("HTTP/1.1 404") && answer.contains("partial"),
        "{answer}"
    );
    let (status, _) = http_get(&part_url, "/release/manifest.json");
    assert!(status.contains("200"), "{status}");
}

/// A GET with a Range header: the raw answer's bytes.
fn ranged_get(addr: &str, path: &str, range: &str) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nRange: {range}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    out
}
