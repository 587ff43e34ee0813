//! cc3p_race's parameters and its layers.

use super::{ranking, Cc3pRace};
use crate::family::GameFamily;
use kingmaker_kernel::Layer;
use serde::{Deserialize, Serialize};

/// 3-player Chinese Checkers with a race for second place, at one level.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cc3pRaceParams {
    /// Level n: n(n+1)/2 pieces per player (1 or 2).
    #[arg(long, default_value_t = 1)]
    pub level: u8,
}

/// The objective bit of the ranking (`first`, `second`).
fn bit(first: u8, second: u8) -> u64 {
    1 << ranking(first, second)
}

impl GameFamily for Cc3pRaceParams {
    type Game = Cc3pRace;
    const ABOUT: &'static str =
        "3-player Chinese Checkers played on for second place (levels 1, 2): rankings as outcomes.";

    fn build(&self) -> anyhow::Result<Cc3pRace> {
        Cc3pRace::new(self.level)
    }

    fn examples() -> Vec<Self> {
        vec![Cc3pRaceParams { level: 1 }]
    }

    /// Players A, B, C are 0, 1, 2; the other players' questions follow by rotation.
    fn layers(&self) -> Vec<Layer> {
        let a_first = bit(0, 0) | bit(0, 1) | bit(0, 2);
        vec![
            // A comes first: cc3p's own `solo`, the same values (tested).
            Layer::new("solo", 0b001, a_first),
            // A comes first or second.
            Layer::new("top2", 0b001, a_first | bit(1, 0) | bit(2, 0)),
            // B first and A second, A and B together.
            Layer::new("deal_ab", 0b011, bit(1, 0)),
            // C first and A second, A and C together.
            Layer::new("deal_ac", 0b101, bit(2, 0)),
        ]
    }

    /// cc3p's counts: the same states, and the same illegal ones (two goals filled).
    fn count(&self) -> Option<anyhow::Result<serde_json::Map<String, serde_json::Value>>> {
        Some(crate::cc3p::count_fields(self.level).map_err(Into::into))
    }

    fn view(game: &std::sync::Arc<crate::AnyGame>) -> Option<Box<dyn crate::view::GameView>> {
        Some(Box::new(super::view::RaceView::new(game)))
    }
}
