//! Probing a position: what every layer says about it, what that means in its game (a
//! [`Verdict`]), and its moves, best first for the side to move.

use crate::error::ProbeError;
use crate::tables::Tables;
use kingmaker_games::reading::{Answer, LayersAt};
pub use kingmaker_games::reading::{Category, Verdict};
use kingmaker_games::Notation;
use kingmaker_kernel::{Game, Node};
use serde::Serialize;

/// Who is to move, or how the game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Status {
    /// The state cannot arise in play.
    Illegal,
    /// The game is over.
    Terminal {
        /// The result in words (`B has won`, `Black wins by 3`).
        outcome: String,
        /// The winner's name, in games whose results are a winning player.
        winner: Option<String>,
    },
    /// A player is to move.
    Live {
        /// The mover's seat (0 is the first player).
        seat: u8,
        /// The mover's name.
        mover: String,
    },
}

/// One layer's answer at a position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LayerAnswer {
    /// The layer's name.
    pub layer: String,
    /// Its value and depth at the position.
    pub answer: Answer,
}

/// Everything the tables say about one position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Probe {
    /// The position in the game's notation.
    pub position: String,
    /// Its index in the game's index space.
    pub index: u64,
    /// Who is to move, or how the game ended.
    pub status: Status,
    /// Every present layer's answer, in the order the layers were solved.
    pub layers: Vec<LayerAnswer>,
    /// What the answers mean in the game.
    pub verdict: Verdict,
}

impl Probe {
    /// The answer of the layer `name`, if the tables hold it.
    pub fn layer(&self, name: &str) -> Option<Answer> {
        self.layers
            .iter()
            .find(|l| l.layer == name)
            .map(|l| l.answer)
    }
}

/// A move and the position it leads to, probed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Move {
    /// The move in the game's notation (`A e3-c1`, `Black b2`, `pass`).
    #[serde(rename = "move")]
    pub text: String,
    /// What the move does for the mover.
    pub category: Category,
    /// Plies to the end with best play after the move, by the answer that decides its category
    /// (the mover's `solo` in 3-player Chinese Checkers); None for a draw's or where unknown.
    pub depth: Option<u16>,
    /// `depth` minus the same answer's depth before the move (the lichess and GamesCrafters
    /// APIs' distance change): −1 along a fastest win or a slowest loss; None where either is
    /// unknown.
    pub depth_delta: Option<i32>,
    /// The position after it.
    pub child: Probe,
}

impl Tables {
    /// The index of `text`: a position in the game's notation, or `start` (or nothing) for the
    /// game's start.
    pub fn position(&self, text: &str) -> Result<u64, ProbeError> {
        let text = if text.trim().is_empty() {
            "start"
        } else {
            text
        };
        self.game()
            .parse_or_start(text)
            .map_err(|e| ProbeError::BadPosition {
                text: text.to_string(),
                reason: format!("{e:#}"),
            })
    }

    /// Everything the tables say about the position `text` (`start` or nothing for the start).
    pub fn probe(&self, text: &str) -> Result<Probe, ProbeError> {
        self.probe_index(self.position(text)?)
    }

    /// Everything the tables say about the state `index`.
    pub fn probe_index(&self, index: u64) -> Result<Probe, ProbeError> {
        self.check_index(index)?;
        let game = self.game();
        let mut at = LayersAt {
            described: self.layers(),
            read: Vec::new(),
        };
        for l in self.layers().iter().filter(|l| l.present) {
            let file = self.layer(&l.name)?;
            let answer = Answer::read(&*file, index, file.has_depths())?;
            at.read.push((l.name.clone(), file, answer));
        }
        let verdict = game.verdict(index, &at)?;
        let layers = at
            .read
            .into_iter()
            .map(|(layer, _, answer)| LayerAnswer { layer, answer })
            .collect();
        Ok(Probe {
            position: game.format_position(index),
            index,
            status: status(game, index),
            layers,
            verdict,
        })
    }

    /// Every move from the position `text`, best first for the side to move (see
    /// [`Tables::moves_of`]).
    pub fn moves(&self, text: &str) -> Result<Vec<Move>, ProbeError> {
        self.moves_of(self.position(text)?)
    }

    /// Every move from the state `index` with the position it leads to, best first for the side
    /// to move; moves equally good keep the game's order.
    ///
    /// Best means, for the mover: in a two-player game a win (fastest first), then a draw, then a
    /// loss (slowest first); in 3-player Chinese Checkers a win alone (fastest first), then a
    /// draw held alone, then a loss in which no opponent can force a win, then the rest (slowest
    /// loss first); in Go, the highest proven lower bound of the mover's score, then the highest
    /// upper bound. With no verdict, the game's order.
    pub fn moves_of(&self, index: u64) -> Result<Vec<Move>, ProbeError> {
        // Before the rules see it: a game's `node` indexes its tables by `index` (a panic past
        // the end) or decodes any number (no moves), and neither is an answer.
        self.check_index(index)?;
        let mover = match self.game().node(index) {
            Node::Live { mover } => mover,
            _ => return Ok(Vec::new()),
        };
        let before = self.probe_index(index)?.verdict.category(mover).1;
        let mut moves = self
            .game()
            .moves(index)
            .into_iter()
            .map(|(text, child)| {
                let child = self.probe_index(child)?;
                let (category, depth) = child.verdict.category(mover);
                let depth_delta = depth.zip(before).map(|(a, b)| i32::from(a) - i32::from(b));
                Ok(Move {
                    text,
                    category,
                    depth,
                    depth_delta,
                    child,
                })
            })
            .collect::<Result<Vec<_>, ProbeError>>()?;
        moves.sort_by_key(|m| m.child.verdict.preference(m.category, m.depth, mover));
        Ok(moves)
    }
}

impl Tables {
    /// `index` is a state of the game, or [`ProbeError::BadPosition`].
    fn check_index(&self, index: u64) -> Result<(), ProbeError> {
        let size = self.game().size();
        if index >= size {
            return Err(ProbeError::BadPosition {
                text: index.to_string(),
                reason: format!("the game has {size} states"),
            });
        }
        Ok(())
    }
}

fn status(game: &kingmaker_games::AnyGame, index: u64) -> Status {
    match game.node(index) {
        Node::Illegal => Status::Illegal,
        Node::Terminal { outcome } => Status::Terminal {
            outcome: game.outcome_text(outcome),
            winner: game.outcome_winner(outcome).map(|p| game.player_name(p)),
        },
        Node::Live { mover } => Status::Live {
            seat: mover,
            mover: game.player_name(mover),
        },
    }
}
