//! `summary.json`: counts and digests of every layer, the start's value in two-player games, and
//! whatever the game's view adds (control classes, say).

use crate::rundir::{RunDir, RunInfo};
use anyhow::Result;
use kingmaker_games::reading::LayerInfo;
use kingmaker_games::view::Solved;
use kingmaker_games::AnyGame;
use kingmaker_games::Notation;
use kingmaker_kernel::reach::ReachCheckpoints;
use kingmaker_kernel::Game;
use kingmaker_kernel::Layer;
use kingmaker_kernel::{Value as Outcome, LOSS, WIN};
use kingmaker_tablefmt::layer::LayerTable;
use kingmaker_tablefmt::table::TableSummary;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::Arc;

fn layer_json(table: &TableSummary) -> Value {
    json!({
        "win": table.counts.win,
        "loss": table.counts.loss,
        "draw": table.counts.draw,
        "digest": table.digest,
        "max_depth": table.max_depth,
    })
}

/// A position of the layer's longest forced result (the first state, in index order, decided at
/// its max depth), in the game's notation: paste it into `kingmaker query`.
fn max_depth_witness(run: &RunDir, game: &AnyGame, layer: &str, max_depth: u16) -> Result<Value> {
    if max_depth == 0 {
        return Ok(Value::Null);
    }
    let found = run
        .table(layer)?
        .find_first(|v, d| d == max_depth && (v == WIN || v == LOSS))?;
    Ok(found.map_or(Value::Null, |i| json!(game.format_position(i))))
}

/// Whether a summary counts over the states reachable from the start when nobody says: on
/// small tables only (the search holds three bits a state).
pub fn default_reach(states: u64) -> bool {
    states < 1 << 24
}

/// The summary a build writes when its layers stay on the workers: the game, the counts and the
/// digests, nothing read from the tables (`kept_on_workers` says so). Readers that need more
/// (`summarize`, `pack`, `report`) compute it from the parts.
pub fn kept_summary(info: &RunInfo, game: &AnyGame, tables: &[(Layer, TableSummary)]) -> Value {
    let mut s = head(info, game, tables);
    let layers: Map<String, Value> = tables
        .iter()
        .map(|(l, t)| (l.name.clone(), layer_json(t)))
        .collect();
    s.insert("layers".into(), Value::Object(layers));
    s.insert("kept_on_workers".into(), json!(true));
    Value::Object(s)
}

/// Whether `summary` is a [`kept_summary`]: counts and digests only.
pub fn is_counts_only(summary: &Value) -> bool {
    summary["kept_on_workers"] == json!(true)
}

fn head(info: &RunInfo, game: &AnyGame, tables: &[(Layer, TableSummary)]) -> Map<String, Value> {
    let mut s = Map::new();
    s.insert("game".into(), json!(info.spec.family()));
    s.extend(info.spec.params());
    s.insert("states".into(), json!(game.size()));
    let illegal = tables.first().map_or(0, |t| t.1.counts.illegal);
    s.insert("illegal".into(), json!(illegal));
    s
}

/// Build the summary of a finished run from its tables (a layer kept on the workers is read
/// there, given the run's token, or the error says how to read it). `reach` asks for the
/// reachable-states block, whose search checkpoints itself as `checkpoints` says.
pub fn summarize(
    run: &RunDir,
    info: &RunInfo,
    game: &Arc<AnyGame>,
    tables: &[(Layer, TableSummary)],
    reach: bool,
    checkpoints: Option<ReachCheckpoints>,
) -> Result<Value> {
    let mut s = head(info, game, tables);
    let layers: Map<String, Value> = tables
        .iter()
        .map(|(l, t)| -> Result<(String, Value)> {
            let mut j = layer_json(t);
            j["max_depth_witness"] = max_depth_witness(run, game, &l.name, t.max_depth)?;
            Ok((l.name.clone(), j))
        })
        .collect::<Result<_>>()?;
    s.insert("layers".into(), Value::Object(layers));

    // Two-player games: the value of the start position ("W": the first player wins, "L": the
    // second; "D": neither, read from `second` where the game solves it).
    if let (Some(start), Some(solo)) = (
        game.start_index(),
        tables.iter().find(|t| t.0.name == "solo"),
    ) {
        if game.players() == 2 {
            let solo = run.table(&solo.0.name)?.get(start)?;
            let second = match tables.iter().find(|t| t.0.name == "second") {
                Some(t) => Some(run.table(&t.0.name)?.get(start)?),
                None => None,
            };
            let (v, d) = kingmaker_games::reading::two_player::combined_codes(solo, second);
            let value = Outcome::letter_of(v).to_string();
            s.insert("start".into(), json!({"value": value, "depth": d}));
        }
    }
    let finished = Finished {
        run,
        game,
        checkpoints,
        layers: tables
            .iter()
            .map(|(l, _)| LayerInfo {
                name: l.name.clone(),
                coalition: l.coalition,
                objective: l.objective,
                present: true,
                depths: true,
            })
            .collect(),
    };
    game.view().summarize(&finished, reach, &mut s)?;
    Ok(Value::Object(s))
}

/// The layers a build has finished, as the game's view reads them.
struct Finished<'a> {
    run: &'a RunDir,
    game: &'a Arc<AnyGame>,
    layers: Vec<LayerInfo>,
    checkpoints: Option<ReachCheckpoints>,
}

impl Solved for Finished<'_> {
    fn dir(&self) -> &Path {
        &self.run.path
    }
    fn game(&self) -> &Arc<AnyGame> {
        self.game
    }
    fn layers(&self) -> &[LayerInfo] {
        &self.layers
    }
    fn layer(&self, name: &str) -> Result<Arc<LayerTable>> {
        Ok(Arc::new(self.run.table(name)?))
    }
    fn reach_checkpoints(&self) -> Option<ReachCheckpoints> {
        self.checkpoints.clone()
    }
}
