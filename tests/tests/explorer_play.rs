//! Playing in the explorer page (headless Chromium, a cc3p level-1 release): moves listed best
//! first with their categories, the computer taking seats (a kingmaker handing the win by the
//! rule chosen), the value trail, undo and redo, and a solo winner's line. Checked against the
//! probing library on the same release.

use fantoccini::{Client, Locator};
use kingmaker_e2e::{packed_release, start_serve, wait_for};
use kingmaker_probe::cc3p::Class;
use kingmaker_probe::{Category, Status, Tables, Verdict};

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

fn at(position: &str) -> String {
    format!("body[data-position=\"{position}\"]")
}

fn class_name(tables: &Tables, position: &str) -> String {
    match tables.probe(position).unwrap().verdict {
        Verdict::Cc3p { answers } => answers.class.name().to_string(),
        v => panic!("{v:?}"),
    }
}

/// What the page's rule "hands the win to the next player" plays for a mover who can neither win
/// nor hold a draw alone: the first move, in best-first order, of least depth among those after
/// which it can still hand the next player the win.
fn hand_to_next(tables: &Tables, position: &str) -> String {
    let here = tables.probe(position).unwrap();
    let Status::Live { seat, .. } = here.status else {
        panic!()
    };
    let (seat, next) = (seat as usize, (seat as usize + 1) % 3);
    let moves = tables.moves(position).unwrap();
    if !matches!(moves[0].category, Category::Open | Category::Loss) {
        return moves[0].child.position.clone();
    }
    let hand = |m: &kingmaker_probe::Move| match &m.child.verdict {
        Verdict::Cc3p { answers } => answers.enable[seat][next],
        v => panic!("{v:?}"),
    };
    moves
        .iter()
        .filter(|m| hand(m).value == kingmaker_probe::Value::Win)
        .min_by_key(|m| hand(m).depth.unwrap())
        .unwrap_or(&moves[0])
        .child
        .position
        .clone()
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

        // The computer takes B and C; A plays its listed first move; B and C answer by the rule.
        click(&client, "#seat-B").await;
        click(&client, "#seat-C").await;
        let a_move = want[0].0.clone();
        click(&client, "#moves li.move button.play").await;
        let b_move = hand_to_next(&tables, &a_move);
        let c_move = hand_to_next(&tables, &b_move);
        wait_for(&client, &at(&c_move)).await;
        let line = [&start, &a_move, &b_move, &c_move];
        let classes: Vec<String> = line.iter().map(|p| class_name(&tables, p)).collect();
        assert_eq!(
            trail(&client).await,
            classes,
            "the value trail of the four positions"
        );

        // Undo goes back to A's last turn (past the computer's moves); redo replays them.
        click(&client, "#back").await;
        wait_for(&client, &at(&start)).await;
        click(&client, "#seat-B").await;
        click(&client, "#seat-C").await;
        click(&client, "#redo").await;
        wait_for(&client, &at(&a_move)).await;
        click(&client, "#redo").await;
        wait_for(&client, &at(&b_move)).await;
        assert_eq!(trail(&client).await, classes[..3]);
        // A click on the trail goes back to that ply.
        click(&client, "#trail button.trail[data-ply=\"0\"]").await;
        wait_for(&client, &at(&start)).await;

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
