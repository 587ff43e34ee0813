//! The coordinator's end of keeping a finished layer on its workers: a reduced layer routed to
//! the zones of the full table, every worker's part written where it is, and the layer's digest
//! carried from part to part. What comes back is the list of the parts
//! ([`kingmaker_tablefmt::kept::KeptLayer`]): the coordinator never holds a value or a depth.

use super::heartbeat::aborted;
use super::workers::Cluster;
use anyhow::{anyhow, Context, Result};
use kingmaker_proto::v1 as pb;
use kingmaker_rpc::auth::AddToken;
use kingmaker_rpc::connect::connect;
use kingmaker_rpc::status::status_message;
use kingmaker_tablefmt::chained_digest::ChainedDigest;
use kingmaker_tablefmt::kept::{part_layer_name, KeptLayer, KeptPart, KEPT_FORMAT};
use kingmaker_tablefmt::layer::LayerIdentity;
use kingmaker_tablefmt::table::{TableSummary, ValueCounts};
use std::io::Write;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

/// How a reduced layer's full table is cut among the workers.
pub struct ZonePlan {
    /// The full table in zones, in index order.
    pub zones: Vec<Range<u64>>,
    /// The worker that fills each zone (non-decreasing).
    pub owners: Vec<u32>,
    /// Reduced states a worker routes at a time.
    pub run_states: u64,
}

impl Cluster {
    /// Keep the finished open layer `identity` on the workers: for a reduced game (`zones`),
    /// route it first; then every worker writes its part and the digest goes from part to part.
    /// `states` is the full table's size.
    pub fn keep_layer(
        &self,
        identity: &LayerIdentity,
        states: u64,
        zones: Option<&ZonePlan>,
    ) -> Result<KeptLayer> {
        if let Some(plan) = zones {
            let request = |prepare| pb::RouteExpansionRequest {
                run_id: self.run_id.clone(),
                zones: plan
                    .zones
                    .iter()
                    .map(|z| pb::Zone {
                        start: z.start,
                        end: z.end,
                    })
                    .collect(),
                zone_owners: plan.owners.clone(),
                run_states: plan.run_states,
                prepare,
            };
            // Every worker is ready to receive before any sends.
            for prepare in [true, false] {
                let replies = self.on_every_worker("routing the expansion", |w| {
                    let (mut c, r) = (self.workers[w].1.clone(), request(prepare));
                    async move { c.route_expansion(r).await }
                })?;
                if !prepare {
                    let routed: u64 = replies.iter().map(|r| r.routed).sum();
                    let sent: u64 = replies.iter().map(|r| r.bytes_sent).sum();
                    tracing::info!(
                        "layer {}: {routed} states routed to {} zones, {sent} bytes between workers",
                        identity.layer,
                        plan.zones.len()
                    );
                }
            }
        }
        let part_identity = |w: usize| LayerIdentity {
            game: identity.game.clone(),
            layer: part_layer_name(&identity.layer, w),
        };
        let replies = self.on_every_worker("writing its part", |w| {
            let mut c = self.workers[w].1.clone();
            let r = pb::KeepPartRequest {
                run_id: self.run_id.clone(),
                identity_json: serde_json::to_string(&part_identity(w))
                    .expect("an identity serializes"),
            };
            async move { c.keep_part(r).await }
        })?;
        let mut parts = Vec::new();
        let mut state = ChainedDigest::start();
        let mut counts = ValueCounts::default();
        let mut max_depth = 0u16;
        for (w, reply) in replies.into_iter().enumerate() {
            if reply.states == 0 {
                continue;
            }
            let part = KeptPart {
                worker: self.workers[w].0.clone(),
                first: reply.first,
                states: reply.states,
                file: reply.file,
                size: reply.size,
                sha256: reply.sha256,
                counts: ValueCounts {
                    win: reply.win,
                    loss: reply.loss,
                    draw: reply.draw,
                    illegal: reply.illegal,
                },
                max_depth: u16::try_from(reply.max_depth)
                    .map_err(|_| anyhow!("worker {} reports depth {}", w, reply.max_depth))?,
            };
            // The parts are hashed in row order, each from the state after the one before.
            let request = pb::ChainDigestRequest {
                run_id: self.run_id.clone(),
                file: part.file.clone(),
                identity_json: serde_json::to_string(&part_identity(w))
                    .expect("an identity serializes"),
                state: Some(pb::DigestState {
                    words: state.words.to_vec(),
                    bytes: state.bytes,
                    pending: state.pending.clone(),
                }),
            };
            let mut c = self.workers[w].1.clone();
            let reply = self.on_worker(w, "hashing its part", async move {
                c.chain_digest(request).await
            })?;
            let next = reply.state.context("a worker returned no digest state")?;
            state = ChainedDigest {
                words: next
                    .words
                    .try_into()
                    .map_err(|_| anyhow!("worker {w} returned a malformed digest state"))?,
                bytes: next.bytes,
                pending: next.pending,
            }
            .checked()
            .map_err(|e| anyhow!("worker {w}: {e}"))?;
            if state.len() != part.first + part.states {
                return Err(anyhow!(
                    "worker {w} hashed its part to byte {} of the layer, its rows end at {}",
                    state.len(),
                    part.first + part.states
                ));
            }
            counts.win += part.counts.win;
            counts.loss += part.counts.loss;
            counts.draw += part.counts.draw;
            counts.illegal += part.counts.illegal;
            max_depth = max_depth.max(part.max_depth);
            parts.push(part);
        }
        let kept = KeptLayer {
            format: KEPT_FORMAT,
            game: identity.game.clone(),
            layer: identity.layer.clone(),
            parts,
            summary: TableSummary {
                states,
                counts,
                digest: state.finish(),
                max_depth,
            },
        };
        kept.check()?;
        Ok(kept)
    }

    /// The same call on every worker at once; their replies in worker order. A failure names
    /// the worker; an aborted run names the worker at fault.
    fn on_every_worker<T, F>(&self, what: &str, call: impl Fn(usize) -> F) -> Result<Vec<T>>
    where
        F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>> + Send + 'static,
        T: Send + 'static,
    {
        let mut abort = self.abort.subscribe();
        self.runtime.block_on(async {
            let calls: Vec<_> = (0..self.workers.len())
                .map(|w| tokio::spawn(call(w)))
                .collect();
            let all = async {
                let mut replies = Vec::with_capacity(calls.len());
                for (w, call) in calls.into_iter().enumerate() {
                    let addr = &self.workers[w].0;
                    let reply = call
                        .await
                        .map_err(|e| anyhow!("worker {addr} {what}: the call panicked: {e}"))?
                        .map_err(|s| anyhow!("worker {addr} {what}: {}", status_message(&s)))?;
                    replies.push(reply.into_inner());
                }
                Ok(replies)
            };
            tokio::select! {
                replies = all => replies,
                (worker, message) = aborted(&mut abort) => Err(anyhow!("worker {worker}: {message}")),
            }
        })
    }

    fn on_worker<T, F>(&self, w: usize, what: &str, call: F) -> Result<T>
    where
        F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let mut abort = self.abort.subscribe();
        self.runtime.block_on(async {
            tokio::select! {
                reply = call => reply.map(|r| r.into_inner()).map_err(|s| {
                    anyhow!("worker {} {what}: {}", self.workers[w].0, status_message(&s))
                }),
                (worker, message) = aborted(&mut abort) => Err(anyhow!("worker {worker}: {message}")),
            }
        })
    }
}

/// Copy the kept part `file` of run `run_id` from the worker at `addr` into `dest` (created or
/// replaced); the bytes copied. The caller checks them against the part's record.
pub fn fetch_part(addr: &str, token: &str, run_id: &str, file: &str, dest: &Path) -> Result<u64> {
    let token = AddToken::new(token).map_err(anyhow::Error::msg)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the network runtime")?;
    runtime.block_on(async {
        let mut client = connect(addr, &token, Duration::from_secs(30))
            .await
            .map_err(anyhow::Error::msg)?;
        let mut stream = client
            .read_part(pb::ReadPartRequest {
                run_id: run_id.to_string(),
                file: file.to_string(),
                offset: 0,
                length: 0,
            })
            .await
            .map_err(|s| anyhow!("worker {addr}: {file}: {}", status_message(&s)))?
            .into_inner();
        let mut out =
            std::fs::File::create(dest).with_context(|| format!("creating {}", dest.display()))?;
        let mut copied = 0u64;
        while let Some(chunk) = stream
            .message()
            .await
            .map_err(|s| anyhow!("worker {addr}: {file}: {}", status_message(&s)))?
        {
            out.write_all(&chunk.data)
                .with_context(|| format!("writing {}", dest.display()))?;
            copied += chunk.data.len() as u64;
        }
        out.sync_all()
            .with_context(|| format!("writing {}", dest.display()))?;
        Ok(copied)
    })
}
