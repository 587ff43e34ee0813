//! Which worker owns which shard, and reading a solved layer back from the owners in index order.
//! Both transports place shards the same way, so the coordinator and every worker agree on it.

use super::driver::WorkerHandle;
use super::shard::ShardPlan;
use super::KernelError;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Spread shards over `workers` in contiguous runs (shard `s` goes to `s * workers / shards`).
pub fn assign_shards(plan: &ShardPlan, workers: usize) -> Vec<usize> {
    let shards = plan.shards();
    (0..shards).map(|s| s * workers / shards).collect()
}

/// A gathered shard's values and depths.
type ShardTables = (Vec<u8>, Vec<u16>);

/// Gather every shard's values and depths from the workers, in index order, releasing each
/// shard's cells once `sink` has it. Shards are read a window at a time (as many as there are
/// threads, each shard's depths decoded by its own task), and on more than one thread the next
/// window while `sink` takes the last: at most two windows are held (one on one thread).
pub fn gather<E: From<KernelError>>(
    plan: &ShardPlan,
    workers: &[Arc<dyn WorkerHandle>],
    mut sink: impl FnMut(usize, Vec<u8>, Vec<u16>) -> Result<(), E>,
) -> Result<(), E> {
    let owners = assign_shards(plan, workers.len());
    let read = |shards: Range<usize>| -> Vec<Result<ShardTables, KernelError>> {
        shards
            .into_par_iter()
            .map(|shard| {
                let w = &workers[owners[shard]];
                Ok((w.shard_values(shard)?, w.shard_depth(shard)?))
            })
            .collect()
    };
    let threads = rayon::current_num_threads();
    let read_ahead = threads > 1;
    let windows: Vec<Range<usize>> = (0..owners.len())
        .step_by(threads)
        .map(|first| first..(first + threads).min(owners.len()))
        .collect();
    let read = &read;
    let mut held = windows.first().map(|w| read(w.clone()));
    for (i, shards) in windows.iter().enumerate() {
        let this = held.take().expect("the window was read");
        let mut next = None;
        // On this thread's pool (a spawned OS thread would read on the global pool instead).
        rayon::in_place_scope(|scope| -> Result<(), E> {
            if let Some(w) = windows.get(i + 1).filter(|_| read_ahead) {
                let next = &mut next;
                scope.spawn(move |_| *next = Some(read(w.clone())));
            }
            for (shard, tables) in shards.clone().zip(this) {
                let (values, depth) = tables?;
                sink(shard, values, depth)?;
                workers[owners[shard]].release_shard(shard)?;
            }
            Ok(())
        })?;
        held = next.or_else(|| windows.get(i + 1).map(|w| read(w.clone())));
    }
    Ok(())
}
