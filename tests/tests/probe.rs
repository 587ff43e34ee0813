//! The probing library (`kingmaker-probe`) on tables the real binary built and packed: it reads
//! what `kingmaker query` prints, from a run, a release, a values-only release and a partial one,
//! and its moves come best first by what the tables themselves prove about the mover's children.

use kingmaker_e2e::{kingmaker_ok, packed_release, path_str};
use kingmaker_probe::games::cc3p::answers::Class;
use kingmaker_probe::{Answer, Game, Kind, ProbeError, Status, Tables, Value, Verdict};
use serde_json::Value as Json;
use std::path::Path;

fn query_json(dir: &Path, position: &str) -> Json {
    serde_json::from_str(&kingmaker_ok(&["query", path_str(dir), position, "--json"])).unwrap()
}

/// The live states reachable from the start, breadth first (level 1 is small).
fn reachable(tables: &Tables) -> Vec<u64> {
    let game = tables.game();
    let start = tables.position("").unwrap();
    let mut seen = std::collections::HashSet::from([start]);
    let mut queue = std::collections::VecDeque::from([start]);
    let mut out = Vec::new();
    while let Some(s) = queue.pop_front() {
        if !matches!(tables.probe_index(s).unwrap().status, Status::Live { .. }) {
            continue;
        }
        out.push(s);
        for (_, c) in kingmaker_probe::Notation::moves(&**game, s) {
            if seen.insert(c) {
                queue.push_back(c);
            }
        }
    }
    out
}

#[test]
fn cc3p_probes_agree_with_query_and_moves_come_best_first() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let run = tmp.path().join("run");
    let from_run = Tables::open(&run).unwrap();
    let from_release = Tables::open(&rel).unwrap();
    assert_eq!(from_run.kind(), Kind::Run);
    assert_eq!(from_release.kind(), Kind::Release);
    let names: Vec<&str> = from_release
        .layers()
        .iter()
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(names, ["solo", "enable_ab", "enable_ac"]);

    // The start, as `query --json` prints it: the twelve answers serialise the same way.
    let start = from_release.probe("").unwrap();
    let q = query_json(&rel, "start");
    let Verdict::Cc3p { answers } = &start.verdict else {
        panic!("a cc3p verdict: {:?}", start.verdict)
    };
    assert_eq!(answers.class, Class::Kingmaker);
    assert_eq!(serde_json::to_value(answers).unwrap(), q["answers"]);
    assert_eq!(start.position, q["position"].as_str().unwrap());
    assert_eq!(from_run.probe("").unwrap(), start);

    // Every move of the start, matched by text to query's.
    let moves = from_release.moves(&start.position).unwrap();
    assert_eq!(moves.len(), q["moves"].as_array().unwrap().len());
    for m in &moves {
        let theirs = q["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["move"] == m.text.as_str())
            .unwrap_or_else(|| panic!("query lists the move {}", m.text));
        let Verdict::Cc3p { answers } = &m.child.verdict else {
            panic!()
        };
        assert_eq!(serde_json::to_value(answers).unwrap(), theirs["answers"]);
    }

    // Best first, checked against what the tables prove: a mover who can force a win alone at
    // depth d has a first move to a child it wins at depth d - 1; one who can hold a draw, a
    // first move to a draw; one who loses at depth d, a first move that loses at d - 1 (the
    // slowest loss).
    let mut checked = 0;
    for s in reachable(&from_run) {
        let here = from_run.probe_index(s).unwrap();
        let Status::Live { seat, .. } = here.status else {
            unreachable!()
        };
        let Verdict::Cc3p { answers } = &here.verdict else {
            panic!()
        };
        let own = answers.solo[seat as usize];
        let children: Vec<(Answer, Class)> = from_run
            .moves_of(s)
            .unwrap()
            .iter()
            .map(|m| match &m.child.verdict {
                Verdict::Cc3p { answers } => (answers.solo[seat as usize], answers.class),
                v => panic!("{v:?}"),
            })
            .collect();
        let (best, best_class) = children[0];
        let at = &here.position;
        match own.value {
            Value::Win => {
                assert_eq!(best.value, Value::Win, "at {at}");
                assert_eq!(best.depth.unwrap() + 1, own.depth.unwrap(), "at {at}");
            }
            Value::Loss => {
                // Every child is lost; those where no opponent can force a win come first, the
                // slowest of them first, and the slowest of all is one ply faster than here.
                assert_eq!(best.value, Value::Loss, "at {at}");
                let slowest = |keep: &dyn Fn(Class) -> bool| {
                    children
                        .iter()
                        .filter(|c| keep(c.1))
                        .map(|c| c.0.depth.unwrap())
                        .max()
                };
                let open = slowest(&|c| c != Class::SoloWin);
                assert_eq!(best_class != Class::SoloWin, open.is_some(), "at {at}");
                assert_eq!(
                    Some(best.depth.unwrap()),
                    open.or(slowest(&|_| true)),
                    "at {at}"
                );
                assert_eq!(
                    slowest(&|_| true).unwrap() + 1,
                    own.depth.unwrap(),
                    "at {at}"
                );
            }
            v => assert_eq!(best.value, v, "at {at}"),
        }
        checked += 1;
    }
    assert_eq!(
        checked,
        1245 - 171,
        "the live reachable states of docs/results.md"
    );
}

#[test]
fn values_only_and_partial_releases_read_what_they_hold_and_name_what_they_lack() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let full = Tables::open(&rel).unwrap();
    let states = full.game().size();
    let full_values = full.values("solo", 0, states as usize).unwrap();
    let full_depths = full.depths("solo", 0, states as usize).unwrap();
    assert_eq!(
        full_values
            .iter()
            .filter(|&&v| v == Value::Win.code())
            .count(),
        449,
        "solo W of docs/results.md"
    );

    // Values only: the full layer files removed, the 2-bit files kept.
    for l in ["solo", "enable_ab", "enable_ac"] {
        std::fs::remove_file(rel.join(format!("{l}.kmt"))).unwrap();
    }
    let values_only = Tables::open(&rel).unwrap();
    assert!(values_only.layers().iter().all(|l| l.present && !l.depths));
    assert_eq!(
        values_only.values("solo", 0, states as usize).unwrap(),
        full_values
    );
    assert!(values_only.depths("solo", 0, 10).is_err());
    let start = values_only.probe("").unwrap();
    assert!(start.layers.iter().all(|l| l.answer.depth.is_none()));
    let Verdict::Cc3p { answers } = &start.verdict else {
        panic!()
    };
    assert_eq!(answers.class, Class::Kingmaker);
    assert_eq!(answers.solo[0].text(), "L");
    let _ = full_depths;

    // Partial: one layer missing altogether.
    std::fs::remove_file(rel.join("enable_ac.values.kmt")).unwrap();
    let partial = Tables::open(&rel).unwrap();
    assert!(!partial.has_layer("enable_ac"));
    let probe = partial.probe("").unwrap();
    assert_eq!(
        probe.verdict,
        Verdict::Incomplete {
            missing: vec!["enable_ac".into()]
        }
    );
    assert_eq!(probe.layers.len(), 2);
    let err = partial.layer("enable_ac").err().unwrap();
    assert!(matches!(err, ProbeError::MissingLayer { ref layer, .. } if layer == "enable_ac"));
    assert!(err.to_string().contains("enable_ac"), "{err}");
    assert!(err.to_string().contains("solo, enable_ab"), "{err}");
}

#[test]
fn bad_input_gives_typed_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let err = Tables::open(tmp.path()).err().unwrap();
    assert!(matches!(err, ProbeError::NotTables { .. }), "{err}");
    let rel = packed_release(tmp.path());
    let tables = Tables::open(&rel).unwrap();
    let err = tables.probe("A:zz9;B:b1;C:e1;A").err().unwrap();
    assert!(matches!(err, ProbeError::BadPosition { .. }), "{err}");
    assert!(err.to_string().contains("zz9"), "{err}");
    let err = tables.probe_index(u64::MAX).err().unwrap();
    assert!(matches!(err, ProbeError::BadPosition { .. }), "{err}");
    // A damaged layer is refused when read, not believed.
    let path = rel.join("solo.kmt");
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n - 10] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
    let tables = Tables::open(&rel).unwrap();
    let size = tables.game().size() as usize;
    let err = tables.values("solo", 0, size).err().unwrap();
    assert!(matches!(err, ProbeError::Format(_)), "{err}");
}

#[test]
fn two_player_moves_come_best_first() {
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
    let tables = Tables::open(&run).unwrap();
    let start = tables.probe("").unwrap();
    let Verdict::TwoPlayer { value, winner } = &start.verdict else {
        panic!("{:?}", start.verdict)
    };
    assert_eq!((value.value, winner), (Value::Draw, &None), "4x4 is a draw");
    // From every position of the first plies: the first move keeps the mover's value, and a win
    // (loss) is one ply faster (slower) than here.
    let mut frontier = vec![tables.position("").unwrap()];
    for _ in 0..4 {
        let mut next = Vec::new();
        for s in frontier {
            let here = tables.probe_index(s).unwrap();
            let Status::Live { seat, .. } = here.status else {
                continue;
            };
            let moves = tables.moves_of(s).unwrap();
            let (Verdict::TwoPlayer { value: v, .. }, Verdict::TwoPlayer { value: b, .. }) =
                (&here.verdict, &moves[0].child.verdict)
            else {
                panic!()
            };
            assert_eq!(b.value, v.value, "at {} (seat {seat})", here.position);
            if v.value != Value::Draw {
                assert_eq!(
                    b.depth.unwrap() + 1,
                    v.depth.unwrap(),
                    "at {}",
                    here.position
                );
            }
            next.extend(moves.iter().map(|m| m.child.index));
        }
        next.sort_unstable();
        next.dedup();
        frontier = next;
    }
}

/// The release the crate's doc examples read (probe/tests/data/cc3p-1) is what today's binary
/// builds and packs: every layer's digest and counts, and it verifies whole.
#[test]
fn the_doc_examples_release_is_todays_level_1() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../probe/tests/data/cc3p-1");
    kingmaker_ok(&["verify", path_str(&fixture)]);
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let manifest = |dir: &Path| -> Json {
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
    };
    let (ours, fresh) = (manifest(&fixture), manifest(&rel));
    assert_eq!(ours["game"], fresh["game"]);
    for (a, b) in ours["layers"]
        .as_array()
        .unwrap()
        .iter()
        .zip(fresh["layers"].as_array().unwrap())
    {
        for key in ["name", "digest", "counts", "max_depth", "states"] {
            assert_eq!(a[key], b[key], "{key} of {}", a["name"]);
        }
    }
}
