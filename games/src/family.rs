//! What a game family tells the registry: its parameters, how they become a game, its layers.
//! 1. A family's parameters are one struct, at once the command line's flags (`clap::Args`, for
//!    families the command line offers) and `run.json`'s fields (serde), implementing this trait.
//! 2. `registry.rs` lists every family in one line each and generates the rest: `GameSpec`,
//!    `AnyGame` and `GameChoice`.

use crate::drawing::Drawing;
use crate::notation::Notation;
use crate::reading::{LayersAt, Verdict};
use crate::view::{GameCommand, GameView};
use crate::AnyGame;
use kingmaker_kernel::Game;
use kingmaker_kernel::Layer;
use kingmaker_tablefmt::FormatError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt::Debug;
use std::sync::Arc;

/// A game family and its parameters (e.g. cc3p at level 2).
pub trait GameFamily: Clone + Debug + PartialEq + Eq + Serialize + DeserializeOwned {
    /// The game these parameters build.
    type Game: Game + Notation + Drawing + 'static;

    /// One line for `kingmaker <command> --help`.
    const ABOUT: &'static str;

    /// Construct the game (may take a moment: ranking tables, catalogues). Refuses parameters
    /// the game does not support, saying why.
    fn build(&self) -> anyhow::Result<Self::Game>;

    /// Small instances that the conformance suite (`games/src/conformance.rs`) and the parser fuzzer
    /// check: every state of those up to `conformance::EXHAUSTIVE_UP_TO` states, a sample of
    /// larger ones. Include the smallest instance and one that exercises every rule.
    fn examples() -> Vec<Self>;

    /// Every layer a build solves, in order (for a family whose layers depend on the answers,
    /// the first ones: see [`GameFamily::next_layer`]).
    fn layers(&self) -> Vec<Layer>;

    /// The most layers a build may solve: [`GameFamily::layers`]' count, unless the family
    /// chooses further layers from the answers (then a bound over every answer).
    fn most_layers(&self) -> usize {
        self.layers().len()
    }

    /// The next layer to solve, given the value at the start of every layer solved so far, for a
    /// family whose layers depend on the answers (Go's search for the optimal score); None when
    /// it has all it needs.
    fn next_layer(&self, _start_values: &[(String, u8)]) -> Option<Layer> {
        None
    }

    /// The smaller game the kernel solves instead, when a symmetry allows it and the finished
    /// tables can be expanded back (a family of the registry's `reductions`).
    fn reduced(&self) -> Option<crate::GameSpec> {
        None
    }

    /// `kingmaker count`'s fields from a formula, where the family has one; None counts by
    /// classifying every index (numbers as strings: JSON readers lose digits past 2^53).
    fn count(&self) -> Option<anyhow::Result<Map<String, Value>>> {
        None
    }

    /// `summary.json`'s `params` are the serialised parameters; a family may rewrite them for
    /// readers (cc2p writes its board `MxM`).
    fn summary_params(&self, _params: &mut Map<String, Value>) {}

    /// What the solved layers mean together at `index`, where the family has a reading of its
    /// own; None for the generic one ([`crate::reading::verdict::generic`]).
    fn verdict(
        _game: &Self::Game,
        _index: u64,
        _at: &LayersAt,
    ) -> Option<Result<Verdict, FormatError>> {
        None
    }

    /// How the game is shown (`query`, the explorer, `summary.json`), where it has a view of its
    /// own; None shares the two-player view ([`crate::view::two_player`]). `game` is of this
    /// family.
    fn view(_game: &Arc<AnyGame>) -> Option<Box<dyn GameView>> {
        None
    }

    /// Commands of the family's own, added to `kingmaker`'s (TOPPEN's `census`).
    fn commands() -> Vec<GameCommand> {
        Vec::new()
    }
}

/// The one layer of a two-player game without draws by the rules: "player 0 (the first colour)
/// wins". In a game that alternates sides ([`Game::alternates_sides`]) player 0 is the side to
/// move.
pub fn first_player_wins() -> Layer {
    Layer::new("solo", 0b01, 0b01)
}

/// The second layer of a two-player game whose games can end drawn: "player 1 wins". With
/// [`first_player_wins`] it tells a win for either side from a draw.
pub fn second_player_wins() -> Layer {
    Layer::new("second", 0b10, 0b10)
}

/// Two numbers written `AxB` (or `AXB`), as board sizes are given on the command line; the error
/// names the parameter (`what`) and the expected `form`.
pub fn parse_dimensions<A: std::str::FromStr, B: std::str::FromStr>(
    text: &str,
    what: &str,
    form: &str,
) -> Result<(A, B), String> {
    let bad = || format!("{what} {text:?} is not of the form {form}");
    let (a, b) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}
