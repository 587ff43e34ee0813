//! The coordinator's end of a distributed run: the workers connected and heartbeated as one
//! [`Cluster`], a [`RemoteWorker`] per process for the driver, layers kept on their workers
//! (`kept_layer`) and a kept part read in place ([`RemotePart`]).

mod heartbeat;
mod kept_layer;
mod remote_part;
mod remote_worker;
mod workers;

pub use kept_layer::{fetch_part, ZonePlan};
pub use remote_part::RemotePart;
pub use remote_worker::RemoteWorker;
pub use workers::{started_by, Cluster, RemoteOptions};

use anyhow::{bail, Result};
use kingmaker_games::GameSpec;

/// Connect to the workers of `opts` and check them (token, protocol version, each listed once,
/// none busy with another run) for the run `run_id` (a resumed run: its workers keep their files
/// under it), or for a new run of `game`.
pub fn connect(opts: &RemoteOptions, game: &GameSpec, run_id: Option<&str>) -> Result<Cluster> {
    if opts.addrs.is_empty() {
        bail!("--workers needs at least one HOST:PORT");
    }
    for (i, a) in opts.addrs.iter().enumerate() {
        if opts.addrs[..i].contains(a) {
            bail!("worker {a} is listed twice in --workers");
        }
    }
    let run_id = match run_id {
        Some(id) => id.to_string(),
        None => new_run_id(game),
    };
    Cluster::connect(opts, run_id)
}

/// A new run's id: the game's family, the time and the coordinator's pid.
fn new_run_id(game: &GameSpec) -> String {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let family: String = game
        .family()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    format!("{family}-{}-{}", unix.as_secs(), std::process::id())
}
