//! Where solved tables come from: a finished run directory or a packed release, read through the
//! probing library ([`kingmaker_probe::Tables`]) so that `query`, `serve`, `line`, `census` and
//! `verify --deep` read what library users read.

use anyhow::{Context, Result};
use kingmaker_games::GameSpec;
pub use kingmaker_probe::Tables;
use kingmaker_tablefmt::release::manifest::{read_manifest, Manifest};
use std::path::Path;

/// The game of a release, checked against the manifest (see [`kingmaker_probe::tables::release_game`]);
/// `what` names the release in the error.
pub fn release_game(manifest: &Manifest, what: &str) -> Result<GameSpec> {
    Ok(kingmaker_probe::tables::release_game(manifest, Path::new(what))?.0)
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

/// "run" or "release".
pub fn kind_name(tables: &Tables) -> &'static str {
    match tables.kind() {
        kingmaker_probe::Kind::Run => "run",
        kingmaker_probe::Kind::Release => "release",
    }
}
