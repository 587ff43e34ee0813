//! Kingmaker's compute: the games (rules, index spaces, moves and unmoves), the wave kernel over
//! shard arrays, and the worker side of the distributed protocol.

pub mod game;
pub mod games;
pub mod kernel;
pub mod lock;
pub mod logging;
pub mod options;
pub mod service;
pub mod spec;

pub use game::{Game, Node};
