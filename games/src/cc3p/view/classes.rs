//! The control classes of cc3p in `summary.json` (docs/rules.md §1): counted over all states from
//! the `solo` layer alone, and over the states reachable from the start, with each layer's W/L/D,
//! each player's solo W/L/D, the classes of the states first reached at each ply and a witness of
//! every class at depth 9.

use crate::cc3p::answers::Class;
use crate::cc3p::Cc3p;
use crate::view::{stopped_search, Solved};
use anyhow::Result;
use kingmaker_kernel::reach::{reachable_resumable, Bitmap, ReachCheckpoints};
use kingmaker_kernel::{Game, Node};
use kingmaker_kernel::{DRAW, ILLEGAL, WIN};
use kingmaker_tablefmt::layer::ValuesPlane;
use rayon::prelude::*;
use serde_json::{json, Map, Value};

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

/// The depth from the start at which `summary.json` names a witness of each control class.
const WITNESS_DEPTH: u32 = 9;

/// Control classes counted, and for the spoiler-draw states, which players can hold the draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct ClassCounts {
    by_class: [u64; 4],
    spoiler_by_player: [u64; 3],
}

impl ClassCounts {
    fn add(&mut self, class: Class, solo: [u8; 3]) {
        self.by_class[class_slot(class)] += 1;
        if class == Class::SpoilerDraw {
            for (p, &v) in solo.iter().enumerate() {
                self.spoiler_by_player[p] += (v == DRAW) as u64;
            }
        }
    }

    fn merge(mut self, other: ClassCounts) -> ClassCounts {
        for k in 0..4 {
            self.by_class[k] += other.by_class[k];
        }
        for p in 0..3 {
            self.spoiler_by_player[p] += other.spoiler_by_player[p];
        }
        self
    }
}

/// The class of a live state from its players' solo values (A, B, C).
fn live_class(solo: [u8; 3]) -> Class {
    if solo.contains(&WIN) {
        Class::SoloWin
    } else if solo.contains(&DRAW) {
        Class::SpoilerDraw
    } else {
        Class::Kingmaker
    }
}

/// Player P's solo value at `s` is A's at R^(3−P)(s): as A the state itself, as B R²(s), as C R(s).
fn solo_values(game: &Cc3p, solo: &ValuesPlane, s: u64) -> [u8; 3] {
    let r1 = game.rotate(s);
    let r2 = game.rotate(r1);
    [solo.get(s), solo.get(r2), solo.get(r1)]
}

/// The class of one state and its players' solo values (zero for terminal and illegal states).
fn class_of(game: &Cc3p, solo: &ValuesPlane, s: u64) -> (Class, [u8; 3]) {
    match game.node(s) {
        Node::Live { .. } => {
            let v = solo_values(game, solo, s);
            (live_class(v), v)
        }
        _ => (Class::Terminal, [0; 3]),
    }
}

/// The control class of every state, counted. A state's class depends only on the `solo` values
/// of its three rotations, so this reads the `solo` layer alone, unpacked in memory (2 bits per
/// state: 3.7 GB at level 2), and rotates each placement once for its three movers:
/// R(p·3 + m) = R(p)·3 + (m + 1) mod 3.
fn class_counts(game: &Cc3p, solo: &ValuesPlane) -> ClassCounts {
    (0..game.placements())
        .into_par_iter()
        .fold(ClassCounts::default, |mut acc, p| {
            let first = p * 3;
            if !matches!(game.node(first), Node::Live { .. }) {
                acc.by_class[class_slot(Class::Terminal)] += 3;
                return acc;
            }
            let r1 = game.rotate(first) / 3;
            let r2 = game.rotate(r1 * 3) / 3;
            for m in 0..3 {
                let v = [
                    solo.get(first + m),
                    solo.get(r2 * 3 + (m + 2) % 3),
                    solo.get(r1 * 3 + (m + 1) % 3),
                ];
                acc.add(live_class(v), v);
            }
            acc
        })
        .reduce(ClassCounts::default, ClassCounts::merge)
}

fn by_player(counts: [u64; 3]) -> Value {
    json!({"A": counts[0], "B": counts[1], "C": counts[2]})
}

/// Over the states reachable from the start: classes, each layer's W/L/D, each player's solo
/// W/L/D.
#[derive(Clone, Default)]
struct ReachCounts {
    classes: ClassCounts,
    /// `solo`'s W, L, D over the reached legal states.
    solo: [u64; 3],
    solo_by_player: [[u64; 3]; 3],
}

/// A layer's W, L, D over the reached legal states (the illegal ones are never reached, but
/// would not count either).
fn reached_wld(reached: &Bitmap, plane: &ValuesPlane) -> [u64; 3] {
    reached.par_fold(
        || [0u64; 3],
        |acc, i| {
            let v = plane.get(i);
            if v != ILLEGAL {
                acc[wld(v)] += 1;
            }
        },
        |a, b| std::array::from_fn(|k| a[k] + b[k]),
    )
}

fn wld_json(c: [u64; 3]) -> Value {
    json!({"win": c[0], "loss": c[1], "draw": c[2]})
}

fn wld(v: u8) -> usize {
    match v {
        WIN => 0,
        DRAW => 2,
        _ => 1,
    }
}

/// The states reachable from the start, by ply.
struct Reached {
    reached: Bitmap,
    /// New states at each ply (0: the start).
    per_depth: Vec<u64>,
    counted: PerPly,
}

/// What the search counts ply by ply (kept in its checkpoints).
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct PerPly {
    /// The classes of the states first reached at each ply, by [`class_slot`].
    classes_per_depth: Vec<[u64; 4]>,
    /// A state of each class among those first reached at [`WITNESS_DEPTH`], by [`class_slot`].
    witness: [Option<u64>; 4],
}

/// What [`PerPly`] counts, naming the checkpoints of the search that counts it.
fn per_ply_purpose() -> String {
    format!("cc3p control classes per ply, witnesses at ply {WITNESS_DEPTH}")
}

/// Count the classes of `level`, the states first reached at ply `depth`.
fn count_ply(game: &Cc3p, solo: &ValuesPlane, counted: &mut PerPly, depth: u32, level: &Bitmap) {
    counted.classes_per_depth.push(level.par_fold(
        <[u64; 4]>::default,
        |acc, i| acc[class_slot(class_of(game, solo, i).0)] += 1,
        |mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        },
    ));
    if depth == WITNESS_DEPTH {
        for (k, w) in counted.witness.iter_mut().enumerate() {
            *w = level.first_where(|i| class_slot(class_of(game, solo, i).0) == k);
        }
    }
}

/// The breadth-first search from the start, with each ply's classes counted as it is reached;
/// `None` when a signal stopped it (checkpointed).
fn reached_from_start(
    game: &Cc3p,
    solo: &ValuesPlane,
    checkpoints: Option<&ReachCheckpoints>,
) -> Result<Option<Reached>> {
    let mut counted = PerPly::default();
    let found = reachable_resumable(
        game,
        game.start_index(),
        &per_ply_purpose(),
        checkpoints,
        &mut counted,
        |counted, depth, level| count_ply(game, solo, counted, depth, level),
    )?;
    Ok(found.map(|(reached, per_depth)| Reached {
        reached,
        per_depth,
        counted,
    }))
}

/// Add `classes`, `spoiler_draw_by_player` and with `reach` the `reachable` block to `s`.
pub fn summarize(
    tables: &dyn Solved,
    game: &Cc3p,
    reach: bool,
    s: &mut Map<String, Value>,
) -> Result<()> {
    let solo = tables.layer("solo")?.values_plane()?;
    // The search first: it is what a stop checkpoints, so a resumed census is back in it after
    // the layers' checks, not after the count of every state's class as well (12 min at level 2).
    let checkpoints = tables.reach_checkpoints();
    let reached = if reach {
        let found = reached_from_start(game, &solo, checkpoints.as_ref())?;
        Some(found.ok_or_else(|| stopped_search(checkpoints.as_ref()))?)
    } else {
        None
    };
    let started = std::time::Instant::now();
    let all = class_counts(game, &solo);
    tracing::info!(
        "control classes of {} states counted in {:.1}s",
        game.size(),
        started.elapsed().as_secs_f64()
    );
    s.insert("classes".into(), class_json(&all.by_class));
    s.insert(
        "spoiler_draw_by_player".into(),
        by_player(all.spoiler_by_player),
    );
    let Some(Reached {
        reached,
        per_depth,
        counted: PerPly {
            classes_per_depth,
            witness,
        },
    }) = reached
    else {
        return Ok(());
    };
    let classes_per_depth: Vec<Value> = classes_per_depth.iter().map(class_json).collect();
    // By placement, as `class_counts`: a placement's three states share its rotations, so each
    // reached placement is unranked and rotated once (the state-by-state pass took three times
    // as long at level 2).
    let counts = (0..game.placements())
        .into_par_iter()
        .fold(ReachCounts::default, |mut acc, p| {
            let first = p * 3;
            let reached_mover: [bool; 3] =
                std::array::from_fn(|m| reached.contains(first + m as u64));
            let reached_count = reached_mover.iter().filter(|&&r| r).count() as u64;
            if reached_count == 0 {
                return acc;
            }
            let node = game.node(first);
            if node == Node::Illegal {
                acc.classes.by_class[class_slot(Class::Terminal)] += reached_count;
                return acc;
            }
            let live = matches!(node, Node::Live { .. });
            let r1 = game.rotate(first) / 3;
            let r2 = game.rotate(r1 * 3) / 3;
            for m in (0..3u64).filter(|&m| reached_mover[m as usize]) {
                let i = first + m;
                // As A the state itself, as B R²(i), as C R(i) (terminal states too).
                let v = [
                    solo.get(i),
                    solo.get(r2 * 3 + (m + 2) % 3),
                    solo.get(r1 * 3 + (m + 1) % 3),
                ];
                let class = if live { live_class(v) } else { Class::Terminal };
                acc.classes.add(class, v);
                acc.solo[wld(v[0])] += 1;
                for (counts, value) in acc.solo_by_player.iter_mut().zip(v) {
                    counts[wld(value)] += 1;
                }
            }
            acc
        })
        .reduce(ReachCounts::default, |mut a, b| {
            a.classes = a.classes.merge(b.classes);
            for k in 0..3 {
                a.solo[k] += b.solo[k];
                for j in 0..3 {
                    a.solo_by_player[k][j] += b.solo_by_player[k][j];
                }
            }
            a
        });
    let mut layer_counts = Map::new();
    layer_counts.insert("solo".into(), wld_json(counts.solo));
    // The other layers' W/L/D where the run holds them (the classes need `solo` alone, so a
    // `--layers solo` build gives the per-ply census hours before the whole level), one plane at
    // a time: at level 2 each is 3.7 GB beside `solo` and the reached states.
    for name in ["enable_ab", "enable_ac"] {
        if tables.layers().iter().any(|l| l.name == name) {
            let plane = tables.layer(name)?.values_plane()?;
            layer_counts.insert(name.into(), wld_json(reached_wld(&reached, &plane)));
        }
    }
    let players: Map<String, Value> = ["A", "B", "C"]
        .iter()
        .zip(counts.solo_by_player)
        .map(|(p, c)| (p.to_string(), wld_json(c)))
        .collect();
    let witnesses: Map<String, Value> = [
        Class::Terminal,
        Class::SoloWin,
        Class::SpoilerDraw,
        Class::Kingmaker,
    ]
    .iter()
    .zip(witness)
    .map(|(c, w)| {
        (
            c.name().to_string(),
            w.map_or(Value::Null, |i| json!(game.format_position(i))),
        )
    })
    .collect();
    s.insert(
        "reachable".into(),
        json!({
            "states": reached.count(),
            "new_per_depth": per_depth,
            "classes_per_depth": classes_per_depth,
            "classes": class_json(&counts.classes.by_class),
            "spoiler_draw_by_player": by_player(counts.classes.spoiler_by_player),
            "layers": layer_counts,
            "solo_by_player": players,
            format!("witness_at_depth_{WITNESS_DEPTH}"): witnesses,
        }),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc3p::answers::{answers as try_answers, Cc3pTables};
    use std::sync::Arc;

    use super::super::level_one::{self, InMemory};
    use kingmaker_kernel::reach::StopRequest;

    /// Level 1 solved in memory: the game, its `solo` plane and its three layers.
    fn level_1() -> (Arc<Cc3p>, ValuesPlane, Cc3pTables<InMemory>) {
        let (game, t) = level_one::level_1();
        let plane = ValuesPlane::from_values(&t.solo.0);
        (game, plane, t)
    }

    /// The plane-and-rotation count agrees with reading every state's twelve answers.
    #[test]
    fn class_counts_agree_with_the_answers_of_every_state() {
        let (game, plane, t) = level_1();
        let mut want = [0u64; 4];
        for i in 0..game.size() {
            want[class_slot(try_answers(&game, &t, i).unwrap().class)] += 1;
        }
        let counts = class_counts(&game, &plane);
        assert_eq!(counts.by_class, want);
        let mut spoilers = [0u64; 3];
        for i in 0..game.size() {
            let a = try_answers(&game, &t, i).unwrap();
            if a.class == Class::SpoilerDraw {
                for (n, answer) in spoilers.iter_mut().zip(a.solo) {
                    *n += (answer.value == crate::reading::Value::Draw) as u64;
                }
            }
        }
        assert_eq!(counts.spoiler_by_player, spoilers);
        assert_eq!(want.iter().sum::<u64>(), game.size());
        assert!(want[3] > 0, "level 1 has kingmaker states");
    }

    /// The classes of the states first reached at each ply agree with a plain breadth-first
    /// search (a queue and a map of depths) and every state's twelve answers.
    #[test]
    fn classes_per_ply_agree_with_a_plain_search_and_the_answers() {
        let (game, plane, t) = level_1();
        let start = game.start_index();
        let mut depth = std::collections::HashMap::from([(start, 0usize)]);
        let mut queue = std::collections::VecDeque::from([start]);
        let mut want: Vec<[u64; 4]> = Vec::new();
        let mut children = Vec::new();
        while let Some(s) = queue.pop_front() {
            let d = depth[&s];
            if want.len() <= d {
                want.push([0; 4]);
            }
            want[d][class_slot(try_answers(&game, &t, s).unwrap().class)] += 1;
            children.clear();
            game.successors(s, &mut children);
            for &c in &children {
                if let std::collections::hash_map::Entry::Vacant(e) = depth.entry(c) {
                    e.insert(d + 1);
                    queue.push_back(c);
                }
            }
        }
        let got = reached_from_start(&game, &plane, None).unwrap().unwrap();
        assert_eq!(got.counted.classes_per_depth, want);
        assert_eq!(got.per_depth.len(), want.len());
        for (n, c) in got.per_depth.iter().zip(&got.counted.classes_per_depth) {
            assert_eq!(*n, c.iter().sum::<u64>());
        }
    }

    /// A search stopped at ply 5 and resumed from its checkpoint counts what an unbroken one
    /// does: the classes per ply and the witnesses of ply 9, saved and restored as JSON.
    #[test]
    fn a_census_stopped_and_resumed_counts_what_an_unbroken_one_does() {
        let (game, plane, _) = level_1();
        let whole = reached_from_start(&game, &plane, None).unwrap().unwrap();
        assert!(whole.counted.witness.iter().any(Option::is_some));
        let dir = tempfile::tempdir().unwrap();
        let stop = Arc::new(StopRequest::default());
        let cp = ReachCheckpoints {
            dir: dir.path().join("reach"),
            every: std::time::Duration::ZERO,
            stop: Some(stop.clone()),
            game: serde_json::json!({"game": "cc3p", "level": 1}),
        };
        let mut counted = PerPly::default();
        let stopped = reachable_resumable(
            &*game,
            game.start_index(),
            &per_ply_purpose(),
            Some(&cp),
            &mut counted,
            |counted, depth, level| {
                count_ply(&game, &plane, counted, depth, level);
                assert!(stop.armed(), "armed while the search runs");
                if depth == 5 {
                    stop.request();
                }
            },
        )
        .unwrap();
        assert!(stopped.is_none());
        assert!(!stop.armed(), "disarmed once the search returned");
        let cp = ReachCheckpoints { stop: None, ..cp };
        let resumed = reached_from_start(&game, &plane, Some(&cp))
            .unwrap()
            .unwrap();
        assert_eq!(
            resumed.counted.classes_per_depth,
            whole.counted.classes_per_depth
        );
        assert_eq!(resumed.counted.witness, whole.counted.witness);
        assert_eq!(resumed.per_depth, whole.per_depth);
        assert_eq!(resumed.reached.count(), whole.reached.count());
        assert!(!cp.dir.exists());
    }

    /// The bitmap search finds the same states as a plain one with a hash set, level by level.
    #[test]
    fn reachable_agrees_with_a_hash_set_search_on_level_1() {
        let game = Cc3p::new(1).unwrap();
        let start = game.start_index();
        let mut seen = std::collections::HashSet::from([start]);
        let mut todo = vec![start];
        let mut children = Vec::new();
        while let Some(s) = todo.pop() {
            children.clear();
            game.successors(s, &mut children);
            for &c in &children {
                if seen.insert(c) {
                    todo.push(c);
                }
            }
        }
        let mut levels = 0;
        let (bits, per_depth) =
            kingmaker_kernel::reach::reachable(&game, start, |_, _| levels += 1);
        assert_eq!(bits.count(), seen.len() as u64);
        assert!(seen.iter().all(|&s| bits.contains(s)));
        assert_eq!(per_depth.iter().sum::<u64>(), seen.len() as u64);
        assert_eq!(levels, per_depth.len());
        // The per-depth counts of the published BFS (docs/rules.md §1) come from the same rules.
        let published = crate::cc3p::bfs_new_per_depth(&game, 8);
        assert_eq!(&per_depth[1..9], &published[..]);
        let sum = bits.par_fold(|| 0u64, |n, _| *n += 1, |a, b| a + b);
        assert_eq!(sum, seen.len() as u64);
    }
}
