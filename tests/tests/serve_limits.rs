//! `kingmaker serve`'s header-read timeout and connection limit (fetch's are in fetch.rs).

use kingmaker_e2e::{bin, http_get, kingmaker_ok, path_str as s, Killed};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A half-sent request is closed within the header timeout, and a normal request is answered
/// while more idle connections are open than the server's file limit would allow (64 here).
#[test]
fn serve_drops_half_sent_requests_and_idle_connections_do_not_starve_it() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&run)]);
    let mut cmd = Command::new(bin("kingmaker"));
    cmd.args(["serve", s(&run), "--listen", "127.0.0.1:0"])
        .args(["--header-timeout", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // SAFETY: setrlimit is async-signal-safe; it only lowers this child's own file limit.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Killed(child);
    let addr = line
        .split_whitespace()
        .last()
        .unwrap()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();

    // Half a request: closed by the server after about a second (a 408 may come first).
    let mut half = TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /api/info HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    half.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let t = Instant::now();
    let mut rest = Vec::new();
    let closed = half.read_to_end(&mut rest).is_ok();
    assert!(
        closed && t.elapsed() < Duration::from_secs(8),
        "a half-sent request was held for {:?}",
        t.elapsed()
    );
    let rest = String::from_utf8_lossy(&rest);
    assert!(
        rest.is_empty() || rest.starts_with("HTTP/1.1 408"),
        "{rest}"
    );

    // 150 idle connections (nothing sent, or half a request), more than 64 descriptors allow.
    let idle: Vec<TcpStream> = (0..150)
        .map(|i| {
            let mut c = TcpStream::connect(&addr).unwrap();
            if i % 2 == 0 {
                c.write_all(b"GET / HTTP/1.1\r\n").unwrap();
            }
            c
        })
        .collect();
    let t = Instant::now();
    let (status, body) = http_get(&addr, "/api/info");
    assert!(status.contains("200"), "{status} after {:?}", t.elapsed());
    assert!(body.contains("cc3p"), "{body}");
    drop(idle);
    // And afterwards, at once.
    let (status, _) = http_get(&addr, "/api/position?p=start");
    assert!(status.contains("200"), "{status}");
}
