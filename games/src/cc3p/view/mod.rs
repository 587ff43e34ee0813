//! 3-player Chinese Checkers as it is shown: the twelve questions of every state read from the
//! three representative layers ([`crate::cc3p::answers`]), printed by `query` (`query.rs`),
//! labelled on the explorer page (`labels.rs`), counted in `summary.json` (`classes.rs`) and
//! `kingmaker report` (`report.rs`), and `kingmaker preferences` ([`command`]; its census in
//! `rule_census.rs`, by walks in `every_placement.rs`).

mod classes;
pub mod command;
mod every_placement;
mod labels;
#[cfg(test)]
mod level_one;
pub mod preferences;
mod query;
mod report;
mod rule_census;

use crate::cc3p::answers::Cc3pTables;
use crate::cc3p::Cc3p;
use crate::view::Solved;
use crate::view::{GameView, Labels};
use crate::AnyGame;
use anyhow::Result;
use kingmaker_tablefmt::Lookup;
use serde_json::{Map, Value};
use std::sync::Arc;

pub use crate::cc3p::answers::LAYERS;

/// cc3p's view: the twelve questions, the control classes.
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
fn open_tables(tables: &dyn Solved) -> Result<Cc3pTables<Box<dyn Lookup>>> {
    Ok(Cc3pTables {
        solo: Box::new(tables.layer(LAYERS[0])?),
        enable_ab: Box::new(tables.layer(LAYERS[1])?),
        enable_ac: Box::new(tables.layer(LAYERS[2])?),
        depths: tables.layers().iter().all(|l| !l.present || l.depths),
    })
}

impl GameView for Cc3pView {
    fn query(&self, tables: &dyn Solved, index: u64, json: bool) -> Result<()> {
        query::print(self.cc3p(), &open_tables(tables)?, index, json)
    }

    fn labels(&self, tables: &dyn Solved) -> Result<Box<dyn Labels>> {
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

    fn report(
        &self,
        _tables: &dyn Solved,
        summary: &Value,
    ) -> Result<Vec<crate::view::report::Section>> {
        Ok(report::sections(summary))
    }

    /// The control classes, once the `solo` layer is solved: they need its values alone (the
    /// reachable block counts the other layers' W/L/D where the run holds them).
    fn summarize(
        &self,
        tables: &dyn Solved,
        reach: bool,
        out: &mut Map<String, Value>,
    ) -> Result<()> {
        if tables.layers().iter().any(|f| f.name == "solo") {
            classes::summarize(tables, self.cc3p(), reach, out)?;
        }
        Ok(())
    }
}
