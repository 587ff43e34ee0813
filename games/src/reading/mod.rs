//! How a game reads its solved tables: one layer's [`Answer`], what the layers mean together at a
//! position (a [`Verdict`]), and what a move is worth to its mover (a [`Category`]).
//! 1. The table files are `kingmaker_tablefmt`'s, and opening a run or a release the probing
//!    library's (`kingmaker_probe`). A family with a reading of its own answers
//!    [`crate::GameFamily::verdict`]; the others get the generic one ([`verdict::generic`]).

pub mod answer;
pub mod layers;
pub mod two_player;
pub mod verdict;

pub use answer::{Answer, Value};
pub use layers::{LayerInfo, LayersAt};
pub use verdict::{Category, Verdict};
