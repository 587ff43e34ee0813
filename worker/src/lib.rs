//! `kingmaker-worker`'s service: the gRPC server of one worker process and what its calls share.
//! 1. Peers' update batches are applied on a rayon pool of their own: the compute threads block in
//!    `GrpcRouter::send` until the peer has applied a batch, so two workers sending to each other
//!    and applying on their compute threads could wait for each other forever.

// A kernel engine per open layer behind the RPCs; finished layers kept where they were computed.
// They use this file's items and one another without a cycle: layer uses router and routed; kept,
// rpc and replica use layer (kept uses routed too); process uses only this file.
mod kept;
mod layer;
mod process;
mod replica;
mod routed;
mod router;
mod rpc;

pub use process::{run, ProcessOptions};

use kingmaker_games::{AnyGame, GameSpec};
use kingmaker_process::metrics::{Metric, Registry};
use kingmaker_proto::v1 as pb;
use kingmaker_proto::WorkerServer;
use kingmaker_rpc::auth::AddToken;
use kingmaker_rpc::auth::CheckToken;
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
                "Updates received from peers, or decided states in their place.",
            ),
            bytes_received: r.counter(
                "kingmaker_worker_update_bytes_received_total",
                "Bytes of updates received.",
            ),
            updates_sent: r.counter(
                "kingmaker_worker_updates_sent_total",
                "Updates sent to peers, or decided states in their place.",
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
    /// Who this worker is (Describe tells the coordinator).
    identity: Identity,
    /// The run a coordinator holds this worker for until it opens a layer here (Reserve). Locked
    /// before `state` where both are.
    reserved: Mutex<Option<Reservation>>,
}

/// A worker held for a run about to start (see Reserve in the protocol).
struct Reservation {
    run_id: String,
    started_by: String,
    lease: Duration,
    renewed: Instant,
}

impl Reservation {
    fn live(&self) -> bool {
        self.renewed.elapsed() <= self.lease
    }
}

/// A worker process's identity: a random id made at start (two addresses of one process answer
/// with the same one), its host and its data directory (absolute), which messages name.
struct Identity {
    instance_id: String,
    host_name: String,
    data_dir: String,
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
            state: Mutex::new(None),
            games: Mutex::new(HashMap::new()),
            last_contact: Mutex::new(Instant::now()),
            step: tokio::sync::Mutex::new(()),
            receive_pool: Arc::new(receive_pool),
            runtime,
            metrics: WorkerMetrics::new(registry),
            exit: watch::channel(false).0,
            identity: Identity {
                instance_id: kingmaker_process::identity::random_id(),
                host_name: kingmaker_process::identity::host_name(),
                data_dir: std::fs::canonicalize(&opts.data_dir)
                    .or_else(|_| std::path::absolute(&opts.data_dir))
                    .unwrap_or_else(|_| opts.data_dir.clone())
                    .display()
                    .to_string(),
            },
            opts,
            reserved: Mutex::new(None),
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

    /// The run other than `run_id` this worker works on or is held for, with who started it: a
    /// coordinator of `run_id` is refused. Call with `reserved` and `state` locked, in that order.
    fn busy_with(
        &self,
        reserved: &Option<Reservation>,
        state: &Option<Arc<OpenLayer>>,
        run_id: &str,
    ) -> Option<(String, String)> {
        if let Some(a) = state {
            if a.run_id != run_id && a.busy(self.silent()) {
                return Some((a.run_id.clone(), a.started_by.clone()));
            }
        }
        match reserved {
            Some(r) if r.run_id != run_id && r.live() => {
                Some((r.run_id.clone(), r.started_by.clone()))
            }
            _ => None,
        }
    }

    /// How long since the coordinator was last heard from.
    fn silent(&self) -> Duration {
        self.inner
            .last_contact
            .lock()
            .expect("contact time")
            .elapsed()
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

/// The chunks of a streamed reply: shard arrays, checkpoint replicas, kept parts.
type ChunkStream =
    std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Result<pb::DataChunk, Status>> + Send>>;

/// A kernel step admitted by [`WorkerService::begin_step`].
struct Step<'a> {
    layer: Arc<OpenLayer>,
    /// The wave the request names.
    wave: u32,
    _turn: tokio::sync::MutexGuard<'a, ()>,
}

/// Serve the worker protocol on `listener` until ctrl-c or a Shutdown call that asks to exit.
/// `on_bound` is told the address actually bound (useful with port 0).
pub async fn serve(
    listener: tokio::net::TcpListener,
    opts: WorkerOptions,
    check: CheckToken,
    registry: Arc<Registry>,
) -> anyhow::Result<()> {
    let service = WorkerService::new(opts, tokio::runtime::Handle::current(), &registry)?;
    tokio::spawn(service.clone().watch_lease());
    let exit = service.exit_requested();
    let shutdown = async move {
        tokio::select! {
            _ = exit => {}
            _ = tokio::signal::ctrl_c() => tracing::info!("interrupted: stopping"),
        }
    };
    // Small replies must not wait for Nagle's algorithm (the socket options of an incoming stream
    // are its own, not the server builder's).
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    tonic::transport::Server::builder()
        .initial_stream_window_size(1 << 21)
        .initial_connection_window_size(1 << 23)
        .http2_keepalive_interval(Some(std::time::Duration::from_secs(5)))
        // A client paused for less than its run's worker timeout keeps its connection: the
        // server does not judge it (the coordinator's lease and heartbeats do).
        .http2_keepalive_timeout(Some(std::time::Duration::from_secs_f64(
            kingmaker_kernel::options::MAX_WORKER_TIMEOUT,
        )))
        .add_service(WorkerServer::with_interceptor(service, check))
        .serve_with_incoming_shutdown(incoming, shutdown)
        .await?;
    Ok(())
}
