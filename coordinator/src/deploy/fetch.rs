//! `deploy fetch`: pack the finished run on the coordinator, download the release with scp and
//! verify it here before it takes its final name.

use super::host;
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
    let (run_dir, rel) = (quote(&coord.run_dir(name)), quote(&coord.release_dir(name)));
    let bin = quote(&format!("{}/kingmaker", coord.bin_dir()));
    // Pack once; a release left by an earlier fetch is kept if it still verifies.
    let script = format!(
        "set -e\n\
         if [ -e {rel}/manifest.json ] && {bin} verify {rel} >/dev/null 2>&1; then echo reused=yes; else\n\
           rm -rf {rel}\n\
           {bin} pack {run_dir} --out {rel} >&2\n\
         fi\n\
         echo \"manifest_sha256=$(sha256sum {rel}/manifest.json | cut -c1-64)\"\n\
         echo \"bytes=$(du -sk {rel} | cut -f1)\"\n"
    );
    println!("[{}] packing {} ...", coord.name, coord.release_dir(name));
    let r = d.ssh.run(coord, &script, None)?;
    if !r.ok() {
        bail!(
            "host {}: packing the release failed: {}",
            coord.name,
            host::failure(&r)
        );
    }
    let remote_manifest = r.field("manifest_sha256").unwrap_or("").to_string();
    println!(
        "[{}] release {} ({} KiB)",
        coord.name,
        if r.field("reused").is_some() {
            "already packed"
        } else {
            "packed"
        },
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

/// `kingmaker verify DIR` with the running binary.
fn verify_local(dir: &std::path::Path) -> Result<()> {
    let exe = std::env::current_exe().context("locating the running kingmaker")?;
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
