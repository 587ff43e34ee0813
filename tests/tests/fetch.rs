//! `kingmaker fetch` against misbehaving servers (ones that ignore Range requests, send truncated
//! copies, stop sending mid-body or redirect out of HTTP), local damage to a partial download, a
//! full disk, two fetches into one directory, a copy of only some parts of a release, a
//! directory that holds another release, and what a failed fetch leaves behind.

use kingmaker_e2e::{bin, kingmaker, packed_release};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// How the test's static server misbehaves.
#[derive(Default)]
struct Quirks {
    /// Answer every request with 200 and the whole file, whatever its Range header.
    ignore_range: bool,
    /// Files served shorter than they are (truncated on the server), by this many bytes.
    truncated: HashMap<String, usize>,
    /// Files whose next answer breaks off halfway (then the name is removed).
    cut_once: HashSet<String>,
    /// Files whose next N answers send the headers (with the Content-Length of the whole answer)
    /// and 10 bytes of the body, then nothing more for a minute, the connection open.
    stall: HashMap<String, u32>,
    /// Files answered with `302 Found` to this `Location`.
    redirect: HashMap<String, String>,
}

type Shared = Arc<Mutex<Quirks>>;

fn quirks(q: Quirks) -> Shared {
    Arc::new(Mutex::new(q))
}

/// A static HTTP/1.1 server of the plain file names in `root` at `http://ADDR/rel/` (one request
/// per connection), misbehaving as `quirks` say.
fn static_server(root: std::path::PathBuf, quirks: Shared) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/rel/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (root, quirks) = (root.clone(), quirks.clone());
            std::thread::spawn(move || {
                let _ = answer(stream, &root, &quirks);
            });
        }
    });
    url
}

fn answer(mut stream: TcpStream, root: &Path, quirks: &Mutex<Quirks>) -> std::io::Result<()> {
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
                range = v
                    .trim()
                    .strip_prefix("bytes=")
                    .and_then(|r| r.strip_suffix('-'))
                    .and_then(|n| n.parse::<usize>().ok());
            }
        }
    }
    // `/rel/NAME?QUERY` (the query is only seen by `redirect`).
    let target = request
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.strip_prefix("/rel/"))
        .unwrap_or("")
        .to_string();
    let name = target.split('?').next().unwrap_or("").to_string();
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    let Some(mut body) = plain
        .then(|| std::fs::read(root.join(&name)).ok())
        .flatten()
    else {
        return write!(
            stream,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
    };
    let (ignore_range, cut, stall) = {
        let mut q = quirks.lock().unwrap();
        if let Some(location) = q.redirect.get(&target) {
            return write!(
                stream,
                "HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\
                 Connection: close\r\n\r\n"
            );
        }
        if let Some(&short) = q.truncated.get(&name) {
            body.truncate(body.len() - short);
        }
        let stall = match q.stall.get_mut(&name) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        };
        (q.ignore_range, q.cut_once.remove(&name), stall)
    };
    let total = body.len();
    let from = match range {
        Some(n) if !ignore_range && n >= total => {
            return write!(
                stream,
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{total}\r\n\
                 Content-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
        Some(n) if !ignore_range => n,
        _ => 0,
    };
    let mut head = format!(
        "HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        if from > 0 {
            "206 Partial Content"
        } else {
            "200 OK"
        },
        total - from
    );
    if from > 0 {
        head += &format!("Content-Range: bytes {from}-{}/{total}\r\n", total - 1);
    }
    stream.write_all(format!("{head}\r\n").as_bytes())?;
    if cut {
        stream.write_all(&body[from..from + (total - from) / 2])?;
        return stream.shutdown(std::net::Shutdown::Both);
    }
    if stall {
        stream.write_all(&body[from..from + 10])?;
        stream.flush()?;
        std::thread::sleep(Duration::from_secs(60));
        return Ok(());
    }
    stream.write_all(&body[from..])
}

fn fetch(url: &str, dest: &Path) -> (bool, String) {
    let out = kingmaker(&["fetch", url, s(dest), "--retries", "2"]);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// How a `kingmaker fetch` that may hang ended.
struct Ran {
    /// Whether it succeeded; None if it was still running at the deadline (and was killed).
    ok: Option<bool>,
    stderr: String,
    took: Duration,
}

/// `kingmaker fetch URL DEST EXTRA...`, killed if still running after `deadline`.
fn fetch_within(url: &str, dest: &Path, extra: &[&str], deadline: Duration) -> Ran {
    let started = Instant::now();
    let mut child = Command::new(bin("kingmaker"))
        .args(["fetch", url, s(dest)])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting kingmaker fetch");
    let mut pipe = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    let ok = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status.success());
        }
        if started.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = started.elapsed();
    Ran {
        ok,
        stderr: reader.join().unwrap(),
        took,
    }
}

/// `dest/NAME.part` holding the first half of the release's NAME (bytes flipped at `flip`).
fn partial(rel: &Path, dest: &Path, name: &str, flip: Option<usize>) {
    std::fs::create_dir_all(dest).unwrap();
    let mut bytes = std::fs::read(rel.join(name)).unwrap();
    bytes.truncate(bytes.len() / 2);
    if let Some(i) = flip {
        bytes[i] ^= 0x40;
    }
    std::fs::write(dest.join(format!("{name}.part")), bytes).unwrap();
}

fn same_release(a: &Path, b: &Path) {
    for entry in std::fs::read_dir(a).unwrap() {
        let name = entry.unwrap().file_name();
        assert_eq!(
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)).unwrap(),
            "{name:?}"
        );
    }
}

#[test]
fn fetch_restarts_a_file_when_the_server_ignores_range() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let quirks = quirks(Quirks {
        ignore_range: true,
        ..Quirks::default()
    });
    let url = static_server(rel.clone(), quirks.clone());
    // A partial file from an earlier fetch: the server answers its range request with 200.
    let dest = tmp.path().join("with-part");
    partial(&rel, &dest, "solo.kmt", None);
    let (ok, err) = fetch(&url, &dest);
    assert!(ok, "{err}");
    assert!(err.contains("ignores range requests"), "{err}");
    same_release(&rel, &dest);
    // A download that breaks off and is resumed within the run, against the same server.
    let dest = tmp.path().join("cut");
    quirks
        .lock()
        .unwrap()
        .cut_once
        .insert("enable_ab.kmt".into());
    let (ok, err) = fetch(&url, &dest);
    assert!(ok, "{err}");
    same_release(&rel, &dest);
}

#[test]
fn fetch_does_not_blame_the_server_for_a_damaged_local_part() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let url = static_server(rel.clone(), Default::default());
    let dest = tmp.path().join("dest");
    partial(&rel, &dest, "solo.kmt", Some(40));
    let (ok, err) = fetch(&url, &dest);
    assert!(ok, "{err}");
    assert!(
        err.contains("the fault may be local") && err.contains("afresh"),
        "{err}"
    );
    assert!(!err.contains("server's copy is corrupt"), "{err}");
    same_release(&rel, &dest);
}

#[test]
fn fetch_says_a_truncated_server_copy_is_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let url = static_server(
        rel.clone(),
        quirks(Quirks {
            truncated: [("solo.kmt".into(), 10)].into(),
            ..Quirks::default()
        }),
    );
    // From the start, and resuming a part the truncated copy does not reach past.
    let size = std::fs::metadata(rel.join("solo.kmt")).unwrap().len();
    for (what, part) in [("no part", None), ("a part", Some(()))] {
        let dest = tmp.path().join(what.replace(' ', "-"));
        if part.is_some() {
            std::fs::create_dir_all(&dest).unwrap();
            let bytes = std::fs::read(rel.join("solo.kmt")).unwrap();
            std::fs::write(dest.join("solo.kmt.part"), &bytes[..bytes.len() - 5]).unwrap();
        }
        let (ok, err) = fetch(&url, &dest);
        assert!(!ok, "{what}: a truncated copy was accepted");
        assert!(
            err.contains("truncated on the server")
                && err.contains(&format!("the manifest lists {size}")),
            "{what}: {err}"
        );
        assert!(!err.contains("refused"), "{what}: {err}");
        assert!(!dest.join("manifest.sha256").exists());
    }
}

#[test]
fn fetch_gives_up_on_a_server_that_stops_sending_mid_body() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let q = quirks(Quirks::default());
    let url = static_server(rel.clone(), q.clone());
    let args = ["--timeout", "2", "--retries", "1"];
    let bound = Duration::from_secs(20);
    // It stalls once: the download is resumed after 2 s of silence, and completes.
    q.lock().unwrap().stall.insert("solo.kmt".into(), 1);
    let dest = tmp.path().join("once");
    let ran = fetch_within(&url, &dest, &args, Duration::from_secs(30));
    assert_eq!(ran.ok, Some(true), "after {:?}: {}", ran.took, ran.stderr);
    assert!(ran.took < bound, "took {:?}", ran.took);
    assert!(
        ran.stderr
            .contains("solo.kmt: the server stopped sending for 2 s at byte 10")
            && ran.stderr.contains("resuming"),
        "{}",
        ran.stderr
    );
    same_release(&rel, &dest);
    // It stalls every time: the fetch fails, naming the file and the silence, and keeps the part.
    q.lock().unwrap().stall.insert("solo.kmt".into(), u32::MAX);
    let dest = tmp.path().join("always");
    let ran = fetch_within(&url, &dest, &args, Duration::from_secs(30));
    assert_eq!(ran.ok, Some(false), "after {:?}: {}", ran.took, ran.stderr);
    assert!(ran.took < bound, "took {:?}", ran.took);
    let last = ran.stderr.lines().last().unwrap_or("");
    assert!(
        last.contains("solo.kmt: the server stopped sending for 2 s")
            && last.contains("run the same fetch again to resume"),
        "{}",
        ran.stderr
    );
    let part = std::fs::metadata(dest.join("solo.kmt.part")).unwrap().len();
    assert_eq!(part, 20, "10 bytes from each of the two answers");
    assert!(!dest.join("manifest.sha256").exists());
}

#[test]
fn a_second_fetch_into_the_same_directory_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let q = quirks(Quirks {
        stall: [("solo.kmt".into(), u32::MAX)].into(),
        ..Quirks::default()
    });
    let url = static_server(rel.clone(), q.clone());
    let dest = tmp.path().join("dest");
    // The first fetch is stuck in solo.kmt's body (the server stalls, its timeout is long).
    let first = kingmaker_e2e::Killed(
        Command::new(bin("kingmaker"))
            .args(["fetch", &url, s(&dest), "--timeout", "60", "--retries", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting kingmaker fetch"),
    );
    let part = dest.join("solo.kmt.part");
    let waiting = Instant::now();
    while std::fs::metadata(&part).map_or(0, |m| m.len()) < 10 {
        assert!(
            waiting.elapsed() < Duration::from_secs(30),
            "the first fetch did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ran = fetch_within(&url, &dest, &["--timeout", "60"], Duration::from_secs(20));
    assert_eq!(ran.ok, Some(false), "after {:?}: {}", ran.took, ran.stderr);
    assert!(ran.took < Duration::from_secs(5), "took {:?}", ran.took);
    assert!(
        ran.stderr.contains(&format!(
            "{} is in use by pid {}",
            dest.display(),
            first.0.id()
        )) && ran.stderr.contains("kingmaker fetch"),
        "{}",
        ran.stderr
    );
    assert_eq!(
        std::fs::metadata(&part).unwrap().len(),
        10,
        "the part was touched"
    );
    // Once the first is gone the directory is free: the next fetch resumes its part.
    drop(first);
    q.lock().unwrap().stall.clear();
    let (ok, err) = fetch(&url, &dest);
    assert!(ok, "{err}");
    same_release(&rel, &dest);
    // The lock's file stays (a lock file never deleted cannot be raced); verify knows it.
    assert!(dest.join("kingmaker.lock").exists());
    let out = kingmaker(&["verify", s(&dest)]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("not part of the release"), "{err}");
}

#[test]
fn a_full_disk_is_reported_with_the_file_being_written() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let url = static_server(rel.clone(), quirks(Quirks::default()));
    let size = |name: &str| std::fs::metadata(rel.join(name)).unwrap().len();
    assert!(size("solo.kmt") > 200 && size("manifest.json") > 2000);
    // Room for no file (the lock file excepted), then for every file but the manifest.
    for (limit, file) in [(200, "solo.kmt.part"), (2000, ".manifest.json.tmp")] {
        let dest = tmp.path().join(limit.to_string());
        let mut cmd = Command::new(bin("kingmaker"));
        cmd.args(["fetch", &url, s(&dest), "--retries", "0"]);
        // No file of the fetch may grow past `limit` bytes: writes past it fail with EFBIG, as
        // on a full disk they fail with ENOSPC (the signal that comes with EFBIG is ignored).
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let rlim = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &rlim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{limit}: {err}");
        let last = err.lines().last().unwrap_or("");
        assert!(
            last.contains(&format!(
                "writing {}: File too large (os error 27): out of room",
                dest.join(file).display()
            )),
            "{limit}: {err}"
        );
        assert!(!dest.join("manifest.sha256").exists(), "{limit}");
    }
}

#[test]
fn a_redirect_out_of_http_is_reported_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let q = quirks(Quirks::default());
    let url = static_server(rel.clone(), q.clone());
    // The manifest, then a file of the release.
    for (name, to) in [
        ("manifest.sha256", "file:///etc/passwd"),
        ("solo.kmt", "ftp://example.org/solo.kmt"),
    ] {
        q.lock().unwrap().redirect = [(name.into(), to.into())].into();
        let dest = tmp.path().join(name);
        let (ok, err) = fetch(&url, &dest);
        assert!(!ok, "{name}: {err}");
        assert!(
            err.contains(&format!(
                "{url}{name}: redirected to {to}, which fetch does not follow"
            )),
            "{name}: {err}"
        );
        assert!(!err.contains("404"), "{name}: {err}");
    }
    // A redirect within HTTP is followed.
    q.lock().unwrap().redirect = [("solo.kmt".into(), format!("{url}solo.kmt?again"))].into();
    let dest = tmp.path().join("followed");
    let (ok, err) = fetch(&url, &dest);
    assert!(ok, "{err}");
    same_release(&rel, &dest);
}

#[test]
fn a_timeout_of_zero_or_past_a_day_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("dest");
    for t in ["0", "86401", "18446744073709551615"] {
        let out = kingmaker(&["fetch", "http://127.0.0.1:9/rel/", s(&dest), "--timeout", t]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{t}: {err}");
        assert!(
            err.contains(&format!("invalid value '{t}' for '--timeout <SECONDS>'"))
                && err.contains("1..=86400"),
            "{t}: {err}"
        );
        assert!(!err.contains("panicked"), "{t}: {err}");
        assert!(!dest.exists(), "{t}: the directory was created");
    }
}

/// The names of the files in `dir`, sorted (the directory lock left out).
fn names(dir: &Path) -> Vec<String> {
    let mut n: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "kingmaker.lock")
        .collect();
    n.sort();
    n
}

#[test]
fn fetch_takes_parts_of_a_release_and_verify_checks_what_it_took() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let url = static_server(rel.clone(), quirks(Quirks::default()));
    let dest = tmp.path().join("part");
    let run = |extra: &[&str]| {
        let mut args = vec!["fetch", url.as_str(), s(&dest)];
        args.extend_from_slice(extra);
        kingmaker(&args)
    };
    let verify = |extra: &[&str]| {
        let mut args = vec!["verify", s(&dest)];
        args.extend_from_slice(extra);
        let out = kingmaker(&args);
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };

    // One layer's values alone: that file, the manifest and the parts list, nothing else.
    let out = run(&["--layers", "solo", "--values-only"]);
    assert!(out.status.success(), "{out:?}");
    let listed = [
        "manifest.json",
        "manifest.sha256",
        "parts.json",
        "solo.values.kmt",
    ];
    assert_eq!(names(&dest), listed);
    let (ok, text) = verify(&[]);
    assert!(ok, "{text}");
    assert!(
        text.contains("a partial copy: 1 of the release's 6 files"),
        "{text}"
    );
    let (ok, text) = verify(&["--deep"]);
    assert!(!ok && text.contains("holds no layer's depths"), "{text}");

    // A second layer, with its depths: the parts grow, and --deep checks that layer.
    let out = run(&["--layers", "enable_ab"]);
    assert!(out.status.success(), "{out:?}");
    let parts: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dest.join("parts.json")).unwrap()).unwrap();
    assert_eq!(
        parts["files"],
        serde_json::json!(["solo.values.kmt", "enable_ab.kmt"])
    );
    let (ok, text) = verify(&["--deep", "--json"]);
    assert!(ok, "{text}");
    let report: serde_json::Value =
        serde_json::from_str(&text[..text.rfind('}').unwrap() + 1]).unwrap();
    assert_eq!(report["deep_states_checked"], 1662, "{text}");

    // What the parts list names is checked like any file: missing, damaged, or not the release's.
    let held = dest.join("enable_ab.kmt");
    let bytes = std::fs::read(&held).unwrap();
    std::fs::remove_file(&held).unwrap();
    let (ok, text) = verify(&[]);
    assert!(!ok && text.contains("enable_ab.kmt: missing"), "{text}");
    let mut damaged = bytes.clone();
    let last = damaged.len() - 1;
    damaged[last] ^= 1;
    std::fs::write(&held, &damaged).unwrap();
    let (ok, text) = verify(&[]);
    assert!(
        !ok && text.contains("enable_ab.kmt: sha256 mismatch"),
        "{text}"
    );
    std::fs::write(&held, &bytes).unwrap();
    let good = std::fs::read(dest.join("parts.json")).unwrap();
    let forged = String::from_utf8(good.clone())
        .unwrap()
        .replace("enable_ab.kmt", "other.kmt");
    std::fs::write(dest.join("parts.json"), forged).unwrap();
    let (ok, text) = verify(&[]);
    assert!(
        !ok && text.contains("parts.json: lists other.kmt"),
        "{text}"
    );
    std::fs::write(dest.join("parts.json"), good).unwrap();

    // A layer the release does not have is named with those it has.
    let out = run(&["--layers", "nope"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && said.contains("has no layer nope (its layers: solo, enable_ab, enable_ac)"),
        "{said}"
    );

    // The whole release: the rest is fetched, the parts list goes.
    let out = run(&[]);
    assert!(out.status.success(), "{out:?}");
    assert!(!dest.join("parts.json").exists());
    same_release(&rel, &dest);
    let (ok, text) = verify(&[]);
    assert!(ok && !text.contains("partial"), "{text}");
}

/// Every file in `dir` with its bytes (the directory lock left out).
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names(dir)
        .into_iter()
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

#[test]
fn fetch_refuses_a_directory_that_holds_another_release() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let url = static_server(rel.clone(), quirks(Quirks::default()));
    // Another game's release, and the same run packed again in other blocks.
    let c4 = tmp.path().join("c4");
    let c4_rel = tmp.path().join("c4-rel");
    let ok = |args: &[&str]| assert!(kingmaker(args).status.success(), "{args:?}");
    ok(&["build", "connect4", "--board", "4x4", "--out", s(&c4)]);
    ok(&["pack", s(&c4), "--out", s(&c4_rel)]);
    let repacked = tmp.path().join("repacked");
    let run = tmp.path().join("run");
    ok(&[
        "pack",
        s(&run),
        "--out",
        s(&repacked),
        "--block-states",
        "1024",
    ]);
    let c4_url = static_server(c4_rel, quirks(Quirks::default()));
    let repacked_url = static_server(repacked, quirks(Quirks::default()));

    let dest = tmp.path().join("dest");
    let (fetched, err) = fetch(&url, &dest);
    assert!(fetched, "{err}");
    let before = contents(&dest);
    let holds = format!("{} holds", dest.display());
    for (from, extra, says) in [
        (&c4_url, &["--layers", "solo"][..], "the release cc3p-1"),
        (&c4_url, &[], "the release cc3p-1"),
        (&repacked_url, &[], "another release of cc3p-1 (packed"),
    ] {
        let ran = fetch_within(from, &dest, extra, Duration::from_secs(60));
        assert_eq!(ran.ok, Some(false), "{from} {extra:?}: {}", ran.stderr);
        assert!(
            ran.stderr.contains(&format!("{holds} {says}")) && ran.stderr.contains("replace"),
            "{from} {extra:?}: {}",
            ran.stderr
        );
        assert!(
            contents(&dest) == before,
            "{from} {extra:?}: the copy was touched"
        );
    }
    // A run directory is not a release to add to either.
    let ran = fetch_within(&url, &run, &[], Duration::from_secs(60));
    assert_eq!(ran.ok, Some(false), "{}", ran.stderr);
    assert!(ran.stderr.contains("a run directory"), "{}", ran.stderr);

    // The same release again, whole or in parts: already here, nothing replaced.
    for extra in [&[][..], &["--layers", "solo", "--values-only"]] {
        let ran = fetch_within(&url, &dest, extra, Duration::from_secs(60));
        assert_eq!(ran.ok, Some(true), "{extra:?}: {}", ran.stderr);
    }
    same_release(&rel, &dest);
}

#[test]
fn a_fetch_that_fails_before_downloading_leaves_no_directory_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let url = static_server(rel.clone(), quirks(Quirks::default()));
    // A layer the release does not have.
    let dest = tmp.path().join("nosuch");
    let ran = fetch_within(
        &url,
        &dest,
        &["--layers", "nosuch"],
        Duration::from_secs(60),
    );
    assert_eq!(ran.ok, Some(false), "{}", ran.stderr);
    assert!(ran.stderr.contains("has no layer nosuch"), "{}", ran.stderr);
    assert!(!dest.exists(), "left behind: {:?}", names(&dest));
    // A server without a file of the release: the directory created for it goes too.
    let broken = tmp.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    for name in ["manifest.json", "manifest.sha256"] {
        std::fs::copy(rel.join(name), broken.join(name)).unwrap();
    }
    let broken_url = static_server(broken, quirks(Quirks::default()));
    let dest = tmp.path().join("404");
    let ran = fetch_within(&broken_url, &dest, &[], Duration::from_secs(60));
    assert_eq!(ran.ok, Some(false), "{}", ran.stderr);
    assert!(ran.stderr.contains("404"), "{}", ran.stderr);
    assert!(!dest.exists(), "left behind: {:?}", names(&dest));
    // A directory that was there stays, and so does what can be resumed.
    std::fs::create_dir(&dest).unwrap();
    let ran = fetch_within(&broken_url, &dest, &[], Duration::from_secs(60));
    assert_eq!(ran.ok, Some(false), "{}", ran.stderr);
    assert!(dest.is_dir());
}
