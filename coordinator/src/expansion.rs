//! A reduced game's table expanded to the full game's out of core: routed to zones as it is
//! gathered, then written zone by zone ([`kingmaker_games::reduction`]).

use crate::rundir::RunDir;
use crate::table_progress::TableProgress;
use anyhow::{Context, Result};
use kingmaker_games::reduction::Reduction;
use kingmaker_kernel::{gather, Layer, ShardPlan, WorkerHandle};
use kingmaker_tablefmt::layer::LayerFile;
use kingmaker_tablefmt::table::{table_path, TableWriter};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Bytes of a state in memory: its value and its depth.
const STATE_BYTES: u64 = 3;

/// Whether a reduced table of `reduced_states` is expanded out of core with `budget` bytes of
/// memory: when its values and depths, gathered in memory (2 bytes a state), would take more
/// than half the budget.
pub fn is_out_of_core(reduced_states: u64, budget: u64) -> bool {
    reduced_states.saturating_mul(2) > budget / 2
}

/// Gather the reduced table from the workers, routing it run by run to the zones of the full
/// table into `work/LAYER.routed.kmt` (a layer file as long as the full table, each run's states
/// zone after zone), let the workers go, then fill the zones a thread's worth at a time from
/// their parts of that file and append them to `writer`.
///
/// Memory, within `budget`: a zone per thread (a quarter of the budget between them), a run of
/// the reduced table and what it routes (an eighth), the file's buffers.
// The run, the reduction and its size, the plan, the layer and its workers, the table being
// written, the budget and the progress: each distinct.
#[allow(clippy::too_many_arguments)]
pub fn expand_out_of_core(
    run: &RunDir,
    reduction: &dyn Reduction,
    reduced_states: u64,
    plan: &ShardPlan,
    layer: &Layer,
    workers: Vec<Arc<dyn WorkerHandle>>,
    writer: &mut TableWriter,
    budget: u64,
    progress: &mut TableProgress,
) -> Result<()> {
    let threads = rayon::current_num_threads() as u64;
    let zones = reduction.zones((budget / 4 / threads / STATE_BYTES).max(1));
    let block = reduction.block_states();
    // A run and what it routes: each reduced state stands for about full / reduced states.
    let fan_out = reduction.full_size().div_ceil(reduced_states.max(1));
    let run_states = (budget / 8 / ((fan_out + 1) * STATE_BYTES) / block).max(1) * block;
    let work = run.work_dir();
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let identity = run.identity(&format!("{}.routed", layer.name));
    tracing::info!(
        "layer {}: the reduced table exceeds half the memory budget; routing it to {} zones \
         of the full table through {}",
        layer.name,
        zones.len(),
        table_path(&work, &identity.layer).display()
    );
    // Reported before the routed file exists, and filling before it is complete: a process
    // killed with either on disk left progress.json saying so.
    let shards = plan.shards() as u64;
    progress.report("routing", 0, shards);
    let mut router = Router {
        reduction,
        routed: TableWriter::create(&work, &identity, reduction.full_size())?,
        parts: vec![Vec::new(); zones.len()],
        out: vec![(Vec::new(), Vec::new()); zones.len()],
        written: 0,
        zones: &zones,
        first: 0,
        values: Vec::new(),
        depth: Vec::new(),
    };
    gather(plan, &workers, |shard, values, depth| -> Result<()> {
        router.values.extend_from_slice(&values);
        router.depth.extend_from_slice(&depth);
        while router.values.len() as u64 >= run_states {
            router.route(run_states as usize)?;
        }
        progress.report("routing", shard as u64 + 1, shards);
        Ok(())
    })?;
    drop(workers);
    router.route(router.values.len())?;
    anyhow::ensure!(
        router.first == reduced_states,
        "gathered {} reduced states of {reduced_states}",
        router.first
    );
    let Router { routed, parts, .. } = router;
    progress.report("filling", 0, zones.len() as u64);
    routed.finish()?;
    let path = table_path(&work, &identity.layer);
    let file = LayerFile::open_as(&path, &identity)?;
    let mut filled_zones = 0;
    for (group, parts) in zones
        .chunks(threads as usize)
        .zip(parts.chunks(threads as usize))
    {
        let filled: Vec<Result<(Vec<u8>, Vec<u16>)>> = group
            .par_iter()
            .zip(parts)
            .map(|(zone, parts)| fill_zone(reduction, &file, zone, parts))
            .collect();
        for zone in filled {
            let (values, depth) = zone?;
            writer.append(&values, &depth)?;
            filled_zones += 1;
            progress.report("filling", filled_zones, zones.len() as u64);
        }
    }
    drop(file);
    std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
    Ok(())
}

/// Routes runs of the reduced table to the zones and appends what each zone gets to the routed
/// file, remembering where.
struct Router<'a> {
    reduction: &'a dyn Reduction,
    zones: &'a [Range<u64>],
    routed: TableWriter,
    /// Per zone, the ranges of the routed file that hold its states, in order.
    parts: Vec<Vec<Range<u64>>>,
    out: Vec<(Vec<u8>, Vec<u16>)>,
    /// States written to the routed file.
    written: u64,
    /// The reduced index of `values[0]`.
    first: u64,
    values: Vec<u8>,
    depth: Vec<u16>,
}

impl Router<'_> {
    /// Route the first `n` reduced states held (whole blocks) and drop them.
    fn route(&mut self, n: usize) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.reduction.scatter(
            self.zones,
            self.first,
            &self.values[..n],
            &self.depth[..n],
            &mut self.out,
        );
        for (out, parts) in self.out.iter_mut().zip(&mut self.parts) {
            // Taken, not cleared: a zone gets whole rows from the run that holds their blocks,
            // and a buffer kept at that size by every zone would be many runs' worth.
            let (values, depth) = std::mem::take(out);
            if values.is_empty() {
                continue;
            }
            self.routed.append(&values, &depth)?;
            parts.push(self.written..self.written + values.len() as u64);
            self.written += values.len() as u64;
        }
        self.values.drain(..n);
        self.depth.drain(..n);
        self.first += n as u64;
        Ok(())
    }
}

/// One zone of the full table from its parts of the routed file.
fn fill_zone(
    reduction: &dyn Reduction,
    file: &LayerFile,
    zone: &Range<u64>,
    parts: &[Range<u64>],
) -> Result<(Vec<u8>, Vec<u16>)> {
    let mut parts = parts.iter().cloned();
    let mut part = 0..0;
    // A part can be large: read in slices.
    const SLICE: u64 = 1 << 20;
    kingmaker_games::reduction::fill_zone(reduction, zone.clone(), || {
        if part.is_empty() {
            match parts.next() {
                Some(p) => part = p,
                None => return Ok(None),
            }
        }
        let slice = part.start..part.end.min(part.start + SLICE);
        part.start = slice.end;
        let n = (slice.end - slice.start) as usize;
        let (mut values, mut depth) = (vec![0u8; n], vec![0u16; n]);
        file.read_states(slice.start, &mut values, &mut depth)?;
        Ok(Some((values, depth)))
    })
    .with_context(|| format!("filling zone {zone:?} from the routed file"))
}
