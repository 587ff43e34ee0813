//! The gRPC worker service (`kingmaker-worker`): the same wave kernel as the embedded build, with
//! its shards in files under the worker's data directory and predecessor updates for other
//! workers' shards carried over gRPC ([`router::GrpcRouter`]). The protocol is
//! `proto/proto/kingmaker.proto`; the coordinator's side is `coordinator/src/remote.rs`.

pub mod auth;
pub mod client;
pub mod metrics;
pub mod router;
pub mod server;
pub mod wire;

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
        .http2_keepalive_timeout(Some(std::time::Duration::from_secs(10)))
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
