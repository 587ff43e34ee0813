//! A run directory: what a build writes and what `query`, `pack` and `status` read.
//! 1. Its files are listed in docs/coordinator.md and described field by field in docs/format.md
//!    ("Run directories while a build runs").
//! 2. `run.json` and `checkpoint.json` are written to a temporary file, fsynced and renamed
//!    ([`write_json_atomically`]): a crash leaves the old file or the new one, never half of one.

use crate::lock::{lock_run, LOCK_FILE};
use anyhow::{Context, Result};
use kingmaker_games::GameSpec;
use kingmaker_kernel::{Layer, WaveSummary};
use kingmaker_probe::tables::open_kept;
use kingmaker_process::lock::DirLock;
use kingmaker_rpc::auth::TOKEN_ENV;
use kingmaker_tablefmt::fsio::{destination, read_bounded, Existing, METADATA_CAP};
use kingmaker_tablefmt::kept::{kept_path, parts_here, read_kept};
use kingmaker_tablefmt::layer::LayerIdentity;
use kingmaker_tablefmt::layer::LayerTable;
use kingmaker_tablefmt::table::{open_table, read_summary, table_path, TableSummary};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Read the JSON file `path` (of a run directory, or any the tool did not just write) as `T`: a
/// regular file of at most [`METADATA_CAP`] bytes, `what` naming it in a refusal ("a run.json").
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<T> {
    let bytes = read_bounded(path, METADATA_CAP, what)?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is malformed", path.display()))
}

/// Refuse `path` as a new directory (`build --out`, `pack --out`) when something other than a
/// directory is there: a file, a device (`/dev/null`), a FIFO. Whether a directory there is
/// empty enough is the caller's question.
pub fn check_new_dir_kind(path: &Path) -> Result<()> {
    let kind = match destination(path)? {
        Existing::Nothing | Existing::Dir => return Ok(()),
        Existing::File => "a file",
        Existing::Other(kind) => kind,
    };
    anyhow::bail!(
        "{} is {kind}, not a directory; choose a new --out directory (one that does not exist yet)",
        path.display()
    )
}

/// The contents of `run.json` (see [`kingmaker_tablefmt::run::RunInfo`]), its game a [`GameSpec`].
pub type RunInfo = kingmaker_tablefmt::run::RunInfo<GameSpec>;
pub use kingmaker_tablefmt::run::{Distributed, RunState, ShardPlacement};

pub struct RunDir {
    pub path: PathBuf,
    /// The game of `run.json` (its `spec`, as JSON): what every finished layer file must say it
    /// holds. Null until `run.json` is read or written.
    game: serde_json::Value,
}

impl RunDir {
    /// A new run directory, locked for `command` (`kingmaker build`) as long as the lock lives:
    /// `path` must not exist, or be empty. (A build killed before it wrote `run.json` leaves at
    /// most a temporary file and the lock file behind, which counts as empty.) The directory is
    /// checked again once locked, so two builds into one new directory cannot both go ahead.
    pub fn create(path: &Path, command: &str, spec: &GameSpec) -> Result<(RunDir, DirLock)> {
        let only_leftovers = || {
            path.is_dir()
                && path
                    .read_dir()
                    .map(|d| {
                        d.flatten().all(|e| {
                            let name = e.file_name().to_string_lossy().into_owned();
                            name.ends_with(".tmp") || name == LOCK_FILE
                        })
                    })
                    .unwrap_or(false)
        };
        let refuse = || {
            // Only a run directory can be resumed.
            let resume = if path.join("run.json").is_file() {
                format!(
                    " (or `kingmaker resume {}` to continue the run there)",
                    path.display()
                )
            } else {
                String::new()
            };
            anyhow::anyhow!(
                "{} already exists and is not empty; choose a new --out directory{resume}",
                path.display(),
            )
        };
        check_new_dir_kind(path)?;
        if path.exists() && !only_leftovers() {
            return Err(refuse());
        }
        std::fs::create_dir_all(path).with_context(|| format!("creating {}", path.display()))?;
        let lock = lock_run(path, command)?;
        if !only_leftovers() {
            return Err(refuse());
        }
        let mut run = RunDir::at(path);
        run.game = serde_json::to_value(spec)?;
        Ok((run, lock))
    }

    /// An existing run directory with its `run.json`.
    pub fn open(path: &Path) -> Result<(RunDir, RunInfo)> {
        let file = path.join("run.json");
        let text = read_bounded(&file, METADATA_CAP, "a run.json").with_context(|| {
            format!(
                "{} is not a Kingmaker run directory (no readable run.json)",
                path.display()
            )
        })?;
        let info: RunInfo = serde_json::from_slice(&text)
            .with_context(|| format!("{} is malformed", file.display()))?;
        let mut run = RunDir::at(path);
        run.game = serde_json::to_value(&info.spec)?;
        Ok((run, info))
    }

    /// The run directory at `path`, its game not yet known (no layer file can be opened).
    pub fn at(path: &Path) -> RunDir {
        RunDir {
            path: path.to_path_buf(),
            game: serde_json::Value::Null,
        }
    }

    /// What the finished file of `layer` must say it holds.
    pub fn identity(&self, layer: &str) -> LayerIdentity {
        LayerIdentity::new(self.game.clone(), layer)
    }

    /// The run manifest (`checkpoint.json`); a run that never checkpointed has an empty one.
    pub fn state(&self) -> Result<RunState> {
        let path = self.path.join("checkpoint.json");
        if !path.exists() {
            return Ok(RunState::default());
        }
        read_json(&path, "a checkpoint.json")
    }

    /// Refuse a run manifest written for another game than `info`'s (`run.json` was edited
    /// since): nothing of the run is read or changed on such a run. A manifest from before the
    /// record passes (its worker checkpoints are checked on their own).
    pub fn check_state(&self, state: &RunState, info: &RunInfo) -> Result<()> {
        let spec = serde_json::to_value(&info.spec)?;
        let solved_as = info
            .solved_as
            .as_ref()
            .map(serde_json::to_value)
            .transpose()?;
        match state.game_problem(&spec, solved_as.as_ref()) {
            Some(problem) => anyhow::bail!("{}: {problem}", self.path.display()),
            None => Ok(()),
        }
    }

    /// A run manifest rebuilt from the run's finished layer files, for a `checkpoint.json` that
    /// cannot be read: every layer whose file opens and reads back whole counts as finished (a
    /// layer file is renamed into place only when complete); the layer being solved starts again.
    /// The unreadable manifest is kept as `checkpoint.json.damaged`.
    pub fn recover_state(&self, info: &RunInfo) -> Result<RunState> {
        let path = self.path.join("checkpoint.json");
        let _ = std::fs::rename(&path, self.path.join("checkpoint.json.damaged"));
        let mut state = RunState::default();
        for layer in &info.layers {
            let Ok(file) = open_table(&self.layers_dir(), &self.identity(&layer.name)) else {
                break;
            };
            match kingmaker_tablefmt::table::read_summary(&LayerTable::whole(file)) {
                Ok(table) if table.states == info.states => state.finish(layer.clone(), table),
                _ => break,
            }
        }
        self.write_state(&state)?;
        Ok(state)
    }

    pub fn write_state(&self, state: &RunState) -> Result<()> {
        write_json_atomically(&self.path.join("checkpoint.json"), state)
    }

    pub fn progress(&self) -> Result<Option<Progress>> {
        let path = self.path.join("progress.json");
        if !path.exists() {
            return Ok(None);
        }
        read_json(&path, "a progress.json").map(Some)
    }

    pub fn write_progress(&self, progress: &Progress) -> Result<()> {
        write_json_atomically(&self.path.join("progress.json"), progress)
    }

    /// Write `run.json` (its game is the one the directory was created or opened with).
    pub fn write_info(&self, info: &RunInfo) -> Result<()> {
        write_json_atomically(&self.path.join("run.json"), info)
    }

    /// Where finished tables go (created on first use).
    pub fn layers_dir(&self) -> PathBuf {
        self.path.join("layers")
    }

    pub fn work_dir(&self) -> PathBuf {
        self.path.join("work")
    }

    pub fn summary_path(&self) -> PathBuf {
        self.path.join("summary.json")
    }

    /// Keep the file of a finished layer that failed its check as `NAME.kmt.damaged` (for a
    /// look later; the layer is solved again into `NAME.kmt`).
    pub fn set_aside(&self, layer: &str) {
        let path = table_path(&self.layers_dir(), layer);
        if path.exists() {
            let _ = std::fs::rename(&path, path.with_extension("kmt.damaged"));
        }
    }

    /// Whether `layer` is kept in parts on the workers (`layers/NAME.kept.json`).
    pub fn is_kept(&self, layer: &str) -> bool {
        kept_path(&self.layers_dir(), layer).exists()
    }

    /// Whether `layer` is kept in parts on the workers and not every part is copied here (so
    /// that only its list can be read).
    pub fn is_elsewhere(&self, layer: &str) -> bool {
        match read_kept(&self.layers_dir(), layer) {
            Ok(Some(kept)) => !parts_here(&self.layers_dir(), &kept),
            _ => self.is_kept(layer),
        }
    }

    /// The finished table of one layer (refused unless its file says it holds that layer of
    /// this run's game).
    pub fn table(&self, layer: &str) -> Result<LayerTable> {
        if let Some(kept) = read_kept(&self.layers_dir(), layer)? {
            let game = self.identity(layer).game;
            // Parts not copied here are read on their workers, given the run's token.
            let dist = kingmaker_tablefmt::run::read_run_info::<serde_json::Value>(&self.path)
                .ok()
                .and_then(|info| info.distributed);
            let remote = dist.zip(crate::tables::remote_parts());
            return open_kept(&self.layers_dir(), &kept, &game, remote.as_ref())?.with_context(|| {
                format!(
                    "layer {layer} of {} is kept in parts on the workers that built it (layers/{layer}.kept.json \
                     lists them): set {TOKEN_ENV} to read them there, or `kingmaker collect --in-parts` \
                     copies the parts here, `kingmaker collect` assembles them",
                    self.path.display()
                )
            });
        }
        let file = open_table(&self.layers_dir(), &self.identity(layer)).with_context(|| {
            format!(
                "layer {layer} of {} is missing, damaged or not this run's",
                self.path.display()
            )
        })?;
        Ok(LayerTable::whole(file))
    }

    /// Read every layer `state` records as finished back whole (its file's identity, every
    /// block's crc32, the counts, the digest and the max depth) and compare it with the record.
    /// A layer that fails is taken out of `state` (so that a resume solves it again); the names
    /// of those layers and why. A summary or a release is built only from layers that passed.
    pub fn recheck_finished(&self, state: &mut RunState) -> Vec<(String, String)> {
        let mut failed = Vec::new();
        state.finished.retain(|f| {
            let name = &f.layer.name;
            let started = std::time::Instant::now();
            let read = if self.is_elsewhere(name) {
                // The parts are on the workers: their list is checked, and must agree.
                read_kept(&self.layers_dir(), name)
                    .map_err(anyhow::Error::from)
                    .and_then(|k| k.context("the list of its parts vanished"))
                    .map(|k| k.summary)
            } else {
                self.table(name).and_then(|file| Ok(read_summary(&file)?))
            };
            let problem = match read {
                Err(e) => format!("{e:#}"),
                Ok(read) if read == f.table => {
                    tracing::info!(
                        "finished layer {name}: {} states read back and checked in {:.1}s",
                        read.states,
                        started.elapsed().as_secs_f64()
                    );
                    return true;
                }
                Ok(read) => format!(
                    "layers/{name}.kmt holds {}, but checkpoint.json records {} (one of them was \
                     altered)",
                    describe_table(&read),
                    describe_table(&f.table)
                ),
            };
            failed.push((name.clone(), problem));
            false
        });
        failed
    }
}

/// A table's counts and digest in words.
pub fn describe_table(t: &TableSummary) -> String {
    format!(
        "{} states (W {}, L {}, D {}, illegal {}), digest {}, max depth {}",
        t.states,
        t.counts.win,
        t.counts.loss,
        t.counts.draw,
        t.counts.illegal,
        t.digest,
        t.max_depth
    )
}

/// Write JSON to a temporary file, fsync it, and rename it into place.
pub fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    Ok(kingmaker_tablefmt::run::write_json(path, value)?)
}

/// `progress.json`: the latest wave of a run, for `kingmaker status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub layer: String,
    pub wave: u32,
    pub decided_in_wave: u64,
    pub decided_total: u64,
    pub states: u64,
    pub layers_finished: Vec<String>,
    /// Seconds since this layer (re)started, and states decided per second over that time.
    pub seconds: f64,
    pub rate: f64,
    pub updated_unix: u64,
    pub pid: u32,
    pub last_checkpoint: Option<(String, u32)>,
    pub workers: Vec<String>,
    /// `starting` (a build or resume without a checkpoint to restore, before its first wave),
    /// `restoring` (a resume restoring its checkpoint, until the first wave after it closes),
    /// `running` (waves are closing), `writing` (a layer's waves are done and its table is being
    /// written: [`Progress::writing`]), `summarizing` (every layer is solved; the summary's counts
    /// and classes are being computed, which takes minutes on a large game), or `finished`
    /// (`summary.json` is written: the last layer and wave, every state decided). Absent in
    /// files from before: `running`.
    #[serde(default = "running")]
    pub phase: String,
    /// In phase `writing` (the layer's waves are done; its table is being gathered from the
    /// workers, and a reduced game's expanded to the full game's): the step and how far it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writing: Option<TableStep>,
}

/// A step of writing a layer's table: `gathering` (shards), `expanding` (full states, in
/// memory), `routing` (shards, routed to the zones out of core) or `filling` (zones).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableStep {
    pub step: String,
    pub done: u64,
    pub total: u64,
}

fn running() -> String {
    "running".into()
}

impl Progress {
    pub fn new(
        layer: &Layer,
        w: &WaveSummary,
        states: u64,
        seconds: f64,
        state: &RunState,
        workers: &[String],
    ) -> Progress {
        Progress {
            layer: layer.name.clone(),
            wave: w.wave,
            decided_in_wave: w.decided,
            decided_total: w.decided_total,
            states,
            layers_finished: state
                .finished
                .iter()
                .map(|f| f.layer.name.clone())
                .collect(),
            seconds,
            rate: if seconds > 0.0 {
                w.decided_total as f64 / seconds
            } else {
                0.0
            },
            updated_unix: unix_now(),
            pid: std::process::id(),
            last_checkpoint: state
                .current
                .as_ref()
                .map(|c| (c.layer.clone(), c.last.wave)),
            workers: workers.to_vec(),
            phase: running(),
            writing: None,
        }
    }

    /// What a build or resume writes once its run is finished and `summary.json` written: every
    /// layer in `layers_finished`, all `states` decided, the layer, wave, rate and workers of
    /// `last` (the last wave's progress, if any; else `workers`).
    pub fn finished(
        layers_finished: Vec<String>,
        states: u64,
        last: Option<&Progress>,
        workers: &[String],
    ) -> Progress {
        Progress {
            layer: last.map_or_else(
                || layers_finished.last().cloned().unwrap_or_default(),
                |p| p.layer.clone(),
            ),
            wave: last.map_or(0, |p| p.wave),
            decided_in_wave: 0,
            decided_total: states,
            states,
            layers_finished,
            seconds: last.map_or(0.0, |p| p.seconds),
            rate: last.map_or(0.0, |p| p.rate),
            updated_unix: unix_now(),
            pid: std::process::id(),
            last_checkpoint: None,
            workers: last.map_or_else(|| workers.to_vec(), |p| p.workers.clone()),
            phase: "finished".into(),
            writing: None,
        }
    }

    /// What a build or resume writes while a solved layer's table is written: `last` (the
    /// layer's last wave) with every state decided, and the step.
    pub fn writing(last: &Progress, step: TableStep) -> Progress {
        Progress {
            decided_in_wave: 0,
            decided_total: last.states,
            updated_unix: unix_now(),
            pid: std::process::id(),
            phase: "writing".into(),
            writing: Some(step),
            ..last.clone()
        }
    }

    /// What a build or resume writes once every layer is solved, while it computes the summary:
    /// `last` (the last wave's progress) with every state decided.
    pub fn summarizing(last: &Progress) -> Progress {
        Progress {
            decided_in_wave: 0,
            decided_total: last.states,
            updated_unix: unix_now(),
            pid: std::process::id(),
            last_checkpoint: None,
            phase: "summarizing".into(),
            writing: None,
            ..last.clone()
        }
    }

    /// What a build or resume announces before its first wave: `restoring` the checkpoint of
    /// the current layer if there is one (its wave and decided states), else `starting` the
    /// first layer not yet finished. `states`: the states of the game the kernel solves.
    pub fn starting(
        layers: &[Layer],
        states: u64,
        state: &RunState,
        workers: &[String],
    ) -> Progress {
        let (layer, point, phase) = match &state.current {
            Some(c) => (c.layer.clone(), Some(c.last), "restoring"),
            None => (
                layers
                    .iter()
                    .find(|l| state.finished(&l.name).is_none())
                    .map_or(String::new(), |l| l.name.clone()),
                None,
                "starting",
            ),
        };
        Progress {
            layer,
            wave: point.map_or(0, |p| p.wave),
            decided_in_wave: 0,
            decided_total: point.map_or(0, |p| p.decided_total),
            states,
            layers_finished: state
                .finished
                .iter()
                .map(|f| f.layer.name.clone())
                .collect(),
            seconds: 0.0,
            rate: 0.0,
            updated_unix: unix_now(),
            pid: std::process::id(),
            last_checkpoint: state
                .current
                .as_ref()
                .map(|c| (c.layer.clone(), c.last.wave)),
            workers: workers.to_vec(),
            phase: phase.into(),
            writing: None,
        }
    }
}

pub use kingmaker_process::lock::unix_now;

/// Set by `kingmaker deploy` in the environment of the services it starts: the command that
/// resumes the run from the operator's machine (`kingmaker deploy resume --inventory FILE`),
/// which hints name instead of `kingmaker resume`, whose directory, workers and token live on
/// the servers.
pub const DEPLOY_RESUME_ENV: &str = "KINGMAKER_DEPLOY_RESUME";

/// How to continue the run in `dir` after it stopped: `kingmaker resume DIR ARGS`, or in a
/// deploy (the service's environment says so) the deploy command that does it.
pub fn resume_hint(dir: &Path, args: &str) -> String {
    resume_hint_in(
        dir,
        args,
        std::env::var(DEPLOY_RESUME_ENV).ok(),
        std::env::var("KINGMAKER_RUN").ok(),
    )
}

fn resume_hint_in(
    dir: &Path,
    args: &str,
    deploy: Option<String>,
    deploy_run: Option<String>,
) -> String {
    let some = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    match (some(deploy), some(deploy_run)) {
        (Some(command), _) => command,
        // Environment files from before the deploy named its resume command: the service's run.
        (None, Some(run)) => {
            format!("kingmaker deploy resume --inventory <the inventory of run {run}>")
        }
        (None, None) => format!("kingmaker resume {}{args}", dir.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_hints_name_the_deploy_command_in_a_deploy() {
        let dir = Path::new("/srv/run");
        let hint = |d: Option<&str>, r: Option<&str>| {
            resume_hint_in(dir, " --workers a:1", d.map(Into::into), r.map(Into::into))
        };
        assert_eq!(hint(None, None), "kingmaker resume /srv/run --workers a:1");
        assert_eq!(
            hint(
                Some("kingmaker deploy resume --inventory inv.toml"),
                Some("b")
            ),
            "kingmaker deploy resume --inventory inv.toml"
        );
        assert_eq!(
            hint(Some(" "), Some("cc2p-b")),
            "kingmaker deploy resume --inventory <the inventory of run cc2p-b>"
        );
    }

    /// While the summary is computed, progress says so, with every state decided and no
    /// checkpoint to resume from (the tables are written).
    #[test]
    fn writing_progress_keeps_the_last_wave_and_names_its_step() {
        let last = Progress {
            layer: "solo".into(),
            wave: 40,
            decided_in_wave: 3,
            decided_total: 90,
            states: 100,
            layers_finished: vec![],
            seconds: 2.0,
            rate: 45.0,
            updated_unix: 0,
            pid: 1,
            last_checkpoint: Some(("solo".into(), 40)),
            workers: vec!["local-0".into()],
            phase: "running".into(),
            writing: None,
        };
        let step = TableStep {
            step: "filling".into(),
            done: 3,
            total: 7,
        };
        let w = Progress::writing(&last, step.clone());
        assert_eq!(
            (w.phase.as_str(), w.writing.as_ref()),
            ("writing", Some(&step))
        );
        assert_eq!(
            (w.layer.as_str(), w.wave, w.decided_total),
            ("solo", 40, 100)
        );
        assert_eq!(w.pid, std::process::id());
        let text = serde_json::to_string(&w).unwrap();
        assert_eq!(serde_json::from_str::<Progress>(&text).unwrap(), w);
        // A progress.json from before the field reads as not writing.
        let old = text.replace(r#","writing":{"step":"filling","done":3,"total":7}"#, "");
        assert_eq!(
            serde_json::from_str::<Progress>(&old).unwrap().writing,
            None
        );
    }

    #[test]
    fn summarizing_progress_keeps_the_last_wave_and_decides_everything() {
        let last = Progress {
            layer: "enable_ac".into(),
            wave: 76,
            decided_in_wave: 0,
            decided_total: 14_831_646_694,
            states: 14_841_300_390,
            layers_finished: vec!["solo".into(), "enable_ab".into()],
            seconds: 3537.0,
            rate: 4.19e6,
            updated_unix: 1,
            pid: 1,
            last_checkpoint: Some(("enable_ac".into(), 24)),
            workers: vec!["10.0.0.1:7070".into()],
            phase: "running".into(),
            writing: None,
        };
        let s = Progress::summarizing(&last);
        assert_eq!(s.phase, "summarizing");
        assert_eq!(s.decided_total, s.states);
        assert_eq!((s.layer.as_str(), s.wave), ("enable_ac", 76));
        assert_eq!(s.last_checkpoint, None);
        assert_eq!(s.workers, last.workers);
        assert_eq!(s.pid, std::process::id());
    }
}
