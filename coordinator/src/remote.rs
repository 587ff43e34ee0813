//! Remote workers: the coordinator's side of the gRPC protocol (`proto/proto/kingmaker.proto`).
//!
//! A [`Cluster`] is the set of `kingmaker-worker` processes of one build: it checks each one
//! (token, protocol version), heartbeats them for the whole run, starts each layer on them and
//! hands the driver one [`RemoteWorker`] per process, the same [`WorkerHandle`] the in-process
//! workers implement. When a worker dies or stalls, every pending call returns an error naming it,
//! so `drive_layer` fails within seconds and the build exits non-zero with its state intact.

use anyhow::{bail, Context, Result};
use kingmaker_proto::v1 as pb;
use kingmaker_proto::PROTOCOL_VERSION;
use kingmaker_tablefmt::layer::unpack_values;
use kingmaker_worker::kernel::{
    assign_shards, ClosedWave, KernelError, Layer, ShardPlan, WaveStats, WorkerHandle,
};
use kingmaker_worker::service::auth::AddToken;
use kingmaker_worker::service::client::{connect, Client};
use kingmaker_worker::service::router::describe_status;
use kingmaker_worker::service::wire::unpack_bytes;
use kingmaker_worker::spec::GameSpec;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tonic::{Code, Status};

/// How to reach and watch the workers of a distributed build.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// `HOST:PORT` of every worker, in worker-number order.
    pub addrs: Vec<String>,
    pub token: String,
    /// A worker that has not answered heartbeats for this long is reported and the run stops.
    pub timeout: Duration,
}

/// Why the run was stopped: the worker at fault and what happened.
type Abort = Option<(String, String)>;

/// The workers of one build, connected and checked.
pub struct Cluster {
    runtime: tokio::runtime::Runtime,
    run_id: String,
    /// Address, client for the run's calls, and what the worker said about itself.
    workers: Vec<(String, Client, pb::DescribeReply)>,
    abort: watch::Sender<Abort>,
    timeout: Duration,
    monitors: Vec<tokio::task::JoinHandle<()>>,
}

/// Wait until the run is aborted; the worker at fault and the reason.
async fn aborted(rx: &mut watch::Receiver<Abort>) -> (String, String) {
    match rx.wait_for(|a| a.is_some()).await {
        Ok(a) => a.clone().unwrap_or_default(),
        Err(_) => ("coordinator".into(), "the run was dropped".into()),
    }
}

/// A failed call to `addr`, in words an operator can act on.
fn status_message(status: &Status) -> String {
    match status.code() {
        Code::Unauthenticated => {
            "refused our token: give the coordinator the token the workers were started with \
                                  (--token or KINGMAKER_TOKEN)"
                .to_string()
        }
        Code::Unavailable | Code::Cancelled | Code::Unknown if is_transport(status) => {
            format!(
                "is unreachable: it died, was killed or lost the network ({})",
                describe_status(status)
            )
        }
        _ => describe_status(status),
    }
}

/// A transport failure (connection refused or reset), as opposed to an error the worker returned.
fn is_transport(status: &Status) -> bool {
    use std::error::Error;
    status.code() == Code::Unavailable || status.source().is_some()
}

impl Cluster {
    /// Connect to every worker, check the token and the protocol version, and start heartbeats.
    /// `run_id`: the id of the run being resumed (its workers keep their files under it), or None
    /// for a new run.
    pub fn connect(opts: &RemoteOptions, game: &GameSpec, run_id: Option<&str>) -> Result<Cluster> {
        if opts.addrs.is_empty() {
            bail!("--workers needs at least one HOST:PORT");
        }
        for (i, a) in opts.addrs.iter().enumerate() {
            if opts.addrs[..i].contains(a) {
                bail!("worker {a} is listed twice in --workers");
            }
        }
        let token = AddToken::new(&opts.token).map_err(anyhow::Error::msg)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("coordinator-net")
            .enable_all()
            .build()
            .context("starting the network runtime")?;
        let checked = runtime.block_on(async {
            let mut tasks = Vec::new();
            for addr in &opts.addrs {
                let (addr, token) = (addr.clone(), token.clone());
                tasks.push(tokio::spawn(
                    async move { check_worker(&addr, &token).await },
                ));
            }
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.context("checking a worker")??);
            }
            Ok::<_, anyhow::Error>(out)
        })?;
        let mut workers = Vec::new();
        for (addr, client, info) in checked {
            tracing::info!(
                "worker {addr}: kingmaker-worker {}, protocol {}, {} cores, {:.1} GiB{}",
                info.worker_version,
                info.protocol_version,
                info.cores,
                info.memory_bytes as f64 / (1u64 << 30) as f64,
                if info.run_id.is_empty() {
                    String::new()
                } else {
                    format!(", busy with run {}", info.run_id)
                }
            );
            workers.push((addr, client, info));
        }
        let unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let family: String = game
            .family()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        let run_id = match run_id {
            Some(id) => id.to_string(),
            None => format!("{family}-{}-{}", unix.as_secs(), std::process::id()),
        };
        let (abort, _) = watch::channel(None);
        let mut cluster = Cluster {
            runtime,
            run_id,
            workers,
            abort,
            timeout: opts.timeout,
            monitors: Vec::new(),
        };
        cluster.start_heartbeats(&token)?;
        tracing::info!(
            "run {} on {} workers",
            cluster.run_id,
            cluster.workers.len()
        );
        Ok(cluster)
    }

    /// The run's id on the workers (their files are under `DATA_DIR/<run id>/`).
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    pub fn addrs(&self) -> Vec<String> {
        self.workers.iter().map(|w| w.0.clone()).collect()
    }

    /// One heartbeat task per worker, on a connection of its own (so a long transfer on the
    /// data connection does not delay it).
    fn start_heartbeats(&mut self, token: &AddToken) -> Result<()> {
        let interval = Duration::from_millis(1000).min(self.timeout / 3);
        let _guard = self.runtime.enter(); // clients spawn their connection tasks on it
        for (addr, _, _) in &self.workers {
            let client = kingmaker_worker::service::client::lazy_client(addr, token)
                .map_err(anyhow::Error::msg)?;
            let (addr, run_id, abort, timeout) = (
                addr.clone(),
                self.run_id.clone(),
                self.abort.clone(),
                self.timeout,
            );
            self.monitors.push(tokio::spawn(async move {
                heartbeat_loop(addr, client, run_id, abort, interval, timeout).await
            }));
        }
        Ok(())
    }

    /// Open `layer` on every worker and return their handles for the driver.
    pub fn layer_workers(
        &self,
        spec: &GameSpec,
        layer: &Layer,
        plan: &ShardPlan,
    ) -> Result<Vec<Arc<dyn WorkerHandle>>> {
        if plan.shards() < self.workers.len() {
            tracing::warn!(
                "{} states in {} shard(s) of {} for {} workers: some workers get no shard; lower --shard-size",
                plan.size,
                plan.shards(),
                plan.shard_size,
                self.workers.len()
            );
        }
        let owners: Vec<u32> = assign_shards(plan, self.workers.len())
            .into_iter()
            .map(|o| o as u32)
            .collect();
        let peers = self.addrs();
        let spec_json = serde_json::to_string(spec)?;
        // A worker hears nothing from a dead coordinator for this long before it stops writing.
        let lease_ms = (self.timeout * 3).max(Duration::from_secs(3)).as_millis() as u32;
        let handles: Vec<Arc<RemoteWorker>> = self
            .workers
            .iter()
            .enumerate()
            .map(|(me, (addr, client, _))| {
                Arc::new(RemoteWorker {
                    addr: addr.clone(),
                    run_id: self.run_id.clone(),
                    client: client.clone(),
                    runtime: self.runtime.handle().clone(),
                    abort: self.abort.subscribe(),
                    plan: *plan,
                    me,
                })
            })
            .collect();
        std::thread::scope(|scope| {
            let tasks: Vec<_> = handles
                .iter()
                .map(|w| {
                    let request = pb::StartLayerRequest {
                        protocol_version: PROTOCOL_VERSION,
                        run_id: self.run_id.clone(),
                        game_spec_json: spec_json.clone(),
                        layer: Some(pb::LayerSpec {
                            name: layer.name.clone(),
                            coalition: layer.coalition.into(),
                            objective: layer.objective.into(),
                        }),
                        plan: Some(pb::ShardPlan {
                            size: plan.size,
                            shard_size: plan.shard_size,
                        }),
                        owners: owners.clone(),
                        me: w.me as u32,
                        peers: peers.clone(),
                        lease_ms,
                    };
                    scope.spawn(move || {
                        w.call("start layer", |mut c| async move {
                            c.start_layer(request).await
                        })
                    })
                })
                .collect();
            tasks
                .into_iter()
                .map(|t| t.join().expect("start layer thread panicked").map(|_| ()))
                .collect::<Result<Vec<_>, _>>()
        })?;
        Ok(handles
            .into_iter()
            .map(|h| h as Arc<dyn WorkerHandle>)
            .collect())
    }

    /// The reason the run was stopped, if it was.
    pub fn failure(&self) -> Option<(String, String)> {
        self.abort.borrow().clone()
    }

    /// After a failure: the first worker that does not answer now (a quick probe of each), if any.
    /// A dead worker makes its peers fail too; this names the one at fault.
    pub fn unreachable(&self) -> Option<(String, String)> {
        self.runtime.block_on(async {
            let mut probes = Vec::new();
            for (addr, client, _) in &self.workers {
                let (mut client, addr, run_id) =
                    (client.clone(), addr.clone(), self.run_id.clone());
                probes.push(tokio::spawn(async move {
                    let probe = client.heartbeat(pb::HeartbeatRequest { run_id });
                    match tokio::time::timeout(Duration::from_secs(2), probe).await {
                        Ok(Ok(_)) => None,
                        Ok(Err(s)) if is_transport(&s) => Some((addr, status_message(&s))),
                        Ok(Err(_)) => None,
                        Err(_) => Some((addr, "does not answer (2s)".to_string())),
                    }
                }));
            }
            let mut first = None;
            for p in probes {
                if let Ok(Some(found)) = p.await {
                    first = first.or(Some(found));
                }
            }
            first
        })
    }

    /// End the run on every worker: after success, delete their shard files; after a failure,
    /// keep them and just make the workers stop (best effort, a few seconds at most).
    pub fn shutdown(mut self, success: bool) {
        for m in self.monitors.drain(..) {
            m.abort();
        }
        let run_id = self.run_id.clone();
        self.runtime.block_on(async {
            let mut calls = Vec::new();
            for (addr, client, _) in &self.workers {
                let (mut client, addr) = (client.clone(), addr.clone());
                let request = pb::ShutdownRequest {
                    run_id: run_id.clone(),
                    delete_files: success,
                    exit: false,
                };
                calls.push(tokio::spawn(async move {
                    match tokio::time::timeout(Duration::from_secs(3), client.shutdown(request))
                        .await
                    {
                        Ok(Ok(_)) => {}
                        Ok(Err(s)) if is_transport(&s) => {
                            tracing::debug!("worker {addr}: gone: {}", status_message(&s))
                        }
                        Ok(Err(s)) => {
                            tracing::warn!("worker {addr}: ending the run: {}", status_message(&s))
                        }
                        Err(_) => tracing::warn!("worker {addr}: no answer to the end of the run"),
                    }
                }));
            }
            for c in calls {
                let _ = c.await;
            }
        });
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for m in &self.monitors {
            m.abort();
        }
    }
}

/// Connect to one worker and check its token and protocol version.
async fn check_worker(addr: &str, token: &AddToken) -> Result<(String, Client, pb::DescribeReply)> {
    let mut client = connect(addr, token).await.map_err(anyhow::Error::msg)?;
    let reply = tokio::time::timeout(
        Duration::from_secs(10),
        client.describe(pb::DescribeRequest {
            protocol_version: PROTOCOL_VERSION,
        }),
    )
    .await
    .map_err(|_| anyhow::anyhow!("worker {addr} did not answer within 10s"))?
    .map_err(|s| anyhow::anyhow!("worker {addr} {}", status_message(&s)))?
    .into_inner();
    if reply.protocol_version != PROTOCOL_VERSION {
        bail!(
            "worker {addr} speaks protocol version {} but this coordinator speaks version {PROTOCOL_VERSION}: \
             run the same Kingmaker version on the coordinator and every worker",
            reply.protocol_version
        );
    }
    Ok((addr.to_string(), client, reply))
}

/// Heartbeat one worker until the task is aborted; stop the run when it stalls, dies, restarts
/// or abandons the run.
async fn heartbeat_loop(
    addr: String,
    mut client: Client,
    run_id: String,
    abort: watch::Sender<Abort>,
    interval: Duration,
    timeout: Duration,
) {
    let mut last_ok = Instant::now();
    let mut last_error = String::from("no answer");
    // Whether this worker has reported our run (it does once its first layer is open).
    let mut seen_ours = false;
    let stop = |reason: String| {
        abort.send_if_modified(|a| {
            if a.is_none() {
                tracing::error!("worker {addr}: {reason}");
                *a = Some((addr.clone(), reason));
                true
            } else {
                false
            }
        });
    };
    loop {
        tokio::time::sleep(interval).await;
        let request = pb::HeartbeatRequest {
            run_id: run_id.clone(),
        };
        match tokio::time::timeout(timeout, client.heartbeat(request)).await {
            Ok(Ok(reply)) => {
                let reply = reply.into_inner();
                // A resumed run may find its workers still holding the layer the killed coordinator
                // left (abandoned when their lease ran out): that failure is old news until the
                // layer is opened again.
                if !reply.failure.is_empty() && reply.run_id == run_id && seen_ours {
                    return stop(format!("abandoned the run: {}", reply.failure));
                }
                if reply.run_id == run_id && reply.failure.is_empty() {
                    seen_ours = true;
                } else if seen_ours {
                    return stop(format!(
                        "no longer works on run {run_id} (it reports {:?}): it restarted or was taken over",
                        reply.run_id
                    ));
                }
                last_ok = Instant::now();
            }
            Ok(Err(status)) => last_error = status_message(&status),
            Err(_) => last_error = format!("no answer within {:.1}s", timeout.as_secs_f64()),
        }
        let silent = last_ok.elapsed();
        if silent > timeout {
            return stop(format!(
                "has not answered heartbeats for {:.1}s (last: {last_error}); the run stopped",
                silent.as_secs_f64()
            ));
        }
    }
}

/// One remote worker as the driver sees it.
pub struct RemoteWorker {
    addr: String,
    run_id: String,
    client: Client,
    runtime: tokio::runtime::Handle,
    abort: watch::Receiver<Abort>,
    plan: ShardPlan,
    me: usize,
}

impl RemoteWorker {
    /// Make one call, blocking this thread until it returns or the run is aborted.
    fn call<T, F>(&self, what: &str, f: impl FnOnce(Client) -> F) -> Result<T, KernelError>
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

    fn failed(&self, what: &str, status: &Status) -> KernelError {
        if status.code() == Code::DataLoss && !is_transport(status) {
            // A damaged or missing checkpoint chunk on the worker: keep the meaning of the kernel's
            // format error, so the run falls back to an older checkpoint.
            return KernelError::Format(kingmaker_tablefmt::FormatError::Corrupt(format!(
                "worker {}: {what}: {}",
                self.addr,
                status.message()
            )));
        }
        let message = if is_transport(status) || status.code() == Code::Unauthenticated {
            status_message(status)
        } else {
            format!("{what} failed: {}", status_message(status))
        };
        KernelError::Worker {
            worker: self.addr.clone(),
            message,
        }
    }

    fn step(&self) -> pb::StepRequest {
        pb::StepRequest {
            run_id: self.run_id.clone(),
            wave: 0,
        }
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
        let range = self.plan.range(shard);
        let states = (range.end - range.start) as usize;
        // Values come packed four to a byte, depths as two bytes each.
        let want = if depth {
            2 * states
        } else {
            states.div_ceil(4)
        };
        if bytes.len() != want {
            return Err(KernelError::Worker {
                worker: self.addr.clone(),
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
        let s = reply.stats.unwrap_or_default();
        Ok(ClosedWave {
            decided: reply.decided,
            stats: WaveStats {
                expanded: s.expanded,
                applied: s.applied,
                sent: s.sent,
            },
            wire_bytes: Some(s.bytes_sent),
        })
    }

    fn shard_values(&self, shard: usize) -> Result<Vec<u8>, KernelError> {
        let packed = self.fetch("values", shard, false)?;
        let range = self.plan.range(shard);
        Ok(unpack_values(&packed, (range.end - range.start) as usize))
    }

    fn shard_depth(&self, shard: usize) -> Result<Vec<u16>, KernelError> {
        let bytes = self.fetch("depths", shard, true)?;
        Ok(bytes
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect())
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
        self.call(
            &format!("restoring the checkpoint after wave {wave}"),
            |mut c| async move { c.restore(request).await },
        )
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_well() {
        let s = status_message(&Status::unauthenticated("missing or wrong token"));
        assert!(s.contains("--token or KINGMAKER_TOKEN"), "{s}");
        let s = status_message(&Status::unavailable("connection refused"));
        assert!(s.contains("unreachable"), "{s}");
        let s = status_message(&Status::internal("boom"));
        assert!(s.contains("boom"), "{s}");
    }
}
