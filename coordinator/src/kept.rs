//! Finished layers kept on the workers that computed them (`build --keep-layers-on-workers`): how
//! a reduced layer's full table is cut among the workers, and the list of the parts written into
//! the run directory in place of the table (`layers/NAME.kept.json`).

use crate::cluster::Cluster;
use crate::cluster::ZonePlan;
use crate::rundir::RunDir;
use anyhow::Result;
use kingmaker_games::AnyGame;
use kingmaker_kernel::{Game, Layer};
use kingmaker_tablefmt::kept::write_kept;
use kingmaker_tablefmt::table::{table_path, TableSummary};

/// Rows of the full table a worker fills at a time, per thread (3 bytes each in memory), at most;
/// fewer where that gives each worker at least [`ZONES_PER_WORKER`] zones, and fewer than a
/// [`ZONE_SHARE`] of the smallest worker's memory budget.
const ZONE_STATES: u64 = 1 << 22;
const ZONES_PER_WORKER: u64 = 4;
const ZONE_SHARE: u64 = 4;
/// Reduced states a worker routes at a time, at most; fewer where the full states they answer
/// (3 bytes each) would take more than a [`RUN_SHARE`] of the smallest budget.
const RUN_STATES: u64 = 1 << 18;
const RUN_SHARE: u64 = 8;

/// A shard size of whole blocks of the reduced game `kernel` (a multiple of 64 too), at least
/// `shard_size`: each worker then routes whole blocks of its own.
pub fn whole_block_shards(kernel: &AnyGame, shard_size: u64) -> u64 {
    let Some(reduction) = kernel.reduction() else {
        return shard_size;
    };
    let block = reduction.block_states().max(1);
    let unit = block / gcd(block, 64) * 64;
    shard_size.div_ceil(unit).max(1) * unit
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Keep the finished `layer` of `kernel` (the game the workers solved) on the workers, and write
/// the list of its parts into the run's `layers/`.
pub fn keep_on_workers(
    run: &RunDir,
    kernel: &AnyGame,
    cluster: &Cluster,
    layer: &Layer,
) -> Result<TableSummary> {
    let workers = cluster.addrs().len();
    let budget = cluster.smallest_budget();
    let zones = kernel.reduction().map(|r| {
        let most = budget.map_or(ZONE_STATES, |b| (b / ZONE_SHARE / 3).clamp(1, ZONE_STATES));
        let per_zone = r.full_size() / (ZONES_PER_WORKER * workers as u64);
        let zones = r.zones(per_zone.clamp(1, most));
        // Consecutive zones per worker, as many each as can be.
        let owners = (0..zones.len())
            .map(|z| (z * workers / zones.len()) as u32)
            .collect();
        let answered = r.full_size().div_ceil(kernel.size().max(1)).max(1);
        let run_states = budget.map_or(RUN_STATES, |b| {
            (b / RUN_SHARE / 3 / answered).clamp(1, RUN_STATES)
        });
        ZonePlan {
            zones,
            owners,
            run_states,
        }
    });
    let full = kernel.reduction().map_or(kernel.size(), |r| r.full_size());
    let kept = cluster.keep_layer(&run.identity(&layer.name), full, zones.as_ref())?;
    let dir = run.layers_dir();
    std::fs::create_dir_all(&dir)?;
    write_kept(&dir, &kept)?;
    // A table gathered by an earlier attempt is not this layer's record any more.
    let _ = std::fs::remove_file(table_path(&dir, &layer.name));
    tracing::info!(
        "layer {}: kept on {} workers in {} parts, digest {}",
        layer.name,
        workers,
        kept.parts.len(),
        kept.summary.digest
    );
    Ok(kept.summary)
}
