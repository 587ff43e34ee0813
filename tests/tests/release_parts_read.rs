//! A release in parts read where it lies: its part files served over HTTP (by `kingmaker serve`,
//! or by a server here that can lie), only its manifest on disk (or nothing: the release opened
//! by its URL). `query`, `line`, the Rust probe and `serve`'s API answer as on the whole release;
//! a part that is unreachable, altered or served without ranges is refused, never answered from.

use kingmaker_e2e::parts_release::split_release;
use kingmaker_e2e::{http_get, kingmaker, kingmaker_ok, packed_release, path_str, start_serve};
use kingmaker_probe::{Notation, Status, Tables};
use kingmaker_tablefmt::release::manifest::{read_manifest, write_manifest, Manifest};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A whole level-1 cc3p release and the same cut into 3 parts a layer (files and manifest).
struct Releases {
    tmp: tempfile::TempDir,
    whole: PathBuf,
    parts: PathBuf,
}

fn releases() -> Releases {
    let tmp = tempfile::tempdir().unwrap();
    let whole = packed_release(tmp.path());
    let parts = tmp.path().join("parts");
    let m = split_release(&whole, &parts, 3, None);
    assert!(m.layers.iter().all(|l| l.parts.len() == 3));
    Releases { tmp, whole, parts }
}

/// The manifest of `parts` with every file at `url(name)`, alone in `dir` (no file beside it).
fn manifest_at(parts: &Path, dir: &Path, url: impl Fn(&str) -> String) -> Manifest {
    let mut m = read_manifest(parts).unwrap();
    for f in &mut m.files {
        f.url = Some(url(&f.path));
    }
    m.format_version = m.needed_version();
    std::fs::create_dir_all(dir).unwrap();
    write_manifest(dir, &m).unwrap();
    m
}

/// Positions to compare: the start and legal states spread over the whole index space (so
/// over every part).
fn positions(whole: &Tables, every: u64) -> Vec<String> {
    let game = whole.game();
    let mut out = vec!["start".to_string()];
    for i in (0..whole.states()).step_by(every as usize) {
        if !matches!(whole.probe_index(i).unwrap().status, Status::Illegal) {
            out.push(game.format_position(i));
        }
    }
    assert!(out.len() > 8, "{out:?}");
    out
}

/// `text` as a URL's query value.
fn encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// `kingmaker ARGS...` expected to fail: (stdout, stderr).
fn refused(args: &[&str]) -> (String, String) {
    let out = kingmaker(args);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    assert!(
        !out.status.success(),
        "{args:?} succeeded: {}",
        text(&out.stdout)
    );
    (text(&out.stdout), text(&out.stderr))
}

/// Every layer's values and depths, and the probe of each position, as the Rust probe reads them.
fn read_all(t: &Tables, positions: &[String]) -> String {
    let mut out = String::new();
    for l in t.layers() {
        let n = t.states() as usize;
        out += &format!(
            "{} {:?} {:?}\n",
            l.name,
            t.values(&l.name, 0, n).unwrap(),
            t.depths(&l.name, 0, n).unwrap()
        );
    }
    for p in positions {
        out += &serde_json::to_string(&t.probe(p).unwrap()).unwrap();
        out += &serde_json::to_string(&t.moves(p).unwrap()).unwrap();
    }
    out
}

#[test]
fn query_line_probe_and_serve_read_a_release_in_parts_where_it_lies() {
    let r = releases();
    let whole = Tables::open(&r.whole).unwrap();
    let layers: Vec<String> = whole.layers().iter().map(|l| l.name.clone()).collect();
    assert_eq!(layers, ["solo", "enable_ab", "enable_ac"]);
    // The part files served by `kingmaker serve` at /release/NAME (with ranges), and a directory
    // holding only the manifest, whose files lie there.
    let (_files, files_url) = start_serve(&r.parts);
    let release_url = format!("{files_url}release/");
    let remote = r.tmp.path().join("remote");
    manifest_at(&r.parts, &remote, |name| format!("{release_url}{name}"));
    assert_eq!(std::fs::read_dir(&remote).unwrap().count(), 2);

    let positions = positions(&whole, 97);
    let expected = read_all(&whole, &positions);
    for source in [path_str(&remote), release_url.as_str()] {
        // The Rust probe.
        let t = Tables::open(source).unwrap();
        assert!(t.layers().iter().all(|l| l.present && l.depths), "{source}");
        assert_eq!(read_all(&t, &positions), expected, "{source}");
        // query and line, as on the whole release.
        for p in &positions {
            let want = kingmaker_ok(&["query", path_str(&r.whole), p, "--json"]);
            let got = kingmaker_ok(&["query", source, p, "--json"]);
            assert_eq!(got, want, "query {source} {p}");
        }
        for layer in &layers {
            for p in positions.iter().take(4) {
                let args = |dir| ["line", dir, p, "--layer", layer, "--json"];
                let want = kingmaker_ok(&args(path_str(&r.whole)));
                let got = kingmaker_ok(&args(source));
                assert_eq!(got, want, "line {source} {p} --layer {layer}");
            }
        }
        // serve's API.
        let (_a, want_at) = start_serve(&r.whole);
        let (_b, got_at) = start_serve(Path::new(source));
        let mut paths = vec!["/api/v1/info".to_string()];
        paths.extend(
            positions
                .iter()
                .take(6)
                .map(|p| format!("/api/v1/probe?position={}", encoded(p))),
        );
        for path in &paths {
            let want = http_get(&want_at, path);
            assert!(want.0.contains("200"), "{path}: {want:?}");
            assert_eq!(http_get(&got_at, path), want, "serve {source}: {path}");
        }
    }
}

/// How the server of [`lying_server`] answers.
#[derive(Clone, Copy, PartialEq)]
enum Ranges {
    /// 206 with the bytes asked for.
    Honoured,
    /// 200 with the whole file, whatever was asked.
    Ignored,
}

/// A server of `files` (name to bytes) at `http://ADDR/f/NAME`, one request per connection.
fn lying_server(files: HashMap<String, Vec<u8>>, ranges: Ranges) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/f/", listener.local_addr().unwrap());
    let files = Arc::new(files);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let files = files.clone();
            std::thread::spawn(move || answer(stream, &files, ranges));
        }
    });
    base
}

fn answer(mut stream: TcpStream, files: &HashMap<String, Vec<u8>>, ranges: Ranges) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request = String::new();
    let _ = reader.read_line(&mut request);
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some(r) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
            let (a, b) = r.trim().split_once('-').unwrap();
            range = Some((a.parse::<u64>().unwrap(), b.parse::<u64>().unwrap()));
        }
    }
    let path = request.split_whitespace().nth(1).unwrap_or("/");
    let Some(bytes) = path.strip_prefix("/f/").and_then(|n| files.get(n)) else {
        let _ = write!(
            stream,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        return;
    };
    let n = bytes.len() as u64;
    let _ = match range {
        Some((a, b)) if ranges == Ranges::Honoured && a < n => {
            let b = b.min(n - 1);
            write!(
                stream,
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes {a}-{b}/{n}\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                b - a + 1
            )
            .and_then(|()| stream.write_all(&bytes[a as usize..=b as usize]))
        }
        _ => write!(
            stream,
            "HTTP/1.1 200 OK\r\nContent-Length: {n}\r\nConnection: close\r\n\r\n"
        )
        .and_then(|()| stream.write_all(bytes)),
    };
    let _ = stream.flush();
    // Let the client read the answer before the connection closes.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = reader.read(&mut [0u8; 64]);
}

/// A port on which nothing listens.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn parts_unreachable_altered_or_served_without_ranges_are_refused() {
    let r = releases();
    let whole = Tables::open(&r.whole).unwrap();
    let start = whole.position("start").unwrap();
    let m = read_manifest(&r.parts).unwrap();
    // The part of solo that holds the start: every query of the start reads it.
    let solo = m.layer("solo").unwrap();
    let part = solo
        .parts
        .iter()
        .find(|p| (p.first..p.first + p.states).contains(&start))
        .unwrap();
    let target = part.file.clone();
    let other = solo.parts.iter().find(|p| p.name != part.name).unwrap();
    let read = |name: &str| std::fs::read(r.parts.join(name)).unwrap();
    let files: HashMap<String, Vec<u8>> = m
        .files
        .iter()
        .map(|f| (f.path.clone(), read(&f.path)))
        .collect();

    // Healthy first: the server here answers as `serve` does.
    let healthy = lying_server(files.clone(), Ranges::Honoured);
    let dir = r.tmp.path().join("healthy");
    manifest_at(&r.parts, &dir, |name| format!("{healthy}{name}"));
    kingmaker_ok(&["query", path_str(&dir), "start"]);

    let mut truncated = read(&target);
    truncated.truncate(truncated.len() - 10);
    let mut flipped = read(&target);
    *flipped.last_mut().unwrap() ^= 0x20;
    let cases: [(&str, Vec<u8>, Ranges, &str); 4] = [
        (
            "another part's file",
            read(&other.file),
            Ranges::Honoured,
            "",
        ),
        (
            "a truncated file",
            truncated,
            Ranges::Honoured,
            "bytes, the manifest says",
        ),
        (
            "one flipped byte",
            flipped,
            Ranges::Honoured,
            "crc32 mismatch",
        ),
        (
            "a server that ignores ranges",
            read(&target),
            Ranges::Ignored,
            "ignores range requests",
        ),
    ];
    for (k, (what, bytes, ranges, says)) in cases.into_iter().enumerate() {
        let mut served = files.clone();
        served.insert(target.clone(), bytes);
        let base = lying_server(served, ranges);
        let dir = r.tmp.path().join(format!("bad-{k}"));
        manifest_at(&r.parts, &dir, |name| format!("{base}{name}"));
        let (out, err) = refused(&["query", path_str(&dir), "start"]);
        assert!(
            err.contains(&format!("{target} at {base}{target}")) && err.contains(says),
            "{what}: {err}"
        );
        assert!(!out.contains("solo"), "{what}: answered {out}");
        // The Rust probe refuses every read of the layer's part, and reads the other layers (a
        // server that ignores ranges serves none of them).
        let t = Tables::open(&dir).unwrap();
        let e = t
            .values("solo", 0, t.states() as usize)
            .unwrap_err()
            .to_string();
        assert!(e.contains(&target) && e.contains(says), "{what}: {e}");
        let ab = t.values("enable_ab", 0, t.states() as usize);
        assert_eq!(ab.is_ok(), ranges == Ranges::Honoured, "{what}");
    }

    // A url that leads to another layer's part, listed with its size and sha256: the file
    // says what it holds, and it is not this part.
    let dir = r.tmp.path().join("misdirected");
    let healthy_m = read_manifest(&r.parts).unwrap();
    let mut mis = manifest_at(&r.parts, &dir, |name| format!("{healthy}{name}"));
    let stranger = healthy_m.layer("enable_ab").unwrap().parts[0].file.clone();
    let theirs = healthy_m.file(&stranger).unwrap().clone();
    let entry = mis.files.iter_mut().find(|f| f.path == target).unwrap();
    entry.size = theirs.size;
    entry.sha256 = theirs.sha256;
    entry.url = Some(format!("{healthy}{stranger}"));
    write_manifest(&dir, &mis).unwrap();
    let (_, err) = refused(&["query", path_str(&dir), "start"]);
    assert!(err.contains(&target) && err.contains(&part.name), "{err}");

    // The server down: the message names the file, its part and its host.
    let down = format!("http://127.0.0.1:{}/f/", closed_port());
    let dir = r.tmp.path().join("down");
    manifest_at(&r.parts, &dir, |name| format!("{down}{name}"));
    let (_, err) = refused(&["query", path_str(&dir), "start"]);
    assert!(
        err.contains(&format!(
            "{target} at {down}{target}: connection refused (is that host up?)"
        )),
        "{err}"
    );
    let (_, err) = refused(&["line", path_str(&dir), "start"]);
    assert!(
        err.contains("connection refused (is that host up?)"),
        "{err}"
    );

    // A release opened by a URL where none is, and a file absent from a directory with no url.
    let (_, err) = refused(&["query", &down, "start"]);
    assert!(
        err.contains(&format!("{down}manifest.sha256")) && err.contains("is that host up"),
        "{err}"
    );
    let partial = r.tmp.path().join("partial");
    let mut m = manifest_at(&r.parts, &partial, |name| format!("{healthy}{name}"));
    for f in &mut m.files {
        if f.path == target || f.path == part.values_file {
            f.url = None;
        }
    }
    write_manifest(&partial, &m).unwrap();
    let t = Tables::open(&partial).unwrap();
    assert!(!t.has_layer("solo") && t.has_layer("enable_ab"));
    let e = t.layer("solo").err().unwrap().to_string();
    assert!(
        e.contains(&format!("layer solo's file {target} is neither beside")),
        "{e}"
    );
}
