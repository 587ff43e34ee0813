//! The RPCs of the worker protocol, one handler each. The kernel steps (InitPass, RunWave,
//! CloseWave, Checkpoint, Restore) are admitted by `WorkerService::begin_step` (the coordinator
//! heard from, the run's open layer found, the worker's turn taken); each handler then says which
//! wave it may run in and what it does.

use super::layer::{check_name, OpenLayer};
use super::{ChunkStream, Reservation, WorkerService};
use kingmaker_kernel::memory::physical_memory;
use kingmaker_kernel::{Batch, ClosedWave, KernelError};
use kingmaker_proto::v1::{self as pb, worker_server::Worker};
use kingmaker_rpc::auth::AddToken;
use kingmaker_rpc::connect::{connect, keep_alive_for};
use kingmaker_rpc::convert::Convert;
use kingmaker_rpc::status::status_message;
use kingmaker_rpc::wire::{decode_updates, encode_depth, encode_values};
use prost::Message;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use tonic::{Request, Response, Status, Streaming};

#[tonic::async_trait]
impl Worker for WorkerService {
    async fn describe(
        &self,
        req: Request<pb::DescribeRequest>,
    ) -> Result<Response<pb::DescribeReply>, Status> {
        let _ = req;
        // The run it works on, else the run it is held for, else the run it last worked on.
        let (run_id, run_started_by, run_active) = {
            let reserved = self.inner.reserved.lock().expect("reservation");
            let open = self.inner.state.lock().expect("worker state");
            let held = reserved.as_ref().filter(|r| r.live());
            match (open.as_ref(), held) {
                (Some(a), _) if a.busy(self.silent()) => {
                    (a.run_id.clone(), a.started_by.clone(), true)
                }
                (_, Some(r)) => (r.run_id.clone(), r.started_by.clone(), true),
                (Some(a), None) => (a.run_id.clone(), a.started_by.clone(), false),
                (None, None) => Default::default(),
            }
        };
        let me = &self.inner.identity;
        Ok(Response::new(pb::DescribeReply {
            protocol_version: self.inner.opts.protocol_version,
            worker_version: env!("CARGO_PKG_VERSION").to_string(),
            cores: self.inner.opts.threads as u32,
            memory_bytes: physical_memory(),
            run_id,
            instance_id: me.instance_id.clone(),
            host_name: me.host_name.clone(),
            data_dir: me.data_dir.clone(),
            run_started_by,
            run_active,
            memory_budget: self.inner.opts.memory_budget,
        }))
    }

    async fn reserve(
        &self,
        req: Request<pb::ReserveRequest>,
    ) -> Result<Response<pb::ReserveReply>, Status> {
        let req = req.into_inner();
        check_name("run id", &req.run_id)?;
        let mut reserved = self.inner.reserved.lock().expect("reservation");
        let state = self.inner.state.lock().expect("worker state");
        if let Some((run, by)) = self.busy_with(&reserved, &state, &req.run_id) {
            return Ok(Response::new(pb::ReserveReply {
                reserved: false,
                busy_run_id: run,
                busy_started_by: by,
            }));
        }
        *reserved = Some(Reservation {
            run_id: req.run_id,
            started_by: req.started_by,
            lease: std::time::Duration::from_millis(u64::from(req.lease_ms.max(1000))),
            renewed: std::time::Instant::now(),
        });
        Ok(Response::new(pb::ReserveReply {
            reserved: true,
            ..Default::default()
        }))
    }

    async fn check_peers(
        &self,
        req: Request<pb::CheckPeersRequest>,
    ) -> Result<Response<pb::CheckPeersReply>, Status> {
        let peers = req.into_inner().peers;
        if peers.len() > MAX_PEERS {
            return Err(Status::invalid_argument(format!(
                "{} peers: at most {MAX_PEERS}",
                peers.len()
            )));
        }
        let asks: Vec<_> = peers
            .into_iter()
            .map(|addr| {
                let token = self.inner.opts.token.clone();
                tokio::spawn(async move { describe_peer(addr, token).await })
            })
            .collect();
        let mut seen = Vec::with_capacity(asks.len());
        for ask in asks {
            seen.push(
                ask.await
                    .map_err(|e| Status::internal(format!("asking a peer panicked: {e}")))?,
            );
        }
        Ok(Response::new(pb::CheckPeersReply { peers: seen }))
    }

    async fn start_layer(
        &self,
        req: Request<pb::StartLayerRequest>,
    ) -> Result<Response<pb::StartLayerReply>, Status> {
        self.touch();
        let _turn = self.inner.step.lock().await;
        let reply = self.open_layer(req.into_inner()).await;
        self.touch();
        reply.map(Response::new)
    }

    async fn checkpoint(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        let step = self.begin_step(req).await?;
        let (layer, wave) = (&step.layer, step.wave);
        layer.open_wave_for(
            |open| open == wave + 1,
            |open| format!("asked to checkpoint wave {wave} while wave {open} is open (only the last closed wave can be saved)"),
        )?;
        let cp = layer
            .blocking(move |l| l.checkpoints.save(&l.engine, wave))
            .await?;
        tracing::info!(
            "run {}: layer {} checkpointed after wave {wave}",
            layer.run_id,
            layer.layer
        );
        // The checkpoint counts only once it also lives on another host.
        let sent = layer.replicate(&cp).await?;
        let m = &self.inner.metrics;
        m.replica_bytes_sent.add(sent.bytes);
        Ok(Response::new(pb::StepReply::default()))
    }

    async fn restore(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        let step = self.begin_step(req).await?;
        let (layer, wave) = (&step.layer, step.wave);
        // Not `blocking`: a damaged checkpoint is no reason to abandon the run, the coordinator may
        // fall back to the one before.
        let load = |l: Arc<OpenLayer>| async move {
            tokio::task::spawn_blocking(move || l.checkpoints.load(&l.engine, wave))
                .await
                .map_err(|e| Status::internal(format!("restoring panicked: {e}")))?
                .map_err(Status::convert)
        };
        let mut restored = load(layer.clone()).await;
        let mut note = String::new();
        // A checkpoint of another game or layer is refused: its replica is no more this run's.
        let damaged = restored
            .as_ref()
            .err()
            .filter(|s| !kingmaker_rpc::status::is_refused(s));
        if let Some(local) = damaged {
            // This disk lacks it (lost, replaced, damaged): the replica on the successor has it.
            tracing::warn!(
                "run {}: layer {}: the checkpoint after wave {wave} cannot be restored from this \
                 disk ({}); fetching it from the replica",
                layer.run_id,
                layer.layer,
                local.message()
            );
            restored = match layer.fetch_replica(wave).await {
                Ok(fetched) => {
                    note = format!(
                        "the checkpoint after wave {wave} was not whole on its disk ({}): {fetched}",
                        local.message()
                    );
                    load(layer.clone()).await
                }
                Err(e) => Err(Status::data_loss(format!(
                    "{}; and {}",
                    local.message(),
                    e.message()
                ))),
            };
        }
        if let Err(status) = &restored {
            tracing::error!(
                "run {}: layer {}: cannot restore the checkpoint after wave {wave}: {}",
                layer.run_id,
                layer.layer,
                status.message()
            );
        }
        restored?;
        layer.open_wave.store(wave + 1, Relaxed);
        tracing::info!(
            "run {}: layer {} restored to its checkpoint after wave {wave}",
            layer.run_id,
            layer.layer
        );
        Ok(Response::new(pb::StepReply { note }))
    }

    async fn init_pass(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        let step = self.begin_step(req).await?;
        step.layer.open_wave.store(0, Relaxed);
        step.layer.blocking(|l| l.engine.init_pass()).await?;
        Ok(Response::new(pb::StepReply::default()))
    }

    async fn run_wave(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        let step = self.begin_step(req).await?;
        let (layer, wave) = (&step.layer, step.wave);
        layer.open_wave_for(
            |open| wave != 0 && wave == open,
            |open| format!("asked to run wave {wave} while wave {open} is open"),
        )?;
        if !self.inner.opts.wave_delay.is_zero() {
            tokio::time::sleep(self.inner.opts.wave_delay).await;
        }
        self.inner.metrics.wave.set(u64::from(wave));
        layer.router.set_wave(wave);
        layer.blocking(move |l| l.engine.run_wave(wave)).await?;
        Ok(Response::new(pb::StepReply::default()))
    }

    async fn close_wave(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::CloseWaveReply>, Status> {
        let step = self.begin_step(req).await?;
        let (layer, wave) = (&step.layer, step.wave);
        layer.open_wave_for(
            |open| wave == open,
            |open| format!("asked to close wave {wave} while wave {open} is open"),
        )?;
        let (decided, stats) = layer.blocking(move |l| l.engine.close_wave(wave)).await?;
        layer.open_wave.store(wave + 1, Relaxed);
        let closed = ClosedWave {
            decided,
            stats,
            wire_bytes: Some(layer.router.take_bytes()),
        };
        let m = &self.inner.metrics;
        m.decided.add(decided);
        m.expanded.add(stats.expanded);
        m.waves.add(1);
        Ok(Response::new(pb::CloseWaveReply::convert(closed)))
    }

    async fn updates(
        &self,
        req: Request<Streaming<pb::UpdateChunk>>,
    ) -> Result<Response<pb::UpdatesReply>, Status> {
        let mut stream = req.into_inner();
        // The first chunk names the run and the wave; the rest of the stream belongs to them.
        let mut header: Option<Arc<OpenLayer>> = None;
        let mut applied = 0u64;
        while let Some(chunk) = stream.message().await? {
            let layer = match &header {
                Some(layer) => layer.clone(),
                None => {
                    let layer = self.layer_of(&chunk.run_id)?;
                    layer.open_wave_for(
                        |open| chunk.wave == open && open != 0,
                        |open| {
                            format!(
                                "updates of wave {} from worker {} arrived while wave {open} is open",
                                chunk.wave, chunk.from
                            )
                        },
                    )?;
                    header = Some(layer.clone());
                    layer
                }
            };
            if let Some(reason) = layer.failure() {
                return Err(Status::aborted(format!(
                    "this worker abandoned run {}: {reason}",
                    layer.run_id
                )));
            }
            self.inner
                .metrics
                .bytes_received
                .add(chunk.encoded_len() as u64);
            let updates =
                decode_updates(&chunk).map_err(|e| Status::invalid_argument(e.to_string()))?;
            let n = updates.len() as u64;
            let (tx, rx) = tokio::sync::oneshot::channel();
            let engine = layer.engine.clone();
            let states = chunk.states;
            self.inner.receive_pool.spawn(move || {
                let _ = tx.send(engine.receive(if states {
                    Batch::States(&updates)
                } else {
                    Batch::Updates(&updates)
                }));
            });
            rx.await
                .map_err(|_| Status::internal("applying updates panicked"))?
                .map_err(Status::convert)?;
            applied += n;
            self.inner.metrics.updates_received.add(n);
        }
        Ok(Response::new(pb::UpdatesReply { applied }))
    }

    async fn replica_status(
        &self,
        req: Request<pb::ReplicaStatusRequest>,
    ) -> Result<Response<pb::ReplicaStatusReply>, Status> {
        self.replica_status_call(req).await
    }

    async fn put_replica(
        &self,
        req: Request<Streaming<pb::ReplicaPiece>>,
    ) -> Result<Response<pb::ReplicaStatusReply>, Status> {
        self.put_replica_call(req).await
    }

    type GetReplicaStream = ChunkStream;
    async fn get_replica(
        &self,
        req: Request<pb::GetReplicaRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        self.get_replica_call(req).await
    }

    type ShardValuesStream = ChunkStream;
    async fn shard_values(
        &self,
        req: Request<pb::ShardRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        self.shard_array(req, |layer, shard| {
            Ok(encode_values(
                &layer.engine.shard_values(shard).owned(shard)?,
            ))
        })
        .await
    }

    type ShardDepthStream = ChunkStream;
    async fn shard_depth(
        &self,
        req: Request<pb::ShardRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        self.shard_array(req, |layer, shard| {
            Ok(encode_depth(&layer.engine.shard_depth(shard).owned(shard)?))
        })
        .await
    }

    async fn route_expansion(
        &self,
        req: Request<pb::RouteExpansionRequest>,
    ) -> Result<Response<pb::RouteExpansionReply>, Status> {
        self.route_expansion_call(req).await
    }

    async fn routed_states(
        &self,
        req: Request<Streaming<pb::RoutedChunk>>,
    ) -> Result<Response<pb::RoutedStatesReply>, Status> {
        self.routed_states_call(req).await
    }

    async fn keep_part(
        &self,
        req: Request<pb::KeepPartRequest>,
    ) -> Result<Response<pb::KeepPartReply>, Status> {
        self.keep_part_call(req).await
    }

    async fn chain_digest(
        &self,
        req: Request<pb::ChainDigestRequest>,
    ) -> Result<Response<pb::ChainDigestReply>, Status> {
        self.chain_digest_call(req).await
    }

    type ReadPartStream = ChunkStream;
    async fn read_part(
        &self,
        req: Request<pb::ReadPartRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        self.read_part_call(req).await
    }

    async fn heartbeat(
        &self,
        req: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        let req = req.into_inner();
        if let Some(r) = self.inner.reserved.lock().expect("reservation").as_mut() {
            if r.run_id == req.run_id {
                r.renewed = std::time::Instant::now();
            }
        }
        let state = self.inner.state.lock().expect("worker state").clone();
        let reply = match state {
            Some(a) => {
                if a.run_id == req.run_id {
                    self.touch();
                }
                pb::HeartbeatReply {
                    run_id: a.run_id.clone(),
                    failure: a.reported_failure().unwrap_or_default(),
                }
            }
            None => pb::HeartbeatReply::default(),
        };
        Ok(Response::new(reply))
    }

    async fn shutdown(
        &self,
        req: Request<pb::ShutdownRequest>,
    ) -> Result<Response<pb::ShutdownReply>, Status> {
        let req = req.into_inner();
        if !req.run_id.is_empty() {
            check_name("run id", &req.run_id)?;
            let mut reserved = self.inner.reserved.lock().expect("reservation");
            if reserved.as_ref().is_some_and(|r| r.run_id == req.run_id) {
                *reserved = None;
            }
            let mut state = self.inner.state.lock().expect("worker state");
            if let Some(a) = state.as_ref() {
                if a.run_id != req.run_id && a.failure().is_none() {
                    return Err(Status::failed_precondition(format!(
                        "this worker is working on run {}, not {}",
                        a.run_id, req.run_id
                    )));
                }
                a.abandon("the coordinator ended the run");
                *state = None;
                self.inner.metrics.shards.set(0);
            }
            if req.delete_files {
                let dir = self.inner.opts.data_dir.join(&req.run_id);
                remove_run_files(&dir).map_err(|e| {
                    Status::internal(format!("removing the files of {}: {e}", dir.display()))
                })?;
            }
            tracing::info!("run {} ended by its coordinator", req.run_id);
        }
        if req.exit {
            tracing::info!("exiting at the coordinator's request");
            let _ = self.inner.exit.send(true);
        }
        Ok(Response::new(pb::ShutdownReply {}))
    }
}

/// The most peers CheckPeers asks at once (a run's workers).
const MAX_PEERS: usize = 4096;

/// The peer at `addr` as this worker reaches it: what it says about itself, or why it could not
/// be asked (within 10 s).
async fn describe_peer(addr: String, token: AddToken) -> pb::PeerSeen {
    let wait = std::time::Duration::from_secs(10);
    let ask = async {
        let mut client = connect(&addr, &token, keep_alive_for(wait)).await?;
        client
            .describe(pb::DescribeRequest {
                protocol_version: kingmaker_proto::PROTOCOL_VERSION,
            })
            .await
            .map(|r| r.into_inner())
            .map_err(|s| format!("worker {addr} {}", status_message(&s)))
    };
    let mut seen = pb::PeerSeen {
        addr: addr.clone(),
        ..Default::default()
    };
    match tokio::time::timeout(wait, ask).await {
        Ok(Ok(d)) => {
            seen.instance_id = d.instance_id;
            seen.host_name = d.host_name;
            seen.data_dir = d.data_dir;
        }
        Ok(Err(e)) => seen.error = e,
        Err(_) => seen.error = format!("worker {addr} did not answer within {}s", wait.as_secs()),
    }
    seen
}

/// Remove a run's shard files and checkpoints; its kept layers (`layers/`) stay, and so does the
/// directory if it holds them.
fn remove_run_files(dir: &std::path::Path) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut kept = false;
    for entry in entries {
        let entry = entry?;
        if entry.file_name() == "layers" {
            kept = true;
        } else if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    if !kept {
        std::fs::remove_dir(dir)?;
    }
    Ok(())
}

impl WorkerService {
    /// ShardValues and ShardDepth: the chunks `read` makes of one of a shard's arrays, on the
    /// blocking pool. Not a step: reading changes nothing, so it does not wait for the turn.
    async fn shard_array(
        &self,
        req: Request<pb::ShardRequest>,
        read: impl FnOnce(&OpenLayer, usize) -> Result<Vec<pb::DataChunk>, KernelError> + Send + 'static,
    ) -> Result<Response<ChunkStream>, Status> {
        let req = req.into_inner();
        let layer = self.coordinator_call(&req.run_id)?;
        let shard = req.shard as usize;
        let chunks = layer.blocking(move |l| read(l, shard)).await?;
        Ok(Response::new(Box::pin(tokio_stream::iter(
            chunks.into_iter().map(Ok),
        ))))
    }
}

/// What the engine returns for a shard's values or depths (`None`: not one of ours), with or
/// without an I/O error around it.
trait OwnedShard<T> {
    fn owned(self, shard: usize) -> Result<T, KernelError>;
}

impl<T> OwnedShard<T> for Option<T> {
    fn owned(self, shard: usize) -> Result<T, KernelError> {
        self.ok_or_else(|| KernelError::Worker {
            worker: "this worker".into(),
            message: format!("does not own shard {shard}"),
        })
    }
}

impl<T> OwnedShard<T> for Result<Option<T>, KernelError> {
    fn owned(self, shard: usize) -> Result<T, KernelError> {
        self?.owned(shard)
    }
}
