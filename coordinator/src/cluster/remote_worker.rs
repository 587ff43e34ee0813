//! One remote worker as the barrier sees it: the [`WorkerHandle`] of a `kingmaker-worker` process,
//! each step one gRPC call that blocks the driver's thread until the worker has done it, or until
//! the run is aborted (see [`super::heartbeat`]).

use super::heartbeat::{aborted, Abort};
use kingmaker_kernel::{ClosedWave, KernelError, ShardPlan, WorkerHandle};
use kingmaker_proto::v1 as pb;
use kingmaker_rpc::connect::Client;
use kingmaker_rpc::convert::Convert;
use kingmaker_rpc::status::{call_failed, peer_at_fault};
use kingmaker_rpc::wire::{decode_depth, decode_values, depth_len, unpack_bytes, values_len};
use tokio::sync::watch;
use tonic::Status;

/// One remote worker as the driver sees it.
pub struct RemoteWorker {
    pub(super) addr: String,
    pub(super) run_id: String,
    pub(super) client: Client,
    /// The coordinator's network runtime: calls block the driver's thread on it.
    pub(super) runtime: tokio::runtime::Handle,
    /// Raised by the heartbeats when any worker of the run fails.
    pub(super) abort: watch::Receiver<Abort>,
    pub(super) plan: ShardPlan,
    /// This worker's number in the run.
    pub(super) me: usize,
    /// Every worker of the run in words (address, host, data directory), by number.
    pub(super) labels: std::sync::Arc<Vec<String>>,
}

impl RemoteWorker {
    /// Make one call, blocking this thread until it returns or the run is aborted.
    pub(super) fn call<T, F>(
        &self,
        what: &str,
        f: impl FnOnce(Client) -> F,
    ) -> Result<T, KernelError>
    where
        F: std::future::Future<Output = Result<tonic::Response<T>, Status>>,
    {
        let mut abort = self.abort.clone();
        let call = f(self.client.clone());
        self.runtime.block_on(async {
            tokio::select! {
                reply = call => reply.map(|r| r.into_inner()).map_err(|s| self.failed(what, &s)),
                (worker, message) = aborted(&mut abort) => Err(KernelError::Worker { worker, message }),
            }
        })
    }

    /// A failed call as the driver sees it, naming the worker at fault: this one, or the peer
    /// whose failure made the call fail (the successor that could not store a replica).
    fn failed(&self, what: &str, status: &Status) -> KernelError {
        let me = self.labels.get(self.me).unwrap_or(&self.addr);
        match peer_at_fault(status).and_then(|p| self.labels.get(p).filter(|_| p != self.me)) {
            // The message names the worker that reported it (who saved its own checkpoint).
            Some(peer) => KernelError::Worker {
                worker: peer.clone(),
                message: status.message().to_string(),
            },
            None => call_failed(me, what, status),
        }
    }

    fn step(&self) -> pb::StepRequest {
        pb::StepRequest {
            run_id: self.run_id.clone(),
            wave: 0,
        }
    }

    /// States in `shard`.
    fn states(&self, shard: usize) -> usize {
        let range = self.plan.range(shard);
        (range.end - range.start) as usize
    }

    /// The chunks of ShardValues or ShardDepth, reassembled.
    fn fetch(&self, what: &str, shard: usize, depth: bool) -> Result<Vec<u8>, KernelError> {
        let request = pb::ShardRequest {
            run_id: self.run_id.clone(),
            shard: shard as u32,
        };
        let mut abort = self.abort.clone();
        let mut client = self.client.clone();
        let fetch = async move {
            let mut stream = if depth {
                client.shard_depth(request).await?
            } else {
                client.shard_values(request).await?
            }
            .into_inner();
            let mut bytes = Vec::new();
            while let Some(chunk) = stream.message().await? {
                bytes.extend(unpack_bytes(chunk).map_err(|e| Status::data_loss(e.to_string()))?);
            }
            Ok::<_, Status>(bytes)
        };
        let bytes = self.runtime.block_on(async {
            tokio::select! {
                r = fetch => r.map_err(|s| self.failed(what, &s)),
                (worker, message) = aborted(&mut abort) => Err(KernelError::Worker { worker, message }),
            }
        })?;
        let states = self.states(shard);
        let want = if depth {
            depth_len(states)
        } else {
            values_len(states)
        };
        if bytes.len() != want {
            return Err(KernelError::Worker {
                worker: self.labels.get(self.me).unwrap_or(&self.addr).clone(),
                message: format!(
                    "{what} of shard {shard}: {} bytes instead of {want}",
                    bytes.len()
                ),
            });
        }
        Ok(bytes)
    }
}

impl WorkerHandle for RemoteWorker {
    fn name(&self) -> String {
        self.addr.clone()
    }

    fn init_pass(&self) -> Result<(), KernelError> {
        let request = self.step();
        self.call(
            "initial pass",
            |mut c| async move { c.init_pass(request).await },
        )
        .map(|_| ())
    }

    fn run_wave(&self, wave: u32) -> Result<(), KernelError> {
        let request = pb::StepRequest {
            wave,
            ..self.step()
        };
        self.call(&format!("wave {wave}"), |mut c| async move {
            c.run_wave(request).await
        })
        .map(|_| ())
    }

    fn close_wave(&self, wave: u32) -> Result<ClosedWave, KernelError> {
        let request = pb::StepRequest {
            wave,
            ..self.step()
        };
        let reply = self.call(&format!("closing wave {wave}"), |mut c| async move {
            c.close_wave(request).await
        })?;
        Ok(ClosedWave::convert(reply))
    }

    fn shard_values(&self, shard: usize) -> Result<Vec<u8>, KernelError> {
        let packed = self.fetch("values", shard, false)?;
        Ok(decode_values(&packed, self.states(shard)))
    }

    fn shard_depth(&self, shard: usize) -> Result<Vec<u16>, KernelError> {
        let bytes = self.fetch("depths", shard, true)?;
        Ok(decode_depth(&bytes))
    }

    fn checkpoint(&self, wave: u32) -> Result<(), KernelError> {
        let request = pb::StepRequest {
            wave,
            ..self.step()
        };
        self.call(
            &format!("checkpoint after wave {wave}"),
            |mut c| async move { c.checkpoint(request).await },
        )
        .map(|_| ())
    }

    fn restore(&self, wave: u32) -> Result<(), KernelError> {
        let request = pb::StepRequest {
            wave,
            ..self.step()
        };
        let reply = self.call(
            &format!("restoring the checkpoint after wave {wave}"),
            |mut c| async move { c.restore(request).await },
        )?;
        if !reply.note.is_empty() {
            tracing::warn!("worker {}: {}", self.name(), reply.note);
        }
        Ok(())
    }
}
