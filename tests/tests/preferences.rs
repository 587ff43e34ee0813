//! `kingmaker preferences` on level 1 through the binary: the outcomes of docs/results.md ("Who
//! wins when the losers choose") for every rule, and that each census covers the 1,587 legal
//! states and the 240 kingmaker states; and the sampled census that level 2 gets, which must
//! agree with the exact one within its error.

use kingmaker_e2e::{kingmaker_ok, path_str};
use serde_json::Value;

#[test]
fn level_1_outcomes_under_every_rule() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", path_str(&run)]);
    let out: Vec<Value> =
        serde_json::from_str(&kingmaker_ok(&["preferences", path_str(&run), "--json"])).unwrap();
    // (rule, all A/B/C, kingmaker A/B/C, won by the last mover, the start's winner and plies)
    let want = [
        (
            "self-interest",
            [526, 532, 529],
            [77, 83, 80],
            82,
            "C wins",
            9,
        ),
        ("spoiler", [510, 522, 555], [61, 73, 106], 96, "B wins", 17),
        ("cyclic", [525, 533, 529], [76, 84, 80], 65, "C wins", 9),
        ("reverse", [520, 516, 551], [71, 67, 102], 126, "A wins", 7),
        ("leader", [524, 517, 546], [75, 68, 97], 109, "B wins", 8),
        ("trailer", [522, 536, 529], [73, 87, 80], 64, "A wins", 7),
    ];
    assert_eq!(out.len(), want.len());
    for (r, (rule, all, km, last, start, plies)) in out.iter().zip(want) {
        assert_eq!(r["rule"], rule);
        let three = |c: &Value| ["A", "B", "C"].map(|k| c[k].as_u64().unwrap());
        assert_eq!(three(&r["all"]), all, "{rule}");
        assert_eq!(three(&r["kingmaker"]), km, "{rule}");
        assert_eq!(
            all.iter().sum::<u64>() + r["all"]["endless"].as_u64().unwrap(),
            1587
        );
        assert_eq!(
            km.iter().sum::<u64>() + r["kingmaker"]["endless"].as_u64().unwrap(),
            240
        );
        assert_eq!(r["kingmaker_to_last_mover"], last, "{rule}");
        assert_eq!(r["start"]["outcome"], start, "{rule}");
        assert_eq!(r["start"]["plies"], plies, "{rule}");
        assert_eq!(r["start"]["line"].as_array().unwrap().len(), plies as usize);
    }
    // The census of a uniform sample (what level 2 gets): every share within four standard
    // errors of the exact one, the start's line the same.
    let n = 40_000u64;
    let sampled: Vec<Value> = serde_json::from_str(&kingmaker_ok(&[
        "preferences",
        path_str(&run),
        "--sample",
        &n.to_string(),
        "--seed",
        "7",
        "--json",
    ]))
    .unwrap();
    for (exact, sample) in out.iter().zip(&sampled) {
        assert_eq!(sample["sample"]["drawn"], n);
        // Level 1 has 75 illegal states of 1,662.
        let legal = sample["sample"]["legal"].as_u64().unwrap() as f64;
        assert!((legal / n as f64 - 1587.0 / 1662.0).abs() < 0.01, "{legal}");
        for k in ["A", "B", "C", "endless"] {
            let p = exact["all"][k].as_u64().unwrap() as f64 / 1587.0;
            let got = sample["all"][k].as_u64().unwrap() as f64 / legal;
            let se = (p * (1.0 - p) / legal).sqrt();
            assert!(
                (got - p).abs() <= 4.0 * se + 1e-12,
                "{} {k}: {got} against {p}",
                exact["rule"]
            );
        }
        assert_eq!(sample["start"], exact["start"], "{}", exact["rule"]);
    }
    // One rule asked for by name; a game that is not cc3p is refused.
    let one: Vec<Value> = serde_json::from_str(&kingmaker_ok(&[
        "preferences",
        path_str(&run),
        "--rule",
        "reverse",
        "--json",
    ]))
    .unwrap();
    assert_eq!(one.len(), 1);
    let c4 = tmp.path().join("c4");
    kingmaker_ok(&[
        "build",
        "connect4",
        "--board",
        "4x4",
        "--out",
        path_str(&c4),
    ]);
    let refused = kingmaker_e2e::kingmaker(&["preferences", path_str(&c4)]);
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("`preferences` is a command of cc3p tables")
            && said.contains("holds connect4"),
        "{said}"
    );
}
