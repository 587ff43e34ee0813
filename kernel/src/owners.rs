//! Which worker owns which shard, and reading a solved layer back from the owners in index order.
//! Both transports place shards the same way, so the coordinator and every worker agree on it.
//! Shards are interleaved over the workers unless a layer's rows must stay in runs ([`Placement`]).

use super::driver::WorkerHandle;
use super::shard::ShardPlan;
use super::KernelError;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// How a layer's shards are placed on its workers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// Shard `s` to worker `s % workers`. The work per state varies along the index (a state's
    /// moves depend on where its pieces are), so contiguous halves can carry unequal work: those
    /// of cc2p 5×5 / 6 cost one worker 1.43× the other's CPU. Interleaved, each gets some of all.
    #[default]
    Interleaved,
    /// Contiguous runs (shard `s` to `s * workers / shards`): each worker's shards are one range
    /// of rows, in worker order, as a layer kept on the workers needs (its parts are those ranges,
    /// and the rows it routes for an expansion are read back worker by worker).
    Runs,
}

/// The owner of every shard of `plan` on `workers` workers, placed as `placement` says.
pub fn assign_shards(plan: &ShardPlan, workers: usize, placement: Placement) -> Vec<usize> {
    let shards = plan.shards();
    let workers = workers.max(1);
    match placement {
        Placement::Interleaved => (0..shards).map(|s| s % workers).collect(),
        Placement::Runs => (0..shards).map(|s| s * workers / shards).collect(),
    }
}

/// A gathered shard's values and depths.
type ShardTables = (Vec<u8>, Vec<u16>);

/// Gather every shard's values and depths from the workers, in index order, releasing each
/// shard's cells once `sink` has it. The shards were placed as [`Placement::Interleaved`] (a
/// layer in runs is kept on its workers, not gathered). Shards are read a window at a time (as
/// many as there are threads, each shard's depths decoded by its own task), and on more than one
/// thread the next window while `sink` takes the last: at most two windows are held (one on one
/// thread).
pub fn gather<E: From<KernelError>>(
    plan: &ShardPlan,
    workers: &[Arc<dyn WorkerHandle>],
    mut sink: impl FnMut(usize, Vec<u8>, Vec<u16>) -> Result<(), E>,
) -> Result<(), E> {
    let owners = assign_shards(plan, workers.len(), Placement::Interleaved);
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

#[cfg(test)]
mod tests {
    use super::{assign_shards, Placement};
    use crate::shard::ShardPlan;

    /// Interleaved, neighbouring shards go to different workers and every worker gets its share
    /// (one more at most); in runs, each worker's shards are consecutive and in worker order.
    #[test]
    fn shards_are_interleaved_or_in_runs() {
        let plan = ShardPlan::new(7 * 64, 64);
        assert_eq!(
            assign_shards(&plan, 2, Placement::Interleaved),
            [0, 1, 0, 1, 0, 1, 0]
        );
        assert_eq!(
            assign_shards(&plan, 3, Placement::Interleaved),
            [0, 1, 2, 0, 1, 2, 0]
        );
        assert_eq!(
            assign_shards(&plan, 2, Placement::Runs),
            [0, 0, 0, 0, 1, 1, 1]
        );
        assert_eq!(
            assign_shards(&plan, 3, Placement::Runs),
            [0, 0, 0, 1, 1, 2, 2]
        );
        assert_eq!(assign_shards(&plan, 1, Placement::Interleaved), [0; 7]);
        assert_eq!(Placement::default(), Placement::Interleaved);
    }
}
