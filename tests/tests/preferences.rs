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
    // Every rule treats the seats alike, so a state and its two rotations have rotated outcomes
    // and each player wins exactly a third of the rest. What differs is who wins seen from the
    // mover: (rule, endless among all / kingmaker states, live states won by the mover / the
    // next / the last mover / endless, the same for the kingmaker states, the start's outcome
    // and plies — 0 where it cycles).
    #[rustfmt::skip]
    let want = [
        ("self-interest", 0, 0, [528, 378, 168, 0], [33, 138, 69, 0], "B wins", 8),
        ("spoiler", 27, 27, [573, 291, 183, 27], [78, 51, 84, 27], "endless", 0),
        ("cyclic", 0, 0, [534, 390, 150, 0], [39, 150, 51, 0], "B wins", 8),
        ("reverse", 0, 0, [546, 306, 222, 0], [51, 66, 123, 0], "A wins", 7),
        ("leader", 0, 0, [525, 339, 210, 0], [30, 99, 111, 0], "B wins", 8),
        ("trailer", 0, 0, [528, 387, 159, 0], [33, 147, 60, 0], "B wins", 8),
    ];
    assert_eq!(out.len(), want.len());
    for (r, (rule, endless, km_endless, seats, km_seats, start, plies)) in out.iter().zip(want) {
        assert_eq!(r["rule"], rule);
        let three = |c: &Value| ["A", "B", "C"].map(|k| c[k].as_u64().unwrap());
        let thirds = |legal: u64, endless: u64| [(legal - endless) / 3; 3];
        assert_eq!(three(&r["all"]), thirds(1587, endless), "{rule}");
        assert_eq!(r["all"]["endless"], endless, "{rule}");
        assert_eq!(three(&r["kingmaker"]), thirds(240, km_endless), "{rule}");
        assert_eq!(r["kingmaker"]["endless"], km_endless, "{rule}");
        let by_seat =
            |c: &Value| ["mover", "next", "last_mover", "endless"].map(|k| c[k].as_u64().unwrap());
        assert_eq!(by_seat(&r["by_seat"]), seats, "{rule}");
        // 1,074 live states, of which the 240 kingmaker states.
        assert_eq!(seats.iter().sum::<u64>(), 1074, "{rule}");
        assert_eq!(by_seat(&r["kingmaker_by_seat"]), km_seats, "{rule}");
        assert_eq!(r["kingmaker_to_last_mover"], km_seats[2], "{rule}");
        assert_eq!(r["start"]["outcome"], start, "{rule}");
        assert_eq!(r["start"]["plies"], plies, "{rule}");
        if plies > 0 {
            assert_eq!(r["start"]["line"].as_array().unwrap().len(), plies as usize);
        }
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
