//! Kingmaker's wave kernel: counting retrograde analysis of one forcing layer of any [`Game`].
//! 1. Every legal state of a layer `(coalition, objective)` ends W, L or D, with the wave that
//!    decided it; the algorithm, the cells, waves and out-of-core work are in docs/kernel.md.
//! 2. It knows no game and no transport: in-process workers ([`local`]) and remote ones run the
//!    same [`engine::WorkerEngine`], driven by [`driver`], updates sent by an [`engine::Router`].

#![warn(missing_docs)]

pub mod bfs;
pub mod cell_code;
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
mod overflow;
pub mod owners;
pub mod reach;
pub mod shard;
pub mod update_buckets;
pub mod wave_log;

pub use driver::{
    drive_layer, ClosedWave, LayerObserver, LayerOutcome, ResumePoint, WaveSummary, WorkerHandle,
};
pub use engine::{Batch, Router, WaveStats, WorkerEngine};
pub use error::KernelError;
pub use game::{Game, Node};
pub use layer::Layer;
pub use local::{local_workers, named_local_workers, solve_in_memory, Solved};
pub use memory::CellStorage;
pub use owners::{assign_shards, gather, Placement};
pub use shard::ShardPlan;

/// Final values: [`Value`] and its codes, as written to tables and hashed into digests. Defined
/// in tablefmt (the formats own them); the `u8` codes serve the hot paths.
pub use kingmaker_tablefmt::value::{Value, DRAW, ILLEGAL, LOSS, WIN};

#[cfg(test)]
mod tests;
