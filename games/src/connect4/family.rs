//! Connect Four's parameters, as the command line and `run.json` give them, and its two layers.

use super::Connect4;
use crate::family::{first_player_wins, second_player_wins, GameFamily};
use kingmaker_kernel::Layer;
use serde::{Deserialize, Serialize};

/// Connect Four on a board of one size.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connect4Params {
    /// The board: WxH, W columns wide and H rows high (e.g. 5x4); the index space,
    /// (2^(H+1) - 1)^W, is at most 2^40.
    #[arg(long, default_value = "4x4", value_parser = parse_board)]
    #[serde(flatten)]
    pub board: Board,
    /// Discs in a row that win (2..=8).
    #[arg(long, default_value_t = 4)]
    pub connect: u8,
}

/// A board `width` columns wide and `height` rows high.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub width: u8,
    pub height: u8,
}

/// "5x4" -> 5 wide, 4 high.
fn parse_board(text: &str) -> Result<Board, String> {
    let form = "WxH (e.g. 5x4: 5 columns, 4 rows)";
    let (width, height) = crate::family::parse_dimensions(text, "board", form)?;
    Ok(Board { width, height })
}

impl GameFamily for Connect4Params {
    type Game = Connect4;
    const ABOUT: &'static str = "Connect Four on small boards (docs/connect4.md).";

    fn build(&self) -> anyhow::Result<Connect4> {
        Ok(Connect4::new(
            self.board.width,
            self.board.height,
            self.connect,
        )?)
    }

    /// X wins, O wins: a state W in neither is a draw.
    fn layers(&self) -> Vec<Layer> {
        vec![first_player_wins(), second_player_wins()]
    }

    /// 3×3 with three in a row and 4×4 whole; 5×4 sampled.
    fn examples() -> Vec<Self> {
        [(3, 3, 3), (4, 4, 4), (5, 4, 4)]
            .map(|(width, height, connect)| Connect4Params {
                board: Board { width, height },
                connect,
            })
            .to_vec()
    }
}
