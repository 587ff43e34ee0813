//! The race for second place (docs/rules.md §1.5) through the binary at level 1: the numbers of
//! docs/results.md ("The race for second place"), its `solo` layer equal to cc3p's, and the
//! start's answers in `query`.

use kingmaker_e2e::{http_get, kingmaker_ok, path_str, read_json, start_serve};
use serde_json::Value;

#[test]
fn level_1_second_place_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let race = tmp.path().join("race");
    let cc3p = tmp.path().join("cc3p");
    kingmaker_ok(&[
        "build",
        "cc3p_race",
        "--level",
        "1",
        "--out",
        path_str(&race),
    ]);
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", path_str(&cc3p)]);
    kingmaker_ok(&["summarize", path_str(&race), "--reachable"]);
    let s = read_json(&race.join("summary.json"));
    let c = read_json(&cc3p.join("summary.json"));
    assert_eq!(
        s["layers"]["solo"]["digest"], c["layers"]["solo"]["digest"],
        "first place is cc3p's own solo"
    );
    let wl = |l: &str| {
        let l = &s["layers"][l];
        [&l["win"], &l["loss"], &l["draw"]].map(|v| v.as_u64().unwrap())
    };
    assert_eq!(wl("top2"), [997, 590, 0]);
    assert_eq!(wl("deal_ab"), [273, 1314, 0]);
    assert_eq!(wl("deal_ac"), [483, 1104, 0]);
    let second = &s["second_place"];
    assert_eq!(second["race"]["live"], 114);
    assert_eq!(second["race"]["b_second"], 57);
    assert_eq!(second["race"]["c_second"], 57);
    assert_eq!(second["race"]["nobody"], 0);
    for block in ["all", "reachable"] {
        let b = &second[block];
        assert_eq!(b["classes"]["kingmaker"], 240, "{block}");
        assert_eq!(b["live"], 1074, "{block}");
        assert_eq!(b["mover_secures_second"], 843, "{block}");
        assert_eq!(b["kingmaker_secure_second"], 231, "{block}");
        assert_eq!(b["kingmaker_all_to_third"], 9, "{block}");
        assert_eq!(b["kingmaker_deal"], 228, "{block}");
    }
    // The same states as cc3p, counted by its formula (level 2 without classifying 14.8 billion).
    let count = kingmaker_ok(&["count", "cc3p_race", "--level", "2"]);
    assert!(count.contains("states: 14,841,300,390"), "{count}");
    let q: Value = serde_json::from_str(&kingmaker_ok(&[
        "query",
        path_str(&race),
        "start",
        "--json",
    ]))
    .unwrap();
    let a = &q["answers"];
    for p in ["A", "B", "C"] {
        assert!(a[p]["top2"].as_str().unwrap().starts_with('L'), "{p}: {a}");
    }
    // Each player can sell the win only to the player who moves just before it.
    assert_eq!(a["A"]["deal_C"], "W12");
    assert_eq!(a["B"]["deal_A"], "W13");
    assert_eq!(a["C"]["deal_B"], "W11");
    assert!(a["A"]["deal_B"].as_str().unwrap().starts_with('L'));

    // The explorer labels the start with A's top2 and everyone's answers in words.
    let (_server, base) = start_serve(&race);
    let (status, body) = http_get(&base, "/api/position?p=start");
    assert!(status.contains("200"), "{status}: {body}");
    let labels = &serde_json::from_str::<Value>(&body).unwrap()["labels"];
    assert_eq!(labels["kind"], "race", "{labels}");
    assert_eq!(labels["value"], "L", "{labels}");
    let says = labels["says"].as_str().unwrap();
    assert!(
        says.contains("A to move can not force at least second place"),
        "{says}"
    );
    assert!(
        says.contains("A: first L9, top 2 L11, deal with B L15, with C W12"),
        "{says}"
    );
}

/// A run that holds only some layers gets the counts those layers allow, the same as the whole
/// build's, and none it cannot compute (level 2's second place is built layer by layer).
#[test]
fn second_place_from_the_layers_a_run_holds() {
    let tmp = tempfile::tempdir().unwrap();
    for (layers, expect_kingmaker) in [("top2", false), ("solo,top2", true)] {
        let out = tmp.path().join(layers.replace(',', "-"));
        kingmaker_ok(&[
            "build",
            "cc3p_race",
            "--level",
            "1",
            "--layers",
            layers,
            "--out",
            path_str(&out),
        ]);
        let s = read_json(&out.join("summary.json"));
        let b = &s["second_place"]["all"];
        assert_eq!(b["live"], 1074, "{layers}: {b}");
        assert_eq!(b["mover_secures_second"], 843, "{layers}: {b}");
        assert!(b.get("kingmaker_deal").is_none(), "{layers}: {b}");
        if expect_kingmaker {
            assert_eq!(b["classes"]["kingmaker"], 240, "{layers}: {b}");
            assert_eq!(b["kingmaker_secure_second"], 231, "{layers}: {b}");
            assert_eq!(b["kingmaker_all_to_third"], 9, "{layers}: {b}");
        } else {
            assert!(b.get("classes").is_none(), "{layers}: {b}");
            assert!(b.get("kingmaker_secure_second").is_none(), "{layers}: {b}");
        }
    }
}
