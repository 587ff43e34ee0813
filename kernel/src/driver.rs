//! The barrier: run the waves of one layer over a set of workers, whatever carries their calls
//! (in-process workers are in [`super::local`], remote ones in the `kingmaker-rpc` crate). Every
//! worker finishes a step before any starts the next.

use super::engine::WaveStats;
use super::{KernelError, Layer};
use std::sync::Arc;
use std::time::Instant;

/// What the driver needs of one worker. In-process workers implement it directly; the gRPC
/// client implements it for remote ones. Each call returns when the worker has done the step.
pub trait WorkerHandle: Send + Sync {
    /// How to name this worker in messages (an address for remote workers).
    fn name(&self) -> String;
    /// Wave 0: classify the worker's states; terminal ones are decided.
    fn init_pass(&self) -> Result<(), KernelError>;
    /// Wave `wave` (≥ 1): expand the states decided in wave `wave - 1`, every update delivered to
    /// its owner.
    fn run_wave(&self, wave: u32) -> Result<(), KernelError>;
    /// Close wave `wave` and report what it decided.
    fn close_wave(&self, wave: u32) -> Result<ClosedWave, KernelError>;
    /// Final values of an owned shard, one code per state in index order.
    fn shard_values(&self, shard: usize) -> Result<Vec<u8>, KernelError>;
    /// Depths of an owned shard, rebuilt from its wave log.
    fn shard_depth(&self, shard: usize) -> Result<Vec<u16>, KernelError>;
    /// The caller holds the shard's values and depths: the worker may free its cells. In-process
    /// workers do (see [`super::owners::gather`]); others keep them until they go.
    fn release_shard(&self, _shard: usize) -> Result<(), KernelError> {
        Ok(())
    }
    /// Save this worker's arrays after wave `wave` closed (see [`super::checkpoint`]).
    fn checkpoint(&self, _wave: u32) -> Result<(), KernelError> {
        Err(KernelError::Checkpoint(format!(
            "worker {} cannot write checkpoints",
            self.name()
        )))
    }
    /// Load this worker's arrays as they were after wave `wave` closed.
    fn restore(&self, _wave: u32) -> Result<(), KernelError> {
        Err(KernelError::Checkpoint(format!(
            "worker {} cannot restore checkpoints",
            self.name()
        )))
    }
}

/// What one worker reports when it closes a wave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClosedWave {
    /// States of its shards decided in the wave.
    pub decided: u64,
    /// What it did in the wave.
    pub stats: WaveStats,
    /// Bytes of update messages it sent to other workers in the wave; None when its transport
    /// has no wire (in-process workers).
    pub wire_bytes: Option<u64>,
}

/// What the caller of [`drive_layer`] sees and decides between waves.
pub trait LayerObserver {
    /// A wave has closed (wave 0 is the initial pass).
    fn wave(&mut self, summary: &WaveSummary);
    /// Should every worker checkpoint now?
    fn want_checkpoint(&mut self, _summary: &WaveSummary) -> bool {
        false
    }
    /// Every worker has checkpointed `wave`: record it as the run's restart point.
    fn checkpointed(&mut self, _wave: u32, _decided_total: u64) -> Result<(), KernelError> {
        Ok(())
    }
    /// Stop after this wave? (A checkpoint is taken first, so the run can be resumed.)
    fn should_stop(&mut self) -> bool {
        false
    }
    /// Checkpoint the layer once solved (its last wave decided nothing), before the caller reads
    /// its table: a failure there (a full disk) then costs no waves.
    fn checkpoint_when_settled(&mut self) -> bool {
        false
    }
    /// Every worker has checkpointed the solved layer after `point.wave`, which decided nothing.
    fn settled(&mut self, _point: ResumePoint) -> Result<(), KernelError> {
        Ok(())
    }
}

/// Any closure is an observer that only watches.
impl<F: FnMut(&WaveSummary)> LayerObserver for F {
    fn wave(&mut self, summary: &WaveSummary) {
        self(summary)
    }
}

pub use kingmaker_tablefmt::run::ResumePoint;

/// One line of progress: what a wave did, summed over the workers.
#[derive(Clone, Debug, serde::Serialize)]
pub struct WaveSummary {
    /// The layer's name.
    pub layer: String,
    /// The wave (0: the initial pass).
    pub wave: u32,
    /// States decided in the wave.
    pub decided: u64,
    /// States decided so far, this wave included.
    pub decided_total: u64,
    /// What the workers did in the wave, summed.
    pub stats: WaveStats,
    /// Bytes of update messages the workers sent each other in the wave; None when none of them
    /// has a wire (in-process workers).
    pub wire_bytes: Option<u64>,
    /// Wall-clock seconds the wave took.
    pub seconds: f64,
}

/// How a layer's waves went.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LayerOutcome {
    /// The last wave that decided a state (the last wave run, when stopped).
    pub waves: u32,
    /// States decided in all, waves before a resume included.
    pub decided: u64,
    /// Wall-clock seconds of this call (not of the waves before a resume).
    pub seconds: f64,
    /// The observer asked to stop: the layer is not finished, its last wave is checkpointed.
    pub stopped: bool,
}

/// Call `f` on every worker at once and collect the results in worker order. One worker is
/// called on this thread, so its parallel work runs in the caller's thread pool.
fn on_all<T: Send>(
    workers: &[Arc<dyn WorkerHandle>],
    f: impl Fn(&dyn WorkerHandle) -> Result<T, KernelError> + Sync,
) -> Result<Vec<T>, KernelError> {
    if let [only] = workers {
        return Ok(vec![f(only.as_ref())?]);
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = workers
            .iter()
            .map(|w| scope.spawn(|| f(w.as_ref())))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("worker call panicked"))
            .collect()
    })
}

/// Run one layer to its fixpoint: the initial pass (or the restored state of `resume`), then
/// waves until one decides nothing. The observer sees every wave and decides about checkpoints
/// and stopping; a stopped layer returns with `stopped` set.
pub fn drive_layer(
    layer: &Layer,
    workers: &[Arc<dyn WorkerHandle>],
    resume: Option<ResumePoint>,
    observer: &mut dyn LayerObserver,
) -> Result<LayerOutcome, KernelError> {
    let started = Instant::now();
    let (mut wave, mut total) = match resume {
        Some(r) => {
            on_all(workers, |w| w.restore(r.wave)).map_err(|e| KernelError::Restore {
                wave: r.wave,
                source: Box::new(e),
            })?;
            if r.settled {
                // Checkpointed after the wave that decided nothing: the layer is solved.
                return Ok(LayerOutcome {
                    waves: r.wave.saturating_sub(1),
                    decided: r.decided_total,
                    seconds: started.elapsed().as_secs_f64(),
                    stopped: false,
                });
            }
            (r.wave + 1, r.decided_total)
        }
        None => (0, 0),
    };
    loop {
        let t = Instant::now();
        if wave == 0 {
            on_all(workers, |w| w.init_pass())?;
        } else {
            on_all(workers, |w| w.run_wave(wave))?;
        }
        let closed = on_all(workers, |w| w.close_wave(wave))?;
        let decided: u64 = closed.iter().map(|c| c.decided).sum();
        let stats = closed.iter().fold(WaveStats::default(), |a, c| WaveStats {
            expanded: a.expanded + c.stats.expanded,
            applied: a.applied + c.stats.applied,
            sent: a.sent + c.stats.sent,
            sent_states: a.sent_states + c.stats.sent_states,
        });
        let wire_bytes = closed
            .iter()
            .filter_map(|c| c.wire_bytes)
            .reduce(|a, b| a + b);
        total += decided;
        let summary = WaveSummary {
            layer: layer.name.clone(),
            wave,
            decided,
            decided_total: total,
            stats,
            wire_bytes,
            seconds: t.elapsed().as_secs_f64(),
        };
        observer.wave(&summary);
        let outcome = |stopped| LayerOutcome {
            // The last wave decided nothing: the layer settled in the wave before it.
            waves: if stopped {
                wave
            } else {
                wave.saturating_sub(1)
            },
            decided: total,
            seconds: started.elapsed().as_secs_f64(),
            stopped,
        };
        if decided == 0 {
            if observer.checkpoint_when_settled() {
                on_all(workers, |w| w.checkpoint(wave))?;
                observer.settled(ResumePoint {
                    wave,
                    decided_total: total,
                    settled: true,
                })?;
            }
            return Ok(outcome(false));
        }
        let stop = observer.should_stop();
        if stop || observer.want_checkpoint(&summary) {
            on_all(workers, |w| w.checkpoint(wave))?;
            observer.checkpointed(wave, total)?;
        }
        if stop {
            return Ok(outcome(true));
        }
        wave += 1;
    }
}
