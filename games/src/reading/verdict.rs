//! What the layers mean together at a position ([`Verdict`]), and what a move is worth to its
//! mover ([`Category`]), in the order `moves` lists them.

use super::answer::{Answer, Value};
use super::layers::LayersAt;
use super::two_player;
use crate::cc3p::answers::{Answers, Class};
use crate::go::bounds::ScoreBounds;
use crate::AnyGame;
use crate::Notation;
use kingmaker_kernel::Game;
use serde::Serialize;

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

/// What a move does for the player who makes it, best first.
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

/// The verdict of a game without a reading of its own: a two-player game's value from `solo`
/// (and `second` where the game solves it), else the layers alone.
pub fn generic(game: &AnyGame, at: &LayersAt) -> Verdict {
    if game.players() != 2 {
        return Verdict::Layers;
    }
    let need: &[&str] = if at.describes(two_player::SECOND) {
        &[two_player::SOLO, two_player::SECOND]
    } else {
        &[two_player::SOLO]
    };
    if let Some(v) = Verdict::incomplete(at, need) {
        return v;
    }
    let value = two_player::combined(
        at.answer(two_player::SOLO).expect("checked above"),
        at.answer(two_player::SECOND),
    );
    let winner = match value.value {
        Value::Win => Some(game.player_name(0)),
        Value::Loss => Some(game.player_name(1)),
        _ => None,
    };
    Verdict::TwoPlayer { value, winner }
}

impl Verdict {
    /// [`Verdict::Incomplete`] if any of `names` was not read at the position.
    pub fn incomplete(at: &LayersAt, names: &[&str]) -> Option<Verdict> {
        let missing: Vec<String> = names
            .iter()
            .filter(|n| at.answer(n).is_none())
            .map(|n| n.to_string())
            .collect();
        (!missing.is_empty()).then_some(Verdict::Incomplete { missing })
    }

    /// What a child with this verdict is for `mover`, with the depth that decides it.
    pub fn category(&self, mover: u8) -> (Category, Option<u16>) {
        match self {
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

    /// The sort key, for `mover`, of a move to a child with this verdict, its `category` and
    /// `depth` ([`Verdict::category`]): the category, then the fastest win or the slowest loss;
    /// in Go the best proven bounds of the mover's score alone (bounds that straddle 0 may still
    /// be better than a proven loss).
    pub fn preference(
        &self,
        category: Category,
        depth: Option<u16>,
        mover: u8,
    ) -> (Category, i64, i64) {
        if let Verdict::Go { bounds, .. } = self {
            let low = bounds.min.map_or(i64::MIN / 2, i64::from);
            let high = bounds.max.map_or(i64::MAX / 2, i64::from);
            return if mover == 0 {
                (Category::Unknown, -low, -high)
            } else {
                (Category::Unknown, high, low)
            };
        }
        let depth = i64::from(depth.unwrap_or(0));
        let by_depth = match category {
            Category::Win => depth,
            Category::Open | Category::Loss => -depth,
            _ => 0,
        };
        (category, by_depth, 0)
    }
}
