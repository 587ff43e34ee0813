//! The remote workers of a build or resume (`--workers`): the list checked, the run named, and the
//! workers connected as one [`Cluster`]. The gRPC transport itself (checks, heartbeats, the
//! workers' handles for the driver) is in the `kingmaker-rpc` crate.

use anyhow::{bail, Result};
use kingmaker_games::GameSpec;

pub use kingmaker_rpc::{Cluster, RemoteOptions};

/// Connect to the workers of `opts` and check them (token, protocol version) for the run
/// `run_id` (a resumed run: its workers keep their files under it), or for a new run of `game`.
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
