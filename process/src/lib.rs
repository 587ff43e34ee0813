//! What every Kingmaker process sets up, the `kingmaker` CLI and `kingmaker-worker` alike: its log
//! ([`logging`]), its Prometheus endpoint ([`metrics`]), the lock of the directory it works in
//! ([`lock`]), a check that the processor has the features the build uses ([`cpu`]), and who it
//! is ([`identity`]: its host, a random id).

#![warn(missing_docs)]

pub mod cpu;
pub mod identity;
pub mod lock;
pub mod logging;
pub mod metrics;
