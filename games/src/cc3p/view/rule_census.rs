//! A preference rule's outcome census (docs/rules.md §1.4), as `kingmaker preferences` prints it:
//! by winner, over the kingmaker states, and by the winner's seat seen from the mover.

use super::preferences::{Outcome, Rule, ENDLESS};
use crate::cc3p::answers::Class;
use serde_json::{json, Value};

/// A rule's outcome counts: by winner over the legal states and over the kingmaker states, and
/// over the live ones by the winner's seat seen from the mover (the mover, the next player, the
/// player who moved last, or endless), which is what a rule that treats the seats alike changes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Census {
    all: [u64; 4],
    kingmaker: [u64; 4],
    by_seat: [u64; 4],
    kingmaker_by_seat: [u64; 4],
}

impl Census {
    /// One legal state: its outcome, class and mover (None for a terminal state).
    pub fn add(&mut self, w: Outcome, class: Class, mover: Option<u8>) {
        self.all[usize::from(w)] += 1;
        let Some(mover) = mover else { return };
        let seat = if w == ENDLESS {
            3
        } else {
            usize::from((w + 3 - mover) % 3)
        };
        self.by_seat[seat] += 1;
        if class == Class::Kingmaker {
            self.kingmaker[usize::from(w)] += 1;
            self.kingmaker_by_seat[seat] += 1;
        }
    }

    /// The legal states counted.
    pub fn legal(&self) -> u64 {
        self.all.iter().sum()
    }

    /// Two censuses of disjoint states as one.
    pub fn merge(mut self, other: Census) -> Census {
        for (mine, theirs) in [
            (&mut self.all, other.all),
            (&mut self.kingmaker, other.kingmaker),
            (&mut self.by_seat, other.by_seat),
            (&mut self.kingmaker_by_seat, other.kingmaker_by_seat),
        ] {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        self
    }

    /// As JSON, with `start`, the start's outcome and line.
    pub fn json(&self, rule: Rule, start: Value) -> Value {
        let km_total: u64 = self.kingmaker.iter().sum();
        let to_last_mover = self.kingmaker_by_seat[2];
        json!({
            "rule": rule.name(),
            "all": census_json(&self.all),
            "kingmaker": census_json(&self.kingmaker),
            "by_seat": seats_json(&self.by_seat),
            "kingmaker_by_seat": seats_json(&self.kingmaker_by_seat),
            "kingmaker_to_last_mover": to_last_mover,
            "kingmaker_to_last_mover_share": to_last_mover as f64 / km_total.max(1) as f64,
            "start": start,
        })
    }
}

fn census_json(c: &[u64; 4]) -> Value {
    json!({"A": c[0], "B": c[1], "C": c[2], "endless": c[3]})
}

/// The keys of a census by seat, as JSON and the text print them.
pub const SEATS: [(&str, &str); 4] = [
    ("mover", "the mover"),
    ("next", "the next"),
    ("last_mover", "the last mover"),
    ("endless", "endless"),
];

fn seats_json(c: &[u64; 4]) -> Value {
    SEATS
        .iter()
        .zip(c)
        .map(|((k, _), &n)| ((*k).to_string(), json!(n)))
        .collect()
}
