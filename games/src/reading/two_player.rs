//! Two-player games: `solo` asks "does player 0 win?"; a game whose games can end drawn by the
//! rules also solves `second`, "does player 1 win?". Together they give W, L or D.

use super::answer::{Answer, Value};

/// Layers a two-player game's verdict reads: `solo`, and `second` where the game solves it.
pub const SOLO: &str = "solo";
/// See [`SOLO`].
pub const SECOND: &str = "second";

/// A two-player game's value from its `solo` answer and its `second` answer where the game
/// solves that layer: W (player 0 wins), L (player 1 wins), D (neither can force a win) or
/// illegal, with the depth of a win. Without `second`, `solo` alone (L is then a win for
/// player 1).
pub fn combined(solo: Answer, second: Option<Answer>) -> Answer {
    match (solo.value, second) {
        (Value::Loss, Some(s)) if s.value == Value::Win => Answer {
            value: Value::Loss,
            depth: s.depth,
        },
        (Value::Loss, Some(s)) => Answer {
            value: Value::Draw,
            depth: s.depth.map(|_| 0),
        },
        _ => solo,
    }
}

/// The same from the table codes: the form the summaries and the explorer read.
pub fn combined_codes(solo: (u8, u16), second: Option<(u8, u16)>) -> (u8, u16) {
    let v = combined(
        Answer::from_table(solo, true),
        second.map(|s| Answer::from_table(s, true)),
    );
    (v.value.code(), v.depth.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kingmaker_tablefmt::value::{DRAW, LOSS, WIN};

    #[test]
    fn second_decides_a_lost_solo() {
        assert_eq!(combined_codes((WIN, 3), Some((LOSS, 3))), (WIN, 3));
        assert_eq!(combined_codes((LOSS, 4), Some((WIN, 5))), (LOSS, 5));
        assert_eq!(combined_codes((LOSS, 4), Some((LOSS, 7))), (DRAW, 0));
        assert_eq!(combined_codes((LOSS, 4), None), (LOSS, 4));
    }
}
