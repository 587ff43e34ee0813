//! The wire between the coordinator and its workers: the gRPC protocol of `kingmaker-proto`,
//! tokens ([`auth`]), channels and client stubs ([`connect`]), the encodings of values, depths and
//! updates ([`wire`]), protobuf ↔ kernel conversions ([`convert`]) and statuses ([`status`]).

#![warn(missing_docs)]

pub mod auth;
pub mod connect;
pub mod convert;
pub mod status;
pub mod wire;

use std::net::SocketAddr;

/// Parse a `HOST:PORT` listen address (names such as `localhost` are resolved).
pub fn resolve(addr: &str) -> anyhow::Result<SocketAddr> {
    use std::net::ToSocketAddrs;
    addr.to_socket_addrs()
        .map_err(|e| anyhow::anyhow!("{addr:?} is not a HOST:PORT address: {e}"))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{addr:?} resolves to no address"))
}
