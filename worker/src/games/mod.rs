//! The game families. Each module holds one game's rules, index space, moves and unmoves.

pub mod cc2p;
pub mod cc3p;
pub mod go;
pub mod registry;
pub mod toppen;
