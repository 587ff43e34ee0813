//! `run.json` and `checkpoint.json`: what a build is and how far it has come, as written in its
//! run directory (docs/format.md, "Run directories while a build runs"). Both are pretty-printed
//! JSON ending with a newline, written atomically ([`write_json`]). `run.json` is generic over the
//! game's description, which is the games crate's business: this crate only fixes the layout.

use crate::fsio::{read_bounded, read_bounded_if_any, METADATA_CAP};
use crate::table::TableSummary;
use crate::FormatError;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The name of a run directory's description.
pub const RUN_INFO: &str = "run.json";
/// The name of a run directory's run manifest.
pub const RUN_STATE: &str = "checkpoint.json";
/// The name of a run directory's wave history: one [`WaveRecord`] per line, appended as waves
/// close.
pub const WAVES: &str = "waves.jsonl";

/// One closed wave, as `waves.jsonl` records it (one JSON object per line). A wave done again
/// after a resume is recorded again; the last record of a (layer, wave) is the one that stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaveRecord {
    /// The layer's name.
    pub layer: String,
    /// The wave (0: the initial pass).
    pub wave: u32,
    /// States decided in the wave.
    pub decided: u64,
    /// States decided so far in the layer, this wave included.
    pub decided_total: u64,
    /// Frontier states whose predecessors were generated, summed over the workers.
    pub expanded: u64,
    /// Predecessor updates applied, summed over the workers.
    pub applied: u64,
    /// Wall-clock seconds the wave took.
    pub seconds: f64,
    /// Bytes of update messages between workers (None without a wire: in-process workers).
    pub wire_bytes: Option<u64>,
    /// When the wave closed, in seconds since the Unix epoch.
    pub at_unix: u64,
}

/// Append `record` to the wave history of the run directory `dir` (one line, one write: a crash
/// leaves at most a torn last line, which [`read_waves`] skips).
pub fn append_wave(dir: &Path, record: &WaveRecord) -> Result<(), FormatError> {
    use std::io::Write;
    let path = dir.join(WAVES);
    let line = serde_json::to_string(record)
        .map_err(|e| FormatError::Corrupt(format!("{}: {e}", path.display())))?
        + "\n";
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| FormatError::io(&path, e))
}

/// The wave history of the run directory `dir`, the last record of each (layer, wave) in the
/// order the layers were first recorded and by wave; empty without `waves.jsonl` (runs from
/// before it). A line that does not parse (a torn last line) is skipped.
pub fn read_waves(dir: &Path) -> Result<Vec<WaveRecord>, FormatError> {
    let path = dir.join(WAVES);
    let Some(bytes) = read_bounded_if_any(&path, METADATA_CAP, "a wave history")? else {
        return Ok(Vec::new());
    };
    // A torn line may end inside a character: only whole lines are read.
    let text = String::from_utf8_lossy(&bytes);
    let mut layers: Vec<String> = Vec::new();
    let mut last: std::collections::BTreeMap<(usize, u32), WaveRecord> = Default::default();
    for record in text
        .lines()
        .filter_map(|l| serde_json::from_str::<WaveRecord>(l).ok())
    {
        let k = match layers.iter().position(|l| *l == record.layer) {
            Some(k) => k,
            None => {
                layers.push(record.layer.clone());
                layers.len() - 1
            }
        };
        last.insert((k, record.wave), record);
    }
    Ok(last.into_values().collect())
}

/// One forcing layer: the coalition's players want a terminal state whose outcome (the winning
/// player, or a game's numbered result such as Go's final score) is in `objective`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    /// Name used for files and summaries (`solo`, `enable_ab`, ...).
    pub name: String,
    /// Bit `p` set: player `p` plays for the coalition.
    pub coalition: u8,
    /// Bit `o` set: outcome `o` (a win by player `o`) counts as W. Outcomes are 0..64.
    pub objective: u64,
}

impl Layer {
    /// The layer `name` of the players in `coalition` forcing an outcome in `objective`.
    pub fn new(name: &str, coalition: u8, objective: u64) -> Layer {
        Layer {
            name: name.to_string(),
            coalition,
            objective,
        }
    }
    /// Whether `player` plays for the coalition.
    pub fn in_coalition(&self, player: u8) -> bool {
        self.coalition & (1 << player) != 0
    }
    /// Whether `outcome` counts as W (outcomes of 64 and above never do).
    pub fn wins(&self, outcome: u8) -> bool {
        outcome < 64 && self.objective >> outcome & 1 != 0
    }
}

/// Where a resumed layer starts: the workers hold the state after `wave` closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumePoint {
    /// The last wave closed and checkpointed.
    pub wave: u32,
    /// States decided up to and including that wave.
    pub decided_total: u64,
    /// That wave decided nothing: the layer is solved, and only its table is left to write (a
    /// checkpoint taken at the fixpoint, so that a table that fails to be written costs no waves).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settled: bool,
}

/// The contents of `run.json`: what was built and how, written once by `build` before anything
/// else (a run directory without it is not a run). `resume` reads it to continue with the same
/// game, layers, shards and workers. Fields added later are optional, so older files still read.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound(deserialize = "Spec: Deserialize<'de>", serialize = "Spec: Serialize"))]
pub struct RunInfo<Spec> {
    /// Version of this file's layout: 1 (written, not checked on reading so far).
    pub format: u32,
    /// The game and its parameters (`{"game": FAMILY, PARAMETER: VALUE, ...}`; the games crate's `GameSpec`).
    pub spec: Spec,
    /// The layers to solve, in build order: name, coalition and objective bit masks.
    pub layers: Vec<Layer>,
    /// States of the game's index space (of `spec`, whatever the kernel solves).
    pub states: u64,
    /// States per shard of the kernel's index space (as given; the kernel rounds it up to a
    /// multiple of 64, see the kernel's `ShardPlan::new`).
    pub shard_size: u64,
    /// The version of the `kingmaker` that started the run.
    pub kingmaker_version: String,
    /// The game the kernel solves when it is a symmetry-reduced form of `spec`
    /// (a symmetry quotient); its tables are expanded to `spec`'s as
    /// they are gathered, so the run's tables and summary are those of a full solve. Absent: the
    /// kernel solves `spec` itself (runs from before, and `build --no-symmetry`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solved_as: Option<Spec>,
    /// A distributed run: its workers (`HOST:PORT`, in worker-number order, which fixes the shards
    /// each one owns) and its run id on them (their files are under `DATA_DIR/<run id>/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributed: Option<Distributed>,
    /// The in-process workers of an embedded build (`--local-workers`): each owns its shards'
    /// checkpoints, so `resume` uses the same number. Absent in runs from before: 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_workers: Option<usize>,
    /// How a gathered layer's shards are placed on the workers; absent in runs from before it
    /// (whose checkpoints hold contiguous runs): `runs`.
    #[serde(default)]
    pub shard_placement: ShardPlacement,
}

/// How a layer's shards are placed on the workers (`run.json`'s `shard_placement`). A layer kept
/// on the workers is always in runs: its parts are their ranges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShardPlacement {
    /// Contiguous runs, one per worker in worker order.
    #[default]
    Runs,
    /// Shard `s` to worker `s mod workers`: each worker gets some of every part of the index.
    Interleaved,
}

impl<Spec> RunInfo<Spec> {
    /// The game the kernel solves (and the workers build): `solved_as`, else `spec`.
    pub fn kernel_spec(&self) -> &Spec {
        self.solved_as.as_ref().unwrap_or(&self.spec)
    }
}

/// How a distributed run was started, for `kingmaker resume` (`run.json`'s `distributed`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Distributed {
    /// The run's id on the workers: their files are under `DATA_DIR/<run_id>/`.
    pub run_id: String,
    /// The workers, `HOST:PORT`, in worker-number order (which fixes the shards each one owns).
    pub workers: Vec<String>,
    /// Finished layers stay on the workers, in parts (`layers/NAME.kept.json` lists them),
    /// instead of being gathered into the run directory.
    #[serde(default)]
    pub keep_layers: bool,
}

/// A layer whose table is written (`checkpoint.json`'s `finished`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FinishedLayer {
    /// The layer as in `run.json`.
    pub layer: Layer,
    /// What its `layers/NAME.kmt` holds: states, counts, digest of the values, max depth.
    pub table: TableSummary,
}

/// The restart point of the layer being solved: the newest complete checkpoint and the one
/// before it (kept by the workers so a damaged newest one can be skipped).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CurrentLayer {
    /// The layer's name.
    pub layer: String,
    /// The newest checkpoint every worker completed: the wave after which it was taken and the
    /// states decided up to then.
    pub last: ResumePoint,
    /// The checkpoint before it, if the workers still keep it (`null` otherwise).
    pub previous: Option<ResumePoint>,
    /// When `last` was recorded, in seconds since the Unix epoch.
    pub at_unix: u64,
}

/// The run manifest, `checkpoint.json`: written atomically after every complete checkpoint (once
/// every worker has written its own manifest, [`crate::checkpoint`]) and every finished layer.
/// A run without it has finished nothing and has no checkpoint; an unreadable one is rebuilt
/// from the finished layer files (the coordinator's `RunDir::recover_state`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunState {
    /// The game the manifest was written for: `run.json`'s `spec` at the time (absent in
    /// manifests from before 2026-12-07). A resume refuses a `run.json` that says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<serde_json::Value>,
    /// `run.json`'s `solved_as` at the time (absent: none, or a manifest from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solved_as: Option<serde_json::Value>,
    /// The finished layers, in the order they finished.
    pub finished: Vec<FinishedLayer>,
    /// The layer being solved and where it can restart (`null` between layers).
    pub current: Option<CurrentLayer>,
}

impl RunState {
    /// Record that the manifest belongs to the run of `spec`, solved as `solved_as` (the JSON of
    /// `run.json`'s fields).
    pub fn belongs_to(&mut self, spec: serde_json::Value, solved_as: Option<serde_json::Value>) {
        self.spec = Some(spec);
        self.solved_as = solved_as;
    }

    /// Why the manifest is not one of the run whose `run.json` says `spec` and `solved_as`, in
    /// words that name both and say what to do; `None` when it is, or when it records no game
    /// (written before it did).
    pub fn game_problem(
        &self,
        spec: &serde_json::Value,
        solved_as: Option<&serde_json::Value>,
    ) -> Option<String> {
        let recorded = self.spec.as_ref()?;
        let describe =
            |spec: &serde_json::Value, solved_as: Option<&serde_json::Value>| match solved_as {
                Some(reduced) => format!("{spec} (solved as {reduced})"),
                None => spec.to_string(),
            };
        let labels = ("in checkpoint.json", "in run.json");
        let differs = if recorded != spec {
            crate::checkpoint::differences(recorded, spec, labels)
        } else if self.solved_as.as_ref() != solved_as {
            let null = serde_json::Value::Null;
            let (a, b) = (self.solved_as.as_ref(), solved_as);
            crate::checkpoint::differences(a.unwrap_or(&null), b.unwrap_or(&null), labels)
        } else {
            return None;
        };
        Some(format!(
            "checkpoint.json was written for {}, but run.json says {}{differs}: run.json was \
             edited since; restore it (its checkpoints and finished layers are of the game \
             checkpoint.json names), or build anew into another directory",
            describe(recorded, self.solved_as.as_ref()),
            describe(spec, solved_as)
        ))
    }

    /// The table of the finished layer `layer`, if it has finished.
    pub fn finished(&self, layer: &str) -> Option<&TableSummary> {
        self.finished
            .iter()
            .find(|f| f.layer.name == layer)
            .map(|f| &f.table)
    }

    /// Where to restart `layer`, best first.
    pub fn resume_points(&self, layer: &str) -> Vec<Option<ResumePoint>> {
        match &self.current {
            Some(c) if c.layer == layer => std::iter::once(Some(c.last))
                .chain(c.previous.map(Some))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Record a complete checkpoint of `layer` at `point` (the one before it kept as the fallback).
    pub fn checkpointed(&mut self, layer: &str, point: ResumePoint) {
        let previous = self
            .current
            .as_ref()
            .filter(|c| c.layer == layer)
            .map(|c| c.last);
        self.current = Some(CurrentLayer {
            layer: layer.to_string(),
            last: point,
            previous,
            at_unix: unix_now(),
        });
    }

    /// Record `layer` as finished with `table`; no layer is being solved after it.
    pub fn finish(&mut self, layer: Layer, table: TableSummary) {
        self.finished.push(FinishedLayer { layer, table });
        self.current = None;
    }
}

/// Read `run.json` of the run directory `dir`, its game description read as `Spec`.
pub fn read_run_info<Spec: DeserializeOwned>(dir: &Path) -> Result<RunInfo<Spec>, FormatError> {
    let path = dir.join(RUN_INFO);
    let text = read_bounded(&path, METADATA_CAP, "a run.json")?;
    serde_json::from_slice(&text)
        .map_err(|e| FormatError::Corrupt(format!("{} is malformed: {e}", path.display())))
}

/// Write `value` as pretty-printed JSON ending with a newline: to a temporary file, fsynced, then
/// renamed into place.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), FormatError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| FormatError::Corrupt(format!("{}: {e}", path.display())))?
        + "\n";
    crate::fsio::write_atomically(path, text.as_bytes())
}

/// Seconds since the Unix epoch (0 on a clock before it), as the run files record times.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(layer: &str, wave: u32, decided: u64) -> WaveRecord {
        WaveRecord {
            layer: layer.into(),
            wave,
            decided,
            decided_total: decided,
            expanded: 0,
            applied: 0,
            seconds: 0.5,
            wire_bytes: None,
            at_unix: 0,
        }
    }

    /// The run manifest records the game it was written for; a run.json that says another is
    /// named, with the parameter that differs. A manifest from before records none.
    #[test]
    fn the_run_manifest_names_its_game() {
        let game = |connect: u32| serde_json::json!({"game": "connect4", "board": "5x4", "connect": connect});
        let mut state = RunState::default();
        assert_eq!(state.game_problem(&game(3), None), None, "from before");
        state.belongs_to(game(4), None);
        let text = serde_json::to_string(&state).unwrap();
        let back: RunState = serde_json::from_str(&text).unwrap();
        assert_eq!(back.game_problem(&game(4), None), None);
        let err = back.game_problem(&game(3), None).unwrap();
        assert!(
            err.contains(r#""connect":4"#)
                && err.contains(r#""connect":3"#)
                && err.contains("connect: 4 in checkpoint.json, 3 in run.json")
                && err.contains("restore it"),
            "{err}"
        );
        let err = back.game_problem(&game(4), Some(&game(5))).unwrap();
        assert!(err.contains("solved as"), "{err}");
        let old: RunState = serde_json::from_str(r#"{"finished": [], "current": null}"#).unwrap();
        assert_eq!(old.spec, None);
    }

    /// A run.json from before `shard_placement` places its shards in runs, as its checkpoints
    /// were made; the field reads back as written.
    #[test]
    fn runs_from_before_the_placement_keep_their_runs() {
        let old = r#"{"format": 1, "spec": {"game": "toppen"}, "layers": [], "states": 10,
            "shard_size": 4, "kingmaker_version": "0.1.0"}"#;
        let info: RunInfo<serde_json::Value> = serde_json::from_str(old).unwrap();
        assert_eq!(info.shard_placement, ShardPlacement::Runs);
        let mut info = info;
        info.shard_placement = ShardPlacement::Interleaved;
        let text = serde_json::to_string(&info).unwrap();
        assert!(
            text.contains(r#""shard_placement":"interleaved""#),
            "{text}"
        );
        let back: RunInfo<serde_json::Value> = serde_json::from_str(&text).unwrap();
        assert_eq!(back.shard_placement, ShardPlacement::Interleaved);
    }

    #[test]
    fn the_wave_history_keeps_the_last_record_of_a_wave_and_skips_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_waves(dir.path()).unwrap().is_empty());
        for r in [
            record("solo", 0, 5),
            record("solo", 1, 7),
            record("solo", 1, 8),
        ] {
            append_wave(dir.path(), &r).unwrap();
        }
        append_wave(dir.path(), &record("second", 0, 3)).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(WAVES))
            .unwrap();
        std::io::Write::write_all(&mut f, b"{\"layer\": \"sec").unwrap();
        let waves = read_waves(dir.path()).unwrap();
        let got: Vec<(&str, u32, u64)> = waves
            .iter()
            .map(|w| (w.layer.as_str(), w.wave, w.decided))
            .collect();
        assert_eq!(got, [("solo", 0, 5), ("solo", 1, 8), ("second", 0, 3)]);
    }
}
