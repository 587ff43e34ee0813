//! The worker side of the protocol: a [`WorkerEngine`] per layer behind the gRPC service.
//!
//! Threads: the kernel's steps run on the global rayon pool (from tokio's blocking pool); update
//! batches received from peers are applied on a separate rayon pool. The separation matters: the
//! compute threads block in [`GrpcRouter::send`] until the peer has applied a batch, so if the
//! peer applied our batches on *its* compute threads, two workers sending to each other could
//! wait for each other forever.

use super::auth::AddToken;
use super::connect::lazy_client;
use super::metrics::{Metric, Registry};
use super::router::{GrpcRouter, RouterMetrics};
use super::wire::{decode_updates, encode_depth, encode_values};
use crate::kernel::checkpoint::CheckpointStore;
use crate::kernel::memory::{physical_memory, CellStorage};
use crate::kernel::{ClosedWave, KernelError, Layer, ShardPlan, WorkerEngine};
use crate::lock::DirLock;
use crate::spec::{AnyGame, GameSpec};
use crate::Game;
use kingmaker_proto::v1::{self as pb, worker_server::Worker};
use prost::Message;
use std::collections::HashMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tonic::{Request, Response, Status, Streaming};

/// How a worker was started.
#[derive(Clone)]
pub struct WorkerOptions {
    /// Shard arrays go to `data_dir/<run id>/<layer>/`.
    pub data_dir: PathBuf,
    /// The token it sends to its peers (the one it checks is in the server's interceptor).
    pub token: AddToken,
    /// Compute threads (the size of the global rayon pool).
    pub threads: usize,
    /// Bytes this worker may use: its cells stay in memory if they fit, else in mapped files.
    pub memory_budget: u64,
    /// Test only: sleep this long before every wave, so a test can kill a worker mid-run.
    pub wave_delay: Duration,
    /// Test only: the protocol version this worker claims to speak.
    pub protocol_version: u32,
}

/// Counters a worker exports.
struct WorkerMetrics {
    updates_received: Arc<Metric>,
    bytes_received: Arc<Metric>,
    decided: Arc<Metric>,
    expanded: Arc<Metric>,
    waves: Arc<Metric>,
    wave: Arc<Metric>,
    shards: Arc<Metric>,
    updates_sent: Arc<Metric>,
    bytes_sent: Arc<Metric>,
}

impl WorkerMetrics {
    fn new(r: &Registry) -> WorkerMetrics {
        WorkerMetrics {
            updates_received: r.counter(
                "kingmaker_worker_updates_received_total",
                "Updates received from peers.",
            ),
            bytes_received: r.counter(
                "kingmaker_worker_update_bytes_received_total",
                "Bytes of updates received.",
            ),
            updates_sent: r.counter(
                "kingmaker_worker_updates_sent_total",
                "Updates sent to peers.",
            ),
            bytes_sent: r.counter(
                "kingmaker_worker_update_bytes_sent_total",
                "Bytes of updates sent to peers.",
            ),
            decided: r.counter(
                "kingmaker_worker_states_decided_total",
                "States decided in owned shards.",
            ),
            expanded: r.counter(
                "kingmaker_worker_states_expanded_total",
                "Frontier states expanded.",
            ),
            waves: r.counter("kingmaker_worker_waves_total", "Waves closed (all layers)."),
            wave: r.gauge("kingmaker_worker_wave", "The wave being run."),
            shards: r.gauge(
                "kingmaker_worker_shards",
                "Shards owned in the current layer.",
            ),
        }
    }
}

/// The layer a worker is working on.
struct Active {
    run_id: String,
    layer: String,
    /// `data_dir/<run id>`.
    run_dir: PathBuf,
    engine: Arc<WorkerEngine<AnyGame>>,
    /// The layer's checkpoints, in `data_dir/<run id>/<layer>/checkpoint/`.
    checkpoints: Arc<CheckpointStore>,
    router: Arc<GrpcRouter>,
    /// The wave whose updates peers may deliver now (the one after the last closed wave).
    open_wave: AtomicU32,
    lease: Duration,
    /// Set (with the reason) to stop sending: the run was abandoned.
    abort: watch::Sender<Option<String>>,
    /// The layer was finished and the next one of the same run is being opened: not a failure.
    retired: AtomicBool,
    /// The lock of `run_dir`, held while this worker works on the run (passed on from layer to
    /// layer): a second worker on the same data directory is refused the run.
    lock: Arc<DirLock>,
}

impl Active {
    fn failure(&self) -> Option<String> {
        self.abort.borrow().clone()
    }

    /// The run goes on with its next layer: stop this one without reporting a failure.
    fn retire(&self) {
        self.retired.store(true, Relaxed);
        self.abandon("the layer is finished; the next one is being opened");
    }

    /// A failure to report to the coordinator (not the retirement of a finished layer).
    fn reported_failure(&self) -> Option<String> {
        if self.retired.load(Relaxed) {
            None
        } else {
            self.failure()
        }
    }

    /// Stop working on this run: pending and future sends fail, received updates are refused.
    fn abandon(&self, reason: &str) {
        self.abort.send_if_modified(|r| {
            if r.is_none() {
                *r = Some(reason.to_string());
                true
            } else {
                false
            }
        });
    }
}

struct Inner {
    opts: WorkerOptions,
    state: Mutex<Option<Arc<Active>>>,
    /// Built games by their spec (building one may take a moment).
    games: Mutex<HashMap<String, Arc<AnyGame>>>,
    /// When the coordinator of the active run was last heard from.
    last_contact: Mutex<Instant>,
    /// One kernel step at a time.
    step: tokio::sync::Mutex<()>,
    /// Applies received update batches (see the module documentation).
    receive_pool: Arc<rayon::ThreadPool>,
    runtime: tokio::runtime::Handle,
    metrics: WorkerMetrics,
    /// Set when a Shutdown asked the process to exit.
    exit: watch::Sender<bool>,
}

/// The gRPC service of one worker process.
#[derive(Clone)]
pub struct WorkerService {
    inner: Arc<Inner>,
}

type ChunkStream = Pin<Box<dyn tokio_stream::Stream<Item = Result<pb::DataChunk, Status>> + Send>>;

/// Run ids and layer names become directory names: keep them to a safe alphabet.
fn check_name(what: &str, name: &str) -> Result<(), Status> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(Status::invalid_argument(format!(
            "{what} {name:?} must be 1-128 characters of A-Z a-z 0-9 - _ ."
        )))
    }
}

impl WorkerService {
    pub fn new(
        opts: WorkerOptions,
        runtime: tokio::runtime::Handle,
        registry: &Registry,
    ) -> std::io::Result<Self> {
        let receive_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads.max(1))
            .thread_name(|i| format!("receive-{i}"))
            .build()
            .map_err(std::io::Error::other)?;
        let inner = Arc::new(Inner {
            opts,
            state: Mutex::new(None),
            games: Mutex::new(HashMap::new()),
            last_contact: Mutex::new(Instant::now()),
            step: tokio::sync::Mutex::new(()),
            receive_pool: Arc::new(receive_pool),
            runtime,
            metrics: WorkerMetrics::new(registry),
            exit: watch::channel(false).0,
        });
        Ok(WorkerService { inner })
    }

    /// Resolves when a Shutdown call asked the process to exit.
    pub fn exit_requested(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.inner.exit.subscribe();
        async move {
            let _ = rx.wait_for(|&exit| exit).await;
        }
    }

    /// Abandon the active run when its coordinator has been silent for longer than its lease.
    /// Runs until the process ends.
    pub async fn watch_lease(self) {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tick.tick().await;
            let active = self.inner.state.lock().expect("worker state").clone();
            if let Some(a) = active {
                let silent = self
                    .inner
                    .last_contact
                    .lock()
                    .expect("contact time")
                    .elapsed();
                if a.failure().is_none() && silent > a.lease {
                    let reason = format!(
                        "lost the coordinator of run {} (no call for {:.1}s): stopped writing",
                        a.run_id,
                        silent.as_secs_f64()
                    );
                    tracing::warn!("{reason}");
                    a.abandon(&reason);
                }
            }
        }
    }

    fn touch(&self) {
        *self.inner.last_contact.lock().expect("contact time") = Instant::now();
    }

    /// The active layer of run `run_id`, if it has not been abandoned.
    fn active(&self, run_id: &str) -> Result<Arc<Active>, Status> {
        let state = self.inner.state.lock().expect("worker state");
        match state.as_ref() {
            None => Err(Status::failed_precondition(format!(
                "no layer of run {run_id} is open on this worker (did it restart?)"
            ))),
            Some(a) if a.run_id != run_id => Err(Status::failed_precondition(format!(
                "this worker is working on run {}, not {run_id}",
                a.run_id
            ))),
            Some(a) => match a.failure() {
                Some(reason) => Err(Status::aborted(format!(
                    "this worker abandoned run {run_id}: {reason}"
                ))),
                None => Ok(a.clone()),
            },
        }
    }

    /// Run a blocking kernel step on tokio's blocking pool (the kernel uses the rayon pool).
    async fn blocking<T: Send + 'static>(
        &self,
        active: &Arc<Active>,
        f: impl FnOnce(&Active) -> Result<T, KernelError> + Send + 'static,
    ) -> Result<T, Status> {
        let a = active.clone();
        let result = tokio::task::spawn_blocking(move || f(&a))
            .await
            .map_err(|e| Status::internal(format!("kernel step panicked: {e}")))?;
        result.map_err(|e| {
            let status = Status::from(e);
            active.abandon(&format!("a kernel step failed: {}", status.message()));
            status
        })
    }

    fn game(&self, spec_json: &str) -> Result<Arc<AnyGame>, Status> {
        if let Some(g) = self.inner.games.lock().expect("game cache").get(spec_json) {
            return Ok(g.clone());
        }
        let spec: GameSpec = serde_json::from_str(spec_json).map_err(|e| {
            Status::invalid_argument(format!(
                "game spec {spec_json:?} is not one this worker knows: {e}"
            ))
        })?;
        let game = Arc::new(spec.build().map_err(|e| {
            Status::invalid_argument(format!("cannot build the game {spec_json}: {e:#}"))
        })?);
        let mut games = self.inner.games.lock().expect("game cache");
        games.clear(); // one game at a time is plenty
        games.insert(spec_json.to_string(), game.clone());
        Ok(game)
    }

    fn check_version(&self, version: u32) -> Result<(), Status> {
        let mine = self.inner.opts.protocol_version;
        if version == mine {
            Ok(())
        } else {
            Err(Status::failed_precondition(format!(
                "this worker speaks protocol version {mine}, the request version {version}: \
                 run the same Kingmaker version on the coordinator and every worker"
            )))
        }
    }

    async fn start_layer_inner(
        &self,
        req: pb::StartLayerRequest,
    ) -> Result<pb::StartLayerReply, Status> {
        self.check_version(req.protocol_version)?;
        check_name("run id", &req.run_id)?;
        let spec = req
            .layer
            .ok_or_else(|| Status::invalid_argument("no layer given"))?;
        check_name("layer name", &spec.name)?;
        let plan = ShardPlan::from(
            req.plan
                .ok_or_else(|| Status::invalid_argument("no shard plan given"))?,
        );
        if req.owners.len() != plan.shards() {
            return Err(Status::invalid_argument(format!(
                "{} shard owners for {} shards",
                req.owners.len(),
                plan.shards()
            )));
        }
        let workers = req.peers.len();
        if req.me as usize >= workers || req.owners.iter().any(|&o| o as usize >= workers) {
            return Err(Status::invalid_argument(format!(
                "worker numbers must be below {workers}"
            )));
        }
        let layer = Layer::from(&spec);
        // Building a game may take seconds (catalogues, ranking tables): not on a network thread.
        let (me_service, spec_json) = (self.clone(), req.game_spec_json.clone());
        let game = tokio::task::spawn_blocking(move || me_service.game(&spec_json))
            .await
            .map_err(|e| Status::internal(format!("building the game panicked: {e}")))??;
        if game.size() != plan.size {
            return Err(Status::failed_precondition(format!(
                "the coordinator says {} has {} states, this worker counts {}: are both the same Kingmaker version?",
                game.name(),
                plan.size,
                game.size()
            )));
        }

        // Take over from the previous layer: of this run (finished: the coordinator has its table),
        // or of an abandoned run (its files stay). A live run of another coordinator is refused.
        // The previous layer stays in place, retired, until the new one is open, so heartbeats
        // keep naming this run meanwhile.
        let mut run_lock = None;
        {
            let state = self.inner.state.lock().expect("worker state");
            if let Some(previous) = state.as_ref() {
                if previous.run_id == req.run_id {
                    run_lock = Some(previous.lock.clone());
                }
                if previous.run_id != req.run_id && previous.failure().is_none() {
                    return Err(Status::failed_precondition(format!(
                        "this worker is busy with run {} of another coordinator",
                        previous.run_id
                    )));
                }
                if previous.run_id == req.run_id {
                    previous.retire();
                    // The same layer again is a resumed run reopening its files and checkpoints;
                    // another layer means the previous one is finished.
                    if previous.layer != spec.name {
                        let dir = previous.run_dir.join(&previous.layer);
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                }
            }
        }

        let run_dir = self.inner.opts.data_dir.join(&req.run_id);
        let layer_dir = run_dir.join(&layer.name);
        std::fs::create_dir_all(&layer_dir)
            .map_err(|e| Status::internal(format!("cannot create {}: {e}", layer_dir.display())))?;
        let lock = match run_lock {
            Some(lock) => lock,
            None => Arc::new(DirLock::acquire(&run_dir, "kingmaker-worker").map_err(|e| {
                Status::failed_precondition(format!(
                    "{e}: another worker uses the same data directory for this run; give each \
                     worker a data directory of its own"
                ))
            })?),
        };
        let mut peers = Vec::with_capacity(workers);
        for addr in &req.peers {
            let client =
                lazy_client(addr, &self.inner.opts.token).map_err(Status::invalid_argument)?;
            peers.push((addr.clone(), client));
        }
        let (abort, abort_rx) = watch::channel(None);
        let m = &self.inner.metrics;
        let router = Arc::new(GrpcRouter::new(
            req.run_id.clone(),
            req.me,
            peers,
            self.inner.runtime.clone(),
            abort_rx,
            RouterMetrics {
                updates_sent: m.updates_sent.clone(),
                bytes_sent: m.bytes_sent.clone(),
            },
        ));
        let owners: Vec<usize> = req.owners.iter().map(|&o| o as usize).collect();
        let me = req.me as usize;
        let mine: u64 = (0..plan.shards())
            .filter(|&s| owners[s] == me)
            .map(|s| plan.range(s).end - plan.range(s).start)
            .sum();
        let storage = CellStorage::for_budget(mine, self.inner.opts.memory_budget);
        let (g, l, r, dir) = (
            game.clone(),
            layer.clone(),
            router.clone(),
            layer_dir.clone(),
        );
        let engine = tokio::task::spawn_blocking(move || {
            WorkerEngine::new(
                g,
                l,
                plan,
                owners,
                me,
                Some(&dir),
                storage,
                r as Arc<dyn crate::kernel::Router>,
            )
        })
        .await
        .map_err(|e| Status::internal(format!("opening shards panicked: {e}")))?
        .map_err(Status::from)?;
        let shards = engine.owned_shards().len();
        let lease = Duration::from_millis(u64::from(req.lease_ms.max(1000)));
        let active = Arc::new(Active {
            run_id: req.run_id.clone(),
            layer: layer.name.clone(),
            run_dir,
            engine: Arc::new(engine),
            checkpoints: Arc::new(CheckpointStore::new(layer_dir.join("checkpoint"))),
            router,
            open_wave: AtomicU32::new(0),
            lease,
            abort,
            retired: AtomicBool::new(false),
            lock,
        });
        *self.inner.state.lock().expect("worker state") = Some(active);
        m.shards.set(shards as u64);
        tracing::info!(
            "run {}: layer {} of {} as worker {me} of {workers}: {shards} shards in {}",
            req.run_id,
            layer.name,
            game.name(),
            layer_dir.display()
        );
        Ok(pb::StartLayerReply {
            shards: shards as u32,
        })
    }
}

#[tonic::async_trait]
impl Worker for WorkerService {
    async fn describe(
        &self,
        req: Request<pb::DescribeRequest>,
    ) -> Result<Response<pb::DescribeReply>, Status> {
        let _ = req;
        let run_id = self
            .inner
            .state
            .lock()
            .expect("worker state")
            .as_ref()
            .map(|a| a.run_id.clone());
        Ok(Response::new(pb::DescribeReply {
            protocol_version: self.inner.opts.protocol_version,
            worker_version: env!("CARGO_PKG_VERSION").to_string(),
            cores: self.inner.opts.threads as u32,
            memory_bytes: physical_memory(),
            run_id: run_id.unwrap_or_default(),
        }))
    }

    async fn start_layer(
        &self,
        req: Request<pb::StartLayerRequest>,
    ) -> Result<Response<pb::StartLayerReply>, Status> {
        self.touch();
        let _step = self.inner.step.lock().await;
        let reply = self.start_layer_inner(req.into_inner()).await;
        self.touch();
        reply.map(Response::new)
    }

    async fn checkpoint(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        self.touch();
        let req = req.into_inner();
        let active = self.active(&req.run_id)?;
        let _step = self.inner.step.lock().await;
        let open = active.open_wave.load(Relaxed);
        if open != req.wave + 1 {
            return Err(Status::failed_precondition(format!(
                "asked to checkpoint wave {} while wave {open} is open (only the last closed wave can be saved)",
                req.wave
            )));
        }
        let wave = req.wave;
        self.blocking(&active, move |a| a.checkpoints.save(&a.engine, wave))
            .await?;
        tracing::info!(
            "run {}: layer {} checkpointed after wave {wave}",
            active.run_id,
            active.layer
        );
        Ok(Response::new(pb::StepReply {}))
    }

    async fn restore(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        self.touch();
        let req = req.into_inner();
        let active = self.active(&req.run_id)?;
        let _step = self.inner.step.lock().await;
        let wave = req.wave;
        // Not `blocking`: a damaged checkpoint is no reason to abandon the run, the coordinator may
        // fall back to the one before.
        let a = active.clone();
        let restored = tokio::task::spawn_blocking(move || a.checkpoints.load(&a.engine, wave))
            .await
            .map_err(|e| Status::internal(format!("restoring panicked: {e}")))?
            .map_err(Status::from);
        if let Err(status) = &restored {
            tracing::error!(
                "run {}: layer {}: cannot restore the checkpoint after wave {wave}: {}",
                active.run_id,
                active.layer,
                status.message()
            );
        }
        restored?;
        active.open_wave.store(wave + 1, Relaxed);
        tracing::info!(
            "run {}: layer {} restored to its checkpoint after wave {wave}",
            active.run_id,
            active.layer
        );
        Ok(Response::new(pb::StepReply {}))
    }

    async fn init_pass(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        self.touch();
        let req = req.into_inner();
        let active = self.active(&req.run_id)?;
        let _step = self.inner.step.lock().await;
        active.open_wave.store(0, Relaxed);
        self.blocking(&active, |a| a.engine.init_pass()).await?;
        Ok(Response::new(pb::StepReply {}))
    }

    async fn run_wave(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::StepReply>, Status> {
        self.touch();
        let req = req.into_inner();
        let active = self.active(&req.run_id)?;
        let _step = self.inner.step.lock().await;
        let open = active.open_wave.load(Relaxed);
        if req.wave == 0 || req.wave != open {
            return Err(Status::failed_precondition(format!(
                "asked to run wave {} while wave {open} is open",
                req.wave
            )));
        }
        if !self.inner.opts.wave_delay.is_zero() {
            tokio::time::sleep(self.inner.opts.wave_delay).await;
        }
        self.inner.metrics.wave.set(u64::from(req.wave));
        active.router.set_wave(req.wave);
        let wave = req.wave;
        self.blocking(&active, move |a| a.engine.run_wave(wave))
            .await?;
        Ok(Response::new(pb::StepReply {}))
    }

    async fn close_wave(
        &self,
        req: Request<pb::StepRequest>,
    ) -> Result<Response<pb::CloseWaveReply>, Status> {
        self.touch();
        let req = req.into_inner();
        let active = self.active(&req.run_id)?;
        let _step = self.inner.step.lock().await;
        let open = active.open_wave.load(Relaxed);
        if req.wave != open {
            return Err(Status::failed_precondition(format!(
                "asked to close wave {} while wave {open} is open",
                req.wave
            )));
        }
        let wave = req.wave;
        let (decided, stats) = self
            .blocking(&active, move |a| a.engine.close_wave(wave))
            .await?;
        active.open_wave.store(wave + 1, Relaxed);
        let closed = ClosedWave {
            decided,
            stats,
            wire_bytes: Some(active.router.take_bytes()),
        };
        let m = &self.inner.metrics;
        m.decided.add(decided);
        m.expanded.add(stats.expanded);
        m.waves.add(1);
        Ok(Response::new(closed.into()))
    }

    async fn updates(
        &self,
        req: Request<Streaming<pb::UpdateChunk>>,
    ) -> Result<Response<pb::UpdatesReply>, Status> {
        let mut stream = req.into_inner();
        // The first chunk names the run and the wave; the rest of the stream belongs to them.
        let mut header: Option<Arc<Active>> = None;
        let mut applied = 0u64;
        while let Some(chunk) = stream.message().await? {
            let active = match &header {
                Some(active) => active.clone(),
                None => {
                    let active = self.active(&chunk.run_id)?;
                    let open = active.open_wave.load(Relaxed);
                    if chunk.wave != open || open == 0 {
                        return Err(Status::failed_precondition(format!(
                            "updates of wave {} from worker {} arrived while wave {open} is open",
                            chunk.wave, chunk.from
                        )));
                    }
                    header = Some(active.clone());
                    active
                }
            };
            if let Some(reason) = active.failure() {
                return Err(Status::aborted(format!(
                    "this worker abandoned run {}: {reason}",
                    active.run_id
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
            let engine = active.engine.clone();
            self.inner.receive_pool.spawn(move || {
                let _ = tx.send(engine.receive(&updates));
            });
            rx.await
                .map_err(|_| Status::internal("applying updates panicked"))?
                .map_err(Status::from)?;
            applied += n;
            self.inner.metrics.updates_received.add(n);
        }
        Ok(Response::new(pb::UpdatesReply { applied }))
    }

    type ShardValuesStream = ChunkStream;
    async fn shard_values(
        &self,
        req: Request<pb::ShardRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        self.touch();
        let req = req.into_inner();
        let active = self.active(&req.run_id)?;
        let shard = req.shard as usize;
        let chunks = self
            .blocking(&active, move |a| {
                let values = a.engine.shard_values(shard).owned(shard)?;
                Ok(encode_values(&values))
            })
            .await?;
        Ok(Response::new(Box::pin(tokio_stream::iter(
            chunks.into_iter().map(Ok),
        ))))
    }

    type ShardDepthStream = ChunkStream;
    async fn shard_depth(
        &self,
        req: Request<pb::ShardRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        self.touch();
        let req = req.into_inner();
        let active = self.active(&req.run_id)?;
        let shard = req.shard as usize;
        let chunks = self
            .blocking(&active, move |a| {
                let depth = a.engine.shard_depth(shard).owned(shard)?;
                Ok(encode_depth(&depth))
            })
            .await?;
        Ok(Response::new(Box::pin(tokio_stream::iter(
            chunks.into_iter().map(Ok),
        ))))
    }

    async fn heartbeat(
        &self,
        req: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatReply>, Status> {
        let req = req.into_inner();
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
                if let Err(e) = std::fs::remove_dir_all(&dir) {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        return Err(Status::internal(format!("removing {}: {e}", dir.display())));
                    }
                }
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
