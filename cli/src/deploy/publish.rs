//! `deploy publish`: a run whose layers were kept on the workers becomes a release without being
//! gathered. Each worker host packs its parts where they lie and serves them over HTTP; the
//! coordinator writes the manifest that lists every part at its URL; the manifest comes here
//! (docs/operators.md, §7).

use super::detached::{Job, Started};
use super::inventory::Host;
use super::ssh::quote;
use super::Deployment;
use anyhow::{bail, Context, Result};
use kingmaker_tablefmt::release::manifest::Manifest;
use std::path::{Path, PathBuf};

/// Where a host keeps what it publishes of run `name`, and its pid, log and exit files.
fn publish_dir(host: &Host, name: &str) -> String {
    format!("{}/{name}/published", host.data_dir)
}

pub fn run(d: &Deployment, port: u16, out: Option<PathBuf>) -> Result<()> {
    let coord = d.inv.coordinator();
    let name = &d.inv.run.name;
    let phase = super::status::run_phase(d)?;
    if phase != "complete" {
        bail!("run {name} is not complete ({phase}): see `kingmaker deploy status`");
    }
    let run_dir = coord.run_dir(name);
    // The coordinator writes the manifest with this kingmaker's `pack --parts-at`; the run is
    // complete, so its binary can change.
    let local = d.local_binary("kingmaker")?;
    let sha = super::sha256_file(&local)?;
    install_kingmaker(d, coord, &local, &sha)?;
    let r = d.ssh.run_ok(
        coord,
        "reading the run",
        &format!(
            "echo \"kept=$(ls {run}/layers/*.kept.json 2>/dev/null | wc -l)\"\n\
             if {bin} pack --help 2>/dev/null | grep -q -- --parts-at; then echo parts_at=yes; fi\n\
             echo \"run_id=$(sed -n 's/.*\"run_id\": *\"\\([^\"]*\\)\".*/\\1/p' {run}/run.json | head -n 1)\"\n",
            run = quote(&run_dir),
            bin = quote(&format!("{}/kingmaker", coord.bin_dir())),
        ),
        None,
    )?;
    if r.field("parts_at") != Some("yes") {
        bail!(
            "the coordinator's kingmaker ({}/kingmaker) is older than `pack --parts-at`: \
             build this kingmaker from a newer checkout (run.binaries)",
            coord.bin_dir()
        );
    }
    if r.field("kept").unwrap_or("0").trim() == "0" {
        bail!(
            "run {name} keeps no layer on its workers (built without --keep-layers-on-workers): \
             `kingmaker deploy fetch` packs and downloads it whole"
        );
    }
    let run_id = r.field("run_id").unwrap_or("").trim().to_string();
    if run_id.is_empty()
        || !run_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
    {
        bail!("{run_dir}/run.json names no run id {run_id:?}: is it a distributed run?");
    }
    let again = "`kingmaker deploy publish`";
    // Every host packs at once; then each is followed to its end and serves.
    let mut jobs = Vec::new();
    for host in d.inv.workers() {
        install_kingmaker(d, host, &local, &sha)?;
        jobs.push(start_packing(d, host, &run_id, again)?);
    }
    for job in &jobs {
        job.follow(d)?;
        serve(d, job.host, port)?;
    }
    // The release's summary (the start's value, the longest result's position) is read from the
    // kept layers through the workers' services, which a teardown since the build stopped.
    super::launch::ensure_workers(d)?;
    let rel = format!("{}/release", publish_dir(coord, name));
    let bin = quote(&format!("{}/kingmaker", coord.bin_dir()));
    let template = format!("http://{{host}}:{port}/release/");
    let pack_args: Vec<String> = d.inv.run.pack_args.iter().map(|a| quote(a)).collect();
    let job = Job {
        host: coord,
        base: publish_dir(coord, name),
        name: "manifest",
        command: format!(
            "rm -rf {rel} && (set -a; . {env}; exec {bin} pack {run} --out {rel} --parts-at {t} {args})",
            rel = quote(&rel),
            env = quote(&coord.env_file(name)),
            run = quote(&run_dir),
            t = quote(&template),
            args = pack_args.join(" "),
        ),
        done: None,
        doing: "writing the manifest",
        again,
    };
    if job.start(d)? == Started::Running {
        println!(
            "[{}] a manifest started earlier is being written: following it",
            coord.name
        );
    }
    job.follow(d)?;
    let out = out.unwrap_or_else(|| d.inv.release_dir().with_extension("parts"));
    download_manifest(d, coord, &rel, &out)?;
    println!(
        "release of run {name} published in parts: its manifest is in {}",
        out.display()
    );
    for host in d.inv.workers() {
        println!(
            "  [{}] serves its parts at http://{}/release/",
            host.name,
            host.listen(port)
        );
    }
    println!(
        "read it where it lies: `kingmaker query {dir} POSITION`, `kingmaker serve {dir}`; \
         copy it whole: `kingmaker fetch URL-OF-THE-MANIFEST DIR`",
        dir = out.display()
    );
    Ok(())
}

/// A worker host runs `kingmaker-worker` alone; packing and serving its parts takes `kingmaker`,
/// installed beside it, as on the coordinator (only when it differs from this one).
fn install_kingmaker(d: &Deployment, host: &Host, local: &Path, sha: &str) -> Result<()> {
    let remote = format!("{}/kingmaker", host.bin_dir());
    let r = d.ssh.run_ok(
        host,
        "looking at its kingmaker",
        &format!(
            "if [ -x {p} ]; then echo \"sha=$(sha256sum {p} | cut -c1-64)\"; fi",
            p = quote(&remote)
        ),
        None,
    )?;
    if r.field("sha") != Some(sha) {
        d.ssh.upload(host, local, &remote, "755")?;
        println!(
            "[{}] installed this kingmaker (it publishes the parts)",
            host.name
        );
    }
    Ok(())
}

/// Start packing the parts `host` holds into its publish directory (those packed before are
/// kept), with the run's `pack_args`.
fn start_packing<'a>(
    d: &Deployment,
    host: &'a Host,
    run_id: &str,
    again: &'a str,
) -> Result<Job<'a>> {
    let name = &d.inv.run.name;
    let base = publish_dir(host, name);
    let rel = format!("{base}/release");
    let bin = quote(&format!("{}/kingmaker", host.bin_dir()));
    let layers = format!("{}/{run_id}/layers", host.worker_dir(name));
    let args: Vec<String> = d.inv.run.pack_args.iter().map(|a| quote(a)).collect();
    let job = Job {
        host,
        base: base.clone(),
        name: "pack-parts",
        // A worker that holds no rows has no part.
        command: format!(
            "set -- {layers}/*.part-*.kmt; if [ -e \"$1\" ]; then exec {bin} pack-part \"$@\" --out {rel} {args}; else echo 'no part here'; fi",
            layers = quote(&layers),
            rel = quote(&rel),
            args = args.join(" "),
        ),
        done: None,
        doing: "packing its parts",
        again,
    };
    match job.start(d)? {
        Started::Running => println!(
            "[{}] packing its parts (started earlier): following it",
            host.name
        ),
        _ => println!("[{}] packing its parts in {rel} ...", host.name),
    }
    Ok(job)
}

/// Serve `host`'s packed parts on `port` (a server started before is replaced: the parts may
/// have changed).
fn serve(d: &Deployment, host: &Host, port: u16) -> Result<()> {
    let base = publish_dir(host, &d.inv.run.name);
    let rel = format!("{base}/release");
    let bin = quote(&format!("{}/kingmaker", host.bin_dir()));
    let (pid, log) = (
        quote(&format!("{base}/serve.pid")),
        quote(&format!("{base}/serve.log")),
    );
    let listen = format!("0.0.0.0:{port}");
    let script = format!(
        "set -e\n\
         if [ ! -d {rel} ] || ! ls {rel}/*.json >/dev/null 2>&1; then echo state=nothing; exit 0; fi\n\
         p=$(cat {pid} 2>/dev/null || true)\n\
         if [ -n \"$p\" ] && kill -0 \"$p\" 2>/dev/null && grep -q serve /proc/$p/cmdline 2>/dev/null; then\n\
           kill \"$p\"\n\
           for i in $(seq 1 40); do kill -0 \"$p\" 2>/dev/null || break; sleep 0.25; done\n\
         fi\n\
         rm -f {pid}\n\
         setsid nohup sh -c {start} > {log} 2>&1 < /dev/null &\n\
         for i in $(seq 1 80); do grep -q '^serving' {log} && break; sleep 0.25; done\n\
         if grep -q '^serving' {log}; then echo state=serving; else echo state=failed; sed 's/^/log: /' {log}; fi\n",
        start = quote(&format!(
            "echo $$ > {pid}; exec {bin} serve {rel} --listen {listen}",
            rel = quote(&rel)
        )),
        rel = quote(&rel),
    );
    let r = d.ssh.run_ok(host, "serving its parts", &script, None)?;
    match r.field("state") {
        Some("serving") => println!(
            "[{}] serving its parts at http://{}/release/",
            host.name,
            host.listen(port)
        ),
        Some("nothing") => println!("[{}] holds no part", host.name),
        _ => {
            let log: Vec<&str> = r
                .stdout
                .lines()
                .filter_map(|l| l.strip_prefix("log: "))
                .collect();
            bail!(
                "host {}: `kingmaker serve` of its parts did not start on port {port}:\n{}",
                host.name,
                log.join("\n")
            );
        }
    }
    Ok(())
}

/// Copy the manifest and its checksum from the coordinator into `out` (a new or empty directory,
/// or one holding this very manifest), then check them here.
fn download_manifest(d: &Deployment, coord: &Host, rel: &str, out: &Path) -> Result<()> {
    let r = d.ssh.run_ok(
        coord,
        "reading the manifest",
        &format!("cat {}/manifest.sha256", quote(rel)),
        None,
    )?;
    let sha_line = r.stdout.clone();
    let manifest = d.ssh.run_ok(
        coord,
        "reading the manifest",
        &format!("cat {}/manifest.json", quote(rel)),
        None,
    )?;
    let bytes = manifest.stdout.as_bytes();
    // Checked before anything is written: the manifest against its checksum, and its rules.
    let new = Manifest::parse_checked(bytes, sha_line.as_bytes())?;
    if out.exists() {
        // A manifest published before of this same run is replaced (publishing again writes a
        // new one); anything else stays.
        let ours = std::fs::read(out.join("manifest.json"))
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|old| old["provenance"]["run"] == new.provenance.run);
        let empty = std::fs::read_dir(out)
            .map(|mut e| e.next().is_none())
            .unwrap_or(false);
        if !ours && !empty {
            bail!(
                "{} exists and holds something else: move it away or give --out",
                out.display()
            );
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    kingmaker_tablefmt::release::manifest::write_file_atomically(out, "manifest.json", bytes)?;
    kingmaker_tablefmt::release::manifest::write_file_atomically(
        out,
        "manifest.sha256",
        sha_line.as_bytes(),
    )?;
    Ok(())
}

/// Stop the server of `host`'s published parts, if one runs; whether one did.
pub fn stop_serving(d: &Deployment, host: &Host) -> Result<bool> {
    let pid = quote(&format!("{}/serve.pid", publish_dir(host, &d.inv.run.name)));
    let script = format!(
        "p=$(cat {pid} 2>/dev/null || true)\n\
         if [ -n \"$p\" ] && kill -0 \"$p\" 2>/dev/null && grep -q serve /proc/$p/cmdline 2>/dev/null; then\n\
           kill \"$p\"; rm -f {pid}; echo stopped=yes\n\
         else echo stopped=no; fi\n"
    );
    let r = d
        .ssh
        .run_ok(host, "stopping the server of its parts", &script, None)?;
    Ok(r.field("stopped") == Some("yes"))
}
