//! How far the writing of a solved layer's table is, in `progress.json` for `kingmaker status`.

use crate::rundir::{Progress, RunDir, TableStep};
use std::time::{Duration, Instant};

/// Writes phase `writing` with the current step into `progress.json`, at most every two seconds
/// (and at every step's start and end).
pub struct TableProgress<'a> {
    run: &'a RunDir,
    /// The layer's last wave, as the observer of its waves wrote it.
    last: Option<Progress>,
    written: Option<Instant>,
}

impl<'a> TableProgress<'a> {
    /// For the table of `layer` in `run` (silent if `progress.json` is about another layer).
    pub fn new(run: &'a RunDir, layer: &str) -> TableProgress<'a> {
        let last = run.progress().ok().flatten().filter(|p| p.layer == layer);
        TableProgress {
            run,
            last,
            written: None,
        }
    }

    /// `done` of `total` of `step` ([`TableStep`]).
    pub fn report(&mut self, step: &str, done: u64, total: u64) {
        let Some(last) = &self.last else {
            return;
        };
        let due = self
            .written
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(2));
        if !(due || done == 0 || done == total) {
            return;
        }
        let step = TableStep {
            step: step.to_string(),
            done,
            total,
        };
        if let Err(e) = self.run.write_progress(&Progress::writing(last, step)) {
            tracing::warn!("could not write progress.json: {e:#}");
        }
        self.written = Some(Instant::now());
    }
}
