//! `kingmaker collect RUN_DIR`: bring the layers kept on the workers into the run directory.
//! 1. The copies and `NAME.kept.json` go only once the assembled table's counts and digest are the
//!    layer's, so a collect that fails leaves the run readable as before (docs/cli.md, "collect").

use crate::cmd::summarize::write_summary;
use crate::cmd::ticker::{Ticker, Unit};
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_coordinator::cluster::fetch_part;
use kingmaker_coordinator::lock::lock_run;
use kingmaker_coordinator::rundir::{describe_table, RunDir};
use kingmaker_coordinator::summary::default_reach;
use kingmaker_rpc::auth::TOKEN_ENV;
use kingmaker_tablefmt::fsio::file_sha256;
use kingmaker_tablefmt::kept::{
    kept_path, local_part_path, open_parts, part_worker, read_kept, KeptLayer,
};
use kingmaker_tablefmt::table::{read_summary, table_path, TableSummary, TableWriter};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CollectArgs {
    /// A run directory whose layers a distributed build kept on its workers.
    pub dir: PathBuf,
    /// The workers (HOST:PORT,...) in worker-number order, where they moved since the build.
    /// Default: the ones in run.json.
    #[arg(long, value_delimiter = ',')]
    pub workers: Vec<String>,
    /// The workers' token (prefer the environment variable).
    #[arg(long, env = TOKEN_ENV, hide_env_values = true)]
    pub token: Option<String>,
    /// Copy the parts here and read them together (checked against the layer's digest), but
    /// leave them in parts: every reader reads a layer in parts, and no second copy is written.
    #[arg(long)]
    pub in_parts: bool,
}

pub fn run(args: CollectArgs) -> Result<()> {
    let (run, info) = RunDir::open(&args.dir)?;
    let _lock = lock_run(&args.dir, "kingmaker collect")?;
    let Some(dist) = &info.distributed else {
        bail!(
            "{} is not a distributed run: its layers are in layers/",
            args.dir.display()
        );
    };
    let workers = if args.workers.is_empty() {
        dist.workers.clone()
    } else if args.workers.len() == dist.workers.len() {
        args.workers.clone()
    } else {
        bail!(
            "--workers lists {} workers; the run has {}",
            args.workers.len(),
            dist.workers.len()
        );
    };
    let Some(token) = args.token.clone().filter(|t| !t.is_empty()) else {
        bail!("collecting needs the workers' token: pass --token or set {TOKEN_ENV}");
    };
    let dir = run.layers_dir();
    let mut collected = 0;
    for layer in &info.layers {
        let Some(kept) = read_kept(&dir, &layer.name)? else {
            continue;
        };
        collect_layer(&run, &kept, &workers, &dist.run_id, &token, args.in_parts)?;
        collected += 1;
    }
    if collected == 0 {
        println!("{}: no layer is kept on the workers", args.dir.display());
        return Ok(());
    }
    println!(
        "{collected} layer{} collected into {}{}",
        if collected == 1 { "" } else { "s" },
        dir.display(),
        if args.in_parts { ", in parts" } else { "" }
    );
    // A finished run's summary held only the kept layers' counts and digests: now that the tables
    // are here, it is written as a gathered build writes it (start's value, classes, witnesses).
    if run.summary_path().exists() {
        write_summary(&run, &info, default_reach(info.states), None)?;
        println!("summary.json written again from the tables");
    }
    Ok(())
}

fn collect_layer(
    run: &RunDir,
    kept: &KeptLayer,
    workers: &[String],
    run_id: &str,
    token: &str,
    in_parts: bool,
) -> Result<()> {
    let dir = run.layers_dir();
    let name = &kept.layer;
    let bytes: u64 = kept.parts.iter().map(|p| p.size).sum();
    let mut copying = Ticker::new("collect", Unit::Bytes, bytes);
    copying.step(format!("layer {name}: copying its parts from the workers"));
    for part in &kept.parts {
        // The worker's number is in the part's name; its address is where it is now (run.json's,
        // or --workers'), which a resume on moved workers may have changed since.
        let k = part_worker(part, name, workers.len())?;
        let path = local_part_path(&dir, part);
        let fresh = file_sha256(&path).ok() == Some((part.size, part.sha256.clone()));
        if !fresh {
            let tmp = path.with_extension("kmt.tmp");
            fetch_part(&workers[k], token, run_id, &part.file, &tmp)?;
            let got = file_sha256(&tmp)?;
            if got != (part.size, part.sha256.clone()) {
                let _ = std::fs::remove_file(&tmp);
                bail!(
                    "layer {name}: the part from {} is {} bytes with sha256 {}; its record says {} bytes, {}",
                    workers[k],
                    got.0,
                    got.1,
                    part.size,
                    part.sha256
                );
            }
            std::fs::rename(&tmp, &path)?;
            copying.add(part.size);
        } else {
            copying.skip(part.size);
        }
        tracing::info!(
            "layer {name}: part {k} ({} rows) copied from {}",
            part.states,
            workers[k]
        );
    }
    copying.finish();
    let game = run.identity(name).game;
    let parted = open_parts(&dir, kept, &game, None)?.with_context(|| {
        format!(
            "layer {name}: a part copied into {} vanished",
            dir.display()
        )
    })?;
    let agrees = |read: &TableSummary| -> Result<()> {
        if *read != kept.summary {
            bail!(
                "layer {name}: the parts read together give {}; the layer's record says {}",
                describe_table(read),
                describe_table(&kept.summary)
            );
        }
        Ok(())
    };
    if in_parts {
        agrees(&read_summary(&parted)?)?;
        println!(
            "layer {name}: {} parts copied into {} and read together, digest {}",
            kept.parts.len(),
            dir.display(),
            kept.summary.digest
        );
        return Ok(());
    }
    let mut writer = TableWriter::create(&dir, &run.identity(name), kept.summary.states)?;
    let mut writing = Ticker::new("collect", Unit::States, kept.summary.states);
    writing.step(format!("layer {name}: writing its table"));
    parted.for_each_group(|values, depth| {
        (writer.append(values, depth)).map(|()| writing.add(values.len() as u64))
    })?;
    writing.finish();
    let table = writer.finish()?;
    if let Err(e) = agrees(&table) {
        let _ = std::fs::remove_file(table_path(&dir, name));
        return Err(e);
    }
    drop(parted);
    for part in &kept.parts {
        std::fs::remove_file(local_part_path(&dir, part))?;
    }
    std::fs::remove_file(kept_path(&dir, name))?;
    println!("layer {name}: collected, digest {}", table.digest);
    Ok(())
}
