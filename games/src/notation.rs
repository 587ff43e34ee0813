//! What the coordinator needs from a game besides the kernel's [`Game`](kingmaker_kernel::Game):
//! reading and writing positions, listing moves with their texts, pictures, the start, player
//! names. Each game implements it in its own `notation.rs`; generic commands (`query`, `line`,
//! `serve`, the summary) use nothing else. The explorer page's drawings are
//! [`crate::Drawing`]'s.

/// A game's positions and moves as text, and its pictures (see the module docs).
pub trait Notation {
    /// Parse a position in the game's notation (docs/*-notation.md).
    fn parse_position(&self, text: &str) -> anyhow::Result<u64>;
    /// [`Notation::parse_position`], or the start for the word `start` in any game that has one.
    fn parse_or_start(&self, text: &str) -> anyhow::Result<u64> {
        match self.start_index() {
            Some(start) if text.trim().eq_ignore_ascii_case("start") => Ok(start),
            _ => self.parse_position(text),
        }
    }
    /// The canonical text of a position; `parse_position` gives the index back.
    fn format_position(&self, index: u64) -> String;
    /// Every legal move: its text and the index it leads to.
    fn moves(&self, index: u64) -> Vec<(String, u64)>;
    /// An ASCII picture of the position.
    fn picture(&self, index: u64) -> String;
    /// Whether [`Notation::picture`] already says whose turn it is (or who has won).
    fn picture_names_the_mover(&self) -> bool {
        false
    }
    /// Player names as shown to users.
    fn player_name(&self, player: u8) -> String;
    /// How a game with outcome `outcome` ended ([`kingmaker_kernel::Node::Terminal`]), e.g. "A
    /// has won".
    fn outcome_text(&self, outcome: u8) -> String {
        format!("{} has won", self.player_name(outcome))
    }
    /// The player who won a game with outcome `outcome`, if any (Go: the higher score; none on
    /// a tie). Most games number their outcomes by the winner.
    fn outcome_winner(&self, outcome: u8) -> Option<u8> {
        Some(outcome)
    }
    /// The start position, for games that have one.
    fn start_index(&self) -> Option<u64>;
    /// Why the illegal state `index` cannot arise in play, where the game can say (`query` and
    /// `line` print it); None for a legal state, or a game that does not say.
    fn illegal_reason(&self, _index: u64) -> Option<String> {
        None
    }
    /// A position to show first in the explorer: the start, or for games without one an
    /// instructive example.
    fn example_index(&self) -> Option<u64> {
        self.start_index()
    }
}
