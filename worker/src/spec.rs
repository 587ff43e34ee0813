//! Which game a run builds: a serialisable description (`GameSpec`) that coordinator and workers
//! exchange, and `AnyGame`, the one type the kernel is instantiated for.

use crate::game::{Game, Node};
use crate::games::cc3p::Cc3p;
use crate::kernel::Layer;
use serde::{Deserialize, Serialize};

/// A game family and its parameters, as written to `run.json` and sent to workers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "game", rename_all = "lowercase")]
pub enum GameSpec {
    Cc3p { level: u8 },
}

impl GameSpec {
    /// Construct the game (may take a moment: ranking tables, catalogues).
    pub fn build(&self) -> anyhow::Result<AnyGame> {
        Ok(match self {
            GameSpec::Cc3p { level } => AnyGame::Cc3p(Cc3p::new(*level)?),
        })
    }

    /// The family name used on the command line and in summaries.
    pub fn family(&self) -> &'static str {
        match self {
            GameSpec::Cc3p { .. } => "cc3p",
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
        }
    }
}

/// Every game the kernel can solve, behind one type (one kernel instantiation, static dispatch
/// inside each game's own code).
pub enum AnyGame {
    Cc3p(Cc3p),
}

macro_rules! each_game {
    ($self:expr, $g:ident => $body:expr) => {
        match $self {
            AnyGame::Cc3p($g) => $body,
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
}
