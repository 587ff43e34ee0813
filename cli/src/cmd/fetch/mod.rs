//! `kingmaker fetch URL DIR`: download a release over HTTP(S), resumed and checked (docs/cli.md).
//! 1. A file is renamed from `NAME.part` once its size and sha256 match; the manifest comes last.
//! 2. `--timeout` bounds each wait, not a download: a slow server that keeps sending is never cut.
//! 3. Nothing is written unless the destination holds nothing or this release; no credential is
//!    printed; a file with a `url` comes from there, a host down failing only its own files.

mod address;

use crate::cmd::ticker::{Ticker, Unit};
use address::{base_url, redact_text, redacted, Base, Link};
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_coordinator::lock::LOCK_FILE;
use kingmaker_tablefmt::fsio::{read_bounded_if_any, METADATA_CAP};
use kingmaker_tablefmt::release::file_sha256;
use kingmaker_tablefmt::release::manifest::{
    manifest_sha256_line, read_manifest, write_file_atomically, Manifest, ManifestFile, MANIFEST,
    MANIFEST_SHA256,
};
use kingmaker_tablefmt::release::parts::{
    order_as_listed, read_parts, write_parts, PartChoice, Parts, PARTS,
};
use kingmaker_tablefmt::run::RUN_INFO;
use kingmaker_tablefmt::FormatError;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The longest `--timeout`, a day. The shortest is a second: 0 would fail every request at once,
/// and one too long for the clock to add would panic in the HTTP client.
const MAX_TIMEOUT: u64 = 86_400;

#[derive(Args, Debug)]
pub struct FetchArgs {
    /// URL of the release directory (http:// or https://), as served by any static web server.
    pub url: String,
    /// Where to put the release (created if needed; partial downloads there are resumed).
    pub dir: PathBuf,
    /// How many times to resume a file after the connection drops, within this run.
    #[arg(long, default_value_t = 5)]
    pub retries: u32,
    /// The expected sha256 of manifest.json (as published beside the URL), to pin the release.
    #[arg(long)]
    pub manifest_sha256: Option<String>,
    /// Seconds to wait for a connection, for a response's headers, and for more of a body: a
    /// server silent this long has dropped the connection (resumed, see --retries). 1 to 86400.
    #[arg(long, default_value_t = 30, value_name = "SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT))]
    pub timeout: u64,
    /// Fetch only these layers (comma-separated; default every layer), each with all its parts.
    #[arg(long, value_delimiter = ',', value_name = "LAYERS")]
    pub layers: Vec<String>,
    /// Fetch only these parts of layers in parts (comma-separated, e.g. `solo.part-0001`), besides
    /// any --layers: a partial copy.
    #[arg(long, value_delimiter = ',', value_name = "PARTS")]
    pub parts: Vec<String>,
    /// Fetch each layer's values alone (W/L/D, 2 bits per state before compression), without
    /// depths: enough for `query`'s values, not for lines or preference rules.
    #[arg(long)]
    pub values_only: bool,
}

pub fn run(args: FetchArgs) -> Result<()> {
    let base = base_url(&args.url)?;
    // Whatever an error says (the server's words, ureq's), the URL's credentials are not in it.
    fetch(&args, &base).map_err(|e| anyhow::anyhow!(base.redact(&format!("{e:#}"))))
}

fn fetch(args: &FetchArgs, base: &Base) -> Result<()> {
    let started = Instant::now();
    let http = Http::new(args.timeout);
    // The release and the parts wanted are settled before anything is written here, so a fetch
    // refused for them leaves nothing behind.
    let sha_line = get_small(&http, base, MANIFEST_SHA256, 4096)?;
    let manifest_bytes = get_small(&http, base, MANIFEST, 64 << 20)?;
    let shown = &base.shown;
    let manifest = Manifest::parse_checked(&manifest_bytes, &sha_line)
        .with_context(|| format!("the release at {shown} is not consistent"))?;
    kingmaker_coordinator::tables::release_game(&manifest, &format!("the release at {shown}"))?;
    if let Some(pin) = &args.manifest_sha256 {
        let got = &manifest_sha256_line(&manifest_bytes)[..64];
        if !got.eq_ignore_ascii_case(pin.trim()) {
            bail!("{shown}{MANIFEST} has sha256 {got}, not the {pin} you asked for: refusing this release");
        }
    }
    let choice = PartChoice {
        layers: args.layers.clone(),
        parts: args.parts.clone(),
        values_only: args.values_only,
    };
    let take = choice.files(&manifest)?;
    let release = Fetched {
        base,
        manifest: &manifest,
        manifest_bytes: &manifest_bytes,
        sha_line: &sha_line,
    };
    // Before the first byte is written here (the lock file is one): names, kinds and sizes.
    release.check_destination(&args.dir, false)?;
    let created = !args.dir.exists();
    let lock_path = args.dir.join(LOCK_FILE);
    let lock_was_here = lock_path.exists();
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let lock = match kingmaker_coordinator::lock::lock_fetch(&args.dir) {
        Ok(lock) => lock,
        Err(e) => {
            if created {
                // Empty unless another fetch has its lock file here: then it stays.
                let _ = std::fs::remove_dir(&args.dir);
            }
            return Err(e);
        }
    };
    // Again under the lock, the files already here by their sha256: another fetch may have
    // finished here since, and a file of the release's name must be the release's.
    let result = match release.check_destination(&args.dir, true) {
        Ok(here) => fetch_into(args, &http, &release, &choice, &take, &here, started),
        Err(e) => {
            if !lock_was_here {
                let _ = std::fs::remove_file(&lock_path);
            }
            Err(e)
        }
    };
    if result.is_err() && created {
        discard_if_empty(&args.dir);
    }
    drop(lock);
    result
}

/// The release being fetched: where it is and its manifest as served.
struct Fetched<'a> {
    base: &'a Base,
    manifest: &'a Manifest,
    manifest_bytes: &'a [u8],
    sha_line: &'a [u8],
}

impl Fetched<'_> {
    /// Refuse a `dir` that holds anything but this release (another release, whose manifest
    /// differs, a run directory, a run's `layers/`, any other file): the fetch would replace its
    /// files. A copy of the same release, whole or partial or interrupted, is added to or
    /// resumed: `dir` may hold the lock, this release's manifest files and parts list, the
    /// temporary files of their writing, files the manifest lists and `NAME.part` downloads of
    /// them. Without this release's manifest here (an interrupted fetch), a file of a listed
    /// name must have the listed size and, with `hash`, sha256: then it is in the set returned.
    fn check_destination(&self, dir: &Path, hash: bool) -> Result<HashSet<String>> {
        let refuse = |what: String| {
            anyhow::anyhow!(
                "{} holds {what}, not the release {} at {}: fetching there would mix the \
                 release with what is there, or replace it. Fetch into an empty or new \
                 directory, or remove {} first",
                dir.display(),
                self.manifest.name,
                self.base.shown,
                dir.display()
            )
        };
        let mut here = HashSet::new();
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(here),
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => bail!(
                "{} is a file, not a directory: fetch into an empty or new directory",
                dir.display()
            ),
            Err(e) => return Err(local("reading", dir, e)),
        };
        if dir.join(RUN_INFO).exists() {
            return Err(refuse("a run directory (it has run.json)".into()));
        }
        // Bounded and regular: a manifest.json here that is /dev/zero or a FIFO is refused.
        let read = |name: &str| {
            read_bounded_if_any(&dir.join(name), METADATA_CAP, &format!("a {name}"))
                .map_err(|e| refuse(format!("a {name} that cannot be read ({e})")))
        };
        let same = match read(MANIFEST)? {
            Some(here) if here != self.manifest_bytes => {
                let other = match serde_json::from_slice::<Manifest>(&here) {
                    Ok(m) if m.name == self.manifest.name => format!(
                        "another release of {} (packed {} by kingmaker {}; the one fetched was \
                         packed {})",
                        m.name,
                        m.provenance.packed_at,
                        m.provenance.kingmaker_version,
                        self.manifest.provenance.packed_at
                    ),
                    Ok(m) => format!("the release {} ({MANIFEST} names it)", m.name),
                    Err(_) => format!("a {MANIFEST} that is not this release's"),
                };
                return Err(refuse(other));
            }
            Some(_) => true,
            // Written last, after manifest.json: alone it is a fetch cut between the two.
            None => match read(MANIFEST_SHA256)? {
                Some(here) if here != self.sha_line => {
                    return Err(refuse(format!("the {MANIFEST_SHA256} of another release")))
                }
                _ => false,
            },
        };
        // Each file that is not this release's, and why when its name alone does not say.
        let mut foreign = Vec::new();
        let mut names: Vec<String> = entries
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()
            .map_err(|e| local("reading", dir, e))?;
        names.sort();
        let temporary = [MANIFEST, MANIFEST_SHA256, PARTS].map(|n| format!(".{n}.tmp"));
        let not_its = |name: &str| format!("{name} (not the release's file of that name)");
        for name in names {
            let path = dir.join(&name);
            let meta = std::fs::symlink_metadata(&path).map_err(|e| local("reading", &path, e))?;
            let why = if name == MANIFEST || name == MANIFEST_SHA256 {
                None
            } else if name == LOCK_FILE {
                // Written into by the lock: never through a link.
                (!meta.is_file()).then(|| format!("{name} (not a regular file)"))
            } else if name == PARTS {
                // Written just before the manifest: it must be this release's.
                read_parts(dir, self.manifest)
                    .err()
                    .map(|_| format!("{PARTS} (not this release's)"))
            } else if temporary.contains(&name) {
                (!meta.is_file()).then(|| format!("{name} (not a regular file)"))
            } else if let Some(f) = name
                .strip_suffix(".part")
                .and_then(|n| self.manifest.file(n))
            {
                // A download to resume: appended to, so never a link or a device.
                (!meta.is_file() || meta.len() > f.size)
                    .then(|| format!("{name} (not a download of {} in progress)", f.path))
            } else if let Some(f) = self.manifest.file(&name) {
                // Replaced by a rename, never written through, once the copy is this release's.
                if same {
                    None
                } else if !path.is_file() || path.metadata().map_or(true, |m| m.len() != f.size) {
                    Some(not_its(&name))
                } else if !hash {
                    None
                } else if file_sha256(&path)?.1 == f.sha256 {
                    here.insert(name);
                    None
                } else {
                    Some(not_its(&name))
                }
            } else {
                Some(name)
            };
            foreign.extend(why);
        }
        const LISTED: usize = 6;
        match foreign.len() {
            0 => Ok(here),
            1 => Err(refuse(foreign.remove(0))),
            n => {
                let more = match n.saturating_sub(LISTED) {
                    0 => String::new(),
                    more => format!(" and {more} more"),
                };
                foreign.truncate(LISTED);
                Err(refuse(format!(
                    "{n} files that are not this release's: {}{more}",
                    foreign.join(", ")
                )))
            }
        }
    }
}

/// Remove the directory a failed fetch created if it holds nothing but its lock file (nothing to
/// resume), while the lock is still held.
fn discard_if_empty(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let names: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    if names
        .iter()
        .all(|n| n == kingmaker_coordinator::lock::LOCK_FILE)
    {
        let _ = std::fs::remove_file(dir.join(kingmaker_coordinator::lock::LOCK_FILE));
        let _ = std::fs::remove_dir(dir);
    }
}

/// Download the files of `take` into `args.dir` (locked), then the parts list and the manifest.
fn fetch_into(
    args: &FetchArgs,
    http: &Http,
    release: &Fetched,
    choice: &PartChoice,
    take: &[String],
    here: &HashSet<String>,
    started: Instant,
) -> Result<()> {
    let (base, manifest) = (release.base, release.manifest);
    let parts = parts_after(&args.dir, manifest, choice, take)?;
    let files: Vec<&ManifestFile> = manifest
        .files
        .iter()
        .filter(|f| take.contains(&f.path))
        .collect();
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut hosts: Vec<String> = files.iter().filter_map(|f| host_of(f)).collect();
    hosts.sort();
    hosts.dedup();
    let elsewhere = match files.iter().filter(|f| f.url.is_some()).count() {
        0 => String::new(),
        n => format!(" ({n} of them at their URLs, on {})", hosts.join(", ")),
    };
    eprintln!(
        "fetching {} from {}: {} of its {} files{elsewhere}, {total} bytes",
        manifest.name,
        base.shown,
        files.len(),
        manifest.files.len()
    );
    let mut downloaded = 0u64;
    let mut ticker = Ticker::new("fetch", Unit::Bytes, total);
    // Files at URLs that failed, and the hosts that did not answer (their other files are not
    // asked for: each would wait out the same retries).
    let mut failed: Vec<String> = Vec::new();
    let mut down: Vec<String> = Vec::new();
    for f in &files {
        ticker.step(f.path.clone());
        let host = host_of(f);
        if let Some(h) = host.as_ref().filter(|h| down.contains(h)) {
            ticker.skip(f.size);
            failed.push(format!(
                "{}: not asked for: {h} did not answer",
                whose(manifest, f)
            ));
            continue;
        }
        match fetch_file(http, base, f, &args.dir, args.retries, here, &mut ticker) {
            Ok(n) => downloaded += n,
            Err(e) => match host {
                // A file beside the manifest: the release's own server failed, as ever.
                None => return Err(e),
                Some(h) => {
                    if e.downcast_ref::<Unanswered>().is_some() {
                        down.push(h.clone());
                    }
                    failed.push(format!("{}, at {h}: {e:#}", whose(manifest, f)));
                }
            },
        }
    }
    ticker.finish();
    if !failed.is_empty() {
        let kept = files.len() - failed.len();
        bail!(
            "{} of the {} files to fetch could not be fetched:\n  {}\nthe other {kept} are here, \
             checked, and kept, with any download cut off (NAME.part): run the same fetch again \
             {}to resume",
            failed.len(),
            files.len(),
            failed.join("\n  "),
            if down.is_empty() {
                String::new()
            } else {
                format!(
                    "once {} answer{} ",
                    down.join(", "),
                    if down.len() == 1 { "s" } else { "" }
                )
            }
        );
    }
    // The parts list before the manifest, which marks the copy complete.
    match &parts {
        Some(p) => write_parts(&args.dir, p)?,
        None => match std::fs::remove_file(args.dir.join(PARTS)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(local("removing", &args.dir.join(PARTS), e))
            }
            _ => {}
        },
    }
    for (name, bytes) in [
        (MANIFEST, release.manifest_bytes),
        (MANIFEST_SHA256, release.sha_line),
    ] {
        write_file_atomically(&args.dir, name, bytes).map_err(|e| match e {
            FormatError::Io { path, error } => local("writing", Path::new(&path), error),
            e => e.into(),
        })?;
    }
    println!(
        "fetched {} into {} ({} files, {downloaded} bytes downloaded in {:.1}s); every sha256 matches the manifest",
        manifest.name,
        args.dir.display(),
        files.len() + 2,
        started.elapsed().as_secs_f64()
    );
    if let Some(p) = &parts {
        println!(
            "a partial copy: {} of the release's {} files, listed in {PARTS}",
            p.files.len(),
            manifest.files.len()
        );
    }
    Ok(())
}

/// The parts list the copy in `dir` will have once the files of `take` are in: None for a whole
/// copy (every file taken, or taken already: the same release there whole), else `take` and
/// the parts of an earlier partial fetch of the same release.
fn parts_after(
    dir: &Path,
    manifest: &Manifest,
    choice: &PartChoice,
    take: &[String],
) -> Result<Option<Parts>> {
    if choice.is_whole() {
        return Ok(None);
    }
    if !read_manifest(dir).is_ok_and(|m| &m == manifest) {
        return Ok(Some(Parts::new(take.to_vec())));
    }
    Ok(read_parts(dir, manifest)?.map(|earlier| {
        let all = earlier
            .files
            .into_iter()
            .chain(take.iter().cloned())
            .collect();
        Parts::new(order_as_listed(manifest, all))
    }))
}

/// Where a file at a URL lies: its host and port, as people name a server.
fn host_of(f: &ManifestFile) -> Option<String> {
    let url = url::Url::parse(f.url.as_deref()?).ok();
    let host = url
        .as_ref()
        .and_then(|u| u.host_str().map(|h| (h, u.port_or_known_default())));
    Some(match host {
        Some((h, Some(port))) => format!("{h}:{port}"),
        Some((h, None)) => h.to_string(),
        // `Manifest::check` refused such a URL; named as it is rather than dropped.
        None => redact_text(f.url.as_deref().unwrap_or_default()),
    })
}

/// File `f` with what it holds: `solo.part-0001.kmt (part solo.part-0001 of layer solo)`.
fn whose(manifest: &Manifest, f: &ManifestFile) -> String {
    for l in &manifest.layers {
        for p in l.pieces() {
            if p.file == f.path || p.values_file == Some(f.path.as_str()) {
                return if p.name == l.name {
                    format!("{} (layer {})", f.path, l.name)
                } else {
                    format!("{} (part {} of layer {})", f.path, p.name, l.name)
                };
            }
        }
    }
    f.path.clone()
}

/// The mark of a file whose server stopped answering (every retry spent on a connection that
/// failed or fell silent), so that its host's other files are not asked for.
#[derive(Debug)]
struct Unanswered(String);

impl std::fmt::Display for Unanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unanswered {}

/// Redirects followed for one request, at most (ureq's default).
const MAX_REDIRECTS: u32 = 10;

/// The HTTP client and its timeout.
struct Http {
    agent: ureq::Agent,
    /// `--timeout`, in seconds.
    timeout: u64,
}

impl Http {
    fn new(timeout: u64) -> Http {
        let t = Some(Duration::from_secs(timeout));
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_connect(t)
            .timeout_recv_response(t)
            // Each read from the connection, the body's included: no progress for T seconds is
            // an error, however long the whole body takes.
            .timeout_per_read(t)
            // Redirects are followed by `get`, which keeps to http(s).
            .max_redirects(0)
            .user_agent(format!("kingmaker/{}", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        Http { agent, timeout }
    }

    /// GET `url` (from byte `from` on, with a Range header, when `from` > 0), following up to
    /// [`MAX_REDIRECTS`] redirects to http:// and https:// URLs. A redirect anywhere else is
    /// refused as what it is (left to ureq, `file:///x` would be asked of the same server as a
    /// relative path, and answered 404).
    fn get(&self, link: &Link, from: u64) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let url = &link.shown;
        let mut current = link.real.clone();
        for _ in 0..=MAX_REDIRECTS {
            let mut req = self.agent.get(&current);
            if from > 0 {
                req = req.header("Range", format!("bytes={from}-"));
            }
            let resp = match req.call() {
                Ok(r) => r,
                Err(ureq::Error::Io(e)) => {
                    return Err(Failure::Retry(format!("connection failed: {e}")))
                }
                Err(e @ ureq::Error::Timeout(_)) => return Err(Failure::Retry(self.describe(e))),
                Err(e) => return Err(fatal(format!("{url}: {e}"))),
            };
            let location = resp
                .headers()
                .get("location")
                .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string());
            let Some(location) =
                location.filter(|_| matches!(resp.status().as_u16(), 301 | 302 | 303 | 307 | 308))
            else {
                // Not a redirect (or one without a Location, reported as its status).
                return Ok(resp);
            };
            let next = url::Url::parse(&current)
                .and_then(|u| u.join(&location))
                .map_err(|e| {
                    fatal(format!(
                        "{url}: redirected to {:?}, which is not a URL ({e})",
                        redact_text(&location)
                    ))
                })?;
            if !matches!(next.scheme(), "http" | "https") {
                return Err(fatal(format!(
                    "{url}: redirected to {}, which fetch does not follow (only http:// and \
                     https:// URLs are)",
                    redacted(&next)
                )));
            }
            current = next.into();
        }
        Err(fatal(format!(
            "{url}: more than {MAX_REDIRECTS} redirects: is the server misconfigured?"
        )))
    }

    /// What went wrong, in words: timeouts say which wait ran out.
    fn describe(&self, e: ureq::Error) -> String {
        let t = self.timeout;
        match e {
            ureq::Error::Timeout(ureq::Timeout::PerRead) => {
                format!("the server stopped sending for {t} s")
            }
            ureq::Error::Timeout(ureq::Timeout::Connect) => format!("no connection within {t} s"),
            ureq::Error::Timeout(what) => format!("no answer within {t} s (timeout: {what})"),
            e => e.to_string(),
        }
    }
}

/// A small file, whole.
fn get_small(http: &Http, base: &Base, name: &str, limit: u64) -> Result<Vec<u8>> {
    let link = base.file(name);
    let url = &link.shown;
    let mut resp = http.get(&link, 0).map_err(|e| match e {
        Failure::Retry(msg) => anyhow::anyhow!("{url}: {msg}"),
        Failure::Fatal(e) => e,
    })?;
    let status = resp.status().as_u16();
    if status == 404 {
        bail!(
            "{url}: 404 Not Found: is {} the URL of a Kingmaker release directory?",
            base.shown
        );
    }
    if status != 200 {
        bail!("{url}: the server answered HTTP {status}");
    }
    let mut out = Vec::new();
    let read = resp
        .body_mut()
        .with_config()
        .limit(limit)
        .reader()
        .read_to_end(&mut out);
    if let Err(e) = read {
        match ureq::Error::from(e) {
            e @ ureq::Error::Timeout(_) => bail!("{url}: {}; run fetch again", http.describe(e)),
            e => {
                return Err(anyhow::Error::new(e)).with_context(|| {
                    format!("{url}: the download broke off (truncated); run fetch again")
                })
            }
        }
    }
    Ok(out)
}

/// Download one file into `dir` (resuming `NAME.part`); the bytes actually transferred.
/// `here`: the files already checked here by their sha256.
fn fetch_file(
    http: &Http,
    base: &Base,
    f: &ManifestFile,
    dir: &Path,
    retries: u32,
    here: &HashSet<String>,
    ticker: &mut Ticker,
) -> Result<u64> {
    let target = dir.join(&f.path);
    let part = dir.join(format!("{}.part", f.path));
    // A regular file only: hashing a FIFO would never end.
    let whole_here = || {
        target.is_file() && file_sha256(&target).is_ok_and(|(n, s)| n == f.size && s == f.sha256)
    };
    if here.contains(&f.path) || whole_here() {
        eprintln!("  {}: already here", f.path);
        ticker.skip(f.size);
        return Ok(0);
    }
    // Where it lies: its own URL (format 3), else beside the manifest.
    let link = match &f.url {
        Some(u) => Link {
            real: u.clone(),
            shown: redact_text(u),
        },
        None => base.file(&f.path),
    };
    let url = &link.shown;
    let mut transferred = 0u64;
    let mut attempt = 0;
    // Bytes of a `.part` left by an earlier run: not checked against the server's copy until
    // the file is whole, and possibly damaged here. A mismatch then downloads the file afresh
    // before anyone blames the server.
    let mut earlier_part = std::fs::metadata(&part).is_ok_and(|m| m.len() > 0);
    ticker.skip(std::fs::metadata(&part).map_or(0, |m| m.len().min(f.size)));
    loop {
        let have = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
        if have > f.size {
            // Longer than the manifest says: a different file, or a server sending too much.
            std::fs::remove_file(&part).with_context(|| format!("removing {}", part.display()))?;
            if attempt >= retries {
                bail!(
                    "{url}: the server sends more than the {} bytes the manifest lists",
                    f.size
                );
            }
            attempt += 1;
            continue;
        }
        let outcome = if have == f.size {
            Ok(())
        } else {
            download(http, &link, &part, have, f.size, &mut transferred, ticker)
        };
        match outcome {
            Ok(()) => {}
            Err(Failure::Fatal(e)) => return Err(e),
            Err(Failure::Retry(msg)) => {
                let now = std::fs::metadata(&part).map(|m| m.len()).unwrap_or(0);
                if attempt >= retries {
                    // Nothing came: no `.part` to speak of (a host down, typically).
                    let kept = if now == 0 {
                        "nothing of it was downloaded".to_string()
                    } else {
                        format!(
                            "{now} of {} bytes are kept in {} (truncated download)",
                            f.size,
                            part.display()
                        )
                    };
                    return Err(Unanswered(format!(
                        "{url}: {msg}; {kept}: run the same fetch again to resume"
                    ))
                    .into());
                }
                attempt += 1;
                eprintln!(
                    "  {}: {msg} at byte {now} of {}; resuming (retry {attempt} of {retries})",
                    f.path, f.size
                );
                std::thread::sleep(Duration::from_millis(200 * attempt as u64));
                continue;
            }
        }
        let (size, sha) = file_sha256(&part)?;
        if size != f.size {
            // The server's copy is shorter than the manifest says and it ended cleanly.
            std::fs::remove_file(&part).ok();
            bail!("{url}: the server sent {size} bytes, the manifest lists {} (truncated on the server?)", f.size);
        }
        if sha != f.sha256 && earlier_part {
            std::fs::remove_file(&part).with_context(|| format!("removing {}", part.display()))?;
            earlier_part = false;
            eprintln!(
                "  {}: sha256 mismatch in the file resumed from {} (kept from an earlier fetch, so \
                 the fault may be local): downloading it afresh",
                f.path,
                part.display()
            );
            continue;
        }
        if sha != f.sha256 {
            std::fs::remove_file(&part).ok();
            bail!(
                "{url}: sha256 mismatch: the download is {sha}, the manifest says {}: the server's copy is \
                 corrupt; nothing was kept",
                f.sha256
            );
        }
        File::open(&part)
            .and_then(|p| p.sync_all())
            .map_err(|e| local("syncing", &part, e))?;
        std::fs::rename(&part, &target)
            .with_context(|| format!("renaming {} into place", part.display()))?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        eprintln!("  {}: {} bytes, sha256 ok", f.path, f.size);
        return Ok(transferred);
    }
}

/// Why one GET did not complete the file.
enum Failure {
    /// Worth resuming after: the connection dropped, the body ended early.
    Retry(String),
    /// Retrying cannot fix it: 404, an unexpected status, a local I/O error.
    Fatal(anyhow::Error),
}

fn fatal(msg: String) -> Failure {
    Failure::Fatal(anyhow::anyhow!(msg))
}

/// A local I/O error while `doing` (e.g. "writing") `path`: names the file, and says so when the
/// disk is full (or a quota or the file-size limit is reached).
fn local(doing: &str, path: &Path, e: std::io::Error) -> anyhow::Error {
    let full = matches!(
        e.raw_os_error(),
        Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG)
    );
    let hint = if full {
        ": out of room (the disk is full, or a quota or file-size limit is reached); make room \
         and run the same fetch again: what is downloaded is kept, and resumed"
    } else {
        ""
    };
    anyhow::anyhow!("{doing} {}: {e}{hint}", path.display())
}

/// One GET of `url` from byte `have` on, appended to `part`.
fn download(
    http: &Http,
    link: &Link,
    part: &Path,
    have: u64,
    size: u64,
    transferred: &mut u64,
    ticker: &mut Ticker,
) -> Result<(), Failure> {
    let url = &link.shown;
    let mut resp = http.get(link, have)?;
    let status = resp.status().as_u16();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    // The size of the server's copy, where the answer says it: `Content-Range: bytes A-B/TOTAL`
    // (206, 416) or the Content-Length of a whole file (200).
    let range = header("content-range");
    let server_total = match status {
        200 => header("content-length").trim().parse::<u64>().ok(),
        _ => range
            .rsplit_once('/')
            .and_then(|(_, t)| t.trim().parse::<u64>().ok()),
    };
    let wrong_size = |total: u64| {
        fatal(format!(
            "{url}: the server's copy is {total} bytes, the manifest lists {size}: {} on the \
             server? (nothing to resume: ask whoever publishes the release)",
            if total < size {
                "truncated"
            } else {
                "a different file"
            }
        ))
    };
    if let Some(total) = server_total.filter(|&t| t != size && matches!(status, 200 | 206 | 416)) {
        return Err(wrong_size(total));
    }
    // Where this answer's bytes go in the file.
    let (mut file, from) = match status {
        206 if have > 0 => {
            if !range.starts_with(&format!("bytes {have}-")) {
                return Err(fatal(format!(
                    "{url}: asked for bytes {have}- and got Content-Range {range:?}"
                )));
            }
            let file = OpenOptions::new().append(true).open(part);
            (
                file.map_err(|e| Failure::Fatal(local("opening", part, e)))?,
                have,
            )
        }
        // A full answer (the server ignores Range, or this is the first request): start over.
        200 => {
            if have > 0 {
                eprintln!(
                    "  {url}: the server ignores range requests and sends the whole file: \
                     downloading it from the start"
                );
            }
            let file = File::create(part);
            (
                file.map_err(|e| Failure::Fatal(local("creating", part, e)))?,
                0,
            )
        }
        404 => {
            return Err(fatal(format!(
                "{url}: 404 Not Found: the server does not have this file of the release"
            )))
        }
        // We asked for bytes `have`.. of a file the manifest says has `size` > `have`: the
        // server's copy is shorter (it did not say how long: the case of a full answer is above).
        416 => {
            return Err(fatal(format!(
                "{url}: the server has no bytes from {have} on of a file the manifest lists as \
                 {size} bytes: its copy is shorter (truncated on the server?); the {have} bytes \
                 downloaded are kept in {}",
                part.display()
            )))
        }
        s => return Err(fatal(format!("{url}: the server answered HTTP {s}"))),
    };
    let mut reader = resp
        .body_mut()
        .with_config()
        .limit(size - from + 1)
        .reader();
    let io = |doing: &'static str| move |e| Failure::Fatal(local(doing, part, e));
    let mut buf = vec![0u8; 1 << 16];
    let result = loop {
        match reader.read(&mut buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                file.write_all(&buf[..n]).map_err(io("writing"))?;
                *transferred += n as u64;
                ticker.add(n as u64);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // More than the manifest lists (the body limit): the next attempt drops the file.
            Err(_) if file.metadata().map_err(io("reading"))?.len() > size => {
                break Err(Failure::Retry(format!(
                    "the server sends more than the {size} bytes the manifest lists"
                )))
            }
            Err(e) => {
                break Err(Failure::Retry(match ureq::Error::from(e) {
                    ureq::Error::Io(e) => format!("connection lost ({e})"),
                    e @ ureq::Error::Timeout(_) => http.describe(e),
                    e => format!("connection lost ({e})"),
                }))
            }
        }
    };
    file.sync_all().map_err(io("syncing"))?;
    result?;
    let now = file.metadata().map_err(io("reading"))?.len();
    if now < size {
        return Err(Failure::Retry("the response ended early".into()));
    }
    Ok(())
}
