//! The worker's end of the protocol: the gRPC service of one `kingmaker-worker` process, with a
//! [`WorkerEngine`](kingmaker_kernel::WorkerEngine) per open layer (`layer.rs`) behind the RPCs
//! (`rpc.rs`), checkpoint replicas (`replica.rs`), finished layers kept and expanded where they
//! are (`kept.rs`), and the process around it ([`run`], `process.rs`). This file holds what every
//! call shares: the worker's state, the coordinator's lease, and the admission of kernel steps.
//!
//! Threads: the kernel's steps run on the global rayon pool (from tokio's blocking pool); update
//! batches received from peers are applied on a separate rayon pool. The separation matters: the
//! compute threads block in `GrpcRouter::send` until the peer has applied a batch, so if the
//! peer applied our batches on *its* compute threads, two workers sending to each other could
//! wait for each other forever.

mod kept;
mod layer;
mod process;
mod replica;
mod rpc;

pub use process::{run, ProcessOptions};

use super::auth::AddToken;
use super::metrics::{Metric, Registry};
use kingmaker_games::{AnyGame, GameSpec};
use kingmaker_proto::v1 as pb;
use layer::OpenLayer;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tonic::{Request, Status};

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
    replica_bytes_sent: Arc<Metric>,
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
            replica_bytes_sent: r.counter(
                "kingmaker_worker_replica_bytes_sent_total",
                "Bytes of checkpoint files sent to the replica on the ring successor.",
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

struct Inner {
    opts: WorkerOptions,
    /// The open layer (none before the first StartLayer and after a Shutdown).
    state: Mutex<Option<Arc<OpenLayer>>>,
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

impl WorkerService {
    /// A worker with no run yet, its counters registered in `registry`.
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

    /// The coordinator was heard from (its lease starts again).
    fn touch(&self) {
        *self.inner.last_contact.lock().expect("contact time") = Instant::now();
    }

    /// The open layer of run `run_id`, if it has not been abandoned.
    fn layer_of(&self, run_id: &str) -> Result<Arc<OpenLayer>, Status> {
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

    /// A call of the coordinator on the open layer of run `run_id`: the contact is noted, the
    /// layer found.
    fn coordinator_call(&self, run_id: &str) -> Result<Arc<OpenLayer>, Status> {
        self.touch();
        self.layer_of(run_id)
    }

    /// Admit a kernel step: a coordinator call on the open layer of the request's run that waits
    /// for the worker's turn (one step at a time) and holds it until the step is dropped.
    async fn begin_step(&self, req: Request<pb::StepRequest>) -> Result<Step<'_>, Status> {
        let req = req.into_inner();
        let layer = self.coordinator_call(&req.run_id)?;
        let turn = self.inner.step.lock().await;
        Ok(Step {
            layer,
            wave: req.wave,
            _turn: turn,
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
}

/// A kernel step admitted by [`WorkerService::begin_step`].
struct Step<'a> {
    layer: Arc<OpenLayer>,
    /// The wave the request names.
    wave: u32,
    _turn: tokio::sync::MutexGuard<'a, ()>,
}
