//! A run directory: what a build writes and what `query`, `pack` and `status` read.
//!
//! ```text
//! DIR/run.json          the game and its layers (written first)
//! DIR/work/             shard arrays while a layer is being solved (removed when it is done)
//! DIR/layers/NAME.values, NAME.depth   one finished table per layer (see tablefmt::table)
//! DIR/summary.json      counts, digests, classes (written last: its presence means "complete")
//! ```

use anyhow::{bail, Context, Result};
use kingmaker_tablefmt::table::TableReader;
use kingmaker_worker::kernel::Layer;
use kingmaker_worker::spec::GameSpec;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The contents of `run.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInfo {
    pub format: u32,
    pub spec: GameSpec,
    pub layers: Vec<Layer>,
    pub states: u64,
    pub shard_size: u64,
    pub kingmaker_version: String,
}

pub struct RunDir {
    pub path: PathBuf,
}

impl RunDir {
    /// A new run directory: `path` must not exist, or be an empty directory.
    pub fn create(path: &Path) -> Result<RunDir> {
        if path.exists() {
            let empty = path.is_dir() && path.read_dir().map(|mut d| d.next().is_none()).unwrap_or(false);
            if !empty {
                bail!(
                    "{} already exists and is not empty; choose a new --out directory \
                     (or `kingmaker resume {}` to continue a run there)",
                    path.display(),
                    path.display()
                );
            }
        }
        std::fs::create_dir_all(path.join("layers")).with_context(|| format!("creating {}", path.display()))?;
        Ok(RunDir { path: path.to_path_buf() })
    }

    /// An existing run directory with its `run.json`.
    pub fn open(path: &Path) -> Result<(RunDir, RunInfo)> {
        let file = path.join("run.json");
        let text = std::fs::read_to_string(&file).with_context(|| {
            format!("{} is not a Kingmaker run directory (no readable run.json)", path.display())
        })?;
        let info: RunInfo = serde_json::from_str(&text).with_context(|| format!("{} is malformed", file.display()))?;
        Ok((RunDir { path: path.to_path_buf() }, info))
    }

    pub fn write_info(&self, info: &RunInfo) -> Result<()> {
        write_json_atomically(&self.path.join("run.json"), info)
    }

    pub fn layers_dir(&self) -> PathBuf {
        self.path.join("layers")
    }

    pub fn work_dir(&self) -> PathBuf {
        self.path.join("work")
    }

    pub fn summary_path(&self) -> PathBuf {
        self.path.join("summary.json")
    }

    /// The finished table of one layer.
    pub fn table(&self, layer: &str) -> Result<TableReader> {
        TableReader::open(&self.layers_dir(), layer)
            .with_context(|| format!("layer {layer} of {} is missing or incomplete", self.path.display()))
    }
}

/// Write JSON to a temporary file, fsync it, and rename it into place.
pub fn write_json_atomically<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(value)? + "\n";
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} into place", tmp.display()))?;
    if let Some(dir) = path.parent() {
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}
