//! `kingmaker preferences` on level 1 through the binary: the outcomes of docs/results.md ("Who
//! wins when the losers choose") for every rule, and that each census covers the 1,587 legal
//! states and the 240 kingmaker states; and the sampled census that level 2 gets, which must
//! agree with the exact one within its error; the census by walks from every placement, which
//! must be the exact one; a sample of 0 refused, one as large as the game counted exactly.

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
    // Every state counted by walks from every placement (what level 2 gets on a server): the
    // same census and start as the retrograde pass, rule by rule.
    let walked: Vec<Value> = serde_json::from_str(&kingmaker_ok(&[
        "preferences",
        path_str(&run),
        "--all-states",
        "--json",
    ]))
    .unwrap();
    assert_eq!(walked, out);
    // The census of a uniform sample (what level 2 gets): every share within four standard
    // errors of the exact one, the start's line the same. Fewer than the game's 1,662 states:
    // a sample as large as the game is the exact census.
    let n = 1_600u64;
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
        let p = 1587.0 / 1662.0;
        let se = (p * (1.0 - p) / n as f64).sqrt();
        assert!((legal / n as f64 - p).abs() <= 4.0 * se, "{legal}");
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

/// `kingmaker ARGS...`, killed if still running after a minute: (success, stdout, stderr).
fn within_a_minute(args: &[&str]) -> (bool, String, String) {
    use std::io::Read;
    let mut child = std::process::Command::new(kingmaker_e2e::bin("kingmaker"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kingmaker {args:?} still ran after a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut said = String::new();
    let _ = err.read_to_string(&mut said);
    (status.success(), reader.join().unwrap(), said)
}

#[test]
fn a_sample_of_zero_is_refused_and_one_as_large_as_the_game_counts_every_state() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    kingmaker_ok(&["build", "cc3p", "--level", "1", "--out", path_str(&run)]);
    let (ok, _, said) = within_a_minute(&["preferences", path_str(&run), "--sample", "0"]);
    assert!(
        !ok && said.contains("a sample of 0 states counts nothing"),
        "{said}"
    );
    // Level 1 has 1,662 states: a sample of as many or more is the exact census, said so.
    let exact = kingmaker_ok(&["preferences", path_str(&run), "--rule", "cyclic", "--json"]);
    for n in ["1662", "1000000000000"] {
        let (ok, out, said) = within_a_minute(&[
            "preferences",
            path_str(&run),
            "--rule",
            "cyclic",
            "--json",
            "--sample",
            n,
        ]);
        assert!(ok, "{n}: {said}");
        assert_eq!(out, exact, "{n}");
        assert!(
            said.contains("the game's 1,662 states: counting every state exactly"),
            "{n}: {said}"
        );
    }
}
