//! `kingmaker pack-part PART.kmt... --out DIR`: pack the parts of kept layers a host holds into
//! release files where they lie, each with its record (`<part>.json`), for `kingmaker serve DIR`
//! to serve and `kingmaker pack RUN --parts-at URL` to list in a release in parts.

use anyhow::{Context, Result};
use clap::Args;
use kingmaker_coordinator::digits::thousands;
use kingmaker_process::lock::DirLock;
use kingmaker_tablefmt::release::piece::{pack_part, PackedPart};
use kingmaker_tablefmt::release::{file_sha256, PackOptions};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct PackPartArgs {
    /// Part files of kept layers (`DATA_DIR/RUN_ID/layers/LAYER.part-KKKK.kmt` on a worker).
    #[arg(required = true)]
    pub parts: Vec<PathBuf>,
    /// The directory to pack them into (created if absent; parts packed before are kept).
    #[arg(long)]
    pub out: PathBuf,
    // How the files are written; every part of a release must have the same --block-states.
    #[command(flatten)]
    pub packing: crate::cmd::pack::PackingArgs,
}

pub fn run(args: PackPartArgs) -> Result<()> {
    let opts = args.packing.options()?;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let _lock = DirLock::acquire(&args.out, "kingmaker pack-part")?;
    for path in &args.parts {
        if let Some(done) = already_packed(path, &args.out, &opts)? {
            println!("{}: already packed in {}", done.name, args.out.display());
            continue;
        }
        let part = pack_part(path, &args.out, &opts)
            .with_context(|| format!("packing {}", path.display()))?;
        println!(
            "{}: {} states packed into {} ({} bytes) and {} ({} bytes)",
            part.name,
            thousands(part.states),
            part.file.path,
            thousands(part.file.size),
            part.values_file.path,
            thousands(part.values_file.size)
        );
    }
    Ok(())
}

/// The record of `path` packed into `out` before with the same options, when the source is
/// unchanged (its size and sha256) and both packed files are there at their sizes: a publish
/// started again packs only what it had not.
fn already_packed(path: &Path, out: &Path, opts: &PackOptions) -> Result<Option<PackedPart>> {
    let Some(stem) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".kmt"))
    else {
        anyhow::bail!("{}: not a part file (LAYER.part-KKKK.kmt)", path.display());
    };
    let Ok(Some(record)) = PackedPart::read(out, stem) else {
        return Ok(None);
    };
    let (size, sha256) = file_sha256(path)?;
    let same = record.source.size == size
        && record.source.sha256 == sha256
        && record.block_states == opts.block_states
        && [&record.file, &record.values_file]
            .iter()
            .all(|f| std::fs::metadata(out.join(&f.path)).is_ok_and(|m| m.len() == f.size));
    Ok(same.then_some(record))
}
