//! The value of a state, as every Kingmaker file stores it: a code 0..=3, and a letter for users.
//! 1. The codes are part of every format (docs/format.md) and of every table digest (the sha256 of
//!    the codes in index order): they never change.
//! 2. The `u8` constants ([`WIN`], ...) are the codes for hot loops and `match` patterns; they are
//!    defined from the enum, here and nowhere else.

/// The value of one state in one layer. `as u8` (or [`Value::code`]) is its on-disk code.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Value {
    /// The state cannot arise in play.
    Illegal = 0,
    /// The coalition of the layer forces its objective (W).
    Win = 1,
    /// The other players keep the coalition from its objective (L).
    Loss = 2,
    /// Neither side can force the outcome (D).
    Draw = 3,
}

/// Code of [`Value::Illegal`].
pub const ILLEGAL: u8 = Value::Illegal.code();
/// Code of [`Value::Win`].
pub const WIN: u8 = Value::Win.code();
/// Code of [`Value::Loss`].
pub const LOSS: u8 = Value::Loss.code();
/// Code of [`Value::Draw`].
pub const DRAW: u8 = Value::Draw.code();
/// The largest value code: anything above it is not a value.
pub const MAX_CODE: u8 = DRAW;

impl Value {
    /// Every value, in code order.
    pub const ALL: [Value; 4] = [Value::Illegal, Value::Win, Value::Loss, Value::Draw];

    /// The code stored on disk.
    #[inline]
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The value of a code, `None` above [`MAX_CODE`].
    #[inline]
    pub const fn from_code(code: u8) -> Option<Value> {
        match code {
            ILLEGAL => Some(Value::Illegal),
            WIN => Some(Value::Win),
            LOSS => Some(Value::Loss),
            DRAW => Some(Value::Draw),
            _ => None,
        }
    }

    /// The letter users see: `W`, `L`, `D`, or `-` for an illegal state.
    pub const fn letter(self) -> char {
        match self {
            Value::Illegal => '-',
            Value::Win => 'W',
            Value::Loss => 'L',
            Value::Draw => 'D',
        }
    }

    /// The value of a letter (`W`, `L`, `D`, `-`).
    pub const fn from_letter(letter: char) -> Option<Value> {
        match letter {
            '-' => Some(Value::Illegal),
            'W' => Some(Value::Win),
            'L' => Some(Value::Loss),
            'D' => Some(Value::Draw),
            _ => None,
        }
    }

    /// The letter of a code: `W`, `L`, `D`, or `-` for an illegal state and anything that is not
    /// a value code.
    pub const fn letter_of(code: u8) -> char {
        match Value::from_code(code) {
            Some(v) => v.letter(),
            None => '-',
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.letter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_letters_round_trip() {
        for (code, v) in Value::ALL.iter().enumerate() {
            assert_eq!(v.code(), code as u8);
            assert_eq!(Value::from_code(code as u8), Some(*v));
            assert_eq!(Value::from_letter(v.letter()), Some(*v));
            assert_eq!(Value::letter_of(code as u8), v.letter());
        }
        assert_eq!(Value::from_code(4), None);
        assert_eq!(Value::letter_of(200), '-');
        assert_eq!(
            (ILLEGAL, WIN, LOSS, DRAW, MAX_CODE),
            (0, 1, 2, 3, 3),
            "the codes are on disk and in every digest"
        );
        assert_eq!(Value::ALL.map(|v| v.letter()), ['-', 'W', 'L', 'D']);
    }
}
