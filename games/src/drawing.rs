//! What the explorer page draws for a game: its board, each position on it, and the moves of a
//! line named on that drawing. A game without a drawing of its own keeps the defaults, and the
//! page shows its ASCII picture ([`crate::Notation::picture`]).

use serde_json::{Map, Value};

/// A game's drawings for the explorer page (see the module docs).
pub trait Drawing {
    /// The board as the explorer page draws it (`{"kind": ...}`), if the page knows how;
    /// `Value::Null` leaves it to the ASCII picture.
    fn board_drawing(&self) -> Value {
        Value::Null
    }
    /// What the page draws on the board for one position (e.g. `pieces`, `grid`); merged into
    /// the position's JSON.
    fn position_drawing(&self, _index: u64) -> Map<String, Value> {
        Map::new()
    }
    /// The moves of a line of play (`line[k + 1]` a child of `line[k]`) named on the drawing of
    /// `line[0]`, for games whose drawing depends on the position (TOPPEN draws each position on
    /// its graph class's drawing), so that a line shown beside a board names that board's cells.
    /// None where the moves' own texts already do (every game with one fixed board).
    fn line_moves(&self, _line: &[u64]) -> Option<Vec<String>> {
        None
    }
}
