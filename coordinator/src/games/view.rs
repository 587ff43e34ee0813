//! What a game shows beyond its notation: how `query` prints a position's answers, the labels the
//! explorer page puts on it, and any summary entries of its own. Two-player games share one view
//! ([`super::two_player`]); a game with more to say has a module of its own under `games/`.

use crate::explore::ApiError;
use crate::rundir::RunDir;
use crate::tables::Tables;
use anyhow::Result;
use kingmaker_kernel::Layer;
use kingmaker_probe::LayerInfo;
use kingmaker_tablefmt::FormatError;
use serde_json::{Map, Value};

pub trait GameView: Send + Sync {
    /// `kingmaker query`: what the tables say about `index` and each of its moves, printed as
    /// text or JSON.
    fn query(&self, tables: &Tables, index: u64, json: bool) -> Result<()>;

    /// The labels the explorer shows for the states of `tables`.
    fn labels(&self, tables: &Tables) -> Result<Box<dyn Labels>>;

    /// The explorer page's legend for the labels.
    fn legend(&self) -> String;

    /// The names of `layers` in the order the page lists them (by default as they were built).
    fn layer_order(&self, layers: &[LayerInfo]) -> Vec<String> {
        layers.iter().map(|l| l.name.clone()).collect()
    }

    /// Entries of `summary.json` of the game's own, given the layers solved so far; `reach` asks
    /// for the reachable-states block where the game has one.
    fn summarize(
        &self,
        _run: &RunDir,
        _finished: &[Layer],
        _reach: bool,
        _out: &mut Map<String, Value>,
    ) -> Result<()> {
        Ok(())
    }
}

/// The labels of states, as JSON for the explorer page.
pub trait Labels: Send + Sync {
    /// The labels of one state (`{"kind": ...}`).
    fn of(&self, index: u64) -> Result<Value, FormatError>;

    /// What a move changes, in words: one line per label that differs before and after.
    fn changes(&self, before: &Value, after: &Value) -> Vec<String>;

    /// The principal line from `index`, for games whose labels define one.
    fn line(&self, _index: u64) -> Option<Result<Value, ApiError>> {
        None
    }
}
