//! One layer's answer for one state: its value and, where the tables keep depths, its depth.

use kingmaker_tablefmt::value::{DRAW, ILLEGAL, LOSS, WIN};
use serde::{Serialize, Serializer};

/// A state's value in one layer, for that layer's coalition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// The coalition can force its objective.
    Win,
    /// The others can keep it from its objective for ever.
    Loss,
    /// Neither: with best play the game goes on for ever.
    Draw,
    /// The state cannot arise in play.
    Illegal,
}

impl Value {
    /// The value of a table's code (0 illegal, 1 W, 2 L, 3 D); None for any other byte.
    pub fn from_code(code: u8) -> Option<Value> {
        match code {
            WIN => Some(Value::Win),
            LOSS => Some(Value::Loss),
            DRAW => Some(Value::Draw),
            ILLEGAL => Some(Value::Illegal),
            _ => None,
        }
    }

    /// The table's code of the value.
    pub fn code(self) -> u8 {
        match self {
            Value::Win => WIN,
            Value::Loss => LOSS,
            Value::Draw => DRAW,
            Value::Illegal => ILLEGAL,
        }
    }

    /// `W`, `L`, `D`, or `illegal`, as the command line and the JSON API write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Value::Win => "W",
            Value::Loss => "L",
            Value::Draw => "D",
            Value::Illegal => "illegal",
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A state's value in one layer with its depth: the plies to the end with best play (a win is
/// won as fast as it can be, a loss put off as long as it can be). `depth` is None in
/// values-only tables; a draw's and an illegal state's depth is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Answer {
    /// W, L, D or illegal.
    pub value: Value,
    /// Plies to the end with best play; None where the tables hold values alone.
    pub depth: Option<u16>,
}

impl Answer {
    /// The answer of an illegal state.
    pub const ILLEGAL: Answer = Answer {
        value: Value::Illegal,
        depth: Some(0),
    };

    /// The answer a table stores as (`code`, `depth`); `with_depth` false for values-only tables.
    /// An unknown code reads as illegal (the file readers refuse such bytes before this).
    pub fn from_table((code, depth): (u8, u16), with_depth: bool) -> Answer {
        Answer {
            value: Value::from_code(code).unwrap_or(Value::Illegal),
            depth: with_depth.then_some(depth),
        }
    }

    /// The answer of `table` at `index`: with its depth where the table keeps depths
    /// (`with_depth`), else the value alone.
    pub fn read<T: kingmaker_tablefmt::Lookup + ?Sized>(
        table: &T,
        index: u64,
        with_depth: bool,
    ) -> Result<Answer, kingmaker_tablefmt::FormatError> {
        Ok(if with_depth {
            Answer::from_table(table.lookup(index)?, true)
        } else {
            Answer::from_table((table.value(index)?, 0), false)
        })
    }

    /// `W12`, `L3`, `D0`, `W` (no depth kept) or `illegal`.
    pub fn text(&self) -> String {
        match (self.value, self.depth) {
            (Value::Illegal, _) | (_, None) => self.value.to_string(),
            (v, Some(d)) => format!("{v}{d}"),
        }
    }
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}
