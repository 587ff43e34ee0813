//! Which worker owns which shard, and reading a solved layer back from the owners in index order.
//! Both transports place shards the same way, so the coordinator and every worker agree on it.

use super::driver::WorkerHandle;
use super::shard::ShardPlan;
use super::KernelError;
use std::sync::Arc;

/// Spread shards over `workers` in contiguous runs (shard `s` goes to `s * workers / shards`).
pub fn assign_shards(plan: &ShardPlan, workers: usize) -> Vec<usize> {
    let shards = plan.shards();
    (0..shards).map(|s| s * workers / shards).collect()
}

/// Gather every shard's values and depths from the workers, in index order.
pub fn gather<E: From<KernelError>>(
    plan: &ShardPlan,
    workers: &[Arc<dyn WorkerHandle>],
    mut sink: impl FnMut(usize, Vec<u8>, Vec<u16>) -> Result<(), E>,
) -> Result<(), E> {
    let owners = assign_shards(plan, workers.len());
    for (shard, &owner) in owners.iter().enumerate() {
        let w = &workers[owner];
        sink(shard, w.shard_values(shard)?, w.shard_depth(shard)?)?;
    }
    Ok(())
}
