//! Which game a run builds: a serialisable description (`GameSpec`) that coordinator and workers
//! exchange, and `AnyGame`, the one type the kernel is instantiated for.

use crate::game::{Game, Node};
use crate::games::cc2p::half::Cc2pHalf;
use crate::games::cc2p::{Cc2p, TipRule};
use crate::games::cc3p::Cc3p;
use crate::games::toppen::{Toppen, ToppenOptions};
use crate::kernel::Layer;
use serde::{Deserialize, Serialize};

/// A game family and its parameters, as written to `run.json` and sent to workers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "game", rename_all = "lowercase")]
pub enum GameSpec {
    Cc3p {
        level: u8,
    },
    /// `first`: the player who moves first at the start (0 = A); `diagonal`: 8-neighbour moves.
    Toppen {
        first: u8,
        diagonal: bool,
    },
    /// `board`×`board` diamond, `pieces` per player; `shortcut_tip_rule`: the published solver's
    /// shortcut for the 6-piece tip rule instead of the exact rule.
    Cc2p {
        board: u8,
        pieces: u8,
        shortcut_tip_rule: bool,
    },
    /// The colour-swap half of `Cc2p` with the same parameters (`games::cc2p::half`): what the
    /// kernel solves for a cc2p build, never a run's game (see [`GameSpec::reduced`]).
    #[serde(rename = "cc2p_half")]
    Cc2pHalf {
        board: u8,
        pieces: u8,
        shortcut_tip_rule: bool,
    },
}

impl GameSpec {
    /// Construct the game (may take a moment: ranking tables, catalogues).
    pub fn build(&self) -> anyhow::Result<AnyGame> {
        Ok(match self {
            GameSpec::Cc3p { level } => AnyGame::Cc3p(Cc3p::new(*level)?),
            GameSpec::Toppen { first, diagonal } => AnyGame::Toppen(Toppen::new(ToppenOptions {
                first: *first,
                diagonal: *diagonal,
            })?),
            GameSpec::Cc2p {
                board,
                pieces,
                shortcut_tip_rule,
            } => AnyGame::Cc2p(cc2p(*board, *pieces, *shortcut_tip_rule)?),
            GameSpec::Cc2pHalf {
                board,
                pieces,
                shortcut_tip_rule,
            } => AnyGame::Cc2pHalf(Cc2pHalf::new(cc2p(*board, *pieces, *shortcut_tip_rule)?)),
        })
    }

    /// The smaller game the kernel solves instead of this one, when a symmetry allows it and the
    /// finished tables can be expanded back: cc2p's colour-swap half (expanded by
    /// `Cc2pHalf::expand_rows`). None for games solved as they are.
    pub fn reduced(&self) -> Option<GameSpec> {
        match *self {
            GameSpec::Cc2p {
                board,
                pieces,
                shortcut_tip_rule,
            } => Some(GameSpec::Cc2pHalf {
                board,
                pieces,
                shortcut_tip_rule,
            }),
            _ => None,
        }
    }

    /// The family name used on the command line and in summaries.
    pub fn family(&self) -> &'static str {
        match self {
            GameSpec::Cc3p { .. } => "cc3p",
            GameSpec::Toppen { .. } => "toppen",
            GameSpec::Cc2p { .. } => "cc2p",
            GameSpec::Cc2pHalf { .. } => "cc2p_half",
        }
    }

    /// Every layer this game's build solves, in order.
    pub fn layers(&self) -> Vec<Layer> {
        match self {
            // Players A, B, C are 0, 1, 2. The other nine questions follow by rotation.
            GameSpec::Cc3p { .. } => vec![
                Layer::new("solo", 0b001, 0b001),
                Layer::new("enable_ab", 0b011, 0b010),
                Layer::new("enable_ac", 0b101, 0b100),
            ],
            // Two-player games need one layer: "the first colour (player 0) wins".
            // In the half game "player 0" is the side to move, and the table expands to this one.
            GameSpec::Toppen { .. } | GameSpec::Cc2p { .. } | GameSpec::Cc2pHalf { .. } => {
                vec![Layer::new("solo", 0b01, 0b01)]
            }
        }
    }
}

/// Every game the kernel can solve, behind one type (one kernel instantiation, static dispatch
/// inside each game's own code). A process holds one or two of these, so the size difference
/// between variants does not matter.
#[allow(clippy::large_enum_variant)]
pub enum AnyGame {
    Cc3p(Cc3p),
    Toppen(Toppen),
    Cc2p(Cc2p),
    Cc2pHalf(Cc2pHalf),
}

fn cc2p(board: u8, pieces: u8, shortcut_tip_rule: bool) -> anyhow::Result<Cc2p> {
    let tip = if shortcut_tip_rule {
        TipRule::SolverShortcut
    } else {
        TipRule::Exact
    };
    Ok(Cc2p::new(board, pieces, tip)?)
}

macro_rules! each_game {
    ($self:expr, $g:ident => $body:expr) => {
        match $self {
            AnyGame::Cc3p($g) => $body,
            AnyGame::Toppen($g) => $body,
            AnyGame::Cc2p($g) => $body,
            AnyGame::Cc2pHalf($g) => $body,
        }
    };
}

impl Game for AnyGame {
    fn name(&self) -> String {
        each_game!(self, g => g.name())
    }
    fn players(&self) -> u8 {
        each_game!(self, g => g.players())
    }
    fn size(&self) -> u64 {
        each_game!(self, g => g.size())
    }
    fn node(&self, index: u64) -> Node {
        each_game!(self, g => g.node(index))
    }
    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        each_game!(self, g => g.successors(index, out))
    }
    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        each_game!(self, g => g.predecessors(index, out))
    }
    fn mover(&self, index: u64) -> u8 {
        each_game!(self, g => g.mover(index))
    }
    // The provided methods too: a game's own versions are its fast paths.
    fn successor_count(&self, index: u64) -> usize {
        each_game!(self, g => g.successor_count(index))
    }
    fn each_non_live(&self, f: &mut dyn FnMut(u64, Node)) -> bool {
        each_game!(self, g => g.each_non_live(f))
    }
    fn alternates_sides(&self) -> bool {
        each_game!(self, g => g.alternates_sides())
    }
}

/// The human side of every game: its position notation, move texts and pictures.
impl AnyGame {
    /// Parse a position in the game's notation (see the README and docs/*-notation.md).
    pub fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        Ok(each_game!(self, g => g.parse_position(text)?))
    }
    /// The canonical text of a position; `parse_position` gives the index back.
    pub fn format_position(&self, index: u64) -> String {
        each_game!(self, g => g.format_position(index))
    }
    /// Every legal move: its text and the index it leads to.
    pub fn moves(&self, index: u64) -> Vec<(String, u64)> {
        each_game!(self, g => g.moves(index))
    }
    /// An ASCII picture of the position.
    pub fn picture(&self, index: u64) -> String {
        each_game!(self, g => g.picture(index))
    }
    /// The start position, for games that have one.
    pub fn start_index(&self) -> Option<u64> {
        match self {
            AnyGame::Cc3p(g) => Some(g.start_index()),
            AnyGame::Cc2p(g) => Some(g.start_index()),
            AnyGame::Cc2pHalf(g) => Some(g.start_index()),
            AnyGame::Toppen(_) => None,
        }
    }
    /// Player names as shown to users.
    pub fn player_name(&self, player: u8) -> String {
        match self {
            AnyGame::Cc3p(_) => ["A", "B", "C"][player as usize].to_string(),
            AnyGame::Toppen(_) => ["A", "B"][player as usize].to_string(),
            AnyGame::Cc2p(_) | AnyGame::Cc2pHalf(_) => format!("player {player}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AnyGame` must forward the provided methods, or the kernel silently loses a game's fast
    /// paths.
    #[test]
    fn any_game_forwards_the_fast_paths() {
        let game = GameSpec::Cc3p { level: 1 }.build().unwrap();
        assert!(game.each_non_live(&mut |_, _| {}));
        let start = game.start_index().unwrap();
        let mut children = Vec::new();
        game.successors(start, &mut children);
        assert_eq!(game.successor_count(start), children.len());
    }
}
