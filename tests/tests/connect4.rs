//! Connect Four through the real `kingmaker` binary: the counts, digests and start values of
//! docs/results.md for the boards that build in seconds (6×4, Tromp's second-player win, takes
//! minutes and is recorded there with its command).

use kingmaker_e2e::{kingmaker_ok, read_json};

#[test]
fn the_published_small_boards_are_draws_with_their_digests() {
    let tmp = tempfile::tempdir().unwrap();
    // (board, indices, illegal, solo W/L, second W/L, digest prefixes)
    let rows = [
        (
            "4x4",
            923_521,
            747_021,
            (41_983, 134_517),
            (40_511, 135_989),
            ("b067e110", "c223ddb3"),
        ),
        (
            "5x4",
            28_629_151,
            24_276_861,
            (1_591_761, 2_760_529),
            (1_435_098, 2_917_192),
            ("fb084264", "1fdc659c"),
        ),
        (
            "4x5",
            15_752_961,
            13_572_978,
            (809_492, 1_370_491),
            (627_644, 1_552_339),
            ("a3e44232", "15316f40"),
        ),
    ];
    for (board, states, illegal, solo, second, digests) in rows {
        let run = tmp.path().join(board);
        kingmaker_ok(&[
            "build",
            "connect4",
            "--board",
            board,
            "--out",
            run.to_str().unwrap(),
        ]);
        let s = read_json(&run.join("summary.json"));
        assert_eq!(s["states"], states, "{board}: {s}");
        assert_eq!(s["illegal"], illegal, "{board}");
        for (name, (w, l), digest) in [("solo", solo, digests.0), ("second", second, digests.1)] {
            let layer = &s["layers"][name];
            assert_eq!(
                (&layer["win"], &layer["loss"], &layer["draw"]),
                (&w.into(), &l.into(), &0.into()),
                "{board} {name}"
            );
            assert!(
                layer["digest"].as_str().unwrap().starts_with(digest),
                "{board} {name}: {layer}"
            );
        }
        assert_eq!(
            s["start"]["value"], "D",
            "{board}: Tromp's table has a draw"
        );
        let q = kingmaker_ok(&["query", run.to_str().unwrap(), "start"]);
        assert!(q.contains("value D"), "{q}");
    }
}
