//! cc3p_race as it is shown: every player's four answers in `query` and on the explorer page (the
//! mover's `top2` as its value), and in `summary.json` what second place changes: over all legal
//! and all reachable states, first place's control classes (from `solo`, as in cc3p) and, among
//! the kingmaker states, whether some player can still secure second place or make a deal (hand
//! the win to one opponent and keep second place).

use super::Cc3pRace;
use crate::reading::Answer;
use crate::view::{stopped_search, GameView, Labels, Solved};
use crate::AnyGame;
use crate::Notation;
use anyhow::Result;
use kingmaker_kernel::reach::reachable_resumable;
use kingmaker_kernel::{Game, Node, DRAW, LOSS, WIN};
use kingmaker_tablefmt::layer::{LayerTable, ValuesPlane};
use kingmaker_tablefmt::FormatError;
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// The layers, in the order of [`super::Cc3pRaceParams::layers`].
const LAYERS: [&str; 4] = ["solo", "top2", "deal_ab", "deal_ac"];

/// cc3p_race's view.
pub struct RaceView {
    game: Arc<AnyGame>,
}

impl RaceView {
    /// The view of a cc3p_race game.
    pub fn new(game: &Arc<AnyGame>) -> RaceView {
        RaceView { game: game.clone() }
    }
}

/// What is counted, by state, from the layers a run holds (`None`: its layers are missing).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Counts {
    /// Live states.
    live: u64,
    /// terminal, solo win, spoiler draw, kingmaker (first place, as in cc3p): needs `solo`.
    classes: Option<[u64; 4]>,
    /// Live states where the mover can force at least second place: needs `top2`.
    mover_secures_second: Option<u64>,
    /// Kingmaker states where some player can force at least second place alone, and where the
    /// other two can push every player down to third place: need `solo` and `top2`.
    kingmaker_secure_second: Option<u64>,
    kingmaker_all_to_third: Option<u64>,
    /// Kingmaker states where some player can hand the win to an opponent and keep second: needs
    /// all four layers.
    kingmaker_deal: Option<u64>,
}

/// The values planes of [`LAYERS`], those a run holds.
type Planes = [Option<ValuesPlane>; 4];

fn bump(counter: &mut Option<u64>, yes: bool) {
    *counter = Some(counter.unwrap_or(0) + u64::from(yes));
}

fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        _ => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

impl Counts {
    /// Count the states of placement `placement` whose mover is in `movers` (all three over the
    /// legal states; the reached ones for the census). A placement's three states share its
    /// rotations, R(p·3 + m) = R(p)·3 + (m + 1) mod 3, so each placement is rotated once for its
    /// three movers and its values are read from three places, not nine (as cc3p's classes).
    fn add_placement(
        &mut self,
        game: &Cc3pRace,
        planes: &Planes,
        placement: u64,
        movers: [bool; 3],
    ) {
        let counted = movers.iter().filter(|&&m| m).count() as u64;
        if counted == 0 {
            return;
        }
        let g = game.cc3p();
        let first = placement * 3;
        // Legal and terminal depend on the placement alone (which goals are filled).
        match g.node(first) {
            Node::Illegal => return,
            Node::Terminal { .. } => {
                if planes[0].is_some() {
                    self.classes.get_or_insert_default()[0] += counted;
                }
                return;
            }
            Node::Live { .. } => {}
        }
        self.live += counted;
        let r1 = g.rotate(first) / 3;
        let r2 = g.rotate(r1 * 3) / 3;
        for m in (0..3u64).filter(|&m| movers[m as usize]) {
            // The state in which player P plays A's role: as A the state itself, as B R²(s), as
            // C R(s).
            let as_a = [first + m, r2 * 3 + (m + 2) % 3, r1 * 3 + (m + 1) % 3];
            self.add_live(planes, as_a, m as usize);
        }
    }

    /// Count one live state with mover `mover`, from its values read as each player in A's role.
    fn add_live(&mut self, planes: &Planes, as_a: [u64; 3], mover: usize) {
        let of = |layer: usize| planes[layer].as_ref().map(|p| as_a.map(|i| p.get(i)));
        let Some(solo) = of(0) else {
            // Without `solo` only the mover's `top2` counts.
            if let Some(top2) = &planes[1] {
                bump(&mut self.mover_secures_second, top2.get(as_a[mover]) == WIN);
            }
            return;
        };
        let top2 = of(1);
        if let Some(top2) = top2 {
            bump(&mut self.mover_secures_second, top2[mover] == WIN);
        }
        let class = if solo.contains(&WIN) {
            1
        } else if solo.contains(&DRAW) {
            2
        } else {
            3
        };
        self.classes.get_or_insert_default()[class] += 1;
        let kingmaker = class == 3;
        if let Some(top2) = top2 {
            bump(
                &mut self.kingmaker_secure_second,
                kingmaker && top2.contains(&WIN),
            );
            bump(
                &mut self.kingmaker_all_to_third,
                kingmaker && top2.iter().all(|&v| v == LOSS),
            );
        }
        if let (Some(deal_next), Some(deal_prev)) = (of(2), of(3)) {
            bump(
                &mut self.kingmaker_deal,
                kingmaker && (deal_next.contains(&WIN) || deal_prev.contains(&WIN)),
            );
        }
    }

    fn merge(self, o: Counts) -> Counts {
        let classes = match (self.classes, o.classes) {
            (None, None) => None,
            (a, b) => {
                let (a, b) = (a.unwrap_or_default(), b.unwrap_or_default());
                Some(std::array::from_fn(|k| a[k] + b[k]))
            }
        };
        Counts {
            live: self.live + o.live,
            classes,
            mover_secures_second: sum(self.mover_secures_second, o.mover_secures_second),
            kingmaker_secure_second: sum(self.kingmaker_secure_second, o.kingmaker_secure_second),
            kingmaker_all_to_third: sum(self.kingmaker_all_to_third, o.kingmaker_all_to_third),
            kingmaker_deal: sum(self.kingmaker_deal, o.kingmaker_deal),
        }
    }

    /// The counts its layers allow; a count whose layers are missing is left out.
    fn json(&self) -> Value {
        let mut j = Map::new();
        if let Some(c) = self.classes {
            j.insert(
                "classes".into(),
                json!({
                    "terminal": c[0],
                    "solo_win": c[1],
                    "spoiler_draw": c[2],
                    "kingmaker": c[3],
                }),
            );
        }
        let counts = [
            ("kingmaker_secure_second", self.kingmaker_secure_second),
            ("kingmaker_all_to_third", self.kingmaker_all_to_third),
            ("kingmaker_deal", self.kingmaker_deal),
            ("live", Some(self.live)),
            ("mover_secures_second", self.mover_secures_second),
        ];
        for (name, count) in counts {
            if let Some(n) = count {
                j.insert(name.into(), json!(n));
            }
        }
        Value::Object(j)
    }
}

/// Every player's answers at `s`: (first, top2, deal with the next player, deal with the one
/// before), each as `Answer` text, read by rotation.
fn answers(game: &Cc3pRace, files: &[Arc<LayerTable>], s: u64) -> Result<Vec<[String; 4]>> {
    let g = game.cc3p();
    let r1 = g.rotate(s);
    let r2 = g.rotate(r1);
    [s, r2, r1]
        .iter()
        .map(|&i| {
            let read = |k: usize| -> Result<String> {
                Ok(Answer::read(&*files[k], i, files[k].has_depths())?.text())
            };
            Ok([read(0)?, read(1)?, read(2)?, read(3)?])
        })
        .collect()
}

/// The explorer's labels: the mover's `top2` (can it force at least second place?) as the value,
/// and every player's four answers in words.
struct RaceLabels {
    game: Arc<AnyGame>,
    files: Vec<Arc<LayerTable>>,
}

impl Labels for RaceLabels {
    fn of(&self, index: u64) -> Result<Value, FormatError> {
        let game: &Cc3pRace = self.game.as_any().downcast_ref().expect("a cc3p_race game");
        let Node::Live { mover } = game.node(index) else {
            let says = match game.node(index) {
                Node::Terminal { outcome } => game.outcome_text(outcome),
                _ => "illegal".to_string(),
            };
            return Ok(json!({"kind": "race", "value": "-", "depth": 0, "says": says}));
        };
        let a = answers(game, &self.files, index)
            .map_err(|e| FormatError::Corrupt(format!("{e:#}")))?;
        let g = game.cc3p();
        let as_a = [index, g.rotate(g.rotate(index)), g.rotate(index)];
        let top2 = &self.files[1];
        let mine = Answer::read(&**top2, as_a[usize::from(mover)], top2.has_depths())?;
        let says = (0..3u8)
            .map(|p| {
                let [first, top2, next, prev] = &a[usize::from(p)];
                let name = |x: u8| game.player_name(x);
                format!(
                    "{}: first {first}, top 2 {top2}, deal with {} {next}, with {} {prev}",
                    name(p),
                    name((p + 1) % 3),
                    name((p + 2) % 3)
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        Ok(json!({
            "kind": "race",
            "value": mine.value.as_str(),
            "depth": mine.depth,
            "says": format!("{} to move can {}force at least second place. {says}", game.player_name(mover), if mine.value == crate::reading::Value::Win { "" } else { "not " }),
        }))
    }

    fn changes(&self, before: &Value, after: &Value) -> Vec<String> {
        if before["says"] == after["says"] {
            return Vec::new();
        }
        vec![after["says"].as_str().unwrap_or("").to_string()]
    }
}

impl RaceView {
    fn race(&self) -> &Cc3pRace {
        self.game
            .as_any()
            .downcast_ref()
            .expect("a cc3p_race view holds a cc3p_race game")
    }
}

impl GameView for RaceView {
    /// For the position and after each move, every player's four answers.
    fn query(&self, tables: &dyn Solved, index: u64, json: bool) -> Result<()> {
        let game = self.race();
        let files = LAYERS
            .iter()
            .map(|l| tables.layer(l))
            .collect::<Result<Vec<_>>>()?;
        let rows = |s: u64| -> Result<Value> {
            let a = answers(game, &files, s)?;
            Ok(Value::Object(
                (0..3u8)
                    .map(|p| {
                        let [first, top2, next, prev] = &a[usize::from(p)];
                        let (q, r) = ((p + 1) % 3, (p + 2) % 3);
                        let name = |x: u8| game.player_name(x);
                        (
                            name(p),
                            json!({
                                "first": first,
                                "top2": top2,
                                format!("deal_{}", name(q)): next,
                                format!("deal_{}", name(r)): prev,
                            }),
                        )
                    })
                    .collect(),
            ))
        };
        let status = match game.node(index) {
            Node::Illegal => "illegal: two or more goals are filled".to_string(),
            Node::Terminal { outcome } => format!("terminal: {}", game.outcome_text(outcome)),
            Node::Live { mover } => format!("{} to move", game.player_name(mover)),
        };
        let moves = game
            .moves(index)
            .into_iter()
            .map(|(text, child)| {
                Ok(json!({"move": text, "position": game.format_position(child), "answers": rows(child)?}))
            })
            .collect::<Result<Vec<_>>>()?;
        let out = json!({
            "position": game.format_position(index),
            "index": index,
            "node": status,
            "answers": rows(index)?,
            "moves": moves,
        });
        if json {
            println!("{}", serde_json::to_string_pretty(&out)?);
            return Ok(());
        }
        let line = |answers: &Value| -> String {
            answers
                .as_object()
                .into_iter()
                .flatten()
                .map(|(p, a)| {
                    let fields: Vec<String> = a
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or("")))
                        .collect();
                    format!("{p}: {}", fields.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        println!(
            "position {}  (index {index})",
            out["position"].as_str().unwrap_or("")
        );
        println!("{}", game.picture(index));
        println!("{status}");
        println!("  {}", line(&out["answers"]));
        for m in moves {
            println!(
                "move {:<16} -> {}",
                m["move"].as_str().unwrap_or(""),
                m["position"].as_str().unwrap_or("")
            );
            println!("    {}", line(&m["answers"]));
        }
        Ok(())
    }

    fn labels(&self, tables: &dyn Solved) -> Result<Box<dyn Labels>> {
        Ok(Box::new(RaceLabels {
            game: self.game.clone(),
            files: LAYERS
                .iter()
                .map(|l| tables.layer(l))
                .collect::<Result<_>>()?,
        }))
    }

    fn legend(&self) -> String {
        "Outcomes are rankings. solo: A comes first; top2: A comes first or second; deal_ab: A and B together make B first and A second; deal_ac: the same with C. W = forces it, L = the others force the opposite, D = neither.".into()
    }

    /// The `second_place` block from the layers solved (each count only where its layers are):
    /// over all legal states and, with `reach`, over the states reachable from the start.
    fn summarize(
        &self,
        tables: &dyn Solved,
        reach: bool,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        let held = |name: &str| tables.layers().iter().any(|f| f.name == name);
        if !LAYERS.iter().any(|name| held(name)) {
            return Ok(());
        }
        let game = self.race();
        // The search first, its level bitmaps freed before the planes are read: at level 2 the
        // four planes take 14.8 GB and the search 5.6 (only the 1.9 GB of reached states stay).
        let reached = if reach {
            let start = game.cc3p().start_index();
            let checkpoints = tables.reach_checkpoints();
            let purpose = "the states reachable from cc3p's start, for second place";
            let Some((reached, _)) = reachable_resumable(
                game.cc3p(),
                start,
                purpose,
                checkpoints.as_ref(),
                &mut (),
                |(), _, _| {},
            )?
            else {
                return Err(stopped_search(checkpoints.as_ref()));
            };
            Some(reached)
        } else {
            None
        };
        let mut planes: Planes = Default::default();
        for (plane, name) in planes.iter_mut().zip(LAYERS) {
            if held(name) {
                *plane = Some(tables.layer(name)?.values_plane()?);
            }
        }
        let count = |movers: &(dyn Fn(u64) -> [bool; 3] + Sync)| {
            (0..game.cc3p().placements())
                .into_par_iter()
                .fold(Counts::default, |mut acc, p| {
                    acc.add_placement(game, &planes, p, movers(p));
                    acc
                })
                .reduce(Counts::default, Counts::merge)
        };
        let mut block = Map::new();
        block.insert("all".into(), count(&|_| [true; 3]).json());
        if let Some(reached) = reached {
            let counts = count(&|p| std::array::from_fn(|m| reached.contains(p * 3 + m as u64)));
            block.insert("reachable".into(), counts.json());
        }
        let race = game.race();
        let mut race_counts = [0u64; 3];
        for i in 0..race.size() {
            if let Node::Live { .. } = race.node(i) {
                match game.race_value(i) {
                    WIN => race_counts[0] += 1,
                    LOSS => race_counts[1] += 1,
                    _ => race_counts[2] += 1,
                }
            }
        }
        block.insert(
            "race".into(),
            json!({
                "states": race.size(),
                "live": race_counts.iter().sum::<u64>(),
                "b_second": race_counts[0],
                "c_second": race_counts[1],
                "nobody": race_counts[2],
            }),
        );
        out.insert("second_place".into(), Value::Object(block));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counts of one state as first written: each state rotated on its own.
    fn add_state(acc: &mut Counts, game: &Cc3pRace, planes: &Planes, s: u64) {
        let g = game.cc3p();
        match game.node(s) {
            Node::Illegal => {}
            Node::Terminal { .. } => {
                if planes[0].is_some() {
                    acc.classes.get_or_insert_default()[0] += 1;
                }
            }
            Node::Live { mover } => {
                acc.live += 1;
                let (r1, r2) = (g.rotate(s), g.rotate(g.rotate(s)));
                acc.add_live(planes, [s, r2, r1], usize::from(mover));
            }
        }
    }

    /// By placement and state by state, every count agrees: over random values in every layer,
    /// with every set of layers a run may hold, over all states and over a scattered subset (as
    /// the census counts the reached states only).
    #[test]
    fn counting_by_placement_agrees_with_rotating_each_state() {
        let game = Cc3pRace::new(1).unwrap();
        let n = game.size();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let plane = |random: &mut dyn FnMut() -> u64| {
            let values: Vec<u8> = (0..n)
                .map(|_| [WIN, LOSS, DRAW][(random() % 3) as usize])
                .collect();
            ValuesPlane::from_values(&values)
        };
        let chosen: Vec<bool> = (0..n).map(|_| random() % 3 == 0).collect();
        for held in [
            [true; 4],
            [false, true, false, false],
            [true, true, false, false],
        ] {
            let planes: Planes = std::array::from_fn(|k| held[k].then(|| plane(&mut random)));
            for subset in [false, true] {
                let counted = |s: u64| !subset || chosen[s as usize];
                let mut by_state = Counts::default();
                for s in (0..n).filter(|&s| counted(s)) {
                    add_state(&mut by_state, &game, &planes, s);
                }
                let mut by_placement = Counts::default();
                for p in 0..game.cc3p().placements() {
                    let movers = std::array::from_fn(|m| counted(p * 3 + m as u64));
                    by_placement.add_placement(&game, &planes, p, movers);
                }
                assert_eq!(by_placement, by_state, "layers {held:?}, subset {subset}");
                assert!(by_state.live > 0);
            }
        }
    }
}
