//! `kingmaker verify RELEASE_DIR [--deep]`: check a packed release (docs/cli.md, "Releases").
//! 1. `--deep` re-derives states from their children by the rules (`kernel::check::expected`):
//!    checksums and digests prove the files are the ones packed, not that the tables are right.
//! 2. It reads a layer as the probe does (one file or its parts, here or at their URLs): a
//!    state's children may lie in another part.

use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_coordinator::digits::thousands;
use kingmaker_coordinator::tables::open_tables;
use kingmaker_games::AnyGame;
use kingmaker_games::Notation;
use kingmaker_kernel::check::expected;
use kingmaker_kernel::Game;
use kingmaker_kernel::Layer;
use kingmaker_probe::tables::READ_CHUNK;
use kingmaker_tablefmt::layer::LayerTable;
use kingmaker_tablefmt::release::manifest::{ManifestLayer, Piece};
use kingmaker_tablefmt::release::manifest::{MANIFEST, MANIFEST_SHA256};
use kingmaker_tablefmt::release::parts::{read_parts, PARTS};
use kingmaker_tablefmt::release::verify::{held_files, verify_release};
use kingmaker_tablefmt::run::RUN_INFO;
use kingmaker_tablefmt::Value;
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;
use rayon::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// A release directory written by `kingmaker pack` or `kingmaker fetch`.
    pub dir: PathBuf,
    /// Also re-derive every state of every layer from its children (slow: a full pass of the
    /// game's move generator).
    #[arg(long)]
    pub deep: bool,
    /// With `--deep`: check N distinct states of each layer drawn at random (seeded: the same N
    /// states every time) instead of all of them; for tables too large for a full pass. At
    /// least 1; N at or above the layer's size checks every state.
    #[arg(long, value_name = "N", requires = "deep", value_parser = parse_sample)]
    pub sample: Option<u64>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--sample N`: a whole number of at least 1.
fn parse_sample(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err(
            "a sample of 0 states checks nothing: give at least 1, or leave --sample \
                      out to check every state"
                .into(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{text:?} is not a number of states")),
    }
}

/// Layers up to this many states (whole or in parts) are unpacked in memory by `--deep` (3 bytes
/// per state); larger ones are read block by block through a large block cache.
const IN_MEMORY_STATES: u64 = 1 << 30;
/// Blocks kept decompressed by `--deep` on a layer too large to unpack.
const DEEP_CACHE_BLOCKS: usize = 4096;
/// Mismatches listed per layer by `--deep` (the rest are counted).
const MAX_LISTED: usize = 20;

pub fn run(args: VerifyArgs) -> Result<()> {
    let started = Instant::now();
    // A run directory is what `pack` reads, not a release: say so rather than list what a
    // release would have.
    if !args.dir.join(MANIFEST).exists()
        && !args.dir.join(MANIFEST_SHA256).exists()
        && args.dir.join(RUN_INFO).exists()
    {
        bail!(
            "{dir} is a run directory, not a release: verify checks releases; pack it first \
             (`kingmaker pack {dir} --out RELEASE_DIR`, which checks every table against the \
             run's summary.json), then `kingmaker verify RELEASE_DIR`",
            dir = args.dir.display()
        );
    }
    let report = verify_release(&args.dir);
    let secs = started.elapsed().as_secs_f64();
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    if !report.ok() {
        if args.json {
            println!(
                "{}",
                json!({"ok": false, "problems": report.problems, "warnings": report.warnings})
            );
        }
        for p in &report.problems {
            eprintln!("  {p}");
        }
        bail!(
            "{} failed verification: {} problem{} (listed above)",
            args.dir.display(),
            report.problems.len(),
            if report.problems.len() == 1 { "" } else { "s" }
        );
    }
    let manifest = report
        .manifest
        .as_ref()
        .expect("a verified release has a manifest");
    kingmaker_coordinator::tables::release_game(manifest, &args.dir.display().to_string())?;
    let mb = report.bytes as f64 / 1e6;
    let mut deep = None;
    if args.deep {
        deep = Some(deep_check(&args.dir, args.sample)?);
    }
    if args.json {
        // `bytes`: every file of the release, the manifest included (as `pack` and `status`
        // report it); `states` (= `states_decoded`): states the byte-level check decoded, every
        // state of every layer; `deep_states_checked`: states the deep check re-derived (all of
        // them, or `deep_sample_per_layer` distinct random ones per layer).
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "ok": true, "game": manifest.game, "name": manifest.name, "files": report.files,
                "bytes": report.bytes, "states": report.states, "states_decoded": report.states,
                "seconds": secs, "deep": deep.is_some(),
                "deep_states_checked": deep.as_ref().map(|d| d.states),
                "deep_sample_per_layer": deep.as_ref().and_then(|d| d.sampled.then_some(d.per_layer)),
                "parts": report.parts.as_ref().map(|p| &p.files),
                "files_at_urls": report.at_urls,
                "digests_unchecked": report.digests_unchecked,
                "warnings": report.warnings,
            }))?
        );
    } else {
        println!(
            "{}: OK: {} files, {} bytes in all; {} layer{} of {} states decoded ({} states) with their \
             counts and digests, in {:.2}s ({:.1} MB/s, {:.1} M states/s)",
            args.dir.display(),
            report.files,
            thousands(report.bytes),
            report.layers,
            if report.layers == 1 { "" } else { "s" },
            thousands(manifest.states),
            thousands(report.states),
            secs,
            mb / secs.max(1e-9),
            report.states as f64 / secs.max(1e-9) / 1e6
        );
        if let Some(p) = &report.parts {
            println!(
                "a partial copy: {} of the release's {} files, as {PARTS} lists them ({}); the \
                 others were not fetched",
                p.files.len(),
                manifest.files.len(),
                p.files.join(", ")
            );
        }
        if !report.digests_unchecked.is_empty() {
            println!(
                "layers with some of their parts here: {}: each part here checked (sha256, \
                 blocks, counts, depth); the layer's digest, over all its parts, not",
                report.digests_unchecked.join(", ")
            );
        }
        if report.at_urls > 0 {
            println!(
                "{} files lie at their URLs and are not here: not checked; `kingmaker fetch` \
                 brings them (and checks their sha256), then verify checks them too",
                report.at_urls
            );
        }
        if let Some(d) = deep {
            if d.sampled {
                println!(
                    "deep: a random sample of {} distinct states of each layer ({} states in all) \
                     agrees with their children, in {:.2}s",
                    thousands(d.per_layer),
                    thousands(d.states),
                    d.seconds
                );
            } else {
                println!(
                    "deep: every state of every layer agrees with its children ({} states in {:.2}s)",
                    thousands(d.states),
                    d.seconds
                );
            }
        }
    }
    Ok(())
}

/// A state whose stored (value, depth) differs from what its children give.
type Mismatch = (u64, (u8, u16), (u8, u16));

pub struct DeepResult {
    /// States checked, over all layers.
    pub states: u64,
    /// States checked in each layer.
    pub per_layer: u64,
    /// A sample (fewer than every state of a layer), not a full pass.
    pub sampled: bool,
    pub seconds: f64,
}

/// A layer's values and depths for fast random access: unpacked in memory when small enough,
/// else its table itself (its file, or its parts' files) with a large block cache. The first
/// lookup error is kept (the lookup itself answers "illegal" so the pass can go on) and ends the
/// check as itself.
enum Unpacked {
    Memory(Vec<u8>, Vec<u16>),
    Table(Arc<LayerTable>, OnceLock<String>),
}

impl Unpacked {
    #[inline]
    fn get(&self, i: u64) -> (u8, u16) {
        match self {
            Unpacked::Memory(v, d) => (v[i as usize], d[i as usize]),
            Unpacked::Table(t, error) => t.get(i).unwrap_or_else(|e| {
                let _ = error.set(e.to_string());
                (0, 0)
            }),
        }
    }

    /// The first lookup error, if any.
    fn error(&self) -> Option<&String> {
        match self {
            Unpacked::Memory(..) => None,
            Unpacked::Table(_, error) => error.get(),
        }
    }
}

impl Drop for Unpacked {
    /// The table stays open among the release's tables: it lets go of its blocks.
    fn drop(&mut self) {
        if let Unpacked::Table(t, _) = self {
            t.set_cache_blocks(1);
        }
    }
}

fn unpack(table: Arc<LayerTable>) -> Result<Unpacked> {
    let states = table.states();
    if states > IN_MEMORY_STATES {
        table.set_cache_blocks(DEEP_CACHE_BLOCKS);
        return Ok(Unpacked::Table(table, Default::default()));
    }
    let mut values = vec![0u8; states as usize];
    let mut depth = vec![0u16; states as usize];
    // A chunk at a time: a read decodes all the blocks it spans at once.
    let chunk = READ_CHUNK as usize;
    for (k, (v, d)) in values
        .chunks_mut(chunk)
        .zip(depth.chunks_mut(chunk))
        .enumerate()
    {
        table.read_states((k * chunk) as u64, v, d)?;
    }
    Ok(Unpacked::Memory(values, depth))
}

/// Where state `index` of `layer` lies, for a message: nothing for a layer in one file, else
/// its row in its part (`, row R of part solo.part-0001`).
fn place(layer: &ManifestLayer, pieces: &[Piece<'_>], index: u64) -> String {
    if layer.parts.is_empty() {
        return String::new();
    }
    match pieces.partition_point(|p| p.first <= index).checked_sub(1) {
        Some(k) => format!(
            ", row {} of part {}",
            index - pieces[k].first,
            pieces[k].name
        ),
        None => String::new(),
    }
}

/// The states a deep check looks at, ascending: all of them, or `n` distinct ones drawn at random
/// with a fixed seed (all of them when `n` is at least `states`).
fn deep_states(states: u64, sample: Option<u64>) -> Vec<u64> {
    match sample {
        Some(n) if n < states => {
            // A set of at most half the states is drawn directly; a larger sample is every state
            // but a drawn set of the others.
            if n <= states / 2 {
                distinct_random(states, n)
            } else {
                let left_out = distinct_random(states, states - n);
                let mut out = Vec::with_capacity(n as usize);
                let mut skip = left_out.iter().peekable();
                for i in 0..states {
                    if skip.peek() == Some(&&i) {
                        skip.next();
                    } else {
                        out.push(i);
                    }
                }
                out
            }
        }
        _ => (0..states).collect(),
    }
}

/// `n` distinct states of `0..states`, ascending, drawn by a fixed sequence (n ≤ states / 2, so
/// each round of draws finds at least half of what it still needs).
fn distinct_random(states: u64, n: u64) -> Vec<u64> {
    // SplitMix64, the workspace's fixed sequence, so a sample is reproducible. Its state starts at
    // the golden-ratio constant (the sequence this function has always drawn: samples stay the
    // ones earlier versions checked).
    let mut rng = SplitMix64::seed_from_u64(0x9E37_79B9_7F4A_7C15);
    let mut next = move || rng.next_u64() % states;
    let mut out: Vec<u64> = Vec::with_capacity(n as usize);
    while (out.len() as u64) < n {
        let missing = n - out.len() as u64;
        out.extend((0..missing).map(|_| next()));
        out.sort_unstable();
        out.dedup();
    }
    out.truncate(n as usize);
    out
}

/// Re-derive every state of every layer (or a sample of each) from its children.
pub fn deep_check(dir: &Path, sample: Option<u64>) -> Result<DeepResult> {
    let started = Instant::now();
    let tables = open_tables(dir)?;
    let manifest = tables
        .manifest()
        .context("--deep checks a release")?
        .clone();
    let game = &**tables.game();
    let mut failures = Vec::new();
    let mut states = 0;
    let mut per_layer = 0;
    // The layers whose values and depths the readers read, each piece here or at its URL; of a
    // partial copy, those whose pieces it holds (the others were left out on purpose).
    let parts = read_parts(dir, &manifest)?;
    let held_names = held_files(dir, &manifest, parts.as_ref());
    let held = |f: &str| held_names.iter().any(|g| g == f);
    let checked: Vec<&ManifestLayer> = (manifest.layers.iter())
        .filter(|l| tables.layers().iter().any(|i| i.name == l.name && i.depths))
        .filter(|l| parts.is_none() || l.depth_files().into_iter().all(held))
        .collect();
    if checked.is_empty() {
        bail!("--deep re-derives values and depths: this copy holds no layer's depths (fetched with --values-only)");
    }
    for ml in checked {
        let layer_started = Instant::now();
        let layer = Layer::new(&ml.name, ml.coalition, ml.objective);
        let table = unpack(tables.layer(&ml.name)?)?;
        let pieces = ml.pieces();
        let which = deep_states(game.size(), sample);
        let done = AtomicU64::new(0);
        let bad: Vec<Mismatch> = which
            .par_iter()
            .filter_map(|&i| {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                if n.is_multiple_of(1 << 24) {
                    tracing::info!("deep check of {}: {n} of {} states", ml.name, which.len());
                }
                expected(game, &layer, i, |c| table.get(c)).map(|want| (i, table.get(i), want))
            })
            .collect();
        if let Some(e) = table.error() {
            bail!("deep check of {}: {e}", ml.name);
        }
        states += which.len() as u64;
        per_layer = which.len() as u64;
        tracing::info!(
            "deep check of {}: {} states in {:.2}s, {} mismatches",
            ml.name,
            which.len(),
            layer_started.elapsed().as_secs_f64(),
            bad.len()
        );
        for &(i, stored, want) in bad.iter().take(MAX_LISTED) {
            failures.push(format!(
                "{}: {} (index {i}{}): stored {}, its children give {}",
                ml.name,
                position(game, i),
                place(ml, &pieces, i),
                label(stored),
                label(want)
            ));
        }
        if bad.len() > MAX_LISTED {
            failures.push(format!(
                "{}: {} more mismatches",
                ml.name,
                bad.len() - MAX_LISTED
            ));
        }
    }
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("  {f}");
        }
        bail!(
            "{}: the deep check found states that disagree with their children (listed above): the \
             tables are wrong although their checksums match; rebuild and repack",
            dir.display()
        );
    }
    Ok(DeepResult {
        states,
        per_layer,
        sampled: per_layer < game.size(),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A state in its game's notation.
fn position(game: &AnyGame, index: u64) -> String {
    game.format_position(index)
}

fn label((v, d): (u8, u16)) -> String {
    match Value::from_code(v) {
        Some(decided @ (Value::Win | Value::Loss)) => format!("{}{d}", decided.letter()),
        Some(Value::Draw) => Value::Draw.letter().into(),
        _ => "illegal".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::deep_states;

    #[test]
    fn samples_are_distinct_ascending_and_as_large_as_asked() {
        for (states, n) in [
            (1662, 1),
            (1662, 100),
            (1662, 831),
            (1662, 832),
            (1662, 1661),
            (10, 9),
        ] {
            let s = deep_states(states, Some(n));
            assert_eq!(s.len() as u64, n, "{n} of {states}");
            assert!(s.windows(2).all(|w| w[0] < w[1]), "{n} of {states}");
            assert!(s.iter().all(|&i| i < states));
            assert_eq!(
                s,
                deep_states(states, Some(n)),
                "the same sample every time"
            );
        }
        assert_eq!(deep_states(5, Some(5)), vec![0, 1, 2, 3, 4]);
        assert_eq!(deep_states(5, Some(99)), vec![0, 1, 2, 3, 4]);
        assert_eq!(deep_states(5, None), vec![0, 1, 2, 3, 4]);
    }

    /// The samples drawn before the generator was rand_xoshiro's (an inline splitmix64): a seed
    /// means the same states in every version.
    #[test]
    fn samples_are_those_of_earlier_versions() {
        assert_eq!(
            deep_states(1662, Some(8)),
            [172, 667, 827, 887, 1052, 1068, 1260, 1633]
        );
        assert_eq!(
            deep_states(1_000_000_000_000, Some(4)),
            [19471545679, 202426094747, 376780542444, 522194355700]
        );
        assert_eq!(deep_states(10, Some(5)), [0, 3, 4, 7, 9]);
    }
}
