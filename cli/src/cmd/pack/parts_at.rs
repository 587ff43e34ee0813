//! `pack --parts-at URL`: a layer kept on its workers listed in the release as parts that lie
//! where their hosts packed and serve them (`kingmaker pack-part`, `kingmaker serve`), from each
//! part's record, without its bytes. The record is tied to the part the build hashed by the
//! source file's sha256 in the run's list of kept parts (docs/format.md, "Publishing parts").

use anyhow::{bail, Context, Result};
use kingmaker_tablefmt::kept::{KeptLayer, KeptPart};
use kingmaker_tablefmt::layer::LayerIdentity;
use kingmaker_tablefmt::release::manifest::{ManifestFile, ManifestLayer, ManifestPart};
use kingmaker_tablefmt::release::piece::PackedPart;
use std::io::Read;
use std::time::Duration;

/// The largest record read.
const RECORD_CAP: u64 = 1 << 20;
/// How long a host has to answer.
const TIMEOUT: Duration = Duration::from_secs(20);

/// Where the parts of a worker lie: `template` with `{host}` replaced by the host of the worker's
/// address (`HOST:PORT` as the run names it).
pub fn base_url(template: &str, worker: &str) -> Result<String> {
    let host = worker
        .rsplit_once(':')
        .map_or(worker, |(h, _)| h)
        .trim_matches(['[', ']']);
    let url = template.replace("{host}", host);
    if !url.ends_with('/') {
        bail!("--parts-at {template}: must end with '/' (the files' names are appended)");
    }
    Ok(url)
}

/// The layer `kept` as parts at their URLs, and the files it lists: `(layer, files)`. Each
/// part's record is read from `<base><part>.json` and must describe that part of this game,
/// packed from the very file the build kept (its size and sha256).
pub fn layer_in_parts(
    kept: &KeptLayer,
    identity: &LayerIdentity,
    (coalition, objective): (u8, u64),
    template: &str,
) -> Result<(ManifestLayer, Vec<ManifestFile>)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into();
    let mut parts = Vec::new();
    let mut files = Vec::new();
    let mut block_states = None;
    let mut blocks = 0;
    for part in &kept.parts {
        let name = part_name(part)?;
        let base = base_url(template, &part.worker)?;
        let record = read_record(&agent, &base, &name)
            .with_context(|| format!("part {name} of worker {}", part.worker))?;
        check_record(&record, part, &name, identity)?;
        if *block_states.get_or_insert(record.block_states) != record.block_states {
            bail!(
                "part {name} was packed with {} states a block, the parts before it with {}: \
                 pack every part with the same --block-states",
                record.block_states,
                block_states.unwrap_or(0)
            );
        }
        blocks += part.states.div_ceil(record.block_states.max(1) as u64);
        parts.push(ManifestPart {
            name: name.clone(),
            first: part.first,
            states: part.states,
            file: record.file.path.clone(),
            values_file: record.values_file.path.clone(),
            counts: record.counts,
            max_depth: record.max_depth,
        });
        for mut f in [record.file, record.values_file] {
            f.url = Some(format!("{base}{}", f.path));
            files.push(f);
        }
    }
    let layer = ManifestLayer {
        name: kept.layer.clone(),
        coalition,
        objective,
        file: String::new(),
        values_file: None,
        states: kept.summary.states,
        block_states: block_states.unwrap_or(0),
        blocks,
        counts: kept.summary.counts,
        digest: kept.summary.digest.clone(),
        max_depth: kept.summary.max_depth,
        parts,
    };
    Ok((layer, files))
}

/// The part's name in its files' records: its file name without `.kmt`.
fn part_name(part: &KeptPart) -> Result<String> {
    let file = part.file.rsplit('/').next().unwrap_or(&part.file);
    match file.strip_suffix(".kmt") {
        Some(stem) if stem.contains(".part-") => Ok(stem.to_string()),
        _ => bail!(
            "the list of kept parts names {}, not a part file",
            part.file
        ),
    }
}

fn read_record(agent: &ureq::Agent, base: &str, name: &str) -> Result<PackedPart> {
    let url = format!("{base}{name}.json");
    let mut resp = agent.get(&url).call().map_err(|e| {
        anyhow::anyhow!(
            "{url}: {e}: is that host up and serving its packed parts (`kingmaker pack-part`, \
             then `kingmaker serve`)?"
        )
    })?;
    match resp.status().as_u16() {
        200 => {}
        404 => bail!(
            "{url}: 404 Not Found: the host serves no record of {name}; pack it there \
             (`kingmaker pack-part`) and serve the directory"
        ),
        s => bail!("{url}: the server answered HTTP {s}"),
    }
    let mut bytes = Vec::new();
    resp.body_mut()
        .with_config()
        .limit(RECORD_CAP)
        .reader()
        .read_to_end(&mut bytes)
        .with_context(|| format!("{url}: reading the record"))?;
    Ok(PackedPart::parse(&bytes, &url)?)
}

/// The record must be of this part: its name, game, rows, counts and depth, and packed from the
/// file the build kept.
fn check_record(
    record: &PackedPart,
    part: &KeptPart,
    name: &str,
    identity: &LayerIdentity,
) -> Result<()> {
    let mut wrong = Vec::new();
    if record.name != name {
        wrong.push(format!("it is the record of {}", record.name));
    }
    if record.game != identity.game {
        wrong.push(format!(
            "its game is {}, the run's {}",
            record.game, identity.game
        ));
    }
    if record.states != part.states {
        wrong.push(format!("{} rows, the part {}", record.states, part.states));
    }
    if record.counts != part.counts || record.max_depth != part.max_depth {
        wrong.push("its counts or largest depth are not the part's".into());
    }
    if record.source.size != part.size || record.source.sha256 != part.sha256 {
        wrong.push(format!(
            "it was packed from a file of sha256 {}, the build kept {}",
            record.source.sha256, part.sha256
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        bail!(
            "the record of part {name} does not describe the part the build kept: {}; pack \
             the part again on its host",
            wrong.join("; ")
        )
    }
}
