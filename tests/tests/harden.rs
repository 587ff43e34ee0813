//! Hardening (issue 18): the explorer's start position, the run-directory lock, option validation,
//! combinatorial counts, the HTTP server's timeouts and limits, and fetch against servers that
//! ignore Range requests.

use kingmaker_e2e::{bin, kingmaker, kingmaker_ok, read_json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `kingmaker serve DIR --listen 127.0.0.1:0 EXTRA...`; its address (`127.0.0.1:PORT`).
fn start_serve(dir: &Path, extra: &[&str]) -> (Killed, String) {
    let mut child = Command::new(bin("kingmaker"))
        .args(["serve", s(dir), "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting kingmaker serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.split_whitespace().last().unwrap_or("").to_string();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    assert!(addr.starts_with("127.0.0.1:"), "serve said {line:?}");
    (Killed(child), addr)
}

/// A complete GET over a fresh connection: (status line, body).
fn http_get(addr: &str, path: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

// ---- item 1: the start position of cc2p ----

#[test]
fn cc2p_start_is_the_real_start_in_serve_and_query() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cc2p-4x4-1");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        "4x4",
        "--pieces",
        "1",
        "--out",
        s(&run),
    ]);
    // 4×4 / 1: player 0 starts on cell 0, player 1 on its mirror image, cell 15.
    let start = "0:0;1:15;0";
    let (_server, addr) = start_serve(&run, &[]);
    let (status, body) = http_get(&addr, "/api/info");
    assert!(status.contains("200"), "{status}");
    let info: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(info["start"], start, "{info}");

    let out = kingmaker_ok(&["query", s(&run), "start", "--json"]);
    let q: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(q["position"], start, "{q}");
    // The start is a first-player win, as the summary says.
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["start"]["value"], "W");
    assert_eq!(q["value"], "W", "{q}");
}
