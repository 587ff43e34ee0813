//! The explorer page of the two-player games in headless Chromium: a TOPPEN run (grid drawing,
//! draw cycles), a cc2p run (the numbered diamond, principal line) and Go. What the page shows is checked
//! against `kingmaker query --json` on the same run.

use fantoccini::{Client, Locator};
use kingmaker_e2e::{kingmaker_ok, start_serve, wait_for};
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn query(run: &Path, position: &str) -> Value {
    serde_json::from_str(&kingmaker_ok(&["query", s(run), position, "--json"])).unwrap()
}

/// The page shows `position` with the labels and moves `query` gives, and a principal line that
/// fits the value: depth + 1 plies for a decided position, a repeating cycle for a draw.
async fn check_position(client: &Client, run: &Path, position: &str) {
    let q = query(run, position);
    let position = q["position"].as_str().unwrap();
    wait_for(client, &format!("body[data-position=\"{position}\"]")).await;
    let label = client.find(Locator::Css("#labels p.two")).await.unwrap();
    assert_eq!(
        label.attr("data-value").await.unwrap().as_deref(),
        q["value"].as_str(),
        "the label at {position}"
    );
    let moves = client
        .find_all(Locator::Css("#moves li.move"))
        .await
        .unwrap();
    assert_eq!(
        moves.len(),
        q["moves"].as_array().unwrap().len(),
        "moves listed at {position}"
    );
    // The page lists them best first (tests/tests/explorer_play.rs checks the order); the same
    // moves as query's.
    let mut shown = Vec::new();
    for m in &moves {
        shown.push(m.attr("data-position").await.unwrap().unwrap());
    }
    let mut want: Vec<String> = q["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["position"].as_str().unwrap().to_string())
        .collect();
    shown.sort();
    want.sort();
    assert_eq!(shown, want, "the moves at {position}");
    let plies = client
        .find_all(Locator::Css("ol.line li.ply"))
        .await
        .unwrap();
    let title = client.find(Locator::Css("h3.line-title")).await.unwrap();
    let title = title.text().await.unwrap();
    match q["value"].as_str().unwrap() {
        "W" | "L" => {
            assert_eq!(
                plies.len() as u64,
                q["depth"].as_u64().unwrap() + 1,
                "a decided line is depth + 1 plies at {position}"
            );
            assert!(title.starts_with("Principal line"), "{title}");
        }
        "D" => {
            assert!(title.starts_with("Draw cycle"), "{title}");
            let cycle = client
                .find_all(Locator::Css("ol.line li.ply.cycle"))
                .await
                .unwrap();
            assert!(
                !cycle.is_empty(),
                "a drawn line ends in a cycle at {position}"
            );
        }
        other => panic!("value {other} at {position}"),
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn the_toppen_page_draws_the_grid_and_plays_by_click() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("toppen");
    kingmaker_ok(&["build", "toppen", "--out", s(&run)]);
    let (_server, url) = start_serve(&run);
    runtime().block_on(async {
        let (_driver, client) = kingmaker_e2e::browser_session(tmp.path(), "1280,900").await;
        client.goto(&url).await.unwrap();
        // TOPPEN has no single start: the page opens on the classic ring.
        let ring = "####/#..#/####:AABBABABAB:A";
        check_position(&client, &run, ring).await;
        let squares = client
            .find_all(Locator::Css("#board rect.square"))
            .await
            .unwrap();
        assert_eq!(squares.len(), 10, "a decomino: ten cells drawn");

        // Select a movable stack, then click a highlighted target square.
        let from = wait_for(&client, "rect.square.movable").await;
        let from_cell = from.attr("data-cell").await.unwrap().unwrap();
        from.click().await.unwrap();
        let target = wait_for(&client, "rect.square.target").await;
        let to_cell = target.attr("data-cell").await.unwrap().unwrap();
        let q = query(&run, ring);
        let expected = q["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| {
                let text = m["move"].as_str().unwrap();
                let cells: Vec<&str> = text.rsplit(' ').next().unwrap().split('-').collect();
                cells.first() == Some(&from_cell.as_str())
                    && cells.last() == Some(&to_cell.as_str())
            })
            .unwrap_or_else(|| panic!("no move {from_cell}->{to_cell} at the ring"))["position"]
            .as_str()
            .unwrap()
            .to_string();
        target.click().await.unwrap();
        check_position(&client, &run, &expected).await;

        let png = client.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        std::fs::write(
            kingmaker_e2e::artifacts_dir().join("serve-toppen.png"),
            &png,
        )
        .unwrap();

        // A key says which tiles are A's and B's.
        let key = client.find(Locator::Css("#key")).await.unwrap();
        assert!(
            client
                .find_all(Locator::Css("#key .swatch.tile.A, #key .swatch.tile.B"))
                .await
                .unwrap()
                .len()
                == 2,
            "a swatch for each colour"
        );
        let key = key.text().await.unwrap();
        assert!(
            key.contains("an A tile") && key.contains("a B tile"),
            "{key}"
        );

        // A drawn colouring of the ring: its draw cycle names cells of the board drawn.
        let drawn = "####/#..#/####:ABABBAABAB:A";
        go_to(&client, &url, drawn).await;
        check_position(&client, &run, drawn).await;
        let mut board = Vec::new();
        for sq in client
            .find_all(Locator::Css("#board rect.square"))
            .await
            .unwrap()
        {
            board.push(sq.attr("data-cell").await.unwrap().unwrap());
        }
        let moves = client
            .find_all(Locator::Css("ol.line li.ply button"))
            .await
            .unwrap();
        assert!(moves.len() > 2, "a draw cycle of some length");
        for b in &moves[1..] {
            let mv = b.text().await.unwrap();
            if mv != "pass" {
                for cell in mv.split('-') {
                    assert!(board.contains(&cell.to_string()), "{mv}: {board:?}");
                }
            }
        }
        let png = client.screenshot().await.unwrap();
        std::fs::write(
            kingmaker_e2e::artifacts_dir().join("serve-toppen-draw.png"),
            &png,
        )
        .unwrap();

        // The finished tower: one cell holding all ten tiles.
        let tower = "#:AAAAABBBBB:A";
        go_to(&client, &url, tower).await;
        wait_for(&client, "body[data-position=\"#:AAAAABBBBB:A\"]").await;
        let squares = client
            .find_all(Locator::Css("#board rect.square"))
            .await
            .unwrap();
        assert_eq!(squares.len(), 1, "one cell");
        let tiles = client
            .find_all(Locator::Css("#board rect.tile"))
            .await
            .unwrap();
        assert_eq!(tiles.len(), 10, "the whole tower is drawn");
        let tops = client
            .find_all(Locator::Css("#board rect.tile.B.top"))
            .await
            .unwrap();
        assert_eq!(tops.len(), 1, "B's tile on top");
        let png = client.screenshot().await.unwrap();
        std::fs::write(
            kingmaker_e2e::artifacts_dir().join("serve-toppen-tower.png"),
            &png,
        )
        .unwrap();
        client.close().await.unwrap();
    });
}

/// Open the page on `position` (through the URL, as a bookmark would).
async fn go_to(client: &Client, url: &str, position: &str) {
    let encoded: String = position
        .chars()
        .map(|c| match c {
            '#' => "%23".to_string(),
            '/' => "%2F".to_string(),
            ':' => "%3A".to_string(),
            ',' => "%2C".to_string(),
            c => c.to_string(),
        })
        .collect();
    client.goto(&format!("{url}#p={encoded}")).await.unwrap();
    client.refresh().await.unwrap();
}

/// The text the page shows (what a reader sees, not the markup).
async fn page_text(client: &Client) -> String {
    client
        .execute("return document.body.innerText;", vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn the_cc2p_page_draws_the_numbered_diamond_the_line_and_plays_moves() {
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
    let (_server, url) = start_serve(&run);
    runtime().block_on(async {
        let (_driver, client) = kingmaker_e2e::browser_session(tmp.path(), "1280,900").await;
        client.goto(&url).await.unwrap();
        let start = query(&run, "start")["position"]
            .as_str()
            .unwrap()
            .to_string();
        check_position(&client, &run, &start).await;

        // The diamond is drawn with its sixteen cells, numbered as the notation and the moves
        // number them; no ASCII picture.
        let cells = client
            .find_all(Locator::Css("#board svg circle.cell"))
            .await
            .unwrap();
        assert_eq!(cells.len(), 16, "the 4×4 diamond's cells");
        let mut names = Vec::new();
        for c in &cells {
            names.push(c.attr("data-cell").await.unwrap().unwrap());
        }
        let numbers: Vec<String> = (0..16).map(|c| c.to_string()).collect();
        assert_eq!(names, numbers, "cells in the notation's numbering");
        assert!(client.find(Locator::Css("#board pre")).await.is_err());
        // Every cell shows its number: an empty cell as a label, a piece on it.
        let mut shown = Vec::new();
        for t in client
            .find_all(Locator::Css("#board svg text"))
            .await
            .unwrap()
        {
            shown.push(t.text().await.unwrap());
        }
        shown.sort_by_key(|t| t.parse::<u32>().unwrap());
        assert_eq!(shown, numbers, "a number on every cell");
        // The pieces stand where the notation puts them: 0:0,1;1:14,15;0.
        let mut pieces = Vec::new();
        for p in client
            .find_all(Locator::Css("#board circle.piece"))
            .await
            .unwrap()
        {
            pieces.push((
                p.attr("data-player").await.unwrap().unwrap(),
                p.attr("data-piece").await.unwrap().unwrap(),
            ));
        }
        pieces.sort();
        let expected: Vec<(String, String)> = start
            .trim_end_matches(";0")
            .split(';')
            .flat_map(|field| {
                let (who, list) = field.split_once(':').unwrap();
                list.split(',')
                    .map(move |c| (format!("player {who}"), c.to_string()))
            })
            .collect();
        assert_eq!(pieces, expected, "the pieces of {start}");

        // One wording for the players, said once: the status line says who moves, the legend
        // and the labels name the players as the status does.
        let text = page_text(&client).await;
        assert_eq!(text.matches("player 0 to move").count(), 1, "{text}");
        assert!(!text.contains("first"), "{text}");
        assert!(!text.contains("second"), "{text}");
        let legend = client.find(Locator::Css("footer#legend")).await.unwrap();
        let legend = legend.text().await.unwrap();
        assert!(
            legend.starts_with("W: player 0 wins with best play, L: player 1 wins"),
            "{legend}"
        );
        let key = client.find(Locator::Css("#key")).await.unwrap();
        let key = key.text().await.unwrap();
        assert!(
            key.contains("player 0") && key.contains("cell numbers"),
            "{key}"
        );
        let png = client.screenshot().await.unwrap();
        std::fs::write(kingmaker_e2e::artifacts_dir().join("serve-cc2p.png"), &png).unwrap();

        // Click a piece of the side to move, then a highlighted cell: the page goes where query
        // says that move goes.
        let from = wait_for(&client, "circle.piece.movable").await;
        let from_cell = from.attr("data-piece").await.unwrap().unwrap();
        from.click().await.unwrap();
        let target = wait_for(&client, "circle.cell.target").await;
        let to_cell = target.attr("data-cell").await.unwrap().unwrap();
        let q = query(&run, &start);
        let child = q["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| {
                let cells: Vec<&str> = m["move"].as_str().unwrap()[2..].split('-').collect();
                cells.first() == Some(&from_cell.as_str())
                    && cells.last() == Some(&to_cell.as_str())
            })
            .unwrap_or_else(|| panic!("no move {from_cell}-{to_cell} at the start"))["position"]
            .as_str()
            .unwrap()
            .to_string();
        target.click().await.unwrap();
        check_position(&client, &run, &child).await;
        let text = page_text(&client).await;
        assert_eq!(text.matches("player 1 to move").count(), 1, "{text}");

        // Then play the first move of the line by its button.
        let plies = client
            .find_all(Locator::Css("ol.line li.ply"))
            .await
            .unwrap();
        if plies.len() > 1 {
            let next = plies[1].attr("data-position").await.unwrap().unwrap();
            plies[1]
                .find(Locator::Css("button"))
                .await
                .unwrap()
                .click()
                .await
                .unwrap();
            check_position(&client, &run, &next).await;
        }
        client.close().await.unwrap();
    });
}

/// `GET url` on the server, as JSON.
fn get_json(url: &str) -> Value {
    let mut resp = ureq::get(url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap()
}

/// The Go page shows what `query` shows at `position` (the score's proven bounds, every
/// threshold, every move) and a principal line at one threshold, with a choice of threshold.
async fn check_go(client: &Client, run: &Path, position: &str) -> Value {
    let q = query(run, position);
    let position = q["position"].as_str().unwrap().to_string();
    wait_for(client, &format!("body[data-position=\"{position}\"]")).await;
    let score = client.find(Locator::Css("#labels p.score")).await.unwrap();
    for key in ["min", "max"] {
        // A bound no solved threshold proves is null in the JSON and absent on the page.
        let want = &q["labels"][format!("score_{key}")];
        assert_eq!(
            score.attr(&format!("data-{key}")).await.unwrap(),
            want.as_i64().map(|v| v.to_string()),
            "score {key} at {position}"
        );
    }
    let short = score.find(Locator::Css("span.v")).await.unwrap();
    assert_eq!(
        short.text().await.unwrap(),
        q["labels"]["short"].as_str().unwrap()
    );
    let rows = client
        .find_all(Locator::Css("table.thresholds tbody tr"))
        .await
        .unwrap();
    let want = q["labels"]["thresholds"].as_array().unwrap();
    assert_eq!(rows.len(), want.len());
    for (row, t) in rows.iter().zip(want) {
        let v = row.find(Locator::Css("td.v")).await.unwrap();
        assert_eq!(
            v.attr("data-value").await.unwrap().as_deref(),
            t["value"].as_str()
        );
    }
    let moves = client
        .find_all(Locator::Css("#moves li.move"))
        .await
        .unwrap();
    assert_eq!(moves.len(), q["moves"].as_array().unwrap().len());
    // The line: one option per solved threshold, the line of the one selected.
    let options = client
        .find_all(Locator::Css("select#line-k option"))
        .await
        .unwrap();
    assert_eq!(options.len(), want.len(), "a line per threshold");
    let title = client.find(Locator::Css("h3.line-title.at")).await.unwrap();
    let k: i64 = title
        .attr("data-k")
        .await
        .unwrap()
        .unwrap()
        .parse()
        .unwrap();
    let t = want
        .iter()
        .find(|t| t["k"] == k)
        .expect("a solved threshold");
    let plies = client
        .find_all(Locator::Css("ol.line li.ply"))
        .await
        .unwrap();
    let title = title.text().await.unwrap();
    if t["value"] == "D" {
        assert!(title.starts_with("Draw cycle"), "{title}");
    } else {
        assert!(title.starts_with("Principal line"), "{title}");
        assert_eq!(
            plies.len() as u64,
            t["depth"].as_u64().unwrap() + 1,
            "the line at ≥ {k} at {position}"
        );
    }
    q
}

#[test]
fn the_go_page_draws_the_surface_and_plays_by_click() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("go");
    kingmaker_ok(&[
        "build",
        "go",
        "--surface",
        "klein",
        "--size",
        "2x3",
        "--out",
        s(&run),
    ]);
    let (_server, url) = start_serve(&run);
    let run = run.as_path();

    // The layers by threshold, whatever order the build's search solved them in.
    let info = get_json(&format!("{url}api/info"));
    let layers: Vec<&str> = info["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let threshold = |name: &str| -> i32 {
        let k = name.strip_prefix("score_ge_").unwrap();
        match k.strip_prefix('m') {
            Some(m) => -m.parse::<i32>().unwrap(),
            None => k.parse().unwrap(),
        }
    };
    let ks: Vec<i32> = layers.iter().map(|l| threshold(l)).collect();
    let mut sorted = ks.clone();
    sorted.sort();
    assert_eq!(ks, sorted, "layers by threshold: {layers:?}");
    let run_json: Value = kingmaker_e2e::read_json(&run.join("run.json"));
    let built: Vec<&str> = run_json["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_ne!(built, layers, "the search solves them out of order");

    runtime().block_on(async {
        let (_driver, client) = kingmaker_e2e::browser_session(tmp.path(), "1280,900").await;
        client.goto(&url).await.unwrap();
        let q = check_go(&client, run, "start").await;
        // Every threshold is a draw at the start of the 2×3 Klein bottle: no bound is proven.
        assert!(q["labels"]["score_min"].is_null() && q["labels"]["score_max"].is_null());
        // The Klein bottle: left/right glued straight (arrows the same way), top/bottom with a
        // flip (one arrow reversed).
        wait_for(&client, "svg.go[data-surface=\"klein\"]").await;
        assert_eq!(
            client
                .find_all(Locator::Css("line.glue.lr"))
                .await
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            client
                .find_all(Locator::Css("line.glue.lr.flip"))
                .await
                .unwrap()
                .len(),
            0
        );
        assert_eq!(
            client
                .find_all(Locator::Css("line.glue.tb.flip"))
                .await
                .unwrap()
                .len(),
            1
        );
        // Six empty points, each a legal first move.
        let targets = client
            .find_all(Locator::Css("circle.point.target"))
            .await
            .unwrap();
        assert_eq!(targets.len(), 6);

        // Pass: White keeps the score below some thresholds, Black forces none, so only an
        // upper bound is proven.
        let pass = q["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["move"] == "pass")
            .expect("a pass")["position"]
            .as_str()
            .unwrap()
            .to_string();
        client
            .find(Locator::Css("#moves li.move[data-move=\"pass\"] button"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let p = check_go(&client, run, &pass).await;
        let thresholds = p["labels"]["thresholds"].as_array().unwrap();
        let lowest_l = thresholds
            .iter()
            .filter(|t| t["value"] == "L")
            .map(|t| t["k"].as_i64().unwrap())
            .min()
            .expect("White keeps the score below a threshold after a pass");
        assert!(thresholds.iter().all(|t| t["value"] != "W"), "{p}");
        assert!(p["labels"]["score_min"].is_null(), "{p}");
        assert_eq!(p["labels"]["score_max"], lowest_l - 1);
        assert_eq!(
            p["labels"]["short"],
            format!("≤ {:+}", lowest_l - 1),
            "no lower bound shown"
        );
        let png = client.screenshot().await.unwrap();
        std::fs::write(
            kingmaker_e2e::artifacts_dir().join("serve-go-pass.png"),
            &png,
        )
        .unwrap();

        // Choose another threshold's line: a draw cycle at a drawn one.
        let drawn = thresholds
            .iter()
            .find(|t| t["value"] == "D")
            .expect("a drawn threshold")["k"]
            .as_i64()
            .unwrap();
        client
            .find(Locator::Css(&format!(
                "select#line-k option[value=\"{drawn}\"]"
            )))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let title = wait_for(&client, &format!("h3.line-title.at[data-k=\"{drawn}\"]")).await;
        assert!(title.text().await.unwrap().starts_with("Draw cycle"));
        assert!(!client
            .find_all(Locator::Css("ol.line li.ply.cycle"))
            .await
            .unwrap()
            .is_empty());

        // Back to the start and click b2: the page goes where query says the move b2 goes.
        client.goto(&url).await.unwrap();
        check_go(&client, run, "start").await;
        let b2 = wait_for(&client, "circle.point.target[data-point=\"b2\"]").await;
        b2.click().await.unwrap();
        let child = q["moves"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["move"] == "b2")
            .expect("b2 is a move")["position"]
            .as_str()
            .unwrap()
            .to_string();
        check_go(&client, run, &child).await;
        let stones = client
            .find_all(Locator::Css("circle.stone.black"))
            .await
            .unwrap();
        assert_eq!(stones.len(), 1, "Black's stone on b2");
        let png = client.screenshot().await.unwrap();
        std::fs::write(kingmaker_e2e::artifacts_dir().join("serve-go.png"), &png).unwrap();
        client.close().await.unwrap();
    });
}
