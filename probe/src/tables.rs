//! Opening solved tables: a packed release (`manifest.json` and its layer files) or a finished
//! run directory (`run.json` and `layers/NAME.kmt`), whole or in part. A release's files (whole
//! layers or their parts) are read beside the manifest, or where they lie, over HTTP
//! ([`crate::http`]); a release may itself be opened by its URL.

use crate::error::ProbeError;
use crate::http::{get_small, HttpFile};
pub use kingmaker_games::reading::LayerInfo;
use kingmaker_games::{AnyGame, GameSpec};
use kingmaker_kernel::Game;
use kingmaker_tablefmt::fsio::METADATA_CAP;
use kingmaker_tablefmt::kept::{
    kept_path, open_parts, part_worker, parts_here, read_kept, KeptLayer, KeptPart,
};
use kingmaker_tablefmt::layer::{LayerFile, LayerIdentity, LayerTable, ReadAt};
use kingmaker_tablefmt::release::manifest::{
    read_manifest, Manifest, Piece, MANIFEST, MANIFEST_SHA256,
};
use kingmaker_tablefmt::release::open_listed_file;
use kingmaker_tablefmt::run::{read_run_info, Distributed, RunInfo, RUN_INFO};
use kingmaker_tablefmt::table::table_path;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Where the tables come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A finished run directory.
    Run,
    /// A packed release.
    Release,
}

/// Opens a part of a layer kept on its worker, where it is: `(worker address, run id, part)` to
/// the part file's bytes (the transport is the caller's: the `kingmaker` binary reads over gRPC).
pub type OpenRemotePart =
    Arc<dyn Fn(&str, &str, &KeptPart) -> Result<Box<dyn ReadAt>, String> + Send + Sync>;

/// A kept layer read from its parts: copies in `layers_dir` where they are, else each on its
/// worker with `remote` (the worker found by the number in the part's name, at the run's address
/// for it); `None` when a part is neither here nor to be read remotely.
pub fn open_kept(
    layers_dir: &Path,
    kept: &KeptLayer,
    game: &serde_json::Value,
    remote: Option<&(Distributed, OpenRemotePart)>,
) -> Result<Option<LayerTable>, kingmaker_tablefmt::FormatError> {
    let on_worker = |part: &KeptPart| {
        let (dist, open) = remote.expect("called only with a remote");
        let k = part_worker(part, &kept.layer, dist.workers.len())?;
        open(&dist.workers[k], &dist.run_id, part).map_err(kingmaker_tablefmt::FormatError::Corrupt)
    };
    let remote = remote.map(|_| &on_worker as kingmaker_tablefmt::kept::OpenRemotePart);
    open_parts(layers_dir, kept, game, remote)
}

/// Solved tables, opened for reading. Layer files are opened on first use and checked then
/// (their identity, header and index checksums); every block read is checked against its crc32.
pub struct Tables {
    dir: PathBuf,
    kind: Kind,
    spec: GameSpec,
    game: Arc<AnyGame>,
    layers: Vec<LayerInfo>,
    manifest: Option<Box<Manifest>>,
    files: Mutex<HashMap<String, Arc<LayerTable>>>,
    /// A run whose layers stayed on its workers: where they are, and how to read them there.
    remote: Option<(Distributed, OpenRemotePart)>,
    /// A release opened by its URL (ending in `/`): where its files without a `url` lie.
    base_url: Option<String>,
    /// The HTTP client of the files read where they lie, made on first use.
    agent: OnceLock<ureq::Agent>,
}

/// Where a release's file is read from.
enum Location {
    /// Beside the manifest.
    Here,
    /// At a URL: (url, the manifest's size).
    At(String, u64),
}

/// Whether `text` is an `http://` or `https://` URL rather than a path.
pub fn is_url(text: &str) -> bool {
    text.starts_with("http://") || text.starts_with("https://")
}

impl Tables {
    /// Open the release or run directory at `dir`, or the release at the URL `dir`
    /// (`http://host:port/path/`: its `manifest.json` and `manifest.sha256` are fetched, and
    /// its files are read there, by range requests, as they are needed).
    ///
    /// A release is recognised by its `manifest.json` (checked against `manifest.sha256`), a run
    /// by its `run.json`; a run must be finished. The game must be one this version knows, and a
    /// release's state count must be its game's. A release's file that is not beside the
    /// manifest is read at its `url` (docs/format.md, "A layer in parts, files at URLs").
    pub fn open(dir: impl AsRef<Path>) -> Result<Tables, ProbeError> {
        Self::open_reading_parts_with(dir, None)
    }

    /// As [`Tables::open`]; a run's layers kept on its workers and not copied here are read on
    /// the workers with `remote`.
    pub fn open_reading_parts_with(
        dir: impl AsRef<Path>,
        remote: Option<OpenRemotePart>,
    ) -> Result<Tables, ProbeError> {
        let dir = dir.as_ref().to_path_buf();
        if let Some(url) = dir.to_str().filter(|d| is_url(d)) {
            return Self::open_url(url);
        }
        if dir.join(MANIFEST).exists() || dir.join(MANIFEST_SHA256).exists() {
            Self::open_release(dir)
        } else if dir.join(RUN_INFO).exists() {
            Self::open_run(dir, remote)
        } else {
            Err(ProbeError::NotTables { path: dir })
        }
    }

    fn open_release(dir: PathBuf) -> Result<Tables, ProbeError> {
        let manifest = read_manifest(&dir)?;
        Self::with_manifest(dir, manifest, None)
    }

    /// The release at `url`: its manifest fetched (bounded, and checked as [`read_manifest`]
    /// checks one on disk), its files read where they lie.
    fn open_url(url: &str) -> Result<Tables, ProbeError> {
        let base = if url.ends_with('/') {
            url.to_string()
        } else {
            format!("{url}/")
        };
        let remote = |url: &str, reason: String| ProbeError::Remote {
            url: crate::http::shown(url),
            reason,
        };
        if !base.bytes().all(|b| b.is_ascii_graphic()) || base.contains(['?', '#']) {
            return Err(remote(
                url,
                "not the URL of a release directory: its files are asked for by their names                  under it, so it may hold no space, query (?) or fragment (#)"
                    .into(),
            ));
        }
        let agent = crate::http::agent();
        let get = |name: &str| {
            let at = format!("{base}{name}");
            get_small(&agent, &at, METADATA_CAP).map_err(|e| remote(&at, e))
        };
        let sha = get(MANIFEST_SHA256)?;
        let bytes = get(MANIFEST)?;
        let manifest =
            Manifest::parse_checked(&bytes, &sha).map_err(|e| remote(&base, e.to_string()))?;
        let tables = Self::with_manifest(
            PathBuf::from(crate::http::shown(&base)),
            manifest,
            Some(base),
        )?;
        let _ = tables.agent.set(agent);
        Ok(tables)
    }

    /// The release described by `manifest`, read from `dir` (or, with `base_url`, from there).
    fn with_manifest(
        dir: PathBuf,
        manifest: Manifest,
        base_url: Option<String>,
    ) -> Result<Tables, ProbeError> {
        let (spec, game) = release_game(&manifest, &dir)?;
        let mut tables = Tables {
            dir,
            kind: Kind::Release,
            spec,
            game,
            layers: Vec::new(),
            manifest: None,
            files: Mutex::default(),
            remote: None,
            base_url,
            agent: OnceLock::new(),
        };
        // A layer can be read when every piece's file can (beside the manifest or at a URL):
        // its values-and-depths files, else its values-only ones.
        tables.layers = manifest
            .layers
            .iter()
            .map(|l| {
                let pieces = l.pieces();
                let full = pieces
                    .iter()
                    .all(|p| tables.locate(&manifest, p.file).is_some());
                let values = pieces.iter().all(|p| {
                    p.values_file
                        .is_some_and(|f| tables.locate(&manifest, f).is_some())
                });
                LayerInfo {
                    name: l.name.clone(),
                    coalition: l.coalition,
                    objective: l.objective,
                    present: full || values,
                    depths: full,
                }
            })
            .collect();
        tables.manifest = Some(Box::new(manifest));
        Ok(tables)
    }

    /// Where the release's file `name` is read from: beside the manifest when a copy is there,
    /// else at its `url` (or, for a release opened by URL, at the base URL + its name); `None`
    /// when it is in neither place.
    fn locate(&self, manifest: &Manifest, name: &str) -> Option<Location> {
        if self.base_url.is_none() && self.dir.join(name).exists() {
            return Some(Location::Here);
        }
        let entry = manifest.file(name)?;
        match (&entry.url, &self.base_url) {
            (Some(url), _) => Some(Location::At(url.clone(), entry.size)),
            (None, Some(base)) => Some(Location::At(format!("{base}{name}"), entry.size)),
            (None, None) => None,
        }
    }

    /// The file `file` of the piece `piece` of a release, opened where it is and refused unless
    /// it holds that piece (of the manifest's game) with the piece's number of rows.
    fn open_piece(
        &self,
        manifest: &Manifest,
        layer: &str,
        piece: &Piece<'_>,
        file: &str,
    ) -> Result<LayerFile, ProbeError> {
        let (opened, shown) = match self.locate(manifest, file) {
            Some(Location::Here) => (
                open_listed_file(&self.dir, manifest, piece.name, file)?,
                self.dir.join(file).display().to_string(),
            ),
            Some(Location::At(url, size)) => {
                let shown = format!("{file} at {}", crate::http::shown(&url));
                let agent = self.agent.get_or_init(crate::http::agent).clone();
                let source = Box::new(HttpFile::new(agent, &url, size));
                let opened = LayerFile::from_source(Path::new(&shown), source, size)?;
                // A file that does not say what it holds could only be checked by its sha256,
                // which means reading it whole.
                if opened.identity().is_none() {
                    return Err(kingmaker_tablefmt::FormatError::Corrupt(format!(
                        "{shown}: a version-1 layer file (it does not record its layer) cannot                          be checked where it lies; fetch the release (`kingmaker fetch`)"
                    ))
                    .into());
                }
                opened.check_identity(&LayerIdentity::new(manifest.game.clone(), piece.name))?;
                (opened, shown)
            }
            None => {
                return Err(ProbeError::AbsentFile {
                    path: self.dir.clone(),
                    layer: layer.to_string(),
                    file: file.to_string(),
                })
            }
        };
        if opened.states() != piece.states {
            return Err(kingmaker_tablefmt::FormatError::Corrupt(format!(
                "{shown}: holds {} rows, where {} lists {} for {}",
                opened.states(),
                MANIFEST,
                piece.states,
                piece.name
            ))
            .into());
        }
        Ok(opened)
    }

    /// The tables of a layer of the release `manifest`: its pieces' values-and-depths files
    /// when each is at hand, else their values-only files.
    fn open_release_layer(
        &self,
        manifest: &Manifest,
        name: &str,
    ) -> Result<Option<LayerTable>, ProbeError> {
        let Some(listed) = manifest.layer(name) else {
            return Ok(None);
        };
        let pieces = listed.pieces();
        let full = pieces
            .iter()
            .all(|p| self.locate(manifest, p.file).is_some());
        let mut files = Vec::with_capacity(pieces.len());
        for p in &pieces {
            let file = match p.values_file {
                Some(values) if !full => values,
                _ => p.file,
            };
            files.push(self.open_piece(manifest, name, p, file)?);
        }
        if listed.parts.is_empty() {
            return Ok(files.pop().map(LayerTable::whole));
        }
        let identity = LayerIdentity::new(manifest.game.clone(), name);
        Ok(Some(LayerTable::in_parts(identity, files)?))
    }

    fn open_run(dir: PathBuf, remote: Option<OpenRemotePart>) -> Result<Tables, ProbeError> {
        let info: RunInfo<GameSpec> = read_run_info(&dir)?;
        if !dir.join("summary.json").exists() {
            return Err(ProbeError::Unfinished { path: dir });
        }
        // A layer kept on the workers is read from its parts copied here (`kingmaker collect
        // --in-parts`), or on the workers when the caller can reach them.
        let remote = remote.zip(info.distributed.clone()).map(|(r, d)| (d, r));
        for l in &info.layers {
            let Some(kept) = read_kept(&dir.join("layers"), &l.name)? else {
                continue;
            };
            if !parts_here(&dir.join("layers"), &kept) && remote.is_none() {
                return Err(ProbeError::KeptOnWorkers {
                    path: dir,
                    layer: l.name.clone(),
                });
            }
        }
        let game = build(&dir, &info.spec)?;
        let layers = info
            .layers
            .iter()
            .map(|l| {
                let layers = dir.join("layers");
                let present =
                    table_path(&layers, &l.name).exists() || kept_path(&layers, &l.name).exists();
                LayerInfo {
                    name: l.name.clone(),
                    coalition: l.coalition,
                    objective: l.objective,
                    present,
                    depths: present,
                }
            })
            .collect();
        Ok(Tables {
            dir,
            kind: Kind::Run,
            spec: info.spec,
            game,
            layers,
            manifest: None,
            files: Mutex::default(),
            remote,
            base_url: None,
            agent: OnceLock::new(),
        })
    }

    /// The directory the tables were opened from (or the URL, ending in `/`, of a release
    /// opened by its URL).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A run directory or a release.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The game and its parameters, as `run.json` and the manifest write them.
    pub fn spec(&self) -> &GameSpec {
        &self.spec
    }

    /// The game: its rules, notation and index space.
    pub fn game(&self) -> &Arc<AnyGame> {
        &self.game
    }

    /// States of the game's index space (every layer has this many).
    pub fn states(&self) -> u64 {
        self.game.size()
    }

    /// Every layer the tables describe, in the order they were solved.
    pub fn layers(&self) -> &[LayerInfo] {
        &self.layers
    }

    /// The release's manifest (None for a run directory).
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_deref()
    }

    /// Whether the layer `name` can be read.
    pub fn has_layer(&self, name: &str) -> bool {
        self.layers.iter().any(|l| l.name == name && l.present)
    }

    /// The file of the layer `name`, opened and checked on first use; a release's full file if it
    /// is here, else its values-only file.
    pub fn layer(&self, name: &str) -> Result<Arc<LayerTable>, ProbeError> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = files.get(name) {
            return Ok(file.clone());
        }
        let missing = || ProbeError::MissingLayer {
            path: self.dir.clone(),
            layer: name.to_string(),
            have: self
                .layers
                .iter()
                .filter(|l| l.present)
                .map(|l| l.name.clone())
                .collect(),
        };
        if !self.has_layer(name) {
            // A layer of which some files are at hand: name the first that is not.
            let absent = self.manifest.as_ref().and_then(|m| {
                let files = m.layer(name)?.files();
                let at_hand = |f: &&str| self.locate(m, f).is_some();
                files
                    .iter()
                    .any(at_hand)
                    .then(|| files.iter().find(|f| !at_hand(f)).map(|f| f.to_string()))?
            });
            return Err(match absent {
                Some(file) => ProbeError::AbsentFile {
                    path: self.dir.clone(),
                    layer: name.to_string(),
                    file,
                },
                None => missing(),
            });
        }
        let file = match &self.manifest {
            Some(m) => self.open_release_layer(m, name)?.ok_or_else(missing)?,
            None => {
                let game = serde_json::to_value(&self.spec).expect("a game spec is JSON");
                let layers = self.dir.join("layers");
                match read_kept(&layers, name)? {
                    Some(kept) => open_kept(&layers, &kept, &game, self.remote.as_ref())?
                        .ok_or_else(|| ProbeError::KeptOnWorkers {
                            path: self.dir.clone(),
                            layer: name.to_string(),
                        })?,
                    None => LayerTable::open_as(
                        &table_path(&layers, name),
                        &LayerIdentity::new(game, name),
                    )?,
                }
            }
        };
        if file.states() != self.game.size() {
            return Err(kingmaker_tablefmt::FormatError::Corrupt(format!(
                "{}: layer {name} holds {} states, but the game has {}",
                self.dir.display(),
                file.states(),
                self.game.size()
            ))
            .into());
        }
        let file = Arc::new(file);
        files.insert(name.to_string(), file.clone());
        Ok(file)
    }
}

/// States a bulk read decodes at a time: the reader decodes every block of a read at once (in
/// parallel), so a whole layer read in one call would hold it decoded beside its result.
pub const READ_CHUNK: u64 = 1 << 22;

/// `first .. first + len` cut at the multiples of [`READ_CHUNK`]: (offset in the range, length).
fn chunks(first: u64, len: usize) -> impl Iterator<Item = (usize, usize)> {
    let end = first + len as u64;
    let mut at = first;
    std::iter::from_fn(move || {
        (at < end).then(|| {
            let to = (at / READ_CHUNK + 1).saturating_mul(READ_CHUNK).min(end);
            let chunk = ((at - first) as usize, (to - at) as usize);
            at = to;
            chunk
        })
    })
}

impl Tables {
    /// The value codes (0 illegal, 1 W, 2 L, 3 D; see [`crate::Value::from_code`]) of the layer
    /// `name` for the states `first .. first + count`: what a count over a layer reads, a block
    /// at a time. A range outside the game is [`ProbeError::OutOfRange`], refused before
    /// anything is allocated or read.
    pub fn values(&self, name: &str, first: u64, count: usize) -> Result<Vec<u8>, ProbeError> {
        self.check_read(name, first, count, false)?;
        let mut values = vec![0u8; count];
        self.values_into(name, first, &mut values)?;
        Ok(values)
    }

    /// [`Tables::values`] into `out` (the states `first .. first + out.len()`), for a caller
    /// that owns the memory (Python's numpy array): beside it only a chunk ([`READ_CHUNK`]
    /// states) is held decoded.
    pub fn values_into(&self, name: &str, first: u64, out: &mut [u8]) -> Result<(), ProbeError> {
        self.check_range(name, first, out.len())?;
        let file = self.layer(name)?;
        for (k, n) in chunks(first, out.len()) {
            file.read_states(first + k as u64, &mut out[k..k + n], &mut [])?;
        }
        Ok(())
    }

    /// The depths of the layer `name` for the states `first .. first + count`;
    /// [`ProbeError::NoDepths`] for a layer whose file holds values alone, and
    /// [`ProbeError::OutOfRange`] for a range outside the game.
    pub fn depths(&self, name: &str, first: u64, count: usize) -> Result<Vec<u16>, ProbeError> {
        // Refused before the buffer is allocated.
        self.check_read(name, first, count, true)?;
        let mut depths = vec![0u16; count];
        self.depths_into(name, first, &mut depths)?;
        Ok(depths)
    }

    /// [`Tables::depths`] into `out` (the states `first .. first + out.len()`), for a caller
    /// that owns the memory: beside it only a chunk ([`READ_CHUNK`] states) is held decoded.
    pub fn depths_into(&self, name: &str, first: u64, out: &mut [u16]) -> Result<(), ProbeError> {
        self.check_range(name, first, out.len())?;
        let file = self.layer_with_depths(name)?;
        // The reader decodes values with the depths: a chunk's worth, not the whole range's.
        let mut values = vec![0u8; out.len().min(READ_CHUNK as usize)];
        for (k, n) in chunks(first, out.len()) {
            file.read_states(first + k as u64, &mut values[..n], &mut out[k..k + n])?;
        }
        Ok(())
    }

    /// Whether a bulk read of `count` states from `first` of the layer `name` (its depths too,
    /// with `depths`) can be made: the error it would give, found before anything is allocated
    /// (a caller that allocates the memory itself asks first).
    pub fn check_read(
        &self,
        name: &str,
        first: u64,
        count: usize,
        depths: bool,
    ) -> Result<(), ProbeError> {
        self.check_range(name, first, count)?;
        if depths {
            self.layer_with_depths(name)?;
        } else {
            self.layer(name)?;
        }
        Ok(())
    }

    /// The file of the layer `name`, which must hold depths: [`ProbeError::NoDepths`] for a
    /// values-only copy (a healthy file without the part asked for, not a damaged one).
    fn layer_with_depths(&self, name: &str) -> Result<Arc<LayerTable>, ProbeError> {
        let file = self.layer(name)?;
        if !file.has_depths() {
            return Err(ProbeError::NoDepths {
                path: self.dir.clone(),
                layer: name.to_string(),
            });
        }
        Ok(file)
    }

    /// `first .. first + count` lies in the game: checked without overflow, since the readers
    /// below compute `first + count` in plain arithmetic (it wraps in a release build) and the
    /// buffers are allocated from `count`.
    fn check_range(&self, name: &str, first: u64, count: usize) -> Result<(), ProbeError> {
        let count = count as u64;
        match first.checked_add(count) {
            Some(end) if end <= self.states() => Ok(()),
            _ => Err(ProbeError::OutOfRange {
                layer: name.to_string(),
                first,
                count,
                states: self.states(),
            }),
        }
    }
}

/// The game of the release at `dir` whose manifest is `manifest`: a game this version knows, whose
/// index space has exactly the manifest's number of states (so a release relabelled as another
/// game is refused before any lookup).
pub fn release_game(
    manifest: &Manifest,
    dir: &Path,
) -> Result<(GameSpec, Arc<AnyGame>), ProbeError> {
    let spec: GameSpec =
        serde_json::from_value(manifest.game.clone()).map_err(|e| ProbeError::Game {
            path: dir.to_path_buf(),
            reason: format!(
                "a release of a game this version does not know ({}): {e}; upgrade kingmaker",
                manifest.game
            ),
        })?;
    let game = build(dir, &spec)?;
    if game.size() != manifest.states {
        return Err(ProbeError::Game {
            path: dir.to_path_buf(),
            reason: format!(
                "the manifest says {} states, but its game {} has {}: the manifest does not \
                 describe these tables (relabelled or damaged); fetch the release again",
                manifest.states,
                manifest.game,
                game.size()
            ),
        });
    }
    Ok((spec, game))
}

fn build(dir: &Path, spec: &GameSpec) -> Result<Arc<AnyGame>, ProbeError> {
    spec.build().map(Arc::new).map_err(|e| ProbeError::Game {
        path: dir.to_path_buf(),
        reason: format!("its game cannot be built: {e:#}"),
    })
}

impl kingmaker_games::view::Solved for Tables {
    fn dir(&self) -> &Path {
        Tables::dir(self)
    }
    fn game(&self) -> &Arc<AnyGame> {
        Tables::game(self)
    }
    fn layers(&self) -> &[LayerInfo] {
        Tables::layers(self)
    }
    fn layer(&self, name: &str) -> anyhow::Result<Arc<LayerTable>> {
        Ok(Tables::layer(self, name)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level_one() -> Tables {
        Tables::open(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cc3p-1")).unwrap()
    }

    /// A bulk read's chunks cover its range once, in order, cut at the multiples of the chunk.
    #[test]
    fn chunks_cover_the_range_at_the_chunks_multiples() {
        let c = READ_CHUNK as usize;
        for (first, len) in [
            (0, 0),
            (0, 1),
            (0, c),
            (0, 3 * c + 5),
            (7, c),
            (READ_CHUNK - 1, 2),
        ] {
            let got: Vec<(usize, usize)> = chunks(first, len).collect();
            let mut at = 0;
            for &(k, n) in &got {
                assert!(k == at && n > 0 && n <= c, "{first} {len}: {got:?}");
                at += n;
                let end = first + at as u64;
                assert!(
                    at == len || end.is_multiple_of(READ_CHUNK),
                    "{first} {len}: {got:?}"
                );
            }
            assert_eq!(at, len, "{first} {len}: {got:?}");
        }
        assert_eq!(chunks(7, c).collect::<Vec<_>>(), [(0, c - 7), (c - 7, 7)]);
    }

    /// Ranges past the end, at the edges of u64 and usize (where `first + count` wraps), are
    /// refused before anything is allocated; ranges inside the game, empty ones included, read.
    #[test]
    fn bulk_reads_outside_the_game_are_refused() {
        let t = level_one();
        let n = t.states();
        let outside = [
            (u64::MAX, 2),
            (u64::MAX - 4, 10),
            (u64::MAX, 0),
            (n, 1),
            (n - 1, 2),
            (n + 1, 0),
            (0, usize::MAX),
            (1000, 1_000_000_000_000),
            (1 << 63, 1 << 63),
            (0, 1 << 62),
        ];
        for (first, count) in outside {
            for err in [
                t.values("solo", first, count).err(),
                t.depths("solo", first, count).err(),
            ] {
                assert!(
                    matches!(err, Some(ProbeError::OutOfRange { first: f, states, .. }) if f == first && states == n),
                    "({first}, {count}): {err:?}"
                );
            }
        }
        for (first, count) in [(0, n as usize), (n, 0), (n - 2, 2), (0, 0)] {
            assert_eq!(t.values("solo", first, count).unwrap().len(), count);
            assert_eq!(t.depths("solo", first, count).unwrap().len(), count);
        }
    }

    /// An index past the end is a bad position to `moves_of` as to `probe_index`, not a panic
    /// or an empty list.
    #[test]
    fn moves_of_an_index_outside_the_game_is_refused() {
        let t = level_one();
        for index in [t.states(), t.states() + 1, u64::MAX] {
            let err = t.moves_of(index).err();
            assert!(
                matches!(err, Some(ProbeError::BadPosition { .. })),
                "{index}: {err:?}"
            );
            let err = t.probe_index(index).err();
            assert!(
                matches!(err, Some(ProbeError::BadPosition { .. })),
                "{index}: {err:?}"
            );
        }
        assert!(!t.moves_of(t.position("start").unwrap()).unwrap().is_empty());
    }
}
