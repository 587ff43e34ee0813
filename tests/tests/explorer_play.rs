//! Playing in the explorer page (headless Chromium, a cc3p level-1 release): moves listed best
//! first with their categories, the computer playing a whole game against itself by a preference
//! rule (the game `kingmaker preferences` plays), the value trail, undo and redo, the question
//! filter, and a solo winner's line. Checked against the probing library and the binary on the
//! same release; screenshots go to the test artifacts directory.

use fantoccini::{Client, Locator};
use kingmaker_e2e::{kingmaker_ok, packed_release, path_str, start_serve, wait_for};
use kingmaker_probe::games::cc3p::answers::Class;
use kingmaker_probe::{Status, Tables, Verdict};

async fn shown_moves(client: &Client) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for li in client
        .find_all(Locator::Css("#moves li.move"))
        .await
        .unwrap()
    {
        out.push((
            li.attr("data-position").await.unwrap().unwrap(),
            li.attr("data-category").await.unwrap().unwrap(),
        ));
    }
    out
}

async fn trail(client: &Client) -> Vec<String> {
    let mut out = Vec::new();
    for b in client
        .find_all(Locator::Css("#trail button.trail"))
        .await
        .unwrap()
    {
        out.push(b.attr("data-kind").await.unwrap().unwrap());
    }
    out
}

async fn click(client: &Client, css: &str) {
    wait_for(client, css).await.click().await.unwrap();
}

/// A screenshot in the test artifacts directory, to be looked at.
async fn save_screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    std::fs::write(kingmaker_e2e::artifacts_dir().join(name), png).unwrap();
}

fn at(position: &str) -> String {
    format!("body[data-position=\"{position}\"]")
}

fn class_name(tables: &Tables, position: &str) -> String {
    match tables.probe(position).unwrap().verdict {
        Verdict::Cc3p { answers } => answers.class.name().to_string(),
        v => panic!("{v:?}"),
    }
}

#[test]
fn play_against_the_tables_with_undo_redo_and_the_value_trail() {
    let tmp = tempfile::tempdir().unwrap();
    let rel = packed_release(tmp.path());
    let tables = Tables::open(&rel).unwrap();
    let (_server, url) = start_serve(&rel);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (_driver, client) = kingmaker_e2e::browser_session(tmp.path(), "1280,900").await;
        client.goto(&url).await.unwrap();
        let start = tables.probe("start").unwrap().position;
        wait_for(&client, &at(&start)).await;

        // Moves best first, in the library's order, each with its category.
        let want: Vec<(String, String)> = tables
            .moves("start")
            .unwrap()
            .iter()
            .map(|m| {
                let category = serde_json::to_value(m.category).unwrap();
                (
                    m.child.position.clone(),
                    category.as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(shown_moves(&client).await, want);

        // The computer takes every seat and plays the whole game by the cyclic rule: the game
        // `kingmaker preferences --rule cyclic` plays from the start.
        let pref: serde_json::Value = serde_json::from_str(&kingmaker_ok(&[
            "preferences",
            path_str(&rel),
            "--rule",
            "cyclic",
            "--json",
        ]))
        .unwrap();
        let end = pref[0]["start"]["end"].as_str().unwrap().to_string();
        let plies = pref[0]["start"]["line"].as_array().unwrap().len();
        for seat in ["A", "B", "C"] {
            click(&client, &format!("#seat-{seat}")).await;
        }
        wait_for(&client, &at(&end)).await;
        let trail_kinds = trail(&client).await;
        assert_eq!(
            trail_kinds.len(),
            plies + 1,
            "the value of every position played"
        );
        assert_eq!(trail_kinds.last().map(String::as_str), Some("terminal"));
        assert_eq!(trail_kinds[0], class_name(&tables, &start));
        let status = client
            .find(Locator::Id("status"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(status.starts_with("game over"), "{status}");
        save_screenshot(&client, "explorer-self-play.png").await;

        // Undo and redo, the seats given back; a click on the trail goes back to that ply.
        for seat in ["A", "B", "C"] {
            click(&client, &format!("#seat-{seat}")).await;
        }
        // The positions of the line, replayed from the start by the moves' texts.
        let mut positions = vec![start.clone()];
        for text in pref[0]["start"]["line"].as_array().unwrap() {
            let here = positions.last().unwrap();
            let m = tables.moves(here).unwrap();
            let m = m.iter().find(|m| m.text == text.as_str().unwrap()).unwrap();
            positions.push(m.child.position.clone());
        }
        assert_eq!(positions.last(), Some(&end));
        click(&client, "#back").await;
        wait_for(&client, &at(&positions[plies - 1])).await;
        assert_eq!(trail(&client).await.len(), plies);
        click(&client, "#redo").await;
        wait_for(&client, &at(&end)).await;
        assert_eq!(trail(&client).await.len(), plies + 1);
        click(&client, "#trail button.trail[data-ply=\"0\"]").await;
        wait_for(&client, &at(&start)).await;
        assert_eq!(trail(&client).await.len(), 1);

        // Each rule's outcome from here, the computer's rule marked: the binary's.
        let all: Vec<serde_json::Value> =
            serde_json::from_str(&kingmaker_ok(&["preferences", path_str(&rel), "--json"]))
                .unwrap();
        for r in &all {
            let rule = r["rule"].as_str().unwrap();
            let row = wait_for(&client, &format!("table.rules tr[data-rule=\"{rule}\"] td")).await;
            let outcome = r["start"]["outcome"].as_str().unwrap();
            let want = match outcome {
                "endless" => outcome.to_string(),
                _ => format!("{outcome} in {} plies", r["start"]["plies"]),
            };
            assert_eq!(row.text().await.unwrap(), want, "{rule}");
        }
        wait_for(&client, "table.rules tr.chosen[data-rule=\"cyclic\"]").await;

        // Another rule chosen: the computer plays that rule's game, to its end.
        let reverse = all.iter().find(|r| r["rule"] == "reverse").unwrap();
        let rule = client.find(Locator::Id("rule")).await.unwrap();
        rule.select_by_value("reverse").await.unwrap();
        wait_for(&client, "table.rules tr.chosen[data-rule=\"reverse\"]").await;
        for seat in ["A", "B", "C"] {
            click(&client, &format!("#seat-{seat}")).await;
        }
        wait_for(&client, &at(reverse["start"]["end"].as_str().unwrap())).await;
        let plies = reverse["start"]["plies"].as_u64().unwrap() as usize;
        assert_eq!(trail(&client).await.len(), plies + 1);
        for seat in ["A", "B", "C"] {
            click(&client, &format!("#seat-{seat}")).await;
        }
        click(&client, "#trail button.trail[data-ply=\"0\"]").await;
        wait_for(&client, &at(&start)).await;

        // The question filter: only the moves after which B can be forced out.
        let select = client.find(Locator::Id("filter-q")).await.unwrap();
        select.select_by_value("solo:B").await.unwrap();
        let value = client.find(Locator::Id("filter-v")).await.unwrap();
        value.select_by_value("L").await.unwrap();
        let keep = tables
            .moves("start")
            .unwrap()
            .iter()
            .filter(|m| match &m.child.verdict {
                Verdict::Cc3p { answers } => answers.solo[1].value == kingmaker_probe::Value::Loss,
                _ => false,
            })
            .count();
        let shown = client
            .find_all(Locator::Css("#moves li.move:not(.filtered)"))
            .await
            .unwrap()
            .len();
        assert_eq!(shown, keep, "the moves that keep B forced out");
        save_screenshot(&client, "explorer-filter.png").await;
        select.select_by_value("").await.unwrap();

        // A position where a player can win alone shows that player's shortest win.
        let solo_win = first_solo_win(&tables);
        let input = client.find(Locator::Id("position")).await.unwrap();
        input.clear().await.unwrap();
        input.send_keys(&solo_win).await.unwrap();
        click(&client, "#go").await;
        wait_for(&client, &at(&solo_win)).await;
        let title = wait_for(&client, "h3.line-title")
            .await
            .text()
            .await
            .unwrap();
        assert!(
            title.starts_with("Principal line") && title.contains("alone"),
            "{title}"
        );
        let plies = client
            .find_all(Locator::Css("ol.line li.ply"))
            .await
            .unwrap();
        let Verdict::Cc3p { answers } = tables.probe(&solo_win).unwrap().verdict else {
            panic!()
        };
        let winner = answers
            .solo
            .iter()
            .find(|a| a.value == kingmaker_probe::Value::Win);
        assert_eq!(plies.len() as u16, winner.unwrap().depth.unwrap() + 1);
    });
}

/// A live position, reachable from the start, where some player can win alone.
fn first_solo_win(tables: &Tables) -> String {
    let mut frontier = vec![tables.position("start").unwrap()];
    loop {
        let mut next = Vec::new();
        for s in frontier {
            let p = tables.probe_index(s).unwrap();
            if let Verdict::Cc3p { answers } = &p.verdict {
                if answers.class == Class::SoloWin && matches!(p.status, Status::Live { .. }) {
                    return p.position;
                }
            }
            next.extend(tables.moves_of(s).unwrap().iter().map(|m| m.child.index));
        }
        next.sort_unstable();
        next.dedup();
        frontier = next;
    }
}
