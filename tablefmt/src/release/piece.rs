//! One row range of a layer packed into a release's two files (values and depths; values alone),
//! and `<part>.json`, the record a host writes of the part it packed, from which the manifest of
//! a release in parts is written without the part's bytes (docs/format.md, "Publishing parts").

use super::manifest::ManifestFile;
use super::{choose_values_period, write_layer, write_values, PackOptions};
use crate::fsio::{read_bounded_if_any, write_atomically, METADATA_CAP};
use crate::layer::{LayerFile, LayerIdentity, LAYER_EXT};
use crate::table::ValueCounts;
use crate::FormatError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `format` field of a packed part's record.
pub const PACKED_PART_FORMAT: &str = "kingmaker-release-part";
/// Its version.
pub const PACKED_PART_VERSION: u32 = 1;

/// What a host packed of one part: `<name>.json` beside the part's two files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackedPart {
    /// Always [`PACKED_PART_FORMAT`].
    pub format: String,
    /// [`PACKED_PART_VERSION`].
    pub format_version: u32,
    /// The game, as the part's identity record names it.
    pub game: serde_json::Value,
    /// The part's name in its files' identity records (`<layer>.part-KKKK`).
    pub name: String,
    /// Rows in the part.
    pub states: u64,
    /// States per block of its files.
    pub block_states: u32,
    /// Its values-and-depths file.
    pub file: ManifestFile,
    /// Its values-only file.
    pub values_file: ManifestFile,
    /// Its counts.
    pub counts: ValueCounts,
    /// Its largest depth.
    pub max_depth: u16,
    /// sha256 of its values, one byte per state in row order.
    pub digest: String,
    /// The file it was packed from: its size and sha256 (as the build's list of kept parts names
    /// them), so that a publisher ties the packed files to the part the build hashed.
    pub source: ManifestFile,
}

/// Where the record of part `name` lies in `dir`.
pub fn packed_part_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

impl PackedPart {
    /// Parse and check a record (its format, version and file names).
    pub fn parse(bytes: &[u8], what: &str) -> Result<PackedPart, FormatError> {
        let part: PackedPart = serde_json::from_slice(bytes)
            .map_err(|e| FormatError::Corrupt(format!("{what} is malformed: {e}")))?;
        let bad = |why: String| Err(FormatError::Corrupt(format!("{what}: {why}")));
        if part.format != PACKED_PART_FORMAT || part.format_version != PACKED_PART_VERSION {
            return bad(format!(
                "format {:?} version {}, where {PACKED_PART_FORMAT:?} version \
                 {PACKED_PART_VERSION} was expected",
                part.format, part.format_version
            ));
        }
        for f in [&part.file, &part.values_file] {
            super::manifest::check_file_name(&f.path)?;
        }
        if part.file.path != format!("{}.{LAYER_EXT}", part.name)
            || part.values_file.path != format!("{}.values.{LAYER_EXT}", part.name)
        {
            return bad(format!(
                "files {} and {} are not the part {}'s",
                part.file.path, part.values_file.path, part.name
            ));
        }
        Ok(part)
    }

    /// Read `dir/<name>.json`, if it is there.
    pub fn read(dir: &Path, name: &str) -> Result<Option<PackedPart>, FormatError> {
        let path = packed_part_path(dir, name);
        let what = path.display().to_string();
        match read_bounded_if_any(&path, METADATA_CAP, "a packed part's record")? {
            Some(bytes) => PackedPart::parse(&bytes, &what).map(Some),
            None => Ok(None),
        }
    }
}

/// Pack rows `first .. first + states` of `src` into `dir/<name>.kmt` and
/// `dir/<name>.values.kmt`, whose identity records name `game` and `name`: the files of one piece
/// of a release (a whole layer when `name` is the layer's, else one part). The two files are
/// checked to hold the same values.
pub fn pack_rows(
    src: &LayerFile,
    first: u64,
    states: u64,
    game: &serde_json::Value,
    name: &str,
    dir: &Path,
    opts: &PackOptions,
) -> Result<(ManifestFile, ManifestFile, crate::layer::WrittenLayer), FormatError> {
    let identity = LayerIdentity::new(game.clone(), name);
    let file = format!("{name}.{LAYER_EXT}");
    let values_file = format!("{name}.values.{LAYER_EXT}");
    let written = write_layer(&dir.join(&file), &identity, states, opts, |at, v, d| {
        src.read_states(first + at, v, d)
    })?;
    let period = choose_values_period(states, opts, |at, v| {
        src.read_states(first + at, v, &mut [])
    })?;
    let values = write_values(
        &dir.join(&values_file),
        &identity,
        states,
        opts,
        period,
        |at, v| src.read_states(first + at, v, &mut []),
    )?;
    if values.digest != written.digest {
        return Err(FormatError::Corrupt(format!(
            "{}: changed while it was being packed; pack it again",
            src.path().display()
        )));
    }
    let listed = |path: String, w: &crate::layer::WrittenLayer| ManifestFile {
        path,
        size: w.size,
        sha256: w.sha256.clone(),
        url: None,
    };
    Ok((
        listed(file, &written),
        listed(values_file, &values),
        written,
    ))
}

/// Pack the kept part file at `part_path` whole into `dir`, and write its record there last
/// (so a record that exists describes files that are complete).
pub fn pack_part(
    part_path: &Path,
    dir: &Path,
    opts: &PackOptions,
) -> Result<PackedPart, FormatError> {
    let src = LayerFile::open(part_path)?;
    let Some(identity) = src.identity().cloned() else {
        return Err(FormatError::Corrupt(format!(
            "{}: a layer file without an identity record cannot be published as a part",
            part_path.display()
        )));
    };
    if !identity.layer.contains(".part-") {
        return Err(FormatError::Corrupt(format!(
            "{}: holds {}, not a part of a layer kept on its workers",
            part_path.display(),
            identity.describe()
        )));
    }
    let (source_size, source_sha256) = super::file_sha256(part_path)?;
    let (file, values_file, written) = pack_rows(
        &src,
        0,
        src.states(),
        &identity.game,
        &identity.layer,
        dir,
        opts,
    )?;
    let part = PackedPart {
        format: PACKED_PART_FORMAT.into(),
        format_version: PACKED_PART_VERSION,
        game: identity.game.clone(),
        name: identity.layer.clone(),
        states: src.states(),
        block_states: opts.block_states,
        file,
        values_file,
        counts: written.counts,
        max_depth: written.max_depth,
        digest: written.digest,
        source: ManifestFile {
            path: part_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            size: source_size,
            sha256: source_sha256,
            url: None,
        },
    };
    let mut bytes = serde_json::to_vec_pretty(&part).expect("a record serialises");
    bytes.push(b'\n');
    write_atomically(&packed_part_path(dir, &part.name), &bytes)?;
    Ok(part)
}
