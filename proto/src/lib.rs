//! Kingmaker's gRPC protocol: the `kingmaker.v1.Worker` service (see `proto/kingmaker.proto`).

/// The protocol version this build speaks. Bump it on any change an older peer could misread.
/// Version 2: Checkpoint and Restore. Version 3: ShardValues sends four values per byte.
/// Version 4: a layer's objective is a 64-bit set of outcomes (Go's scores), not 8 players.
/// Version 5: replicas of checkpoints on the ring successor (ReplicaStatus, PutReplica,
/// GetReplica). Version 6: layers kept on the workers (RouteExpansion, RoutedStates, KeepPart,
/// ChainDigest). Version 7: decided states sent in place of their updates (UpdateChunk.states).
pub const PROTOCOL_VERSION: u32 = 7;

/// The generated messages, client (`worker_client`) and server (`worker_server`).
pub mod v1 {
    #![allow(clippy::all, missing_docs)]
    tonic::include_proto!("kingmaker.v1");
}

pub use v1::worker_client::WorkerClient;
pub use v1::worker_server::{Worker, WorkerServer};
