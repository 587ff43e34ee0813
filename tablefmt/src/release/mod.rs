//! Packed releases, what the project publishes: a manifest and two layer files per layer.
//! 1. `<layer>.values.kmt` holds the values alone for users who want only W/L/D (as Syzygy ships
//!    WDL apart from DTZ); `query`, `line` and `serve` read `<layer>.kmt`, with the depths too.
//! 2. docs/format.md describes every byte.

pub mod manifest;
pub mod parts;
pub mod piece;
pub mod reserved;
pub mod verify;

use crate::layer::depth::{DepthCode, DepthCodeFinder};
use crate::layer::grouping::best_period;
pub use crate::layer::{
    crc32, file_sha256, LayerFile, LayerIdentity, WrittenLayer, DEFAULT_BLOCK_STATES, LAYER_EXT,
};
use crate::layer::{LayerWriter, ENCODING_GROUPED, ENCODING_PACKED, ENCODING_VALUES};
use crate::FormatError;
use std::path::Path;

/// The newest version of the release format (the manifest's `format_version`) this build reads.
/// Version 2 added the values-only file of every layer; version 3, layers in parts and files at
/// URLs. Writers write the lowest version that holds their release
/// ([`manifest::Manifest::needed_version`]).
pub const FORMAT_VERSION: u32 = 3;
/// Default zstd level of `pack`.
pub const DEFAULT_ZSTD_LEVEL: i32 = 15;

/// The file of a layer's values and depths in a release (and in a run's `layers/`).
pub fn layer_file_name(layer: &str) -> String {
    format!("{layer}.{LAYER_EXT}")
}

/// The file of a layer's values alone in a release.
pub fn values_file_name(layer: &str) -> String {
    format!("{layer}.values.{LAYER_EXT}")
}

/// Open the file `file_name` that the release in `dir` lists for its layer `layer`, refusing one
/// that is not that layer of the manifest's game: a version-2 file by the identity it records,
/// a version-1 file (which records none) by its sha256 against the manifest's, read once here.
pub fn open_listed_file(
    dir: &Path,
    manifest: &manifest::Manifest,
    layer: &str,
    file_name: &str,
) -> Result<LayerFile, FormatError> {
    let path = dir.join(file_name);
    let file = LayerFile::open(&path)?;
    if file.identity().is_some() {
        file.check_identity(&LayerIdentity::new(manifest.game.clone(), layer))?;
        return Ok(file);
    }
    let listed = manifest.file(file_name).ok_or_else(|| {
        FormatError::Corrupt(format!(
            "{}: not listed in {}",
            path.display(),
            manifest::MANIFEST
        ))
    })?;
    let (_, sha256) = file_sha256(&path)?;
    if !sha256.eq_ignore_ascii_case(&listed.sha256) {
        return Err(FormatError::Corrupt(format!(
            "{}: a version-1 layer file (it does not record its layer) whose sha256 is {sha256}, \
             not the {} that {} lists for layer {layer}: the file was misplaced, swapped or \
             damaged; fetch the release again",
            path.display(),
            listed.sha256,
            manifest::MANIFEST
        )));
    }
    Ok(file)
}

/// How `pack` compresses.
#[derive(Clone, Copy, Debug)]
pub struct PackOptions {
    /// States per block of the layer files.
    pub block_states: u32,
    /// zstd level of the blocks.
    pub zstd_level: i32,
}

impl Default for PackOptions {
    fn default() -> PackOptions {
        PackOptions {
            block_states: DEFAULT_BLOCK_STATES,
            zstd_level: DEFAULT_ZSTD_LEVEL,
        }
    }
}

/// States read from the source at a time.
const GROUP_STATES: u64 = 1 << 22;

/// Write the values-and-depths file at `path` with the best depth code for the data (two
/// passes over `fill`: the first finds the code). `fill(first, values, depth)` supplies the
/// states `first .. first + values.len()` in index order (values 0..=3), the same both times.
pub fn write_layer(
    path: &Path,
    identity: &LayerIdentity,
    states: u64,
    opts: &PackOptions,
    mut fill: impl FnMut(u64, &mut [u8], &mut [u16]) -> Result<(), FormatError>,
) -> Result<WrittenLayer, FormatError> {
    let mut values = Vec::new();
    let mut depth = Vec::new();
    let mut finder = DepthCodeFinder::default();
    for_groups(states, &mut values, &mut depth, &mut fill, |first, v, d| {
        finder.add(first, v, d);
        Ok(())
    })?;
    let code = finder.finish();
    let mut writer = LayerWriter::create(
        path,
        identity,
        states,
        opts.block_states,
        ENCODING_PACKED,
        code,
        opts.zstd_level,
    )?;
    for_groups(states, &mut values, &mut depth, &mut fill, |_, v, d| {
        writer.append(v, d).map_err(|e| match e {
            FormatError::Corrupt(m) if m.contains("depth code") => {
                FormatError::Corrupt(format!("{m}: the source changed while it was being packed"))
            }
            e => e,
        })
    })?;
    writer.finish()
}

/// Blocks sampled, evenly spread over a layer, to choose the grouping period of its values file.
const PERIOD_SAMPLES: u64 = 32;

/// The grouping period of a layer's values file (1: none; see [`crate::layer::grouping`]): the one
/// that compresses best on blocks sampled evenly over the layer. `read(first, values)` supplies
/// the values of states `first .. first + values.len()`, in any order of calls.
pub fn choose_values_period(
    states: u64,
    opts: &PackOptions,
    mut read: impl FnMut(u64, &mut [u8]) -> Result<(), FormatError>,
) -> Result<u8, FormatError> {
    let bs = opts.block_states as u64;
    let blocks = states.div_ceil(bs);
    let mut samples = Vec::new();
    for k in 0..PERIOD_SAMPLES.min(blocks) {
        let first = k * blocks / PERIOD_SAMPLES.min(blocks) * bs;
        let mut values = vec![0u8; bs.min(states - first) as usize];
        read(first, &mut values)?;
        samples.push(values);
    }
    Ok(best_period(&samples, opts.zstd_level))
}

/// Write the values-only file at `path` (one pass over `fill`, as for [`write_layer`]), its
/// blocks grouped by `period` when it is above 1 (encoding 3; else encoding 2).
pub fn write_values(
    path: &Path,
    identity: &LayerIdentity,
    states: u64,
    opts: &PackOptions,
    period: u8,
    mut fill: impl FnMut(u64, &mut [u8]) -> Result<(), FormatError>,
) -> Result<WrittenLayer, FormatError> {
    let (encoding, code) = if period > 1 {
        (ENCODING_GROUPED, DepthCode::period(period))
    } else {
        (ENCODING_VALUES, DepthCode::plain())
    };
    let mut writer = LayerWriter::create(
        path,
        identity,
        states,
        opts.block_states,
        encoding,
        code,
        opts.zstd_level,
    )?;
    let mut values = Vec::new();
    let mut first = 0;
    while first < states {
        values.resize(GROUP_STATES.min(states - first) as usize, 0);
        fill(first, &mut values)?;
        writer.append(&values, &[])?;
        first += values.len() as u64;
    }
    writer.finish()
}

fn for_groups(
    states: u64,
    values: &mut Vec<u8>,
    depth: &mut Vec<u16>,
    fill: &mut impl FnMut(u64, &mut [u8], &mut [u16]) -> Result<(), FormatError>,
    mut each: impl FnMut(u64, &[u8], &[u16]) -> Result<(), FormatError>,
) -> Result<(), FormatError> {
    let mut first = 0;
    while first < states {
        let n = GROUP_STATES.min(states - first) as usize;
        values.resize(n, 0);
        depth.resize(n, 0);
        fill(first, values, depth)?;
        each(first, values, depth)?;
        first += n as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
