//! `summary.json`: counts and digests of every layer, and for cc3p the control classes, over all
//! states and over the states reachable from the start.

use crate::cc3p_view::{try_answers, Cc3pTables, Class};
use crate::rundir::{RunDir, RunInfo};
use anyhow::Result;
use kingmaker_tablefmt::layer::ValuesPlane;
use kingmaker_tablefmt::table::TableSummary;
use kingmaker_worker::games::cc3p::Cc3p;
use kingmaker_worker::kernel::Layer;
use kingmaker_worker::kernel::{DRAW, WIN};
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::{Game, Node};
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::HashSet;

/// Every state reachable from `start` (terminal states are reached but not expanded).
pub fn reachable(game: &impl Game, start: u64) -> Vec<u64> {
    let mut seen = HashSet::from([start]);
    let mut order = vec![start];
    let mut children = Vec::new();
    let mut next = 0;
    while next < order.len() {
        let s = order[next];
        next += 1;
        children.clear();
        game.successors(s, &mut children);
        for &c in &children {
            if seen.insert(c) {
                order.push(c);
            }
        }
    }
    order.sort_unstable();
    order
}

fn layer_json(table: &TableSummary) -> Value {
    json!({
        "win": table.counts.win,
        "loss": table.counts.loss,
        "draw": table.counts.draw,
        "digest": table.digest,
        "max_depth": table.max_depth,
    })
}

fn class_json(counts: &[u64; 4]) -> Value {
    json!({
        "terminal": counts[0],
        "solo_win": counts[1],
        "spoiler_draw": counts[2],
        "kingmaker": counts[3],
    })
}

fn class_slot(c: Class) -> usize {
    match c {
        Class::Terminal => 0,
        Class::SoloWin => 1,
        Class::SpoilerDraw => 2,
        Class::Kingmaker => 3,
    }
}

/// Build the summary of a finished run. `reach` asks for the reachable-states block.
pub fn summarize(
    run: &RunDir,
    info: &RunInfo,
    game: &AnyGame,
    tables: &[(Layer, TableSummary)],
    reach: bool,
) -> Result<Value> {
    let mut s = Map::new();
    s.insert("game".into(), json!(info.spec.family()));
    if let Value::Object(params) = serde_json::to_value(&info.spec)? {
        for (k, v) in params {
            if k != "game" {
                s.insert(k, v);
            }
        }
    }
    s.insert("states".into(), json!(game.size()));
    let illegal = tables.first().map_or(0, |t| t.1.counts.illegal);
    s.insert("illegal".into(), json!(illegal));
    let layers: Map<String, Value> = tables
        .iter()
        .map(|(l, t)| (l.name.clone(), layer_json(t)))
        .collect();
    s.insert("layers".into(), Value::Object(layers));

    if let AnyGame::Cc2p(g) = game {
        s.insert("board".into(), json!(format!("{0}x{0}", g.board())));
    }
    // Two-player games: the value of the start position ("W": the first player wins).
    if let (Some(start), Some(solo)) = (
        game.start_index(),
        tables.iter().find(|t| t.0.name == "solo"),
    ) {
        if game.players() == 2 {
            let (v, d) = run.table(&solo.0.name)?.get(start)?;
            let value = ["illegal", "W", "L", "D"][v as usize & 3];
            s.insert("start".into(), json!({"value": value, "depth": d}));
        }
    }
    if let (AnyGame::Cc3p(cc3p), 3) = (game, tables.len()) {
        cc3p_classes(run, cc3p, reach, &mut s)?;
    }
    Ok(Value::Object(s))
}

/// The control class of every state, counted. A state's class depends only on the `solo` values
/// of its three rotations (player P's solo question at `s` is A's at R^(3−P)(s)), so this reads
/// the `solo` layer alone, unpacked in memory (2 bits per state: 3.7 GB at level 2), and rotates
/// each placement once for its three movers: R(p·3 + m) = R(p)·3 + (m + 1) mod 3.
fn class_counts(game: &Cc3p, solo: &ValuesPlane) -> [u64; 4] {
    (0..game.placements())
        .into_par_iter()
        .fold(
            || [0u64; 4],
            |mut acc, p| {
                let first = p * 3;
                if !matches!(game.node(first), Node::Live { .. }) {
                    acc[class_slot(Class::Terminal)] += 3;
                    return acc;
                }
                let r1 = game.rotate(first) / 3;
                let r2 = game.rotate(r1 * 3) / 3;
                for m in 0..3 {
                    // As A: the state itself; as B: R²(s); as C: R(s).
                    let solo_values = [
                        solo.get(first + m),
                        solo.get(r2 * 3 + (m + 2) % 3),
                        solo.get(r1 * 3 + (m + 1) % 3),
                    ];
                    let class = if solo_values.contains(&WIN) {
                        Class::SoloWin
                    } else if solo_values.contains(&DRAW) {
                        Class::SpoilerDraw
                    } else {
                        Class::Kingmaker
                    };
                    acc[class_slot(class)] += 1;
                }
                acc
            },
        )
        .reduce(
            || [0u64; 4],
            |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]],
        )
}

fn cc3p_classes(run: &RunDir, game: &Cc3p, reach: bool, s: &mut Map<String, Value>) -> Result<()> {
    let started = std::time::Instant::now();
    let solo = run.table("solo")?.values_plane()?;
    let all = class_counts(game, &solo);
    drop(solo);
    tracing::info!(
        "control classes of {} states counted in {:.1}s",
        game.size(),
        started.elapsed().as_secs_f64()
    );
    s.insert("classes".into(), class_json(&all));
    if reach {
        let t = Cc3pTables::open(run)?;
        let states = reachable(game, game.start_index());
        let mut classes = [0u64; 4];
        // Per layer: [win, loss, draw] over reachable legal states; `solo` for each player too.
        let mut layer_counts = Map::new();
        let mut per_player = [[0u64; 3]; 3];
        let mut tally = |name: &str, v: u8| {
            let e = layer_counts
                .entry(name.to_string())
                .or_insert_with(|| json!({"win": 0, "loss": 0, "draw": 0}));
            let key = match v {
                1 => "win",
                2 => "loss",
                _ => "draw",
            };
            e[key] = json!(e[key].as_u64().unwrap_or(0) + 1);
        };
        for &i in &states {
            let a = try_answers(game, &t, i)?;
            classes[class_slot(a.class)] += 1;
            if game.node(i) == Node::Illegal {
                continue;
            }
            tally("solo", t.solo.get(i)?.0);
            tally("enable_ab", t.enable_ab.get(i)?.0);
            tally("enable_ac", t.enable_ac.get(i)?.0);
            for (p, counts) in per_player.iter_mut().enumerate() {
                let slot = match a.solo[p].value {
                    'W' => 0,
                    'L' => 1,
                    _ => 2,
                };
                counts[slot] += 1;
            }
        }
        let players: Map<String, Value> = ["A", "B", "C"]
            .iter()
            .zip(per_player)
            .map(|(p, c)| {
                (
                    p.to_string(),
                    json!({"win": c[0], "loss": c[1], "draw": c[2]}),
                )
            })
            .collect();
        s.insert(
            "reachable".into(),
            json!({
                "states": states.len(),
                "classes": class_json(&classes),
                "layers": layer_counts,
                "solo_by_player": players,
            }),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kingmaker_tablefmt::{FormatError, Lookup};
    use kingmaker_worker::kernel::solve_in_memory;
    use kingmaker_worker::spec::GameSpec;
    use std::sync::Arc;

    struct InMemory(Vec<u8>, Vec<u16>);

    impl Lookup for InMemory {
        fn states(&self) -> u64 {
            self.0.len() as u64
        }
        fn lookup(&self, i: u64) -> Result<(u8, u16), FormatError> {
            Ok((self.0[i as usize], self.1[i as usize]))
        }
    }

    /// The plane-and-rotation count agrees with reading every state's twelve answers.
    #[test]
    fn class_counts_agree_with_the_answers_of_every_state() {
        let game = Arc::new(Cc3p::new(1).unwrap());
        let solved: Vec<InMemory> = GameSpec::Cc3p { level: 1 }
            .layers()
            .iter()
            .map(|l| {
                let s = solve_in_memory(&game, l, 2);
                InMemory(s.values, s.depth)
            })
            .collect();
        let [solo, enable_ab, enable_ac]: [InMemory; 3] = solved.try_into().ok().unwrap();
        let plane = ValuesPlane::from_values(&solo.0);
        let t = Cc3pTables {
            solo,
            enable_ab,
            enable_ac,
        };
        let mut want = [0u64; 4];
        for i in 0..game.size() {
            want[class_slot(try_answers(&game, &t, i).unwrap().class)] += 1;
        }
        assert_eq!(class_counts(&game, &plane), want);
        assert_eq!(want.iter().sum::<u64>(), game.size());
        assert!(want[3] > 0, "level 1 has kingmaker states");
    }
}
