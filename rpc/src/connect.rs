//! Channels to a worker: the coordinator and a worker's peers reach it through the same client
//! (the run's token on every call, keepalives that notice a vanished peer).

use super::auth::AddToken;
use kingmaker_proto::WorkerClient;
use std::time::Duration;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// A client of one worker that sends the run's token with every call.
pub type Client = WorkerClient<InterceptedService<Channel, AddToken>>;

/// How long a connection waits for the answer to a keep-alive ping before it gives the peer up:
/// never less than the run's worker timeout, so a peer paused for less than that (a stalled host,
/// a VM migration) keeps its connections and the run's own judge, the heartbeats, decides.
pub fn keep_alive_for(worker_timeout: Duration) -> Duration {
    worker_timeout.max(Duration::from_secs(10))
}

/// The endpoint of a worker given as `HOST:PORT` (or a full `http://HOST:PORT` URI); `keep_alive`
/// from [`keep_alive_for`].
pub fn endpoint(addr: &str, keep_alive: Duration) -> Result<Endpoint, String> {
    let uri = if addr.contains("://") {
        addr.to_string()
    } else {
        format!("http://{addr}")
    };
    let endpoint = Endpoint::from_shared(uri)
        .map_err(|e| format!("{addr:?} is not a worker address (HOST:PORT): {e}"))?;
    Ok(endpoint
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true)
        // Detect a peer that vanished without closing the connection (power loss, network).
        .http2_keep_alive_interval(Duration::from_secs(5))
        .keep_alive_timeout(keep_alive)
        .initial_stream_window_size(1 << 21)
        .initial_connection_window_size(1 << 23))
}

/// A client that connects on first use (and reconnects after a failure).
pub fn lazy_client(addr: &str, token: &AddToken, keep_alive: Duration) -> Result<Client, String> {
    Ok(WorkerClient::with_interceptor(
        endpoint(addr, keep_alive)?.connect_lazy(),
        token.clone(),
    ))
}

/// A client connected now, so an unreachable worker is reported at once.
pub async fn connect(addr: &str, token: &AddToken, keep_alive: Duration) -> Result<Client, String> {
    let channel = endpoint(addr, keep_alive)?.connect().await.map_err(|e| {
        let mut msg = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            // Transport errors repeat their cause at every level: keep each piece once.
            let piece = s.to_string();
            if !msg.contains(&piece) {
                msg = format!("{msg}: {piece}");
            }
            source = s.source();
        }
        format!("cannot connect to worker {addr}: {msg}")
    })?;
    Ok(WorkerClient::with_interceptor(channel, token.clone()))
}
