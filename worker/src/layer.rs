//! The layer a worker has open (its engine, checkpoints and router, the wave peers may deliver
//! to, the coordinator's lease, the abort signal) and opening one for StartLayer.

use super::routed::KeptState;
use super::router::{GrpcRouter, RouterMetrics};
use super::WorkerService;
use kingmaker_games::AnyGame;
use kingmaker_kernel::checkpoint::CheckpointStore;
use kingmaker_kernel::memory::CellStorage;
use kingmaker_kernel::Game;
use kingmaker_kernel::{KernelError, Layer, ShardPlan, WorkerEngine};
use kingmaker_process::lock::DirLock;
use kingmaker_proto::v1 as pb;
use kingmaker_rpc::connect::{keep_alive_for, lazy_client, Client};
use kingmaker_rpc::convert::{Convert, TryConvert};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tonic::Status;

/// The layer a worker is working on.
pub(super) struct OpenLayer {
    pub(super) run_id: String,
    pub(super) layer: String,
    /// `data_dir/<run id>`.
    run_dir: PathBuf,
    /// `data_dir/<run id>/<layer>`: the shard files, `checkpoint/` and `replicas/`.
    pub(super) layer_dir: PathBuf,
    /// Every worker of the run by number (this one included), for replicas.
    pub(super) peers: Vec<(String, Client)>,
    pub(super) engine: Arc<WorkerEngine<AnyGame>>,
    /// The game the engine solves (a reduced game's expansion needs its [`AnyGame::reduction`]).
    pub(super) game: Arc<AnyGame>,
    /// The finished layer's expansion, when it is kept on the workers.
    pub(super) kept: std::sync::Mutex<KeptState>,
    /// The layer's checkpoints, in `data_dir/<run id>/<layer>/checkpoint/`.
    pub(super) checkpoints: Arc<CheckpointStore>,
    pub(super) router: Arc<GrpcRouter>,
    /// The wave whose updates peers may deliver now (the one after the last closed wave).
    pub(super) open_wave: AtomicU32,
    pub(super) lease: Duration,
    /// Set (with the reason) to stop sending: the run was abandoned.
    abort: watch::Sender<Option<String>>,
    /// The layer was finished and the next one of the same run is being opened: not a failure.
    retired: AtomicBool,
    /// Who started the run (StartLayerRequest.started_by), for another coordinator.
    pub(super) started_by: String,
    /// The lock of `run_dir`, held while this worker works on the run (passed on from layer to
    /// layer): a second worker on the same data directory is refused the run.
    lock: Arc<DirLock>,
}

impl OpenLayer {
    pub(super) fn failure(&self) -> Option<String> {
        self.abort.borrow().clone()
    }

    /// The run goes on with its next layer: stop this one without reporting a failure.
    fn retire(&self) {
        self.retired.store(true, Relaxed);
        self.abandon("the layer is finished; the next one is being opened");
    }

    /// A failure to report to the coordinator (not the retirement of a finished layer).
    pub(super) fn reported_failure(&self) -> Option<String> {
        if self.retired.load(Relaxed) {
            None
        } else {
            self.failure()
        }
    }

    /// Whether the run goes on here (a coordinator that would start another one is refused): not
    /// abandoned, or only retired (its next layer being opened) with its coordinator heard from
    /// `silent` ago, within the lease.
    pub(super) fn busy(&self, silent: Duration) -> bool {
        self.failure().is_none() || (self.retired.load(Relaxed) && silent <= self.lease)
    }

    /// Stop working on this run: pending and future sends fail, received updates are refused.
    pub(super) fn abandon(&self, reason: &str) {
        self.abort.send_if_modified(|r| {
            if r.is_none() {
                *r = Some(reason.to_string());
                true
            } else {
                false
            }
        });
    }

    /// The open wave, if the step fits it (`fits(open)`); else the step is refused with the
    /// words of `refusal(open)`.
    pub(super) fn open_wave_for(
        &self,
        fits: impl FnOnce(u32) -> bool,
        refusal: impl FnOnce(u32) -> String,
    ) -> Result<u32, Status> {
        let open = self.open_wave.load(Relaxed);
        if fits(open) {
            Ok(open)
        } else {
            Err(Status::failed_precondition(refusal(open)))
        }
    }

    /// Run a blocking kernel step on tokio's blocking pool (the kernel uses the rayon pool). A
    /// failed step abandons the run.
    pub(super) async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce(&OpenLayer) -> Result<T, KernelError> + Send + 'static,
    ) -> Result<T, Status> {
        let layer = self.clone();
        let result = tokio::task::spawn_blocking(move || f(&layer))
            .await
            .map_err(|e| Status::internal(format!("kernel step panicked: {e}")))?;
        result.map_err(|e| {
            let status = Status::convert(e);
            self.abandon(&format!("a kernel step failed: {}", status.message()));
            status
        })
    }
}

/// Who started a run, as its coordinator said (an older one says nothing).
fn started_by(words: &str) -> &str {
    if words.is_empty() {
        "a coordinator that did not say who it is"
    } else {
        words
    }
}

/// Run ids and layer names become directory names: keep them to a safe alphabet.
pub(super) fn check_name(what: &str, name: &str) -> Result<(), Status> {
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
    /// Open the layer of a StartLayer request: check it, take over from the previous layer (of
    /// this run: finished; of an abandoned run: its files stay), open the shards.
    pub(super) async fn open_layer(
        &self,
        req: pb::StartLayerRequest,
    ) -> Result<pb::StartLayerReply, Status> {
        self.check_version(req.protocol_version)?;
        check_name("run id", &req.run_id)?;
        let spec = req
            .layer
            .ok_or_else(|| Status::invalid_argument("no layer given"))?;
        check_name("layer name", &spec.name)?;
        let plan = ShardPlan::convert(
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
        let layer = Layer::try_convert(&spec).map_err(Status::invalid_argument)?;
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
            // Held for another run that is about to start (Reserve): refused like a busy one.
            let mut reserved = self.inner.reserved.lock().expect("reservation");
            let state = self.inner.state.lock().expect("worker state");
            match reserved.as_ref() {
                Some(r) if r.run_id != req.run_id && r.live() => {
                    return Err(Status::failed_precondition(format!(
                        "this worker is busy with run {} (started by {})",
                        r.run_id,
                        started_by(&r.started_by)
                    )));
                }
                // The run's own hold ends here: its open layer keeps the worker from now on.
                _ => *reserved = None,
            }
            if let Some(previous) = state.as_ref() {
                if previous.run_id == req.run_id {
                    run_lock = Some(previous.lock.clone());
                }
                if previous.run_id != req.run_id && previous.failure().is_none() {
                    return Err(Status::failed_precondition(format!(
                        "this worker is busy with run {} (started by {})",
                        previous.run_id,
                        started_by(&previous.started_by)
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
        // The coordinator's lease is three of its worker timeouts (at least 3 s).
        let lease = Duration::from_millis(u64::from(req.lease_ms.max(1000)));
        let keep_alive = keep_alive_for(lease / 3);
        let mut peers = Vec::with_capacity(workers);
        for addr in &req.peers {
            let client = lazy_client(addr, &self.inner.opts.token, keep_alive)
                .map_err(Status::invalid_argument)?;
            peers.push((addr.clone(), client));
        }
        let (abort, abort_rx) = watch::channel(None);
        let m = &self.inner.metrics;
        let router = Arc::new(GrpcRouter::new(
            req.run_id.clone(),
            req.me,
            peers.clone(),
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
                r as Arc<dyn kingmaker_kernel::Router>,
            )
        })
        .await
        .map_err(|e| Status::internal(format!("opening shards panicked: {e}")))?
        .map_err(Status::convert)?;
        let shards = engine.owned_shards().len();
        // Checkpoints name the game the coordinator sent, and only those naming it are restored.
        let game_json: serde_json::Value = serde_json::from_str(&req.game_spec_json)
            .map_err(|e| Status::invalid_argument(format!("the game is not JSON: {e}")))?;
        let open = Arc::new(OpenLayer {
            run_id: req.run_id.clone(),
            layer: layer.name.clone(),
            run_dir,
            layer_dir: layer_dir.clone(),
            peers,
            engine: Arc::new(engine),
            game: game.clone(),
            kept: std::sync::Mutex::new(KeptState::default()),
            checkpoints: Arc::new(CheckpointStore::new(
                layer_dir.join("checkpoint"),
                game_json,
            )),
            router,
            open_wave: AtomicU32::new(0),
            lease,
            abort,
            retired: AtomicBool::new(false),
            started_by: req.started_by.clone(),
            lock,
        });
        *self.inner.state.lock().expect("worker state") = Some(open);
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
