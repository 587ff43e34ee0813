//! Kingmaker's games. Each folder is one game family: its rules, index space, moves and unmoves,
//! its [`Notation`], its parameters ([`GameFamily`]), and how its tables are read ([`reading`])
//! and shown ([`view`]). A new game is its folder and one line
//! in the list below (docs/new-game.md).

#![warn(missing_docs)]

#[macro_use]
mod generate;
pub mod combinatorics;
pub mod conformance;
pub mod drawing;
pub mod family;
mod huge;
pub mod notation;
pub mod reading;
pub mod reduction;
pub mod view;

pub use drawing::Drawing;
pub use family::GameFamily;
pub use notation::Notation;
pub use reduction::Reduction;

// The registry: one line per family. `games!` (generate.rs) turns it into `GameSpec`,
// `GameChoice` and `AnyGame`, one variant per line.
games! {
    families {
        "cc3p" => Cc3p(cc3p::Cc3pParams),
        "toppen" => Toppen(toppen::ToppenParams),
        "cc2p" => Cc2p(cc2p::Cc2pParams),
        "go" => Go(go::GoParams),
        "connect4" => Connect4(connect4::Connect4Params),
        "cc3p_race" => Cc3pRace(cc3p_race::Cc3pRaceParams),
    }
    // Solved in place of a family's game (`GameFamily::reduced`), never chosen on the command
    // line; their games implement `Reduction`.
    reductions {
        // Named before the quarter existed; the name is kept because runs and releases store it.
        "cc2p_half" => Cc2pReduced(cc2p::Cc2pReducedParams),
    }
}

mod registry;
