//! The versioned HTTP API's contract (docs/api.md) against a real `kingmaker serve`: every field
//! the document promises, with its type; moves best first by category and depth; the library's
//! answers over HTTP unchanged; errors as JSON with the status the document gives.

use kingmaker_e2e::{http_get, kingmaker_ok, packed_release, path_str, start_serve};
use kingmaker_probe::Tables;
use serde_json::Value;

fn get(base: &str, path: &str) -> (u16, Value) {
    let (status, body) = http_get(base, path);
    let code = status.split_whitespace().nth(1).unwrap().parse().unwrap();
    let json =
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: not JSON ({e}): {body:?}"));
    (code, json)
}

fn assert_error(base: &str, path: &str, code: u16, needle: &str) {
    let (got, body) = get(base, path);
    assert_eq!(got, code, "{path}: {body}");
    let message = body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{path}: {body}"));
    assert!(
        message.contains(needle),
        "{path}: {message:?} lacks {needle:?}"
    );
    assert_eq!(
        body.as_object().unwrap().len(),
        1,
        "{path}: only `error`: {body}"
    );
}

/// The fields docs/api.md promises for a probe, with their types.
fn assert_probe_shape(p: &Value) {
    assert!(p["position"].is_string(), "{p}");
    assert!(p["index"].is_u64(), "{p}");
    let kind = p["status"]["kind"].as_str().unwrap();
    assert!(["illegal", "terminal", "live"].contains(&kind), "{p}");
    if kind == "live" {
        assert!(
            p["status"]["seat"].is_u64() && p["status"]["mover"].is_string(),
            "{p}"
        );
    }
    for l in p["layers"].as_array().unwrap() {
        assert!(l["layer"].is_string(), "{l}");
        let v = l["answer"]["value"].as_str().unwrap();
        assert!(["W", "L", "D", "illegal"].contains(&v), "{l}");
        assert!(
            l["answer"]["depth"].is_u64() || l["answer"]["depth"].is_null(),
            "{l}"
        );
    }
    assert!(p["verdict"]["kind"].is_string(), "{p}");
}

/// `text` percent-encoded for a query string.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

const CATEGORIES: [&str; 6] = ["win", "draw", "open", "loss", "unknown", "illegal"];

#[test]
fn cc3p_release_over_the_versioned_api() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let (_serve, base) = start_serve(&rel);

    let (code, info) = get(&base, "/api/v1/info");
    assert_eq!(code, 200);
    assert_eq!(info["api_version"], 1);
    assert_eq!(
        info["game"],
        serde_json::json!({"game": "cc3p", "level": 1})
    );
    assert_eq!(info["players"], serde_json::json!(["A", "B", "C"]));
    assert_eq!(info["source"], "release");
    assert!(info["states"].is_u64() && info["start"].is_string());
    let names: Vec<&str> = info["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["solo", "enable_ab", "enable_ac"]);

    let (code, start) = get(&base, "/api/v1/probe?position=start");
    assert_eq!(code, 200);
    assert_eq!(start["api_version"], 1);
    assert_probe_shape(&start);
    // The twelve answers are `kingmaker query --json`'s.
    let query: Value =
        serde_json::from_str(&kingmaker_ok(&["query", path_str(&rel), "start", "--json"])).unwrap();
    assert_eq!(start["verdict"]["kind"], "cc3p");
    assert_eq!(start["verdict"]["answers"], query["answers"]);

    // The library's answer, unchanged over HTTP.
    let tables = Tables::open(&rel).unwrap();
    let lib_moves = serde_json::to_value(tables.moves("start").unwrap()).unwrap();
    assert_eq!(start["moves"], lib_moves);

    // Moves best first: categories in order; wins fastest first, losses slowest first.
    let moves = start["moves"].as_array().unwrap();
    assert!(!moves.is_empty());
    let rank = |m: &Value| {
        CATEGORIES
            .iter()
            .position(|c| m["category"] == *c)
            .unwrap_or_else(|| panic!("a documented category: {m}"))
    };
    for pair in moves.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(rank(a) <= rank(b), "{} before {}", a["move"], b["move"]);
        if rank(a) == rank(b) {
            let (da, db) = (a["depth"].as_u64(), b["depth"].as_u64());
            match a["category"].as_str().unwrap() {
                "win" => assert!(da <= db),
                "open" | "loss" => assert!(da >= db),
                _ => {}
            }
        }
    }
    // depth_delta: the mover's own answer's depth after the move minus before it.
    let before = start["verdict"]["answers"]["solo"][0]["depth"]
        .as_i64()
        .unwrap();
    for m in moves {
        assert!(m["move"].is_string(), "{m}");
        assert_probe_shape(&m["child"]);
        let after = m["child"]["verdict"]["answers"]["solo"][0]["depth"]
            .as_i64()
            .unwrap();
        assert_eq!(m["depth"].as_i64(), Some(after), "{m}");
        assert_eq!(m["depth_delta"].as_i64(), Some(after - before), "{m}");
    }
    // A position given as text, percent-encoded, gives the same.
    let text = start["position"].as_str().unwrap();
    let (code, again) = get(&base, &format!("/api/v1/probe?position={}", encode(text)));
    assert_eq!(code, 200);
    assert_eq!(again, start);

    // Errors: JSON with a message, 400 for the client's, 404 for a path that is not the API's.
    assert_error(&base, "/api/v1/probe", 400, "position");
    assert_error(
        &base,
        "/api/v1/probe?position=A:zz9;B:b1;C:e1;A",
        400,
        "zz9",
    );
    assert_error(&base, "/api/v1/probe?p=start", 400, "p");
    assert_error(
        &base,
        "/api/v1/info?x=1",
        400,
        "`x`: /api/v1/info takes no parameters",
    );
    assert_error(
        &base,
        "/api/info?x=1",
        400,
        "`x`: /api/info takes no parameters",
    );
    assert_error(&base, "/api/v2/info", 404, "/api/v1/");
    let long = "a".repeat(1001);
    assert_error(
        &base,
        &format!("/api/v1/probe?position={long}"),
        400,
        "longer",
    );
}

#[test]
fn two_player_categories_follow_the_values() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("c4");
    kingmaker_ok(&[
        "build",
        "connect4",
        "--board",
        "4x4",
        "--out",
        path_str(&run),
    ]);
    let (_serve, base) = start_serve(&run);
    let (_, info) = get(&base, "/api/v1/info");
    assert_eq!(info["source"], "run");
    // A few plies in, where some moves win or lose: each move's category is its child's value
    // for the mover.
    let tables = Tables::open(&run).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let mut frontier = vec![tables.probe("start").unwrap().position];
    for _ in 0..5 {
        let mut next = Vec::new();
        for text in frontier.iter().take(40) {
            let (code, p) = get(&base, &format!("/api/v1/probe?position={}", encode(text)));
            assert_eq!(code, 200, "{p}");
            assert_eq!(p["verdict"]["kind"], "two_player");
            let Some(seat) = p["status"]["seat"].as_u64() else {
                continue;
            };
            for m in p["moves"].as_array().unwrap() {
                let value = m["child"]["verdict"]["value"]["value"].as_str().unwrap();
                let want = match (value, seat) {
                    ("W", 0) | ("L", 1) => "win",
                    ("D", _) => "draw",
                    ("illegal", _) => "illegal",
                    _ => "loss",
                };
                assert_eq!(m["category"], want, "{m}");
                seen.insert(want.to_string());
                next.push(m["child"]["position"].as_str().unwrap().to_string());
            }
        }
        frontier = next;
    }
    assert!(seen.contains("draw"), "{seen:?}");
}

/// `METHOD PATH` sent as it is over a fresh connection: the status and the body as JSON.
fn raw(base: &str, method: &str, path: &str) -> (u16, Value) {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).unwrap();
    let out = String::from_utf8_lossy(&out);
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let json = serde_json::from_str(body).unwrap_or_else(|e| {
        panic!(
            "{method} {}: not JSON ({e}): {out:?}",
            &path[..path.len().min(60)]
        )
    });
    (code, json)
}

#[test]
fn errors_of_other_methods_and_overlong_urls_are_json() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let (_serve, base) = start_serve(&rel);
    for (method, path) in [
        ("POST", "/api/v1/probe?position=start"),
        ("DELETE", "/api/v1/info"),
        ("PUT", "/"),
    ] {
        let (code, body) = raw(&base, method, path);
        assert_eq!(code, 405, "{method} {path}: {body}");
        let message = body["error"].as_str().unwrap_or_default();
        assert!(
            message.contains(method) && message.contains("GET"),
            "{body}"
        );
    }
    // Past what the HTTP stack parses (65,534 bytes): answered before any route, as JSON.
    let long = format!("/api/v1/probe?position={}", "a".repeat(70_000));
    let (code, body) = raw(&base, "GET", &long);
    assert_eq!(code, 414, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("too long"),
        "{body}"
    );
    // The server goes on answering.
    let (code, _) = get(&base, "/api/v1/info");
    assert_eq!(code, 200);
}
