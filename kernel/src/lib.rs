//! Kingmaker's wave kernel: counting retrograde analysis over one ternary forcing layer, for any
//! [`Game`] over a dense index space. It knows nothing of particular games or of transports.
//!
//! A *forcing layer* `(coalition, objective)` is a two-team game: the coalition's players try to
//! reach a terminal state whose winner is in `objective`, everyone else tries to avoid that. Every
//! legal state ends up W (the coalition forces it), L (the others force the opposite) or D (neither:
//! play can go on forever), with the wave (depth) at which it was decided.
//!
//! The algorithm (one byte per state while solving, depths in per-shard wave logs; see [`cells`]):
//! 1. Initial pass: terminal states get W or L at wave 0 and form the first frontier; every other
//!    legal state gets a counter = its number of successors (a pass counts as one). The counter is
//!    set lazily, when the first unfavourable child reaches the state: states no update reaches
//!    are never expanded forwards.
//! 2. Wave `w`: for every state `s` decided in wave `w-1`, generate its predecessors `p`. If `p` is
//!    undecided and its mover is on the side `s`'s value favours, `p` takes that value; otherwise
//!    `p`'s counter drops by one, and at zero `p` takes the value bad for its mover. Whatever is
//!    decided now belongs to wave `w`.
//! 3. When a wave decides nothing, every undecided legal state is D.
//!
//! The kernel is split along the lines a distributed build needs: [`engine::WorkerEngine`] owns some
//! shards of the index space and does the work; a [`engine::Router`] carries predecessor updates to
//! the owners of other shards; [`driver`] is the barrier that runs waves over any set of workers;
//! [`owners`] says which worker owns which shard. The workers are in-process ([`local`], the
//! embedded default) or remote (the gRPC transport, in the `kingmaker-rpc` crate): the same code
//! either way. A worker whose cells exceed its memory budget keeps them in files and works through
//! them in order, never at random: each wave's updates wait in per-shard buckets on disk
//! ([`update_buckets`]) until the close applies them shard by shard, and the frontier is kept
//! beside the cells (`frontier_store`). Besides: [`bfs`] (breadth-first counts from a position) and [`options`] (the checks
//! of the kernel's parameters: threads, shard size, memory budget, timeouts).

#![warn(missing_docs)]

pub mod bfs;
pub mod cells;
pub mod check;
pub mod checkpoint;
pub mod driver;
pub mod engine;
mod error;
mod frontier_store;
pub mod game;
mod layer;
pub mod local;
pub mod memory;
pub mod options;
pub mod owners;
pub mod reach;
pub mod shard;
pub mod update_buckets;
pub mod wave_log;

pub use driver::{
    drive_layer, ClosedWave, LayerObserver, LayerOutcome, ResumePoint, WaveSummary, WorkerHandle,
};
pub use engine::{Router, WaveStats, WorkerEngine};
pub use error::KernelError;
pub use game::{Game, Node};
pub use layer::Layer;
pub use local::{local_workers, solve_in_memory, Solved};
pub use memory::CellStorage;
pub use owners::{assign_shards, gather};
pub use shard::ShardPlan;

/// Final values: [`Value`] and its codes, as written to tables and hashed into digests. Defined
/// in tablefmt (the formats own them); the `u8` codes serve the hot paths.
pub use kingmaker_tablefmt::value::{Value, DRAW, ILLEGAL, LOSS, WIN};

#[cfg(test)]
mod tests;
