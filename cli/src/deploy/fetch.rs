//! `deploy fetch`: pack the finished run on the coordinator, download it with scp, verify it here.
//! 1. The pack runs detached (its own session, its log and exit status beside the run) and fetch
//!    follows its log (detached.rs): it takes an hour or more at level 2, and a dropped SSH
//!    connection must not kill it; a fetch started while a pack runs follows that pack
//!    (docs/operators.md, §7).

use super::detached::{Job, Started};
use super::ssh::quote;
use super::{sha256_file, Deployment};
use anyhow::{bail, Context, Result};
use std::path::PathBuf;
use std::process::Command;

pub fn run(d: &Deployment, out: Option<PathBuf>) -> Result<()> {
    let coord = d.inv.coordinator();
    let name = &d.inv.run.name;
    let phase = super::status::run_phase(d)?;
    if phase != "complete" {
        bail!(
            "run {name} is not complete ({phase}): see `kingmaker deploy status`; `kingmaker deploy resume` continues a \
             stopped run"
        );
    }
    let out = out.unwrap_or_else(|| d.inv.release_dir());
    let reused = pack_on_coordinator(d)?;
    let rel = quote(&coord.release_dir(name));
    let r = d.ssh.run_ok(
        coord,
        "reading the packed release",
        &format!(
            "echo \"manifest_sha256=$(sha256sum {rel}/manifest.json | cut -c1-64)\"\n\
             echo \"bytes=$(du -sk {rel} | cut -f1)\"\n"
        ),
        None,
    )?;
    let remote_manifest = r.field("manifest_sha256").unwrap_or("").to_string();
    println!(
        "[{}] release {} ({} KiB)",
        coord.name,
        if reused { "already packed" } else { "packed" },
        r.field("bytes").unwrap_or("?")
    );
    if out.join("manifest.json").exists() {
        if sha256_file(&out.join("manifest.json"))? == remote_manifest {
            verify_local(&out)?;
            println!("{} already holds this release, verified", out.display());
            return Ok(());
        }
        bail!(
            "{} already holds another release: move it away or give --out",
            out.display()
        );
    }
    if out.exists()
        && std::fs::read_dir(&out)
            .map(|mut e| e.next().is_some())
            .unwrap_or(true)
    {
        bail!(
            "{} exists and is not empty: move it away or give --out",
            out.display()
        );
    }
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| ".".into());
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let partial = parent.join(format!(
        ".{}.partial",
        out.file_name()
            .context("--out needs a directory name")?
            .to_string_lossy()
    ));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("removing {}", partial.display()))?;
    }
    println!("downloading to {} ...", out.display());
    d.ssh
        .download_dir(coord, &coord.release_dir(name), &partial)?;
    if sha256_file(&partial.join("manifest.json"))? != remote_manifest {
        bail!("the downloaded manifest differs from the coordinator's: the release changed while downloading; fetch again");
    }
    verify_local(&partial)?;
    if out.exists() {
        std::fs::remove_dir(&out)
            .with_context(|| format!("replacing the empty {}", out.display()))?;
    }
    std::fs::rename(&partial, &out)
        .with_context(|| format!("moving {} to {}", partial.display(), out.display()))?;
    println!(
        "release of run {name} fetched and verified: {}",
        out.display()
    );
    println!(
        "query it with `kingmaker query`, serve it with `kingmaker serve {}`",
        out.display()
    );
    Ok(())
}

/// Pack the run on the coordinator unless a release there still verifies; true if one did. A
/// pack already running (started by an earlier fetch) is followed, not started again.
fn pack_on_coordinator(d: &Deployment) -> Result<bool> {
    let coord = d.inv.coordinator();
    let name = &d.inv.run.name;
    let (run_dir, rel) = (coord.run_dir(name), coord.release_dir(name));
    let bin = quote(&format!("{}/kingmaker", coord.bin_dir()));
    let args: Vec<String> = d.inv.run.pack_args.iter().map(|a| quote(a)).collect();
    // A run built with --keep-layers-on-workers has its layers on the workers: `collect
    // --in-parts` copies them to the coordinator first (each checked; left in parts, which pack
    // reads), with the token of the coordinator's environment file.
    let collect = format!(
        "if ls {run}/layers/*.kept.json >/dev/null 2>&1; then (set -a; . {env}; exec {bin} collect {run} --in-parts) || exit $?; fi",
        run = quote(&run_dir),
        env = quote(&coord.env_file(name)),
    );
    let job = Job {
        host: coord,
        base: format!("{}/{name}", coord.data_dir),
        name: "pack",
        command: format!(
            "rm -rf {rel} && {collect} && {bin} pack {} --out {rel} {}",
            quote(&run_dir),
            args.join(" "),
            rel = quote(&rel),
        ),
        done: Some(format!(
            "[ -e {rel}/manifest.json ] && {bin} verify {rel} >/dev/null 2>&1",
            rel = quote(&rel)
        )),
        doing: "the pack",
        again: "`kingmaker deploy fetch`",
    };
    match job.start(d)? {
        Started::Reused => return Ok(true),
        Started::Running => println!(
            "[{}] a pack started earlier is still running: following it",
            coord.name
        ),
        Started::Now => println!(
            "[{}] packing {rel} (detached: it goes on if this connection drops; `deploy fetch` \
             again follows it) ...",
            coord.name
        ),
    }
    job.follow(d)?;
    Ok(false)
}

/// `kingmaker verify DIR` with the running binary.
fn verify_local(dir: &std::path::Path) -> Result<()> {
    let exe = running_kingmaker()?;
    let out = Command::new(&exe)
        .arg("verify")
        .arg(dir)
        .output()
        .context("running kingmaker verify")?;
    if !out.status.success() {
        bail!(
            "the downloaded release in {} failed verification (kept for inspection):\n{}{}",
            dir.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    print!("{}", String::from_utf8_lossy(&out.stdout));
    Ok(())
}

/// The path of the running `kingmaker`. A binary replaced while fetch ran (an upgrade during an
/// hour's pack) reads as `PATH (deleted)` on Linux: the new binary at the same path verifies.
fn running_kingmaker() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the running kingmaker")?;
    if exe.exists() {
        return Ok(exe);
    }
    let text = exe.to_string_lossy();
    match text.strip_suffix(" (deleted)").map(PathBuf::from) {
        Some(now) if now.exists() => Ok(now),
        _ => bail!(
            "the running kingmaker ({}) is gone: run `kingmaker verify` on the release yourself",
            exe.display()
        ),
    }
}
