//! cc3p's parameters, as the command line and `run.json` give them, and its three layers.

use super::Cc3p;
use crate::family::GameFamily;
use kingmaker_kernel::Layer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// 3-player Chinese Checkers at one level.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cc3pParams {
    /// Level n: n(n+1)/2 pieces per player (1, 3 or 6).
    #[arg(long, default_value_t = 1)]
    pub level: u8,
}

impl GameFamily for Cc3pParams {
    type Game = Cc3p;
    const ABOUT: &'static str = "3-player Chinese Checkers (levels 1, 2; level 3 for counts only).";

    fn build(&self) -> anyhow::Result<Cc3p> {
        Ok(Cc3p::new(self.level)?)
    }

    /// Level 1 whole, level 2 sampled.
    fn examples() -> Vec<Self> {
        vec![Cc3pParams { level: 1 }, Cc3pParams { level: 2 }]
    }

    /// Players A, B, C are 0, 1, 2. The other nine questions follow by rotation.
    fn layers(&self) -> Vec<Layer> {
        vec![
            Layer::new("solo", 0b001, 0b001),
            Layer::new("enable_ab", 0b011, 0b010),
            Layer::new("enable_ac", 0b101, 0b100),
        ]
    }

    /// Level 3 too: the counts are combinatorial, no game is built.
    fn count(&self) -> Option<anyhow::Result<Map<String, Value>>> {
        Some(super::count_fields(self.level).map_err(Into::into))
    }

    fn verdict(
        game: &Self::Game,
        index: u64,
        at: &crate::reading::LayersAt,
    ) -> Option<Result<crate::reading::Verdict, kingmaker_tablefmt::FormatError>> {
        Some(super::answers::verdict(game, index, at))
    }

    fn view(game: &std::sync::Arc<crate::AnyGame>) -> Option<Box<dyn crate::view::GameView>> {
        super::view::Cc3pView::of(game)
    }

    fn commands() -> Vec<crate::view::GameCommand> {
        vec![crate::view::GameCommand::new(
            "preferences",
            "Who wins a cc3p build when every player follows a preference rule",
            super::view::command::run,
        )]
    }
}
