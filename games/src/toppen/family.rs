//! TOPPEN's parameters, as the command line and `run.json` give them.

use super::{Toppen, ToppenOptions};
use crate::family::{first_player_wins, GameFamily};
use kingmaker_kernel::Layer;
use serde::{Deserialize, Serialize};

/// TOPPEN: every terrain, one universal table.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToppenParams {
    /// Who moves first at the start: A (the colour of player 0, the default) or B.
    #[arg(long, default_value = "A", value_parser = parse_first)]
    pub first: u8,
    /// Let tiles move to the 8 neighbouring cells (diagonals too), not only the 4 orthogonal ones.
    #[arg(long)]
    pub diagonal: bool,
}

/// "A" -> 0, "B" -> 1 (either case).
fn parse_first(text: &str) -> Result<u8, String> {
    match text {
        "A" | "a" => Ok(0),
        "B" | "b" => Ok(1),
        _ => Err(format!("{text:?} is no player: A or B")),
    }
}

impl GameFamily for ToppenParams {
    type Game = Toppen;
    const ABOUT: &'static str = "TOPPEN: every position of every terrain in one universal table.";

    fn build(&self) -> anyhow::Result<Toppen> {
        Ok(Toppen::new(ToppenOptions {
            first: self.first,
            diagonal: self.diagonal,
        })?)
    }

    fn examples() -> Vec<Self> {
        vec![
            ToppenParams {
                first: 0,
                diagonal: false,
            },
            ToppenParams {
                first: 1,
                diagonal: true,
            },
        ]
    }

    fn layers(&self) -> Vec<Layer> {
        vec![first_player_wins()]
    }

    fn view(game: &std::sync::Arc<crate::AnyGame>) -> Option<Box<dyn crate::view::GameView>> {
        Some(Box::new(super::view::ToppenView::new(game)))
    }

    fn commands() -> Vec<crate::view::GameCommand> {
        vec![crate::view::GameCommand::new(
            "census",
            "TOPPEN: A wins / B wins / draws over the 252 colourings of a terrain, or of every terrain",
            super::command::run,
        )]
    }
}
