//! The gRPC transport of predecessor updates (or of decided states, whose predecessors the
//! receiver lists): a [`Router`] that streams each batch to the worker owning it and returns once
//! that worker has applied it.

use kingmaker_kernel::{Batch, KernelError, Router};
use kingmaker_process::metrics::Metric;
use kingmaker_rpc::connect::Client;
use kingmaker_rpc::status::aborted;
use kingmaker_rpc::status::describe_status;
use kingmaker_rpc::wire::{encode_updates, CHUNK_UPDATES};
use prost::Message;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use tokio::sync::watch;

/// Why a run was stopped on this worker (None while it goes on).
pub type AbortSignal = watch::Receiver<Option<String>>;

/// Counters the router feeds.
pub struct RouterMetrics {
    pub updates_sent: Arc<Metric>,
    pub bytes_sent: Arc<Metric>,
}

pub struct GrpcRouter {
    run_id: String,
    me: u32,
    /// Every worker's address and client, by number.
    peers: Vec<(String, Client)>,
    wave: AtomicU32,
    /// Bytes of update messages sent since the last [`GrpcRouter::take_bytes`].
    bytes: AtomicU64,
    runtime: tokio::runtime::Handle,
    abort: AbortSignal,
    metrics: RouterMetrics,
}

impl GrpcRouter {
    pub fn new(
        run_id: String,
        me: u32,
        peers: Vec<(String, Client)>,
        runtime: tokio::runtime::Handle,
        abort: AbortSignal,
        metrics: RouterMetrics,
    ) -> GrpcRouter {
        GrpcRouter {
            run_id,
            me,
            peers,
            wave: AtomicU32::new(0),
            bytes: AtomicU64::new(0),
            runtime,
            abort,
            metrics,
        }
    }

    /// The wave whose updates are being sent (receivers apply them to that wave).
    pub fn set_wave(&self, wave: u32) {
        self.wave.store(wave, Relaxed);
    }

    /// Bytes sent since the last call.
    pub fn take_bytes(&self) -> u64 {
        self.bytes.swap(0, Relaxed)
    }
}

impl Router for GrpcRouter {
    /// Called from the kernel's rayon threads: blocks on the runtime until the owner has applied
    /// the batch (or the run is aborted).
    fn send(&self, worker: usize, batch: Batch<'_>) -> Result<(), KernelError> {
        let (updates, states) = (batch.items(), matches!(batch, Batch::States(_)));
        let (addr, client) = self.peers.get(worker).ok_or_else(|| KernelError::Worker {
            worker: format!("#{worker}"),
            message: "no such worker in this run".into(),
        })?;
        let wave = self.wave.load(Relaxed);
        let mut chunks: Vec<_> = updates
            .chunks(CHUNK_UPDATES)
            .map(|piece| {
                let mut chunk = encode_updates(piece);
                chunk.wave = wave;
                chunk.from = self.me;
                chunk.states = states;
                chunk
            })
            .collect();
        if let Some(first) = chunks.first_mut() {
            first.run_id = self.run_id.clone();
        }
        let bytes: u64 = chunks.iter().map(|c| c.encoded_len() as u64).sum();
        let mut client = client.clone();
        let mut abort = self.abort.clone();
        let outcome = self.runtime.block_on(async move {
            tokio::select! {
                reply = client.updates(tokio_stream::iter(chunks)) => reply.map(|_| ()).map_err(|s| {
                    format!("delivering {} updates of wave {wave} failed: {}", updates.len(), describe_status(&s))
                }),
                reason = aborted(&mut abort, "the run was dropped".to_string()) => Err(format!("stopped: {reason}")),
            }
        });
        match outcome {
            Ok(()) => {
                self.bytes.fetch_add(bytes, Relaxed);
                self.metrics.bytes_sent.add(bytes);
                self.metrics.updates_sent.add(updates.len() as u64);
                Ok(())
            }
            Err(message) => Err(KernelError::Worker {
                worker: addr.clone(),
                message,
            }),
        }
    }
}
