//! Checkpoints of the reachable search: where and how often, the request to stop, and saving
//! and restoring the bitmaps with the caller's counts (the files: `kingmaker_tablefmt::reach`).

use super::{Bitmap, Level};
use crate::KernelError;
use kingmaker_tablefmt::checkpoint::ChunkRef;
use kingmaker_tablefmt::reach::{self as format, ReachManifest};
use kingmaker_tablefmt::FormatError;
use rayon::prelude::*;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where a search keeps its checkpoint, how often it writes one, and a request that asks it to
/// write one at the end of the running level and return.
#[derive(Clone, Debug)]
pub struct ReachCheckpoints {
    /// The checkpoint's directory (created when first needed, removed when the search is done).
    pub dir: PathBuf,
    /// At most this long between checkpoints (checked at the end of each level).
    pub every: Duration,
    /// Made by a signal handler, say, to stop the search at the end of the running level.
    pub stop: Option<Arc<StopRequest>>,
    /// The game searched, as its run names it (`run.json`'s `spec`): every checkpoint names it,
    /// and one of another game is refused.
    pub game: serde_json::Value,
}

/// A request to stop a search at the end of its running level. It is *armed* only while a
/// checkpointed search runs: before that (and after) there is nothing a stop would save, so a
/// signal handler that finds it unarmed can end the process at once. Atomics only, so a signal
/// handler may use it.
#[derive(Debug, Default)]
pub struct StopRequest {
    requested: AtomicBool,
    armed: AtomicBool,
}

impl StopRequest {
    /// Ask the search to stop; true if a stop was asked before.
    pub fn request(&self) -> bool {
        self.requested.swap(true, Ordering::SeqCst)
    }

    /// Whether a search is running that will honour the request.
    pub fn armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst)
    }

    pub(super) fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }
}

/// Arms a [`StopRequest`] for as long as it lives.
pub(super) struct Armed<'a>(Option<&'a StopRequest>);

impl<'a> Armed<'a> {
    pub(super) fn new(stop: Option<&'a StopRequest>) -> Self {
        if let Some(s) = stop {
            s.armed.store(true, Ordering::SeqCst);
        }
        Armed(stop)
    }
}

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.0 {
            s.armed.store(false, Ordering::SeqCst);
        }
    }
}

pub(super) fn cp_path(checkpoints: Option<&ReachCheckpoints>) -> String {
    checkpoints.map_or_else(String::new, |cp| {
        cp.dir.join(format::MANIFEST).display().to_string()
    })
}

/// A search between two levels: what a checkpoint saves.
pub(super) struct Search<'a> {
    pub(super) purpose: &'a str,
    pub(super) size: u64,
    pub(super) start: u64,
    /// The level `level` holds, the next to expand.
    pub(super) depth: u32,
    pub(super) per_depth: &'a [u64],
    pub(super) seen: &'a Bitmap,
    pub(super) level: &'a Bitmap,
}

/// Write a checkpoint of `search` (chunks first, in parallel; then the manifest; then the files
/// of the checkpoint before that no longer named).
pub(super) fn save(
    cp: &ReachCheckpoints,
    search: &Search,
    counted: serde_json::Value,
    previous: Option<&ReachManifest>,
) -> Result<ReachManifest, KernelError> {
    std::fs::create_dir_all(&cp.dir).map_err(|e| KernelError::io(&cp.dir, e))?;
    let bitmap = |name: &str, bits: &Bitmap, before: Option<&Vec<_>>| {
        (0..format::chunks(search.size))
            .into_par_iter()
            .map(|c| {
                let bytes = bits.chunk_bytes(c);
                let prior = before.and_then(|b| b.get(c));
                format::write_bitmap_chunk(&cp.dir, name, c, search.depth, &bytes, prior)
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let manifest = ReachManifest {
        version: format::REACH_VERSION,
        purpose: search.purpose.to_string(),
        game: cp.game.clone(),
        states: search.size,
        start: search.start,
        depth: search.depth,
        per_depth: search.per_depth.to_vec(),
        counted,
        seen: bitmap("seen", search.seen, previous.map(|p| &p.seen))?,
        level: bitmap("level", search.level, previous.map(|p| &p.level))?,
    };
    format::write_manifest(&cp.dir, &manifest)?;
    format::remove_unlisted(&cp.dir, &manifest)?;
    Ok(manifest)
}

/// The checkpoint in `cp.dir`, checked (every chunk) and loaded, if there is one.
pub(super) fn restore(
    cp: &ReachCheckpoints,
    purpose: &str,
    size: u64,
    start: u64,
) -> Result<Option<(ReachManifest, Bitmap, Level)>, KernelError> {
    let Some(m) = format::read_manifest(&cp.dir)? else {
        return Ok(None);
    };
    if !m.game.is_null() && m.game != cp.game {
        return Err(FormatError::Corrupt(format!(
            "{} is the checkpoint of a search of {}, not of {}: remove {} to search from the \
             start",
            cp.dir.join(format::MANIFEST).display(),
            m.game,
            cp.game,
            cp.dir.display()
        ))
        .into());
    }
    if m.purpose != purpose || m.states != size || m.start != start {
        return Err(FormatError::Corrupt(format!(
            "{} is the checkpoint of another search ({:?} from state {} of {}), not of this one \
             ({purpose:?} from state {start} of {size}); remove {} to search from the start",
            cp.dir.join(format::MANIFEST).display(),
            m.purpose,
            m.start,
            m.states,
            cp.dir.display()
        ))
        .into());
    }
    let (seen, level) = (Bitmap::new(size), Level::new(size));
    let load = |name: &str, bits: &Bitmap, refs: &[ChunkRef]| {
        refs.par_iter().enumerate().try_for_each(|(c, r)| {
            let bytes = format::read_bitmap_chunk(&cp.dir, name, c, r)?;
            if bytes.len() != 8 * bits.file_words(c).len() {
                return Err(FormatError::Corrupt(format!(
                    "{}: chunk {c} of the {name} bitmap holds {} bytes, {} expected",
                    cp.dir.join(&r.file).display(),
                    bytes.len(),
                    8 * bits.file_words(c).len()
                )));
            }
            bits.load_chunk(c, &bytes);
            Ok(())
        })
    };
    load("seen", &seen, &m.seen)?;
    load("level", &level.bits, &m.level)?;
    level.find_busy_chunks();
    Ok(Some((m, seen, level)))
}
