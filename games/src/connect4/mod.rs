//! Connect Four on small boards (docs/connect4.md): discs dropped into the columns of an upright
//! W×H grid; four in a row (across, up, or diagonally) wins, a full board without one is a draw.
//! 1. Players: 0 = X (moves first), 1 = O. Outcomes: 0 and 1 the winner, [`DRAW_OUTCOME`] a full
//!    board; so two layers tell the three results apart: `solo` (X can force a win) and `second`
//!    (O can). The files: docs/connect4.md, "Inside the code".

mod family;
mod index;
mod notation;
mod rules;
#[cfg(test)]
mod tests;

pub use family::Connect4Params;

use index::Columns;

/// The outcome of a game that filled the board without a four.
pub const DRAW_OUTCOME: u8 = 2;

/// The largest index space a board may have (`(2^(H+1) − 1)^W` indices).
pub const MAX_INDICES: u128 = 1 << 40;

/// Errors of the Connect Four module: unsupported boards and bad position texts.
#[derive(Debug, thiserror::Error)]
pub enum Connect4Error {
    /// An unsupported board: its width, its height and why.
    #[error("a {0}x{1} board is not supported: {2}")]
    BadBoard(u8, u8, String),
    /// A position text that cannot be read.
    #[error("bad position {text:?}: {problem}")]
    Position {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// Connect Four (or Connect N) on one board.
#[derive(Clone, Debug)]
pub struct Connect4 {
    cols: Columns,
    /// Discs in a row that win.
    connect: u8,
    /// Every line of `connect` cells, as a mask over cells `col * height + row`.
    lines: Vec<u64>,
}

impl Connect4 {
    /// Connect `connect` on a board `width` columns wide and `height` rows high.
    pub fn new(width: u8, height: u8, connect: u8) -> Result<Connect4, Connect4Error> {
        let bad = |why: String| Connect4Error::BadBoard(width, height, why);
        if !(1..=16).contains(&width) || !(1..=16).contains(&height) {
            return Err(bad("width and height are 1 to 16".into()));
        }
        if !(2..=8).contains(&connect) {
            return Err(bad(format!("connect {connect}: 2 to 8 in a row can win")));
        }
        let (w, h) = (width as usize, height as usize);
        let cols = Columns::new(w, h, MAX_INDICES).ok_or_else(|| {
            bad(format!(
                "its index space, (2^{} - 1)^{w}, exceeds 2^40",
                h + 1
            ))
        })?;
        Ok(Connect4 {
            lines: Connect4::lines_of(w, h, connect as usize),
            cols,
            connect,
        })
    }

    /// Columns and rows.
    pub fn board(&self) -> (usize, usize) {
        (self.cols.width, self.cols.height)
    }
}
