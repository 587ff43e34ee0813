//! `kingmaker pack RUN_DIR --out RELEASE_DIR`: pack a finished run into a release (docs/format.md).
//!
//! The release is written into a hidden staging directory beside `--out` and renamed into place
//! when complete, so `--out` is either absent/empty or a whole release. A pack that is killed
//! leaves its staging directory behind; the next pack into the same `--out` removes it.

use crate::cmd::summarize::compute_summary;
use crate::cmd::ticker::{Ticker, Unit};
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_coordinator::digits::thousands;
use kingmaker_coordinator::rundir::{read_json, RunDir, RunInfo};
use kingmaker_coordinator::summary::{default_reach, is_counts_only};
use kingmaker_kernel::Game;
use kingmaker_process::lock::{DirLock, LOCK_FILE};
use kingmaker_tablefmt::release::manifest::{
    release_bytes, write_manifest, Manifest, ManifestFile, ManifestLayer, Provenance, FORMAT_NAME,
};
use kingmaker_tablefmt::release::{
    choose_values_period, layer_file_name, values_file_name, write_layer, write_values,
    PackOptions, DEFAULT_BLOCK_STATES, DEFAULT_ZSTD_LEVEL,
};
use kingmaker_tablefmt::value::MAX_CODE;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

mod parts_at;

/// How layer files are written: `pack`'s and `pack-part`'s options.
#[derive(Args, Debug)]
pub struct PackingArgs {
    /// States per block: a lookup reads and decompresses one block (a multiple of 4).
    #[arg(long, default_value_t = DEFAULT_BLOCK_STATES)]
    pub block_states: u32,
    /// zstd level, 1 (fast) to 22 (smallest).
    #[arg(long, default_value_t = DEFAULT_ZSTD_LEVEL, value_parser = clap::value_parser!(i32).range(1..=22))]
    pub zstd_level: i32,
}

impl PackingArgs {
    /// The options, checked.
    pub fn options(&self) -> Result<PackOptions> {
        if self.block_states == 0 || !self.block_states.is_multiple_of(4) {
            bail!("--block-states must be a positive multiple of 4");
        }
        Ok(PackOptions {
            block_states: self.block_states,
            zstd_level: self.zstd_level,
        })
    }
}

#[derive(Args, Debug)]
pub struct PackArgs {
    /// A finished run directory written by `kingmaker build`.
    pub run: PathBuf,
    /// The new release directory (must not exist, or be empty).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub packing: PackingArgs,
    /// Print the manifest's layers and files as JSON.
    #[arg(long)]
    pub json: bool,
    /// Publish the layers kept on the workers where they lie: list each as parts at this URL
    /// (`{host}` is replaced by the host of the part's worker; it must end with '/'), where the
    /// host packed (`kingmaker pack-part`) and serves (`kingmaker serve`) them. Nothing of those
    /// layers is read or written here; the other layers are packed as usual.
    #[arg(long, value_name = "URL")]
    pub parts_at: Option<String>,
}

pub fn run(args: PackArgs) -> Result<()> {
    let (run, info) = RunDir::open(&args.run)?;
    let summary_path = run.summary_path();
    if !summary_path.exists() {
        bail!(
            "{} is an unfinished run (no summary.json): finish the build (or `kingmaker resume` it) before packing",
            args.run.display()
        );
    }
    let summary: Value = read_json(&summary_path, "a summary.json")?;
    check_out_dir(&args.out)?;
    let summary = if is_counts_only(&summary) {
        // The build kept its layers on the workers and wrote only their counts: the release's
        // summary is computed from the parts, as a gathered build would have written it.
        tracing::info!(
            "summary.json of {} has only the counts of the layers kept on the workers; computing \
             the rest from their parts",
            args.run.display()
        );
        compute_summary(&run, &info, default_reach(info.states), None)?
    } else {
        summary
    };
    let opts = args.packing.options()?;
    let parent = match args.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = args
        .out
        .file_name()
        .context("--out needs a directory name")?
        .to_string_lossy()
        .into_owned();
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    // The destination is locked as `fetch` locks its own: a second pack into it is refused here,
    // before it writes anything, naming the first.
    let created = match std::fs::create_dir(&args.out) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(e).with_context(|| format!("creating {}", args.out.display())),
    };
    let out_lock = kingmaker_coordinator::lock::lock_pack(&args.out)
        .and_then(|lock| match check_out_dir(&args.out) {
            Ok(()) => Ok(lock),
            Err(e) => {
                // Again under the lock: another pack may have finished here since, and our lock
                // file is no file of its release.
                let _ = std::fs::remove_file(lock.path());
                Err(e)
            }
        })
        .inspect_err(|_| {
            if created {
                // Empty unless another pack has its lock file here: then it stays.
                let _ = std::fs::remove_dir(&args.out);
            }
        })?;
    remove_stale_staging(&parent, &base);
    let staging = parent.join(format!("{}{}", staging_prefix(&base), std::process::id()));
    let packed = std::fs::create_dir(&staging)
        .with_context(|| format!("creating {}", staging.display()))
        .and_then(|()| {
            // Held while the staging directory fills, so that another pack can tell it from the
            // leftover of a pack that was killed (see `remove_stale_staging`).
            let lock = DirLock::acquire(&staging, "kingmaker pack")?;
            let m = pack_into(
                &run,
                &info,
                &summary,
                &staging,
                &opts,
                args.parts_at.as_deref(),
            )?;
            // The lock file is no file of the release; the lock lasts until `lock` is dropped.
            std::fs::remove_file(lock.path())
                .with_context(|| format!("removing {}", lock.path().display()))?;
            move_into_place(&staging, &args.out)?;
            Ok(m)
        });
    let manifest = match packed {
        Ok(m) => m,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            let _ = std::fs::remove_file(args.out.join(LOCK_FILE));
            if created {
                let _ = std::fs::remove_dir(&args.out);
            }
            return Err(e);
        }
    };
    drop(out_lock);
    if let Ok(d) = std::fs::File::open(&parent) {
        let _ = d.sync_all();
    }
    // Every file of the release, the manifest and its checksum included: what `verify` and
    // `status` report too.
    let total = release_bytes(&args.out, &manifest);
    let tables: u64 = manifest.files.iter().map(|f| f.size).sum();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "release": args.out, "layers": manifest.layers, "files": manifest.files,
                "bytes": total, "table_bytes": tables, "manifest_bytes": total - tables,
            }))?
        );
    } else {
        println!(
            "release of {} written to {} ({} files, {} bytes in all: {} of tables, {} of manifest); \
             check it with `kingmaker verify {}`",
            manifest.name,
            args.out.display(),
            manifest.files.len() + 2,
            thousands(total),
            thousands(tables),
            thousands(total - tables),
            args.out.display()
        );
    }
    Ok(())
}

/// The staging directories of a pack into `parent/base` are `parent/.base.packing-PID`.
fn staging_prefix(base: &str) -> String {
    format!(".{base}.packing-")
}

/// Remove what packs into `parent/base` that were killed (kill -9, a crash, power loss) left
/// behind: staging directories whose process is gone, or whose lock nobody holds although its
/// pid is alive (another process got that pid). A staging directory is kept only while a pack
/// may still be writing it.
fn remove_stale_staging(parent: &Path, base: &str) {
    let prefix = staging_prefix(base);
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        let stale = if pid == std::process::id() || !process_alive(pid) {
            true
        } else {
            // Alive: stale only if its lock file is there and nobody holds it. (Without a lock
            // file it may be a pack between removing its lock file and renaming.)
            path.join(LOCK_FILE).exists() && matches!(DirLock::holder(&path), Ok(None))
        };
        if !stale {
            continue;
        }
        match std::fs::remove_dir_all(&path) {
            Ok(()) => tracing::info!(
                "removed {}, left behind by a pack that did not finish (pid {pid})",
                path.display()
            ),
            Err(e) => tracing::warn!(
                "could not remove {}, left behind by a pack that did not finish: {e}",
                path.display()
            ),
        }
    }
}

/// Whether a process `pid` exists (a zombie counts).
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let sent = unsafe { libc::kill(pid, 0) } == 0;
    sent || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Put the packed release `staging` in the place of `out`, an empty directory but for the lock
/// file of this pack: the two are swapped in one step (renameat2 RENAME_EXCHANGE), so no other
/// pack can find `out` missing or unlocked in between; then the old `out` is removed. On a file
/// system without the swap, `out` is removed and `staging` renamed.
fn move_into_place(staging: &Path, out: &Path) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes()).context("a path with a NUL byte")
    };
    let (from, to) = (c(staging)?, c(out)?);
    // SAFETY: two NUL-terminated paths, resolved from the working directory.
    let swapped = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    } == 0;
    if swapped {
        // `staging` is the old, empty `out` now.
        let _ = std::fs::remove_file(staging.join(LOCK_FILE));
        if let Err(e) = std::fs::remove_dir(staging) {
            tracing::warn!("could not remove {} (empty): {e}", staging.display());
        }
        return Ok(());
    }
    let _ = std::fs::remove_file(out.join(LOCK_FILE));
    std::fs::remove_dir(out).with_context(|| format!("replacing the empty {}", out.display()))?;
    std::fs::rename(staging, out)
        .with_context(|| format!("moving {} to {}", staging.display(), out.display()))
}

/// `--out` must not exist, or be an empty directory (but for the lock file of a pack).
fn check_out_dir(out: &Path) -> Result<()> {
    kingmaker_coordinator::rundir::check_new_dir_kind(out)?;
    if out.exists() {
        let empty = out
            .read_dir()
            .map(|d| d.flatten().all(|e| e.file_name() == LOCK_FILE))
            .unwrap_or(false);
        if !empty {
            bail!(
                "{} already exists and is not empty; choose a new --out directory",
                out.display()
            );
        }
    }
    Ok(())
}

/// Write every layer file and the manifest into `dir`.
fn pack_into(
    run: &RunDir,
    info: &RunInfo,
    summary: &Value,
    dir: &Path,
    opts: &PackOptions,
    parts_at: Option<&str>,
) -> Result<Manifest> {
    let game = info.spec.build()?;
    if game.size() != info.states {
        bail!(
            "run.json says {} states but {} has {}",
            info.states,
            game.name(),
            game.size()
        );
    }
    let mut layers = Vec::new();
    let mut files = Vec::new();
    // Each layer is read three times: twice for its values and depths (the first pass finds
    // the depth code), once for its values alone (a few sampled blocks choose its grouping).
    let mut ticker = Ticker::new(
        "pack",
        Unit::States,
        3 * info.states * info.layers.len() as u64,
    );
    let mut in_parts = 0;
    for layer in &info.layers {
        if let Some(template) = parts_at {
            let kept = kingmaker_tablefmt::kept::read_kept(&run.path.join("layers"), &layer.name)?;
            if let Some(kept) = kept {
                let identity = run.identity(&layer.name);
                let coalition = (layer.coalition, layer.objective);
                let (l, f) = parts_at::layer_in_parts(&kept, &identity, coalition, template)?;
                ticker.add(3 * info.states);
                files.extend(f);
                layers.push(l);
                in_parts += 1;
                continue;
            }
        }
        let started = Instant::now();
        let table = run.table(&layer.name)?;
        if table.states() != info.states {
            bail!(
                "layer {} of {} has {} states, run.json says {}",
                layer.name,
                run.path.display(),
                table.states(),
                info.states
            );
        }
        let file = layer_file_name(&layer.name);
        let identity = run.identity(&layer.name);
        ticker.step(format!("layer {}: values and depths", layer.name));
        let written = write_layer(
            &dir.join(&file),
            &identity,
            info.states,
            opts,
            |first, values, depth| {
                table.read_states(first, values, depth)?;
                ticker.add(values.len() as u64);
                Ok(())
            },
        )?;
        ticker.step(format!("layer {}: values alone", layer.name));
        let values_file = values_file_name(&layer.name);
        let mut stats = ValueStats::default();
        let period = choose_values_period(info.states, opts, |first, values| {
            table.read_states(first, values, &mut [])
        })?;
        let values_only = write_values(
            &dir.join(&values_file),
            &identity,
            info.states,
            opts,
            period,
            |first, values| {
                table.read_states(first, values, &mut [])?;
                stats.add(first, values);
                ticker.add(values.len() as u64);
                Ok(())
            },
        )?;
        tracing::info!(
            "{}: empirical entropy of the values {:.3} bits/state; given index mod 2, 3, 6: {:.3}, {:.3}, \
             {:.3} (what a coder without context could reach, against {:.3} for the values file, \
             grouped by period {period})",
            layer.name,
            stats.entropy(1),
            stats.entropy(2),
            stats.entropy(3),
            stats.entropy(6),
            values_only.size as f64 * 8.0 / info.states.max(1) as f64
        );
        if values_only.digest != written.digest {
            bail!(
                "layer {} of {} changed while it was being packed; pack it again",
                layer.name,
                run.path.display()
            );
        }
        let listed = summary["layers"][&layer.name]["digest"]
            .as_str()
            .unwrap_or("");
        if written.digest != listed {
            bail!(
                "layer {} of {} does not match its summary.json (digest {} vs {listed:?}): the run is damaged; rebuild it",
                layer.name,
                run.path.display(),
                written.digest
            );
        }
        let secs = started.elapsed().as_secs_f64();
        let bits = |bytes: u64| bytes as f64 * 8.0 / info.states.max(1) as f64;
        tracing::info!(
            "packed {}: {} states, values and depths {} bytes ({:.3} bits/state), values alone {} \
             bytes ({:.3} bits/state), in {:.2}s ({:.1} M states/s)",
            layer.name,
            info.states,
            written.size,
            bits(written.size),
            values_only.size,
            bits(values_only.size),
            secs,
            info.states as f64 / secs.max(1e-9) / 1e6
        );
        files.push(ManifestFile {
            path: file.clone(),
            size: written.size,
            sha256: written.sha256,
            url: None,
        });
        files.push(ManifestFile {
            path: values_file.clone(),
            size: values_only.size,
            sha256: values_only.sha256,
            url: None,
        });
        layers.push(ManifestLayer {
            name: layer.name.clone(),
            coalition: layer.coalition,
            objective: layer.objective,
            file,
            values_file: Some(values_file),
            states: info.states,
            block_states: opts.block_states,
            blocks: written.blocks,
            counts: written.counts,
            digest: written.digest,
            max_depth: written.max_depth,
            parts: Vec::new(),
        });
    }
    ticker.finish();
    if parts_at.is_some() && in_parts == 0 {
        bail!(
            "--parts-at publishes the layers kept on the workers, and {} has none: pack it \
             without --parts-at",
            run.path.display()
        );
    }
    let mut manifest = Manifest {
        format: FORMAT_NAME.to_string(),
        format_version: 0,
        game: serde_json::to_value(&info.spec)?,
        name: game.name(),
        states: info.states,
        layers,
        files,
        provenance: Provenance {
            kingmaker_version: env!("CARGO_PKG_VERSION").to_string(),
            packed_at: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            host: hostname(),
            run: serde_json::to_value(info)?,
            summary: summary.clone(),
        },
    };
    manifest.format_version = manifest.needed_version();
    write_manifest(dir, &manifest)?;
    Ok(manifest)
}

/// Counts of each value by index mod 6: the empirical entropy of a layer's values, alone and given
/// the index modulo a small period (the side to move in many games).
#[derive(Default)]
struct ValueStats {
    counts: [[u64; 4]; 6],
}

impl ValueStats {
    fn add(&mut self, first: u64, values: &[u8]) {
        let mut row = (first % 6) as usize;
        for &v in values {
            self.counts[row][(v & MAX_CODE) as usize] += 1;
            row = if row == 5 { 0 } else { row + 1 };
        }
    }

    /// Bits per state of the values given the index mod `m` (m divides 6).
    fn entropy(&self, m: usize) -> f64 {
        let total: u64 = self.counts.iter().flatten().sum();
        let mut bits = 0.0;
        for r in 0..m {
            let mut c = [0u64; 4];
            for (row, counts) in self.counts.iter().enumerate() {
                if row % m == r {
                    for v in 0..4 {
                        c[v] += counts[v];
                    }
                }
            }
            let n: u64 = c.iter().sum();
            for &k in &c {
                if k > 0 {
                    bits -= k as f64 * (k as f64 / n as f64).log2();
                }
            }
        }
        bits / total.max(1) as f64
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string())
}
