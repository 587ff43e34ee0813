//! Where solved tables come from: a finished run directory (`layers/NAME.kmt`) or a packed
//! release (`manifest.json` + `NAME.kmt`, see tablefmt::release). `query`, `serve` and
//! `verify --deep` read through this, so they work on either; a layer file is refused unless it
//! is the one asked for (tablefmt's identity record, or a release's sha256 for older files).

use crate::rundir::RunDir;
use anyhow::{bail, Context, Result};
use kingmaker_games::GameSpec;
use kingmaker_kernel::Game;
use kingmaker_kernel::Layer;
use kingmaker_tablefmt::release::manifest::{read_manifest, Manifest, MANIFEST, MANIFEST_SHA256};
use kingmaker_tablefmt::release::open_listed_file;
use kingmaker_tablefmt::Lookup;
use std::path::{Path, PathBuf};

/// What holds the tables.
pub enum Source {
    Run(RunDir),
    Release(Box<Manifest>),
}

/// The tables of one finished build, from a run directory or a release.
pub struct Tables {
    pub dir: PathBuf,
    pub spec: GameSpec,
    pub layers: Vec<Layer>,
    pub source: Source,
}

/// The game of a release, checked against the manifest: a game this kingmaker knows, whose index
/// space has exactly the manifest's number of states (so a release relabelled as another game is
/// refused before any lookup).
pub fn release_game(manifest: &Manifest, what: &str) -> Result<GameSpec> {
    let spec: GameSpec = serde_json::from_value(manifest.game.clone()).with_context(|| {
        format!(
            "{what} is a release of a game this kingmaker does not know ({}); upgrade kingmaker",
            manifest.game
        )
    })?;
    let size = spec
        .build()
        .with_context(|| format!("{what}: its game {} cannot be built", manifest.game))?
        .size();
    if size != manifest.states {
        bail!(
            "{what}: the manifest says {} states, but its game {} has {size}: the manifest does not \
             describe these tables (relabelled or damaged); fetch the release again",
            manifest.states,
            manifest.game
        );
    }
    Ok(spec)
}

/// The manifest of the release `dir` (checked against `manifest.sha256`), for commands that
/// read only the manifest.
pub fn read_release_manifest(dir: &Path) -> Result<Manifest> {
    read_manifest(dir).with_context(|| {
        format!(
            "{} looks like a release but its manifest cannot be read",
            dir.display()
        )
    })
}

impl Tables {
    /// Open `dir`: a release if it has a manifest, a run directory if it has `run.json` (the run
    /// must be finished).
    pub fn open(dir: &Path) -> Result<Tables> {
        if dir.join(MANIFEST).exists() || dir.join(MANIFEST_SHA256).exists() {
            let manifest = read_manifest(dir)?;
            let spec = release_game(&manifest, &dir.display().to_string())?;
            let layers = manifest
                .layers
                .iter()
                .map(|l| Layer::new(&l.name, l.coalition, l.objective))
                .collect();
            return Ok(Tables {
                dir: dir.to_path_buf(),
                spec,
                layers,
                source: Source::Release(Box::new(manifest)),
            });
        }
        if !dir.join("run.json").exists() {
            bail!(
                "{} is neither a run directory (no run.json) nor a packed release (no {MANIFEST})",
                dir.display()
            );
        }
        let (run, info) = RunDir::open(dir)?;
        if !run.summary_path().exists() {
            bail!(
                "{} is not a finished build (no summary.json); wait for it or resume it",
                dir.display()
            );
        }
        Ok(Tables {
            dir: dir.to_path_buf(),
            spec: info.spec,
            layers: info.layers,
            source: Source::Run(run),
        })
    }

    /// "run" or "release".
    pub fn kind(&self) -> &'static str {
        match self.source {
            Source::Run(_) => "run",
            Source::Release(_) => "release",
        }
    }

    pub fn manifest(&self) -> Option<&Manifest> {
        match &self.source {
            Source::Release(m) => Some(m),
            Source::Run(_) => None,
        }
    }

    /// Random access to one layer.
    pub fn layer(&self, name: &str) -> Result<Box<dyn Lookup>> {
        match &self.source {
            Source::Run(run) => Ok(Box::new(run.table(name)?)),
            Source::Release(m) => {
                let l = m.layer(name).with_context(|| {
                    let names: Vec<&str> = m.layers.iter().map(|l| l.name.as_str()).collect();
                    format!(
                        "the release {} has no layer {name} (it has {})",
                        self.dir.display(),
                        names.join(", ")
                    )
                })?;
                Ok(Box::new(open_listed_file(&self.dir, m, name, &l.file)?))
            }
        }
    }
}
