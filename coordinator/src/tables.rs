//! Where solved tables come from: a finished run directory or a packed release, read through the
//! probing library ([`kingmaker_probe::Tables`]) so that `query`, `serve`, `line`, `census` and
//! `verify --deep` read what library users read; a run's layers kept on its workers are read
//! there, over gRPC, when the run's token is at hand.

use crate::cluster::RemotePart;
use anyhow::{Context, Result};
use kingmaker_games::GameSpec;
use kingmaker_probe::tables::OpenRemotePart;
use kingmaker_probe::ProbeError;
pub use kingmaker_probe::Tables;
use kingmaker_rpc::auth::TOKEN_ENV;
use kingmaker_tablefmt::layer::ReadAt;
use kingmaker_tablefmt::release::manifest::{read_manifest, Manifest};
use std::path::Path;
use std::sync::Arc;

/// Open the tables at `dir` ([`Tables::open`]), reading the parts of layers kept on the workers
/// where they are ([`remote_parts`]).
pub fn open_tables(dir: &Path) -> Result<Tables> {
    Tables::open_reading_parts_with(dir, remote_parts()).map_err(|e| match e {
        // Without a token: say how to read them where they are, too.
        ProbeError::KeptOnWorkers { .. } => anyhow::anyhow!(
            "{e}; or set {TOKEN_ENV} to the run's token to read them on the workers (which must \
             be up)"
        ),
        e => e.into(),
    })
}

/// How this binary reads a part kept on its worker: with `ReadPart` and the run's token
/// (`KINGMAKER_TOKEN`); `None` without a token, and such a run is refused, naming its parts.
pub fn remote_parts() -> Option<OpenRemotePart> {
    let token = std::env::var(TOKEN_ENV).ok().filter(|t| !t.is_empty())?;
    Some(Arc::new(
        move |addr: &str, run_id: &str, part: &kingmaker_tablefmt::kept::KeptPart| {
            RemotePart::connect(addr, &token, run_id, &part.file)
                .map(|p| Box::new(p) as Box<dyn ReadAt>)
                .map_err(|e| format!("{}: {e}", part.file))
        },
    ))
}

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
