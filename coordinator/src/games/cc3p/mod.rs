//! 3-player Chinese Checkers as the coordinator shows it: the twelve questions of every state
//! read from the three representative layers (`kingmaker_probe::cc3p`), printed by `query` ([`query`]),
//! labelled on the explorer page ([`labels`]), and the control classes in `summary.json`
//! ([`classes`]).

mod classes;
mod labels;
#[cfg(test)]
mod level_one;
pub mod preferences;
mod query;

use super::view::{GameView, Labels};
use crate::rundir::RunDir;
use crate::tables::Tables;
use anyhow::Result;
use kingmaker_games::cc3p::Cc3p;
use kingmaker_games::AnyGame;
use kingmaker_kernel::Layer;
use kingmaker_probe::cc3p::Cc3pTables;
use kingmaker_tablefmt::Lookup;
use serde_json::{Map, Value};
use std::sync::Arc;

pub use kingmaker_probe::cc3p::LAYERS;

pub struct Cc3pView {
    game: Arc<AnyGame>,
}

impl Cc3pView {
    /// The view of `game` if it is a cc3p game.
    pub fn of(game: &Arc<AnyGame>) -> Option<Box<dyn GameView>> {
        game.as_any().downcast_ref::<Cc3p>()?;
        Some(Box::new(Cc3pView { game: game.clone() }))
    }

    fn cc3p(&self) -> &Cc3p {
        self.game
            .as_any()
            .downcast_ref()
            .expect("a cc3p view holds a cc3p game")
    }
}

/// The three layers of a cc3p build, from a run or a release.
fn open_tables(tables: &Tables) -> Result<Cc3pTables<Box<dyn Lookup>>> {
    Ok(Cc3pTables {
        solo: Box::new(tables.layer(LAYERS[0])?),
        enable_ab: Box::new(tables.layer(LAYERS[1])?),
        enable_ac: Box::new(tables.layer(LAYERS[2])?),
        depths: tables.layers().iter().all(|l| !l.present || l.depths),
    })
}

impl GameView for Cc3pView {
    fn query(&self, tables: &Tables, index: u64, json: bool) -> Result<()> {
        query::print(self.cc3p(), &open_tables(tables)?, index, json)
    }

    fn labels(&self, tables: &Tables) -> Result<Box<dyn Labels>> {
        Ok(Box::new(labels::Cc3pLabels::new(
            self.game.clone(),
            open_tables(tables)?,
        )?))
    }

    fn legend(&self) -> String {
        "W = forces it, L = the others force the opposite, D = neither (play goes on forever); the number is the depth: plies to the end with best play. \
         Alone: can the player force a win by itself? Hands the win to: with that player's help it can make them win. \
         Kingmaker P for Q: P can hand Q the win although Q cannot force it alone. Click a piece of the side to move to see its moves, then a highlighted cell to play one.".into()
    }

    /// The control classes, once all three layers are solved.
    fn summarize(
        &self,
        run: &RunDir,
        finished: &[Layer],
        reach: bool,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        if LAYERS.iter().all(|l| finished.iter().any(|f| f.name == *l)) {
            classes::summarize(run, self.cc3p(), reach, out)?;
        }
        Ok(())
    }
}
