//! Go: a state's value at every solved threshold ("Black's final score ≥ k") and the score bounds
//! they prove. W at k proves Black forces a score ≥ k, L at k that White keeps it ≤ k − 1; a
//! bound no solved threshold proves is left open. A finished game's bounds are its final score.

use super::Go;
use crate::reading::{Answer, LayersAt, Value, Verdict};
use kingmaker_kernel::{Game, Node};
use serde::Serialize;

/// What the solved thresholds prove about a position's final score (Black's points minus
/// White's): Black forces at least `min`, White at most `max`; None where no solved threshold
/// proves that bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ScoreBounds {
    /// Black forces a score ≥ `min`.
    pub min: Option<i32>,
    /// White keeps the score ≤ `max`.
    pub max: Option<i32>,
}

impl ScoreBounds {
    /// The bounds that the values at thresholds `(k, value)` prove.
    pub fn proven(values: impl IntoIterator<Item = (i32, Value)> + Clone) -> ScoreBounds {
        let at = |want: Value| values.clone().into_iter().filter(move |v| v.1 == want);
        ScoreBounds {
            min: at(Value::Win).map(|v| v.0).max(),
            max: at(Value::Loss).map(|v| v.0 - 1).min(),
        }
    }

    /// A finished game's: its final score.
    pub fn exact(score: i32) -> ScoreBounds {
        ScoreBounds {
            min: Some(score),
            max: Some(score),
        }
    }

    /// `+2`, `-1..+3` for an interval, `≥ +1` or `≤ -1` for one bound, `?` for none.
    pub fn text(self) -> String {
        match (self.min, self.max) {
            (Some(lo), Some(hi)) if lo == hi => format!("{lo:+}"),
            (Some(lo), Some(hi)) => format!("{lo:+}..{hi:+}"),
            (Some(lo), None) => format!("≥ {lo:+}"),
            (None, Some(hi)) => format!("≤ {hi:+}"),
            (None, None) => "?".to_string(),
        }
    }
}

/// The verdict at `index`: the answer at every solved threshold and the bounds they prove.
pub fn verdict(game: &Go, index: u64, at: &LayersAt) -> Verdict {
    let mut thresholds: Vec<(i32, Answer)> = at
        .read
        .iter()
        .filter_map(|(name, _, answer)| Go::layer_threshold(name).map(|k| (k, *answer)))
        .collect();
    thresholds.sort_by_key(|t| t.0);
    let bounds = match game.node(index) {
        Node::Terminal { outcome } => ScoreBounds::exact(game.outcome_score(outcome)),
        _ => ScoreBounds::proven(thresholds.iter().map(|t| (t.0, t.1.value))),
    };
    Verdict::Go { bounds, thresholds }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_from_thresholds() {
        let b = ScoreBounds::proven([(0, Value::Win), (1, Value::Win), (2, Value::Loss)]);
        assert_eq!(b, ScoreBounds::exact(1));
        let b = ScoreBounds::proven([(2, Value::Loss), (4, Value::Loss)]);
        assert_eq!((b.min, b.max), (None, Some(1)));
        assert_eq!(ScoreBounds::proven([(1, Value::Draw)]).text(), "?");
    }
}
