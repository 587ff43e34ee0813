//! `kingmaker line` through the real binary: a damaged table is named, not read as a missing
//! value, cc3p has a line per question, and the help says so.

use kingmaker_e2e::{kingmaker, kingmaker_ok};
use serde_json::{json, Value};
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Flip one byte in the middle of a layer file's blocks (docs/format.md: a 96-byte header whose
/// `blocks` field is at offset 32, then 16 bytes per block and a crc32, then the blocks).
fn damage_blocks(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let blocks = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as usize;
    let first = 96 + 16 * blocks + 4;
    assert!(first < bytes.len(), "{} has block data", file.display());
    let middle = first + (bytes.len() - first) / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(file, bytes).unwrap();
}

#[test]
fn a_damaged_block_is_reported_as_a_crc_error() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cc2p");
    kingmaker_ok(&[
        "build",
        "cc2p",
        "--board",
        "4x4",
        "--pieces",
        "2",
        "--out",
        s(&run),
    ]);
    kingmaker_ok(&["line", s(&run), "start"]);
    // A cut line says it was cut before its end, whatever its value; no line has 0 plies.
    let cut = kingmaker_ok(&["line", s(&run), "start", "--max-plies", "1"]);
    assert!(
        cut.contains("line cut after 1 ply, before the game ended or a position repeated"),
        "{cut}"
    );
    let zero = kingmaker(&["line", s(&run), "start", "--max-plies", "0"]);
    assert!(!zero.status.success(), "--max-plies 0 is refused");
    damage_blocks(&run.join("layers/solo.kmt"));
    let out = kingmaker(&["line", s(&run), "start"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "line read a damaged table: {err}");
    assert!(
        err.contains("solo.kmt") && err.contains("crc32 mismatch"),
        "the file and the crc mismatch are named: {err}"
    );
    assert!(!err.contains("has no W, L or D value"), "{err}");
}

/// cc3p level 1: a line per question, each layer read as its coalition against the rest, from a
/// run and from a release packed from it. Level 1 has no drawn state (every question is decided
/// everywhere), so every line ends the game after exactly its depth; draw cycles of three-player
/// layers are covered by the unit tests of `principal_line`.
#[test]
fn cc3p_has_a_line_per_question() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("cc3p");
    let rel = tmp.path().join("rel");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", s(&run)]);
    kingmaker_ok(&["pack", s(&run), "--out", s(&rel)]);
    let query: Value =
        serde_json::from_str(&kingmaker_ok(&["query", s(&run), "start", "--json"])).unwrap();
    let answers = &query["answers"];
    // (layer, its answer at the start in query's terms, the coalition, the objective)
    let questions = [
        ("solo", &answers["solo"][0], vec!["A"], vec!["A"]),
        (
            "enable_ab",
            &answers["enable"][0][1],
            vec!["A", "B"],
            vec!["B"],
        ),
        (
            "enable_ac",
            &answers["enable"][0][2],
            vec!["A", "C"],
            vec!["C"],
        ),
    ];
    let mut positions = vec!["start".to_string()];
    for m in query["moves"].as_array().unwrap() {
        positions.push(m["position"].as_str().unwrap().to_string());
    }
    for (layer, at_start, coalition, objective) in questions {
        for (k, pos) in positions.iter().enumerate() {
            let text = kingmaker_ok(&["line", s(&run), pos, "--layer", layer, "--json"]);
            assert_eq!(
                text,
                kingmaker_ok(&["line", s(&rel), pos, "--layer", layer, "--json"]),
                "the release's line of {layer} at {pos}"
            );
            let line: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(line["layer"]["name"], layer);
            assert_eq!(line["layer"]["coalition"], json!(coalition));
            assert_eq!(line["layer"]["objective"], json!(objective));
            let plies = line["plies"].as_array().unwrap();
            let first = &plies[0];
            if k == 0 {
                assert_eq!(first["value"], at_start["value"], "{layer}");
                assert_eq!(first["depth"], at_start["depth"], "{layer}");
            }
            let value = first["value"].as_str().unwrap();
            assert!(value == "W" || value == "L", "{layer} at {pos}: {line}");
            assert_eq!(line["ending"]["kind"], "game_over", "{layer} at {pos}");
            let depth = first["depth"].as_u64().unwrap();
            assert_eq!(plies.len() as u64, depth + 1, "{layer} at {pos}");
            for (j, p) in plies.iter().enumerate() {
                assert_eq!(p["value"], value, "{layer} at {pos}, ply {j}");
                assert_eq!(p["depth"].as_u64().unwrap(), depth - j as u64);
            }
            let winner = line["ending"]["winner"].as_str().unwrap();
            assert_eq!(
                objective.contains(&winner),
                value == "W",
                "{layer} at {pos}: {winner} won a {value} line"
            );
        }
    }
    let text = kingmaker_ok(&["line", s(&run), "start", "--layer", "enable_ab"]);
    assert!(
        text.contains("in layer enable_ab (A and B play for a win by B, against C)"),
        "{text}"
    );
    assert!(text.contains("ply 1: A plays b4-"), "{text}");
    assert!(text.contains("game over after"), "{text}");
    let out = kingmaker(&["line", s(&run), "start", "--layer", "enable_bc"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("its layers are solo, enable_ab, enable_ac"),
        "{err}"
    );
}

#[test]
fn line_help_names_the_games_it_follows() {
    let help = kingmaker_ok(&["line", "--help"]);
    let about = help.lines().next().unwrap_or("");
    // It follows cc3p's questions as well as two-player games (cc3p_has_a_line_per_question).
    assert!(!about.contains("of a two-player game"), "{about}");
    assert!(about.contains("cc3p"), "{about}");
    let list = kingmaker_ok(&["--help"]);
    assert!(!list.contains("of a two-player game"), "{list}");
}
