//! What a game shows beyond its notation: how `query` prints a position's answers, the labels the
//! explorer page puts on them, its entries in `summary.json`, and commands of its own. Two-player
//! games share one view ([`two_player`]); a game with more to say answers
//! [`crate::GameFamily::view`] from its own folder.

pub mod command;
pub mod principal_line;
pub mod report;
pub mod two_player;

pub use command::GameCommand;

use crate::reading::LayerInfo;
use crate::AnyGame;
use anyhow::Result;
use kingmaker_kernel::reach::ReachCheckpoints;
use kingmaker_tablefmt::layer::LayerTable;
use kingmaker_tablefmt::FormatError;
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;

/// Solved tables as a view reads them: a finished run, a release (`kingmaker_probe::Tables`), or
/// the layers a build has finished so far.
pub trait Solved: Sync {
    /// The directory the tables are in.
    fn dir(&self) -> &Path;

    /// Their game.
    fn game(&self) -> &Arc<AnyGame>;

    /// Every layer they describe, in the order solved (only the present ones can be read).
    fn layers(&self) -> &[LayerInfo];

    /// The file of the layer `name`, opened and checked.
    fn layer(&self, name: &str) -> Result<Arc<LayerTable>>;

    /// Where a long search over the tables (the states reachable from the start) keeps its
    /// checkpoint; `None` where there is nowhere to write one (a release, a test).
    fn reach_checkpoints(&self) -> Option<ReachCheckpoints> {
        None
    }
}

/// The error of a search that a signal stopped after writing its checkpoint.
pub fn stopped_search(cp: Option<&ReachCheckpoints>) -> anyhow::Error {
    anyhow::anyhow!(
        "stopped: the search of the reachable states is checkpointed in {}; the same command \
         goes on from there",
        cp.map_or_else(|| "nowhere".into(), |c| c.dir.display().to_string())
    )
}

/// Why a position request failed.
#[derive(Debug)]
pub enum ApiError {
    /// The client's fault (HTTP 400): the message says what is wrong with the position.
    BadRequest(String),
    /// Ours (HTTP 500): a damaged table, say.
    Internal(String),
}

impl From<FormatError> for ApiError {
    fn from(e: FormatError) -> ApiError {
        ApiError::Internal(format!(
            "reading the tables: {e}; run `kingmaker verify` on the release"
        ))
    }
}

/// How a game is shown: `query`'s text, the explorer's labels, its summary entries.
pub trait GameView: Send + Sync {
    /// `kingmaker query`: what the tables say about `index` and each of its moves, printed as
    /// text or JSON.
    fn query(&self, tables: &dyn Solved, index: u64, json: bool) -> Result<()>;

    /// The labels the explorer shows for the states of `tables`.
    fn labels(&self, tables: &dyn Solved) -> Result<Box<dyn Labels>>;

    /// The explorer page's legend for the labels.
    fn legend(&self) -> String;

    /// The names of `layers` in the order the page lists them (by default as they were built).
    fn layer_order(&self, layers: &[LayerInfo]) -> Vec<String> {
        layers.iter().map(|l| l.name.clone()).collect()
    }

    /// Entries of `summary.json` of the game's own, given the layers solved so far (`tables`'
    /// layers); `reach` asks for the reachable-states block where the game has one.
    fn summarize(
        &self,
        _tables: &dyn Solved,
        _reach: bool,
        _out: &mut Map<String, Value>,
    ) -> Result<()> {
        Ok(())
    }

    /// Sections of `kingmaker report` of the game's own, from the tables and their
    /// `summary.json`.
    fn report(&self, _tables: &dyn Solved, _summary: &Value) -> Result<Vec<report::Section>> {
        Ok(Vec::new())
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
