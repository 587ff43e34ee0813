//! What the coordinator and the workers share to talk and to run: both ends of the gRPC
//! transport (`proto/proto/kingmaker.proto`), the directory lock and the logging set-up.
//!
//! - the worker's end (`kingmaker-worker`, [`serve`]): the same wave kernel as the embedded build,
//!   with its shards in files under the worker's data directory ([`server`]) and predecessor
//!   updates for other workers' shards streamed to their owners (`router`);
//! - the coordinator's end ([`Cluster`]): the workers of one run, connected, checked and
//!   heartbeated, handing the barrier one [`RemoteWorker`] per process, and keeping each finished
//!   layer on the workers that computed it (`kept_layer`);
//! - readers' end: a kept part read in place on its worker ([`RemotePart`]).
//!
//! The rest is shared: tokens ([`auth`]), channels (`connect`), the encodings on the wire
//! (`wire`), protobuf ↔ kernel conversions (`convert`), statuses (`status`) and metrics; and,
//! outside the transport, the lock of a directory one process at a time works in ([`lock`]) and
//! the logging both binaries set up ([`logging`]).

#![warn(missing_docs)]

pub mod auth;
mod cluster;
mod connect;
mod convert;
mod heartbeat;
mod kept_layer;
pub mod lock;
pub mod logging;
pub mod metrics;
mod remote_part;
mod remote_worker;
mod router;
pub mod server;
mod status;
mod wire;

pub use cluster::{Cluster, RemoteOptions};
pub use kept_layer::{fetch_part, ZonePlan};
pub use remote_part::RemotePart;
pub use remote_worker::RemoteWorker;

use auth::CheckToken;
use kingmaker_proto::WorkerServer;
use server::{WorkerOptions, WorkerService};
use std::net::SocketAddr;
use std::sync::Arc;

/// Serve the worker protocol on `listener` until ctrl-c or a Shutdown call that asks to exit.
/// `on_bound` is told the address actually bound (useful with port 0).
pub async fn serve(
    listener: tokio::net::TcpListener,
    opts: WorkerOptions,
    check: CheckToken,
    registry: Arc<metrics::Registry>,
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

/// Parse a `HOST:PORT` listen address (names such as `localhost` are resolved).
pub fn resolve(addr: &str) -> anyhow::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    addr.to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("{addr:?} is not a HOST:PORT address: {e}"))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{addr:?} resolves to no address"))
}
