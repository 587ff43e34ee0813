//! Kingmaker's compute: the games (rules, index spaces, moves and unmoves), the wave kernel over
//! shard arrays, and the worker side of the distributed protocol.

pub mod bfs;
pub mod game;
pub mod games;
pub mod kernel;
pub mod lock;
pub mod logging;
pub mod notation;
pub mod options;
pub mod reduction;
pub mod service;

pub use game::{Game, Node};
pub use notation::Notation;
