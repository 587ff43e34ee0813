//! The coordinator's side of the gRPC transport: one run's workers, connected, watched and driven.
//! 1. Each layer's workers reach the barrier as [`RemoteWorker`]s, the [`WorkerHandle`] that the
//!    in-process workers implement too, so `drive_layer` drives both alike.
//! 2. A dead or stalled worker fails every pending call with an error naming it, so the build
//!    exits within seconds with its state intact (docs/coordinator.md).

use super::heartbeat::{heartbeat_loop, Abort};
use super::remote_worker::RemoteWorker;
use anyhow::{bail, Context, Result};
use kingmaker_games::GameSpec;
use kingmaker_kernel::{assign_shards, Layer, Placement, ShardPlan, WorkerHandle};
use kingmaker_proto::v1 as pb;
use kingmaker_proto::PROTOCOL_VERSION;
use kingmaker_rpc::auth::AddToken;
use kingmaker_rpc::connect::{connect, keep_alive_for, lazy_client, Client};
use kingmaker_rpc::convert::Convert;
use kingmaker_rpc::status::{is_transport, status_message};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How to reach and watch the workers of a distributed build.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// `HOST:PORT` of every worker, in worker-number order.
    pub addrs: Vec<String>,
    /// The run's shared token (see [`kingmaker_rpc::auth`]).
    pub token: String,
    /// A worker that has not answered heartbeats for this long is reported and the run stops.
    pub timeout: Duration,
    /// Who starts the run, in words ([`started_by`]): a worker tells another coordinator that
    /// finds it busy.
    pub started_by: String,
}

/// A coordinator in words, for the workers to tell another one: `command` (e.g. `kingmaker
/// build`), this host and process, and the run directory `run`.
pub fn started_by(command: &str, run: &std::path::Path) -> String {
    let run = std::path::absolute(run).unwrap_or_else(|_| run.to_path_buf());
    format!(
        "`{command}` on host {}, pid {}, into {}",
        kingmaker_process::identity::host_name(),
        std::process::id(),
        run.display()
    )
}

/// The workers of one build, connected and checked.
pub struct Cluster {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) run_id: String,
    /// Address, client for the run's calls, and what the worker said about itself.
    pub(super) workers: Vec<(String, Client, pb::DescribeReply)>,
    pub(super) abort: watch::Sender<Abort>,
    timeout: Duration,
    started_by: String,
    /// Set once [`Cluster::shutdown`] has told the workers; a cluster dropped without it (a
    /// check that failed after connecting) releases them.
    ended: bool,
    monitors: Vec<tokio::task::JoinHandle<()>>,
}

impl Cluster {
    /// Connect to every worker, check the token and the protocol version, and start heartbeats,
    /// for the run `run_id` (the workers keep its files under `DATA_DIR/<run id>/`). Each worker
    /// must be listed once, and none may be busy with another run (`check_worker_set`): all of
    /// it before a caller writes anything.
    pub fn connect(opts: &RemoteOptions, run_id: String) -> Result<Cluster> {
        if opts.addrs.is_empty() {
            bail!("no workers to connect to");
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
            let keep_alive = keep_alive_for(opts.timeout);
            for addr in &opts.addrs {
                let (addr, token) = (addr.clone(), token.clone());
                tasks.push(tokio::spawn(async move {
                    check_worker(&addr, &token, keep_alive).await
                }));
            }
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.context("checking a worker")??);
            }
            Ok::<_, anyhow::Error>(out)
        })?;
        let infos: Vec<(String, pb::DescribeReply)> = checked
            .iter()
            .map(|(addr, _, info)| (addr.clone(), info.clone()))
            .collect();
        check_worker_set(&run_id, &infos)?;
        if checked.len() > 1 {
            let views = runtime.block_on(peer_views(&checked))?;
            check_peer_views(&infos, &views)?;
        }
        // Held for this run from now on (renewed by the heartbeats), so that another coordinator
        // starting at the same time is refused here too.
        let lease_ms = lease(opts.timeout).as_millis() as u32;
        runtime.block_on(reserve(&checked, &run_id, &opts.started_by, lease_ms))?;
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
        let (abort, _) = watch::channel(None);
        let mut cluster = Cluster {
            runtime,
            run_id,
            workers,
            abort,
            timeout: opts.timeout,
            started_by: opts.started_by.clone(),
            ended: false,
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

    /// `HOST:PORT` of every worker, in worker-number order.
    pub fn addrs(&self) -> Vec<String> {
        self.workers.iter().map(|w| w.0.clone()).collect()
    }

    /// The smallest memory budget among the workers, when every one said its own.
    pub fn smallest_budget(&self) -> Option<u64> {
        let budgets = self.workers.iter().map(|w| w.2.memory_budget);
        budgets
            .clone()
            .all(|b| b > 0)
            .then(|| budgets.min())
            .flatten()
    }

    /// What every worker said about itself: its memory in bytes (0 if unknown) and its compute
    /// threads, in worker-number order.
    pub fn worker_resources(&self) -> Vec<(u64, u32)> {
        self.workers
            .iter()
            .map(|w| (w.2.memory_bytes, w.2.cores))
            .collect()
    }

    /// One heartbeat task per worker, on a connection of its own (so a long transfer on the
    /// data connection does not delay it).
    fn start_heartbeats(&mut self, token: &AddToken) -> Result<()> {
        let interval = Duration::from_millis(1000).min(self.timeout / 3);
        let _guard = self.runtime.enter(); // clients spawn their connection tasks on it
        for (addr, _, _) in &self.workers {
            let client = lazy_client(addr, token, keep_alive_for(self.timeout))
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

    /// Open `layer` on every worker, its shards placed as `placement` says, and return their
    /// handles for the driver.
    pub fn layer_workers(
        &self,
        spec: &GameSpec,
        layer: &Layer,
        plan: &ShardPlan,
        placement: Placement,
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
        let owners: Vec<u32> = assign_shards(plan, self.workers.len(), placement)
            .into_iter()
            .map(|o| o as u32)
            .collect();
        let peers = self.addrs();
        let spec_json = serde_json::to_string(spec)?;
        // A worker hears nothing from a dead coordinator for this long before it stops writing.
        let lease_ms = lease(self.timeout).as_millis() as u32;
        let labels: Arc<Vec<String>> =
            Arc::new(self.workers.iter().map(|w| label(&w.0, &w.2)).collect());
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
                    labels: labels.clone(),
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
                        layer: Some(pb::LayerSpec::convert(layer)),
                        plan: Some(pb::ShardPlan::convert(*plan)),
                        owners: owners.clone(),
                        me: w.me as u32,
                        peers: peers.clone(),
                        lease_ms,
                        started_by: self.started_by.clone(),
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
                    let wait = Duration::from_secs(2);
                    match tokio::time::timeout(wait, probe).await {
                        Ok(Ok(_)) => None,
                        Ok(Err(s)) if is_transport(&s) => Some((addr, status_message(&s))),
                        Ok(Err(_)) => None,
                        Err(_) => Some((
                            addr,
                            format!(
                                "does not answer a heartbeat within {}s of the failure (stopped, \
                                 or its host or network is)",
                                wait.as_secs()
                            ),
                        )),
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
        self.ended = true;
        for m in self.monitors.drain(..) {
            m.abort();
        }
        let run_id = self.run_id.clone();
        // The worker that stopped the run is not waited for: it did not answer already.
        let culprit = self.failure().map(|(addr, _)| addr);
        self.runtime.block_on(async {
            let mut calls = Vec::new();
            for (addr, client, _) in &self.workers {
                if culprit.as_ref() == Some(addr) {
                    continue;
                }
                let (mut client, addr) = (client.clone(), addr.clone());
                let request = pb::ShutdownRequest {
                    run_id: run_id.clone(),
                    delete_files: success,
                    exit: false,
                };
                // A worker deletes the run's files before it answers: on a large run, minutes
                // of work for the file system (cc3p level 2: thousands of chunks and logs).
                let wait = Duration::from_secs(if success { 60 } else { 3 });
                calls.push(tokio::spawn(async move {
                    match tokio::time::timeout(wait, client.shutdown(request)).await {
                        Ok(Ok(_)) => {}
                        Ok(Err(s)) if is_transport(&s) => {
                            tracing::debug!("worker {addr}: gone: {}", status_message(&s))
                        }
                        Ok(Err(s)) => {
                            tracing::warn!("worker {addr}: ending the run: {}", status_message(&s))
                        }
                        Err(_) => tracing::warn!(
                            "worker {addr}: no answer to the end of the run within {} s",
                            wait.as_secs()
                        ),
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
        if !self.ended {
            let clients: Vec<Client> = self.workers.iter().map(|w| w.1.clone()).collect();
            self.runtime.block_on(release(clients, &self.run_id));
        }
    }
}

/// How long a worker keeps working, and stays held, without hearing from its coordinator: three
/// worker timeouts, at least 3 s.
fn lease(timeout: Duration) -> Duration {
    (timeout * 3).max(Duration::from_secs(3))
}

/// A worker busy with another run, in the words of every refusal.
fn busy(worker: &str, run: &str, started_by: &str) -> String {
    let by = if started_by.is_empty() {
        "a coordinator that did not say who it is"
    } else {
        started_by
    };
    format!(
        "worker {worker} is busy with run {run} (started by {by}): wait for that run to end, stop \
         its coordinator (a worker gives a run up once its coordinator has been silent for three \
         of its worker timeouts), or give other workers. Nothing was written"
    )
}

/// Hold every worker for `run_id` (Reserve), one after the other in worker order, so that two
/// coordinators on the same list cannot each take a part of it; refused, with the run that holds
/// a worker, at the first one taken (those held already are let go). Workers too old to be held
/// are not.
async fn reserve(
    workers: &[(String, Client, pb::DescribeReply)],
    run_id: &str,
    started_by: &str,
    lease_ms: u32,
) -> Result<()> {
    let wait = Duration::from_secs(10);
    let mut held = Vec::new();
    for (addr, client, info) in workers {
        let request = pb::ReserveRequest {
            run_id: run_id.to_string(),
            started_by: started_by.to_string(),
            lease_ms,
        };
        let why = match tokio::time::timeout(wait, client.clone().reserve(request)).await {
            Ok(Ok(reply)) => {
                let reply = reply.into_inner();
                if reply.reserved {
                    held.push(client.clone());
                    continue;
                }
                busy(
                    &label(addr, info),
                    &reply.busy_run_id,
                    &reply.busy_started_by,
                )
            }
            Ok(Err(s)) if s.code() == tonic::Code::Unimplemented => continue,
            Ok(Err(s)) => format!("worker {addr} {}", status_message(&s)),
            Err(_) => format!("worker {addr} did not answer within {}s", wait.as_secs()),
        };
        release(held, run_id).await;
        bail!(why);
    }
    Ok(())
}

/// Let workers go that were held for `run_id` and got no layer of it (best effort, 3 s at most).
async fn release(clients: Vec<Client>, run_id: &str) {
    let calls: Vec<_> = clients
        .into_iter()
        .map(|mut client| {
            let request = pb::ShutdownRequest {
                run_id: run_id.to_string(),
                delete_files: false,
                exit: false,
            };
            tokio::spawn(async move {
                let _ =
                    tokio::time::timeout(Duration::from_secs(3), client.shutdown(request)).await;
            })
        })
        .collect();
    for c in calls {
        let _ = c.await;
    }
}

/// A worker in an operator's words: its address, and where it keeps its files (host, data
/// directory) when it says.
pub(super) fn label(addr: &str, info: &pb::DescribeReply) -> String {
    if info.host_name.is_empty() {
        addr.to_string()
    } else {
        format!(
            "{addr} (host {}, data directory {})",
            info.host_name, info.data_dir
        )
    }
}

/// Refuse a set of workers that cannot run `run_id` together, from what each said about itself
/// (in `--workers` order): two addresses of one worker process (they would be sent each other's
/// shards and waves), or a worker busy with another run. Older workers, which say neither, are
/// not checked here (StartLayer still refuses a busy worker).
fn check_worker_set(run_id: &str, workers: &[(String, pb::DescribeReply)]) -> Result<()> {
    for (i, (addr, info)) in workers.iter().enumerate() {
        if info.instance_id.is_empty() {
            continue;
        }
        if let Some((first, _)) = workers[..i]
            .iter()
            .find(|(_, other)| other.instance_id == info.instance_id)
        {
            bail!(
                "--workers lists one worker twice: {first} and {addr} reach the same \
                 kingmaker-worker process (host {}, data directory {}); list each worker once. \
                 Nothing was written",
                info.host_name,
                info.data_dir
            );
        }
    }
    for (addr, info) in workers {
        if info.run_active && !info.run_id.is_empty() && info.run_id != run_id {
            bail!(busy(&label(addr, info), &info.run_id, &info.run_started_by));
        }
    }
    Ok(())
}

/// Ask every worker how it reaches every other (CheckPeers), in worker order; `None` for a worker
/// too old to say.
async fn peer_views(
    workers: &[(String, Client, pb::DescribeReply)],
) -> Result<Vec<Option<Vec<pb::PeerSeen>>>> {
    let peers: Vec<String> = workers.iter().map(|w| w.0.clone()).collect();
    let wait = Duration::from_secs(30);
    let mut tasks = Vec::new();
    for (addr, client, _) in workers {
        let (mut client, addr, peers) = (client.clone(), addr.clone(), peers.clone());
        tasks.push(tokio::spawn(async move {
            let ask = client.check_peers(pb::CheckPeersRequest { peers });
            match tokio::time::timeout(wait, ask).await {
                Ok(Ok(reply)) => Ok(Some(reply.into_inner().peers)),
                Ok(Err(s)) if s.code() == tonic::Code::Unimplemented => Ok(None),
                Ok(Err(s)) => Err(anyhow::anyhow!("worker {addr} {}", status_message(&s))),
                Err(_) => Err(anyhow::anyhow!(
                    "worker {addr} did not say within {}s whether it reaches the other workers",
                    wait.as_secs()
                )),
            }
        }));
    }
    let mut views = Vec::new();
    for t in tasks {
        views.push(t.await.context("asking a worker about its peers")??);
    }
    Ok(views)
}

/// Refuse workers that do not reach each other as the coordinator reaches them (`views[i]`: what
/// worker `i` found at every address): updates and replicas go from worker to worker, so one
/// that cannot reach a peer, or finds another worker at its address (`localhost` means another
/// machine to each host), would fail the run or feed another one.
fn check_peer_views(
    workers: &[(String, pb::DescribeReply)],
    views: &[Option<Vec<pb::PeerSeen>>],
) -> Result<()> {
    for ((addr, info), view) in workers.iter().zip(views) {
        let Some(view) = view else { continue };
        if view.len() != workers.len() {
            bail!(
                "worker {addr} described {} peers when asked about {}",
                view.len(),
                workers.len()
            );
        }
        for ((peer, peer_info), seen) in workers.iter().zip(view) {
            if !seen.error.is_empty() {
                bail!(
                    "worker {} cannot reach worker {peer}, which this coordinator reaches: {}. \
                     Every worker must reach every other at the addresses --workers gives (open \
                     the port between them, or give addresses every host reaches). Nothing was \
                     written",
                    label(addr, info),
                    seen.error
                );
            }
            if !seen.instance_id.is_empty()
                && !peer_info.instance_id.is_empty()
                && seen.instance_id != peer_info.instance_id
            {
                bail!(
                    "worker {} finds another kingmaker-worker at {peer} (host {}, data directory \
                     {}) than this coordinator does ({}): an address such as localhost means \
                     another machine to each host; give addresses that mean the same worker \
                     everywhere. Nothing was written",
                    label(addr, info),
                    seen.host_name,
                    seen.data_dir,
                    label(peer, peer_info)
                );
            }
        }
    }
    Ok(())
}

/// Connect to one worker and check its token and protocol version.
async fn check_worker(
    addr: &str,
    token: &AddToken,
    keep_alive: Duration,
) -> Result<(String, Client, pb::DescribeReply)> {
    let mut client = connect(addr, token, keep_alive)
        .await
        .map_err(anyhow::Error::msg)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn worker(addr: &str, id: &str, run: &str) -> (String, pb::DescribeReply) {
        let info = pb::DescribeReply {
            instance_id: id.into(),
            host_name: "h".into(),
            data_dir: format!("/data/{id}"),
            run_id: run.into(),
            run_active: !run.is_empty(),
            run_started_by: "`kingmaker build` on host c, pid 7, into /runs/x".into(),
            ..Default::default()
        };
        (addr.to_string(), info)
    }

    fn seen(id: &str, error: &str) -> pb::PeerSeen {
        pb::PeerSeen {
            instance_id: id.into(),
            error: error.into(),
            ..Default::default()
        }
    }

    #[test]
    fn one_worker_twice_and_a_busy_worker_are_refused() {
        let twice = [
            worker("127.0.0.1:7", "a", ""),
            worker("localhost:7", "a", ""),
        ];
        let err = check_worker_set("r", &twice).unwrap_err().to_string();
        assert!(err.contains("127.0.0.1:7 and localhost:7"), "{err}");
        let busy = [worker("w:1", "a", ""), worker("w:2", "b", "other")];
        let err = check_worker_set("r", &busy).unwrap_err().to_string();
        assert!(
            err.contains("w:2 (host h, data directory /data/b) is busy with run other (started by `kingmaker build`"),
            "{err}"
        );
        // Its own run (a resume), an abandoned run, and older workers (no id) pass.
        check_worker_set("other", &busy).unwrap();
        let mut abandoned = busy.clone();
        abandoned[1].1.run_active = false;
        check_worker_set("r", &abandoned).unwrap();
        check_worker_set("r", &[worker("a:1", "", ""), worker("a:2", "", "")]).unwrap();
    }

    #[test]
    fn workers_must_reach_each_other_as_the_coordinator_does() {
        let workers = [worker("a:1", "a", ""), worker("b:1", "b", "")];
        let good = Some(vec![seen("a", ""), seen("b", "")]);
        check_peer_views(&workers, &[good.clone(), good.clone()]).unwrap();
        check_peer_views(&workers, &[None, good.clone()]).unwrap();
        let elsewhere = Some(vec![seen("a", ""), seen("c", "")]);
        let err = check_peer_views(&workers, &[elsewhere, good.clone()])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "worker a:1 (host h, data directory /data/a) finds another kingmaker-worker at b:1"
            ),
            "{err}"
        );
        let cut = Some(vec![seen("a", ""), seen("", "connection refused")]);
        let err = check_peer_views(&workers, &[good, cut])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("worker b:1 (host h, data directory /data/b) cannot reach worker b:1"),
            "{err}"
        );
    }
}
