//! What every Kingmaker process sets up, the `kingmaker` CLI and `kingmaker-worker` alike: its log
//! ([`logging`]), its Prometheus endpoint ([`metrics`]) and the lock of the directory it works in
//! ([`lock`]).

#![warn(missing_docs)]

pub mod lock;
pub mod logging;
pub mod metrics;
