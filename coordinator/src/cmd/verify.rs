//! `kingmaker verify RELEASE_DIR [--deep]`: check a packed release.
//!
//! Always: the manifest against `manifest.sha256`, every file's presence, size and sha256, every
//! layer file's header, block index and blocks, and the decoded values against the manifest's
//! counts and digests. With `--deep`: every state of every layer is re-derived from its children
//! by the rules (`kernel::check::expected`), and any disagreement is reported by position.

use crate::tables::Tables;
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_tablefmt::release::verify::verify_release;
use kingmaker_tablefmt::release::LayerFile;
use kingmaker_tablefmt::table::{TableReader, TableWriter};
use kingmaker_worker::kernel::check::expected;
use kingmaker_worker::kernel::Layer;
use kingmaker_worker::spec::AnyGame;
use kingmaker_worker::Game;
use rayon::prelude::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// A release directory written by `kingmaker pack` or `kingmaker fetch`.
    pub dir: PathBuf,
    /// Also re-derive every state of every layer from its children (slow: a full pass of the
    /// game's move generator).
    #[arg(long)]
    pub deep: bool,
    /// Where `--deep` may unpack a layer that does not fit in memory (default: the system's
    /// temporary directory).
    #[arg(long)]
    pub scratch: Option<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Layers up to this many states are unpacked in memory by `--deep`; larger ones go to scratch files.
const IN_MEMORY_STATES: u64 = 1 << 30;
/// Mismatches listed per layer by `--deep` (the rest are counted).
const MAX_LISTED: usize = 20;

pub fn run(args: VerifyArgs) -> Result<()> {
    let started = Instant::now();
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
    let mb = report.bytes as f64 / 1e6;
    let mut deep = None;
    if args.deep {
        deep = Some(deep_check(&args.dir, args.scratch.as_deref())?);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "ok": true, "game": manifest.game, "name": manifest.name, "files": report.files,
                "bytes": report.bytes, "states": report.states, "seconds": secs, "deep": deep.is_some(),
                "warnings": report.warnings,
            }))?
        );
    } else {
        println!(
            "{}: OK: {} files, {} bytes, {} layers of {} states checked in {:.2}s ({:.1} MB/s, {:.1} M states/s)",
            args.dir.display(),
            report.files,
            report.bytes,
            manifest.layers.len(),
            manifest.states,
            secs,
            mb / secs.max(1e-9),
            report.states as f64 / secs.max(1e-9) / 1e6
        );
        if let Some(d) = deep {
            println!(
                "deep: every state of every layer agrees with its children ({} states in {:.2}s)",
                d.states, d.seconds
            );
        }
    }
    Ok(())
}

/// A state whose stored (value, depth) differs from what its children give.
type Mismatch = (u64, (u8, u16), (u8, u16));

pub struct DeepResult {
    pub states: u64,
    pub seconds: f64,
}

/// A layer's values and depths, unpacked for fast random access.
enum Unpacked {
    Memory(Vec<u8>, Vec<u16>),
    Mapped(TableReader, PathBuf),
}

impl Unpacked {
    #[inline]
    fn get(&self, i: u64) -> (u8, u16) {
        match self {
            Unpacked::Memory(v, d) => (v[i as usize], d[i as usize]),
            Unpacked::Mapped(t, _) => t.get(i),
        }
    }
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        if let Unpacked::Mapped(_, dir) = self {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn unpack(file: &LayerFile, name: &str, scratch: Option<&Path>) -> Result<Unpacked> {
    let states = file.states();
    if states <= IN_MEMORY_STATES {
        let mut values = Vec::with_capacity(states as usize);
        let mut depth = Vec::with_capacity(states as usize);
        for b in 0..file.blocks() {
            let block = file.read_block(b)?;
            for j in 0..block.len() {
                let (v, d) = block.get(j);
                values.push(v);
                depth.push(d);
            }
        }
        return Ok(Unpacked::Memory(values, depth));
    }
    let base = scratch
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("kingmaker-verify-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut writer = TableWriter::create(&dir, name)?;
    let mut max_depth = 0;
    for b in 0..file.blocks() {
        let block = file.read_block(b)?;
        let values: Vec<u8> = (0..block.len()).map(|j| block.value(j)).collect();
        let depth: Vec<u16> = (0..block.len()).map(|j| block.depth(j)).collect();
        writer.append(&values, &depth, &mut max_depth)?;
    }
    writer.finish(max_depth)?;
    let reader = TableReader::open(&dir, name)?;
    Ok(Unpacked::Mapped(reader, dir))
}

/// Re-derive every state of every layer from its children.
pub fn deep_check(dir: &Path, scratch: Option<&Path>) -> Result<DeepResult> {
    let started = Instant::now();
    let tables = Tables::open(dir)?;
    let manifest = tables
        .manifest()
        .context("--deep checks a release")?
        .clone();
    let game = tables.spec.build()?;
    let mut failures = Vec::new();
    let mut states = 0;
    for ml in &manifest.layers {
        let layer_started = Instant::now();
        let layer = Layer::new(&ml.name, ml.coalition, ml.objective);
        let file = LayerFile::open(&dir.join(&ml.file))?;
        let table = unpack(&file, &ml.name, scratch)?;
        let bad: Vec<Mismatch> = (0..game.size())
            .into_par_iter()
            .filter_map(|i| {
                expected(&game, &layer, i, |c| table.get(c)).map(|want| (i, table.get(i), want))
            })
            .collect();
        states += game.size();
        tracing::info!(
            "deep check of {}: {} states in {:.2}s, {} mismatches",
            ml.name,
            game.size(),
            layer_started.elapsed().as_secs_f64(),
            bad.len()
        );
        for &(i, stored, want) in bad.iter().take(MAX_LISTED) {
            failures.push(format!(
                "{}: {} (index {i}): stored {}, its children give {}",
                ml.name,
                position(&game, i),
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
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A state in its game's notation.
fn position(game: &AnyGame, index: u64) -> String {
    game.format_position(index)
}

fn label((v, d): (u8, u16)) -> String {
    match v {
        1 => format!("W{d}"),
        2 => format!("L{d}"),
        3 => "D".into(),
        _ => "illegal".into(),
    }
}
