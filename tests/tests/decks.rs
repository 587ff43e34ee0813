//! Spot It decks end to end, through the real `kingmaker` binary: the published deck size, GF(8),
//! orders without a plane, `deck verify` on good and broken files, and the page written by
//! `--svg` in a real headless Chromium (file:// URL).

use kingmaker_e2e::{kingmaker, kingmaker_ok};
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The cards of a text listing (comment lines skipped).
fn cards(listing: &str) -> Vec<Vec<u32>> {
    listing
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(' ').map(|x| x.parse().unwrap()).collect())
        .collect()
}

#[test]
fn the_published_deck_size_is_verified_with_its_bound() {
    let out = kingmaker_ok(&["deck", "--order", "7", "--cards", "55"]);
    let cards = cards(&out);
    assert_eq!(cards.len(), 55);
    assert!(cards.iter().all(|c| c.len() == 8));
    for (i, a) in cards.iter().enumerate() {
        for b in &cards[i + 1..] {
            assert_eq!(a.iter().filter(|x| b.contains(x)).count(), 1);
        }
    }
    assert!(
        out.contains("# verified: 55 cards of 8 pictures, 57 distinct pictures"),
        "{out}"
    );
    assert!(
        out.contains("fewest pictures possible for 55 cards of 8: 57")
            && out.contains("this deck shows 57"),
        "{out}"
    );

    // The listing reads back through `deck verify`, and so does the JSON.
    let tmp = tempfile::tempdir().unwrap();
    let text = tmp.path().join("deck.txt");
    std::fs::write(&text, &out).unwrap();
    let verdict = kingmaker_ok(&[
        "deck",
        "verify",
        s(&text),
        "--cards",
        "55",
        "--per-card",
        "8",
    ]);
    assert!(
        verdict.contains("valid, every two cards share exactly one picture"),
        "{verdict}"
    );
    let json = tmp.path().join("deck.json");
    std::fs::write(
        &json,
        kingmaker_ok(&["deck", "--order", "7", "--cards", "55", "--json"]),
    )
    .unwrap();
    let v: Value =
        serde_json::from_str(&kingmaker_ok(&["deck", "verify", s(&json), "--json"])).unwrap();
    assert_eq!(v["verification"]["valid"], true);
    assert_eq!(v["verification"]["pictures"], 57);
    assert_eq!(v["fewest_pictures"]["exact"], 57);

    // A broken deck: the first offending pair is named and the exit status is non-zero.
    let mut broken = cards.clone();
    broken[9][0] = broken[2]
        .iter()
        .copied()
        .find(|x| !broken[9].contains(x))
        .unwrap();
    let listing: String = broken
        .iter()
        .map(|c| c.iter().map(u32::to_string).collect::<Vec<_>>().join(", ") + "\n")
        .collect();
    std::fs::write(&text, listing).unwrap();
    let out = kingmaker(&["deck", "verify", s(&text)]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The first pair by the definition: smallest b, then smallest a.
    let (a, b) = (0..broken.len())
        .flat_map(|b| (0..b).map(move |a| (a, b)))
        .find(|&(a, b)| broken[a].iter().filter(|x| broken[b].contains(x)).count() != 1)
        .unwrap();
    assert!(
        stderr.contains(&format!("is not a valid deck: cards {a} and {b} share")),
        "{stderr}"
    );
    std::fs::write(&text, "0 1 2\n0 3 z\n").unwrap();
    let out = kingmaker(&["deck", "verify", s(&text)]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("line 2: `z` is not a picture id"),
        "{stderr}"
    );
}

#[test]
fn order_8_goes_through_gf8_and_orders_without_planes_are_explained() {
    let v: Value =
        serde_json::from_str(&kingmaker_ok(&["deck", "--order", "8", "--json"])).unwrap();
    assert_eq!(v["field"]["modulus"], "x^3 + x + 1");
    assert_eq!(v["field"]["characteristic"], 2);
    assert_eq!(v["cards"].as_array().unwrap().len(), 73);
    assert_eq!(v["verification"]["projective_plane_order"], 8);

    for (order, words) in [
        ("6", "Bruck–Ryser"),
        ("10", "Lam, Thiel and Swiercz, 1989"),
        ("12", "open"),
    ] {
        let out = kingmaker(&["deck", "--order", order]);
        assert!(!out.status.success(), "order {order}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("not a prime power") && stderr.contains(words),
            "{stderr}"
        );
    }
}

// ---- the page in a real browser ----

#[test]
fn the_deck_page_in_headless_chromium_shows_the_cards_and_the_shared_picture() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("deck");
    let out = kingmaker(&["deck", "--order", "3", "--svg", s(&dir)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cards = cards(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(cards.len(), 13);
    let svgs = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".svg")
        })
        .count();
    assert_eq!(svgs, 13);
    let shared = |a: usize, b: usize| -> String {
        let s: Vec<u32> = cards[a]
            .iter()
            .copied()
            .filter(|x| cards[b].contains(x))
            .collect();
        assert_eq!(s.len(), 1);
        s[0].to_string()
    };

    let page = format!("file://{}", dir.join("index.html").display());

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use fantoccini::Locator;
        let (_driver, client) = kingmaker_e2e::browser_session(tmp.path(), "1280,1000").await;
        let wait = |css: String| {
            let client = client.clone();
            async move { kingmaker_e2e::wait_for(&client, &css).await }
        };
        // The pair view of two cards: each shows the one shared picture highlighted, halo visible.
        let check_pair = |a: usize, b: usize| {
            let client = client.clone();
            let expected = shared(a, b);
            async move {
                let highlighted = client
                    .find_all(Locator::Css("#pair g.pic.shared"))
                    .await
                    .unwrap();
                assert_eq!(
                    highlighted.len(),
                    2,
                    "one highlighted picture on each card of {a}, {b}"
                );
                for g in &highlighted {
                    assert_eq!(
                        g.attr("data-picture").await.unwrap().as_deref(),
                        Some(expected.as_str())
                    );
                    let halo = g.find(Locator::Css("circle.halo")).await.unwrap();
                    assert_eq!(halo.css_value("visibility").await.unwrap(), "visible");
                }
                let hidden = client
                    .find(Locator::Css("#pair g.pic:not(.shared) circle.halo"))
                    .await
                    .unwrap();
                assert_eq!(hidden.css_value("visibility").await.unwrap(), "hidden");
                let pair = client
                    .find_all(Locator::Css("#pair svg.card"))
                    .await
                    .unwrap();
                assert_eq!(pair.len(), 2);
                assert_eq!(
                    pair[0].attr("data-card").await.unwrap(),
                    Some(a.to_string())
                );
                assert_eq!(
                    pair[1].attr("data-card").await.unwrap(),
                    Some(b.to_string())
                );
                let answer = client
                    .find(Locator::Id("answer"))
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                assert!(answer.contains(&format!("picture {expected}:")), "{answer}");
            }
        };

        client.goto(&format!("{page}?a=3&b=7")).await.unwrap();
        wait("body[data-a=\"3\"][data-b=\"7\"]".into()).await;
        // Every card is drawn, with its four pictures, and is really laid out.
        let drawn = client
            .find_all(Locator::Css("#deck svg.card"))
            .await
            .unwrap();
        assert_eq!(drawn.len(), 13);
        for (c, svg) in drawn.iter().enumerate() {
            let pics = svg.find_all(Locator::Css("g.pic")).await.unwrap();
            let mut ids = HashSet::new();
            for g in &pics {
                ids.insert(
                    g.attr("data-picture")
                        .await
                        .unwrap()
                        .unwrap()
                        .parse::<u32>()
                        .unwrap(),
                );
            }
            assert_eq!(ids, cards[c].iter().copied().collect(), "card {c}");
            let (_, _, w, h) = svg.rectangle().await.unwrap();
            assert!(w > 100.0 && h > 100.0, "card {c} drawn at {w}×{h}");
        }
        check_pair(3, 7).await;

        // Pick a pair with the number boxes.
        let a = client.find(Locator::Id("a")).await.unwrap();
        a.clear().await.unwrap();
        a.send_keys("0").await.unwrap();
        let b = client.find(Locator::Id("b")).await.unwrap();
        b.clear().await.unwrap();
        b.send_keys("12").await.unwrap();
        client
            .find(Locator::Id("show"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait("body[data-a=\"0\"][data-b=\"12\"]".into()).await;
        check_pair(0, 12).await;

        // Click a card in the deck: it is compared with the card on the right.
        client
            .find(Locator::Css("#deck figure.cell[data-card=\"5\"] svg"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        wait("body[data-a=\"12\"][data-b=\"5\"]".into()).await;
        check_pair(12, 5).await;

        // Another pair, at random: still exactly one shared picture, highlighted on both cards.
        client
            .find(Locator::Id("another"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let body = wait("body[data-a][data-b]".into()).await;
        let a: usize = body.attr("data-a").await.unwrap().unwrap().parse().unwrap();
        let b: usize = body.attr("data-b").await.unwrap().unwrap().parse().unwrap();
        assert_ne!(a, b);
        check_pair(a, b).await;

        client.goto(&format!("{page}?a=3&b=7")).await.unwrap();
        wait("body[data-a=\"3\"][data-b=\"7\"]".into()).await;
        let png = client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        let shot = kingmaker_e2e::artifacts_dir().join("deck-order-3.png");
        std::fs::write(&shot, &png).unwrap();
        eprintln!("screenshot: {}", shot.display());
        client.close().await.unwrap();
    });
}
