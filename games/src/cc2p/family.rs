//! cc2p's parameters, as the command line and `run.json` give them, and the reduction a build
//! solves in the game's place.

use super::reduced::Cc2pReduced;
use super::{Cc2p, TipRule, MAX_BOARD, MIN_BOARD};
use crate::family::{first_player_wins, GameFamily};
use crate::GameSpec;
use kingmaker_kernel::Game;
use kingmaker_kernel::Layer;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// 2-player Chinese Checkers on one of Sturtevant's boards.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cc2pParams {
    /// The board: MxM for M in 4..=8 (e.g. 7x7).
    #[arg(long, default_value = "7x7", value_parser = parse_board)]
    pub board: u8,
    /// Pieces per player (1..=6).
    #[arg(long, default_value_t = 1)]
    pub pieces: u8,
    /// Apply the 6-piece tip rule as the published solver does (skipping it when the player to
    /// move has no piece in its own start or goal area), to compare with its 5x5 and 6x6 rows.
    #[arg(long)]
    pub shortcut_tip_rule: bool,
}

/// "7x7" -> 7.
fn parse_board(text: &str) -> Result<u8, String> {
    let bad = || {
        format!(
            "board {text:?} is not of the form MxM with M in {MIN_BOARD}..={MAX_BOARD} (e.g. 7x7)"
        )
    };
    let (a, b) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (a, b): (u8, u8) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a != b || !(MIN_BOARD..=MAX_BOARD).contains(&a) {
        return Err(bad());
    }
    Ok(a)
}

impl Cc2pParams {
    fn game(&self) -> anyhow::Result<Cc2p> {
        let tip = if self.shortcut_tip_rule {
            TipRule::SolverShortcut
        } else {
            TipRule::Exact
        };
        Ok(Cc2p::new(self.board, self.pieces, tip)?)
    }
}

impl GameFamily for Cc2pParams {
    type Game = Cc2p;
    const ABOUT: &'static str = "2-player Chinese Checkers on Sturtevant's m×m boards.";

    fn build(&self) -> anyhow::Result<Cc2p> {
        self.game()
    }

    /// 4×4 with 2 pieces whole; 7×7 with 3 and 4×4 with 6 (the tip rule, both conventions)
    /// sampled.
    fn examples() -> Vec<Self> {
        [(4, 2, false), (7, 3, false), (4, 6, false), (4, 6, true)]
            .map(|(board, pieces, shortcut_tip_rule)| Cc2pParams {
                board,
                pieces,
                shortcut_tip_rule,
            })
            .to_vec()
    }

    fn layers(&self) -> Vec<Layer> {
        vec![first_player_wins()]
    }

    /// The colour-swap quarter where the board's reflection is a symmetry, else the half
    /// (expanded back by `Cc2pReduced::expand_rows`).
    fn reduced(&self) -> Option<GameSpec> {
        let mirror = self.game().is_ok_and(|g| g.has_reflection());
        Some(GameSpec::Cc2pReduced(Cc2pReducedParams {
            full: self.clone(),
            mirror,
        }))
    }

    /// Combinatorial (6×6 / 6 has 2.3 trillion states), with the illegal states under both
    /// tip-rule conventions.
    fn count(&self) -> Option<anyhow::Result<Map<String, Value>>> {
        Some(
            super::count_fields(self.board, self.pieces, self.shortcut_tip_rule)
                .map_err(Into::into),
        )
    }

    fn summary_params(&self, params: &mut Map<String, Value>) {
        params.insert("board".into(), json!(format!("{0}x{0}", self.board)));
    }
}

/// The colour-swap half of a cc2p game, and with `mirror` the quarter (reduced by the board's
/// reflection too): what the kernel solves for a cc2p build, never a run's game. Runs written
/// before the quarter existed have no `mirror` and solve the half.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cc2pReducedParams {
    /// The full game's parameters.
    #[serde(flatten)]
    pub full: Cc2pParams,
    /// The quarter: reduce by the board's reflection too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mirror: bool,
}

impl GameFamily for Cc2pReducedParams {
    type Game = Cc2pReduced;
    const ABOUT: &'static str = "The colour-swap half (or quarter) of a cc2p game.";

    fn build(&self) -> anyhow::Result<Cc2pReduced> {
        let full = self.full.game()?;
        Ok(if self.mirror {
            anyhow::ensure!(
                full.has_reflection(),
                "{} has no quarter: the board's reflection is not a symmetry of its rules",
                full.name()
            );
            Cc2pReduced::quarter(full)
        } else {
            Cc2pReduced::new(full)
        })
    }

    /// The half of 4×4 with 2 pieces, the quarter of 4×4 with 3 (whole), the quarter of 7×7
    /// with 3 (sampled).
    fn examples() -> Vec<Self> {
        [(4, 2, false), (4, 3, true), (7, 3, true)]
            .map(|(board, pieces, mirror)| Cc2pReducedParams {
                full: Cc2pParams {
                    board,
                    pieces,
                    shortcut_tip_rule: false,
                },
                mirror,
            })
            .to_vec()
    }

    /// In the half game "player 0" is the side to move, and the table expands to the full one's.
    fn layers(&self) -> Vec<Layer> {
        vec![first_player_wins()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GameSpec;

    /// A cc2p build solves the quarter where the board's reflection is a symmetry, else the
    /// half; a `run.json` written before the quarter existed (no `mirror`) still means the half.
    #[test]
    fn cc2p_reduces_to_the_quarter_or_the_half() {
        let params = |pieces| Cc2pParams {
            board: 4,
            pieces,
            shortcut_tip_rule: false,
        };
        let spec = |pieces| GameSpec::Cc2p(params(pieces));
        let name = |spec: &GameSpec| spec.reduced().unwrap().build().unwrap().name();
        assert_eq!(name(&spec(3)), "cc2p-4x4-3-quarter");
        assert_eq!(name(&spec(2)), "cc2p-4x4-2-half");
        let old: GameSpec = serde_json::from_str(
            r#"{"game": "cc2p_half", "board": 4, "pieces": 3, "shortcut_tip_rule": false}"#,
        )
        .unwrap();
        assert_eq!(old.build().unwrap().name(), "cc2p-4x4-3-half");
        let text = serde_json::to_string(&old).unwrap();
        assert!(!text.contains("mirror"), "{text}");
        let quarter = spec(3).reduced().unwrap();
        assert!(serde_json::to_string(&quarter)
            .unwrap()
            .contains(r#""mirror":true"#));
        let forced = GameSpec::Cc2pReduced(Cc2pReducedParams {
            full: params(2),
            mirror: true,
        });
        assert!(forced.build().is_err());
    }
}
