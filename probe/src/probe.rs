//! Probing a position: what every layer says about it, what that means in its game (a
//! [`Verdict`]), and its moves, best first for the side to move.

use crate::answer::{Answer, Value};
use crate::cc3p::{self, Answers, Cc3pTables, Class};
use crate::error::ProbeError;
use crate::go::ScoreBounds;
use crate::tables::Tables;
use crate::two_player;
use kingmaker_games::cc3p::Cc3p;
use kingmaker_games::go::Go;
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

/// What the layers mean together, in the position's game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// A two-player game: W (the first player wins), L (the second wins) or D, with the depth.
    TwoPlayer {
        /// The value for the first player.
        value: Answer,
        /// The name of the player who wins with best play (None for a draw).
        winner: Option<String>,
    },
    /// 3-player Chinese Checkers: the twelve questions and the control class.
    Cc3p {
        /// `solo[P]`, `enable[P][Q]` and the class.
        answers: Answers,
    },
    /// Go: the value at each solved threshold and the score bounds they prove.
    Go {
        /// Black's final score is proven ≥ `min` and ≤ `max`.
        bounds: ScoreBounds,
        /// (k, answer of "Black's score ≥ k"), by k.
        thresholds: Vec<(i32, Answer)>,
    },
    /// A game with no interpretation of its own: the layers' answers are all there is.
    Layers,
    /// The tables lack layers this game's verdict needs (a partial release).
    Incomplete {
        /// The layers missing.
        missing: Vec<String>,
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

/// What a move does for the player who makes it, best first (the order of [`Tables::moves_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// The mover wins (in 3-player Chinese Checkers: can force a win alone).
    Win,
    /// The mover holds a draw (alone).
    Draw,
    /// 3-player Chinese Checkers: the mover can no longer win alone, but no opponent can force a
    /// win either, so the mover keeps a say in who wins.
    Open,
    /// The mover loses (an opponent can force a win).
    Loss,
    /// The tables do not decide it: Go bounds that straddle a draw, a missing layer, a game with
    /// no reading of its own.
    Unknown,
    /// The position after the move cannot arise in play.
    Illegal,
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
        let game = self.game();
        if index >= game.size() {
            return Err(ProbeError::BadPosition {
                text: index.to_string(),
                reason: format!("the game has {} states", game.size()),
            });
        }
        let mut layers = Vec::new();
        for l in self.layers().iter().filter(|l| l.present) {
            let file = self.layer(&l.name)?;
            layers.push(LayerAnswer {
                layer: l.name.clone(),
                answer: Answer::read(&*file, index, file.has_depths())?,
            });
        }
        let verdict = self.verdict(index, &layers)?;
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
        let mover = match self.game().node(index) {
            Node::Live { mover } => mover,
            _ => return Ok(Vec::new()),
        };
        let before = category(mover, &self.probe_index(index)?.verdict).1;
        let mut moves = self
            .game()
            .moves(index)
            .into_iter()
            .map(|(text, child)| {
                let child = self.probe_index(child)?;
                let (category, depth) = category(mover, &child.verdict);
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
        moves.sort_by_key(|m| preference(m, mover));
        Ok(moves)
    }

    fn verdict(&self, index: u64, layers: &[LayerAnswer]) -> Result<Verdict, ProbeError> {
        let game = self.game();
        let has = |name: &str| layers.iter().any(|l| l.layer == name);
        let missing = |names: &[&str]| -> Option<Verdict> {
            let missing: Vec<String> = names
                .iter()
                .filter(|n| !has(n))
                .map(|n| n.to_string())
                .collect();
            (!missing.is_empty()).then_some(Verdict::Incomplete { missing })
        };
        if let Some(cc3p) = game.as_any().downcast_ref::<Cc3p>() {
            if let Some(v) = missing(&cc3p::LAYERS) {
                return Ok(v);
            }
            let depths = self.layers().iter().all(|l| !l.present || l.depths);
            let tables = Cc3pTables {
                solo: self.layer(cc3p::LAYERS[0])?,
                enable_ab: self.layer(cc3p::LAYERS[1])?,
                enable_ac: self.layer(cc3p::LAYERS[2])?,
                depths,
            };
            let answers = cc3p::answers(cc3p, &tables, index)?;
            return Ok(Verdict::Cc3p { answers });
        }
        if let Some(go) = game.as_any().downcast_ref::<Go>() {
            let mut thresholds: Vec<(i32, Answer)> = layers
                .iter()
                .filter_map(|l| Go::layer_threshold(&l.layer).map(|k| (k, l.answer)))
                .collect();
            thresholds.sort_by_key(|t| t.0);
            let bounds = match game.node(index) {
                Node::Terminal { outcome } => ScoreBounds::exact(go.outcome_score(outcome)),
                _ => ScoreBounds::proven(thresholds.iter().map(|t| (t.0, t.1.value))),
            };
            return Ok(Verdict::Go { bounds, thresholds });
        }
        if game.players() == 2 {
            let second_solved = self.layers().iter().any(|l| l.name == two_player::SECOND);
            let need: &[&str] = if second_solved {
                &[two_player::SOLO, two_player::SECOND]
            } else {
                &[two_player::SOLO]
            };
            if let Some(v) = missing(need) {
                return Ok(v);
            }
            let at = |name: &str| layers.iter().find(|l| l.layer == name).map(|l| l.answer);
            let value = two_player::combined(
                at(two_player::SOLO).expect("checked above"),
                at(two_player::SECOND),
            );
            let winner = match value.value {
                Value::Win => Some(game.player_name(0)),
                Value::Loss => Some(game.player_name(1)),
                _ => None,
            };
            return Ok(Verdict::TwoPlayer { value, winner });
        }
        Ok(Verdict::Layers)
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

/// What a child with `verdict` is for `mover`, with the depth that decides it.
fn category(mover: u8, verdict: &Verdict) -> (Category, Option<u16>) {
    match verdict {
        Verdict::TwoPlayer { value, .. } => {
            let good = if mover == 0 { Value::Win } else { Value::Loss };
            let category = match value.value {
                v if v == good => Category::Win,
                Value::Draw => Category::Draw,
                Value::Illegal => Category::Illegal,
                _ => Category::Loss,
            };
            (category, value.depth.filter(|_| category != Category::Draw))
        }
        Verdict::Cc3p { answers } => {
            let own = answers.solo[usize::from(mover)];
            let category = match own.value {
                Value::Win => Category::Win,
                Value::Draw => Category::Draw,
                Value::Loss if answers.class != Class::SoloWin => Category::Open,
                Value::Loss => Category::Loss,
                Value::Illegal => Category::Illegal,
            };
            (category, own.depth.filter(|_| category != Category::Draw))
        }
        Verdict::Go { bounds, .. } => {
            // The mover's score: Black's, or its negation for White.
            let (low, high) = if mover == 0 {
                (bounds.min, bounds.max)
            } else {
                (bounds.max.map(|v| -v), bounds.min.map(|v| -v))
            };
            let category = match (low, high) {
                (Some(l), _) if l > 0 => Category::Win,
                (_, Some(h)) if h < 0 => Category::Loss,
                (Some(0), Some(0)) => Category::Draw,
                _ => Category::Unknown,
            };
            (category, None)
        }
        Verdict::Layers | Verdict::Incomplete { .. } => (Category::Unknown, None),
    }
}

/// The sort key of a move for `mover`: its category, then the fastest win or the slowest loss;
/// in Go the best proven bounds of the mover's score alone (bounds that straddle 0 may still be
/// better than a proven loss).
fn preference(m: &Move, mover: u8) -> (Category, i64, i64) {
    if let Verdict::Go { bounds, .. } = &m.child.verdict {
        let low = bounds.min.map_or(i64::MIN / 2, i64::from);
        let high = bounds.max.map_or(i64::MAX / 2, i64::from);
        return if mover == 0 {
            (Category::Unknown, -low, -high)
        } else {
            (Category::Unknown, high, low)
        };
    }
    let depth = i64::from(m.depth.unwrap_or(0));
    let by_depth = match m.category {
        Category::Win => depth,
        Category::Open | Category::Loss => -depth,
        _ => 0,
    };
    (m.category, by_depth, 0)
}
