//! Property tests of outside input: `run.json`, `checkpoint.json`, the inventory, `serve`'s `p=`.
//! 1. Arbitrary bytes and mutated valid inputs: never a panic; invalid input is an `Err` naming the
//!    file (or what is wrong with the position), never a silent default; valid input round-trips.

use crate::deploy::inventory::Inventory;
use crate::serve::explore::{ApiError, Explorer};
use kingmaker_coordinator::rundir::{write_json_atomically, RunDir, RunInfo, RunState};
use kingmaker_games::Notation;
use kingmaker_kernel::Game;
use kingmaker_kernel::ResumePoint;
use kingmaker_tablefmt::run::CurrentLayer;
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A tiny run built once per test process (Go 1x3, well under a second), in-process.
fn tiny_run() -> &'static Path {
    static RUN: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &RUN.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("go");
        let cli = <crate::Cli as clap::Parser>::try_parse_from([
            "kingmaker",
            "build",
            "go",
            "--size",
            "1x3",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
        ])
        .unwrap();
        let crate::Command::Build(args) = cli.command else {
            unreachable!()
        };
        crate::cmd::build::run(args).unwrap();
        (tmp, out)
    })
    .1
}

/// The Explorer of [`tiny_run`], behind the `/api/position?p=…` tests: percent-decoding, then the
/// position text, its length limit and the game's parser.
fn explorer() -> &'static Explorer {
    static EXPLORER: OnceLock<Explorer> = OnceLock::new();
    EXPLORER.get_or_init(|| Explorer::open(tiny_run()).unwrap())
}

/// `bytes` as `name` in a fresh directory.
fn in_dir(name: &str, bytes: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), bytes).unwrap();
    dir
}

/// Apply byte edits and a cut to `bytes`.
fn mutate(mut bytes: Vec<u8>, edits: &[(usize, u8)], cut: usize) -> Vec<u8> {
    for &(at, b) in edits {
        let k = at % bytes.len();
        bytes[k] = b;
    }
    let keep = bytes.len() - cut % (bytes.len() + 1);
    bytes.truncate(keep);
    bytes
}

/// The outcome of reading `run.json` = `bytes`: the error message (which must name the file).
fn open_run_json(bytes: &[u8]) -> Result<RunInfo, String> {
    let dir = in_dir("run.json", bytes);
    RunDir::open(dir.path()).map(|(_, info)| info).map_err(|e| {
        let m = format!("{e:#}");
        assert!(m.contains("run.json"), "the error names run.json: {m}");
        m
    })
}

/// The outcome of reading `checkpoint.json` = `bytes` (the error must name the file).
fn open_checkpoint_json(bytes: &[u8]) -> Result<RunState, String> {
    let dir = in_dir("checkpoint.json", bytes);
    let run = RunDir::at(dir.path());
    run.state().map_err(|e| {
        let m = format!("{e:#}");
        assert!(
            m.contains("checkpoint.json"),
            "the error names checkpoint.json: {m}"
        );
        m
    })
}

fn valid_run_json() -> Vec<u8> {
    std::fs::read(tiny_run().join("run.json")).unwrap()
}

fn valid_checkpoint_json() -> Vec<u8> {
    std::fs::read(tiny_run().join("checkpoint.json")).unwrap()
}

/// The outcome of loading an inventory of `text` (the error must name the file).
fn load_inventory(bytes: &[u8]) -> Result<Inventory, String> {
    let dir = in_dir("inv.toml", bytes);
    Inventory::load(&dir.path().join("inv.toml")).map_err(|e| {
        let m = format!("{e:#}");
        assert!(m.contains("inv.toml"), "the error names the inventory: {m}");
        m
    })
}

const EXAMPLE_INVENTORY: &str = include_str!("../../deploy/inventory.example.toml");

/// Percent-encode every byte but ASCII letters and digits.
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// What `/api/position` does with the query string `query`: axum's query extraction (the
/// handler's, percent-decoding included), then the Explorer. `None`: the URI itself is invalid
/// (hyper refuses it before any handler); `Some(Err(message))`: a 400 with that message.
fn position_query(query: &str) -> Option<Result<serde_json::Value, String>> {
    let uri: axum::http::Uri = format!("/api/position?{query}").parse().ok()?;
    let q = match crate::serve::parse_position_query(&uri) {
        Ok(text) => text,
        Err(m) => return Some(Err(m)),
    };
    Some(match explorer().position(&q) {
        Ok(v) => Ok(v),
        Err(ApiError::BadRequest(m)) => Err(m),
        Err(ApiError::Internal(m)) => panic!("a sound table gave an internal error: {m}"),
    })
}

#[test]
fn every_cut_inside_the_json_is_refused() {
    // All cuts, not a sample: a cut of only the trailing newline once passed as "truncated".
    type Refused<'a> = &'a dyn Fn(&[u8]) -> bool;
    let files: [(&str, Vec<u8>, Refused); 2] = [
        ("run.json", valid_run_json(), &|b| open_run_json(b).is_err()),
        ("checkpoint.json", valid_checkpoint_json(), &|b| {
            open_checkpoint_json(b).is_err()
        }),
    ];
    for (name, bytes, refused) in files {
        let v = bytes.trim_ascii_end();
        for keep in 0..v.len() {
            assert!(refused(&v[..keep]), "{name} cut to {keep} bytes");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_run_json_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = open_run_json(&bytes);
        let _ = open_checkpoint_json(&bytes);
    }

    #[test]
    fn damaged_run_json_is_refused_by_name(edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let _ = open_run_json(&mutate(valid_run_json(), &edits, cut));
        let _ = open_checkpoint_json(&mutate(valid_checkpoint_json(), &edits, cut));
    }

    #[test]
    fn run_json_and_checkpoint_json_round_trip(
        states in any::<u64>(),
        shard_size in any::<u64>(),
        local_workers in proptest::option::of(any::<usize>()),
        run_id in ".{0,20}",
        workers in proptest::collection::vec("[a-z0-9.:]{1,20}", 0..4),
        layer in ".{0,20}",
        wave in any::<u32>(),
        decided_total in any::<u64>(),
        previous in proptest::option::of((any::<u32>(), any::<u64>())),
        at_unix in any::<u64>(),
    ) {
        let mut info: RunInfo = serde_json::from_slice(&valid_run_json()).unwrap();
        info.states = states;
        info.shard_size = shard_size;
        info.local_workers = local_workers;
        info.distributed = (!workers.is_empty()).then_some(kingmaker_coordinator::rundir::Distributed { run_id, workers, keep_layers: false });
        let dir = tempfile::tempdir().unwrap();
        write_json_atomically(&dir.path().join("run.json"), &info).unwrap();
        let (run, back) = RunDir::open(dir.path()).unwrap();
        prop_assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&info).unwrap());

        let mut state: RunState = serde_json::from_slice(&valid_checkpoint_json()).unwrap();
        state.current = Some(CurrentLayer {
            layer,
            last: ResumePoint { wave, decided_total, settled: false },
            previous: previous.map(|(wave, decided_total)| ResumePoint { wave, decided_total, settled: false }),
            at_unix,
        });
        run.write_state(&state).unwrap();
        let back = run.state().unwrap();
        prop_assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&state).unwrap());
    }

    #[test]
    fn arbitrary_inventories_never_panic(text in any::<String>()) {
        prop_assert!(load_inventory(text.as_bytes()).is_err());
    }

    #[test]
    fn damaged_inventories_never_panic(edits in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6), cut in any::<usize>()) {
        let _ = load_inventory(&mutate(EXAMPLE_INVENTORY.as_bytes().to_vec(), &edits, cut));
    }

    #[test]
    fn toml_like_inventories_never_panic(
        keys in proptest::collection::vec(("[a-z_]{1,16}", "\"[a-zA-Z0-9._/~ -]{0,12}\"|-?[0-9]{1,20}|true|\\[\\]|\\[\"[a-z-]{0,8}\"\\]"), 0..12),
        hosts in 0usize..4,
    ) {
        let mut text = String::from("[run]\n");
        for (k, v) in &keys {
            text.push_str(&format!("{k} = {v}\n"));
        }
        for _ in 0..hosts {
            text.push_str("[[host]]\nname = \"h\"\n");
        }
        prop_assert!(load_inventory(text.as_bytes()).is_err());
    }

    #[test]
    fn valid_inventories_round_trip(
        name in "[A-Za-z0-9_-]{1,20}",
        port in 1u16..,
        waves in any::<u32>(),
        workers in 0usize..5,
    ) {
        let mut text = format!(
            "[run]\nname = \"{name}\"\ngame = \"cc3p\"\noptions = [\"--level\", \"1\"]\n\
             token_file = \"t.token\"\nworker_port = {port}\ncheckpoint_every_waves = {waves}\n\
             [[host]]\nname = \"coord\"\nrole = \"coordinator\"\naddress = \"203.0.113.10\"\n"
        );
        for w in 0..workers {
            text.push_str(&format!(
                "[[host]]\nname = \"w{w}\"\nrole = \"worker\"\naddress = \"203.0.113.{}\"\n\
                 private_address = \"10.0.0.{}\"\n",
                20 + w,
                20 + w
            ));
        }
        let inv = load_inventory(text.as_bytes()).unwrap();
        prop_assert_eq!(&inv.run.name, &name);
        prop_assert_eq!(inv.run.worker_port, port);
        prop_assert_eq!(inv.run.checkpoint_every_waves, waves);
        prop_assert_eq!(inv.workers().len(), workers);
        let addrs: Vec<String> = (0..workers).map(|w| format!("10.0.0.{}:{port}", 20 + w)).collect();
        prop_assert_eq!(inv.worker_addrs(), addrs);
    }

    #[test]
    fn arbitrary_position_texts_are_answered_or_refused(text in ".{0,40}|.{990,1010}") {
        // Percent-encoded, as a browser sends it: decoded back exactly, then answered or refused
        // with a message.
        match position_query(&format!("p={}", percent_encode(&text))).expect("an encoded query is a valid URI") {
            Ok(v) => prop_assert!(v["index"].is_u64()),
            Err(m) => {
                prop_assert!(!m.is_empty());
                if text.len() > 1000 {
                    prop_assert!(m.contains("longer than 1000"), "{}", m);
                }
            }
        }
    }

    #[test]
    fn arbitrary_query_strings_never_panic(query in "[ -~]{0,60}|(p=|%[0-9a-fA-F]{0,2}|%|\\+|&|=|[a-z0-9:;,]){0,30}") {
        if let Some(Err(m)) = position_query(&query) {
            prop_assert!(!m.is_empty());
        }
    }

    #[test]
    fn arbitrary_query_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..60)) {
        let query: String = bytes.iter().map(|&b| format!("%{b:02x}")).collect();
        let _ = position_query(&format!("p={query}"));
        let _ = position_query(&String::from_utf8_lossy(&bytes));
    }
}

/// Every position's canonical text, percent-encoded in a query, leads back to its index.
#[test]
fn every_position_round_trips_through_the_query_string() {
    let game = &explorer().game;
    let mut answered = 0;
    for i in 0..game.size() {
        if matches!(game.node(i), kingmaker_kernel::Node::Illegal) {
            continue;
        }
        let text = game.format_position(i);
        let v = position_query(&format!("p={}", percent_encode(&text)))
            .unwrap()
            .unwrap_or_else(|m| panic!("{text:?} (state {i}) refused: {m}"));
        assert_eq!(v["index"], i, "{text:?}");
        answered += 1;
    }
    assert!(answered > 10, "{answered} positions");
    // p=start: the start; no p, or an empty one: an error naming p, not the start.
    let start = position_query("p=start").unwrap().unwrap();
    assert_eq!(
        Some(start["position"].as_str().unwrap()),
        explorer().info()["start"].as_str()
    );
    for query in ["", "&", "x=1"] {
        let m = position_query(query).unwrap().unwrap_err();
        assert!(m.contains('p'), "{query:?}: {m}");
    }
    assert!(position_query("")
        .unwrap()
        .unwrap_err()
        .contains("missing parameter `p`"));
    assert!(position_query("p=").unwrap().is_err());
}
