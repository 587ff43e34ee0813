//! What an open layer keeps for its expansion when it is kept on the workers: the zone plan, and
//! the pieces routed here, back to back in one file per sending worker.

use kingmaker_kernel::memory::start_writeback;
use kingmaker_proto::v1 as pb;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::PathBuf;
use tonic::Status;

/// What an open layer keeps for its expansion: the zones, their owners, the pieces routed here.
#[derive(Default)]
pub(super) struct KeptState {
    pub(super) plan: Option<ZonePlan>,
    /// `layer_dir/routed/`: one file per sending worker, its pieces back to back.
    pub(super) dir: PathBuf,
    /// Per sender: its file and the bytes written since its writeback was last started.
    pub(super) files: HashMap<u32, (File, u64)>,
    pub(super) pieces: Vec<Piece>,
}

/// Bytes appended to a routed file between two starts of its writeback: under a memory cgroup,
/// which counts the page cache, dirty pages that pile up get the worker killed.
const WRITEBACK_BYTES: u64 = 4 << 20;

/// The zones of the full table, the worker owning each, and the reduced states routed at a time.
pub(super) struct ZonePlan {
    pub(super) zones: Vec<Range<u64>>,
    pub(super) owners: Vec<usize>,
    pub(super) run_states: u64,
}

/// One piece routed here: `states` states of zone `zone`, the `seq`-th piece `from` sent, stored
/// at `offset .. offset + len` of `from`'s file (zstd of the values, then the depths).
#[derive(Clone, Copy)]
pub(super) struct Piece {
    pub(super) zone: u32,
    pub(super) from: u32,
    pub(super) seq: u64,
    pub(super) offset: u64,
    pub(super) len: u64,
    pub(super) states: u64,
}

/// An internal error: `what` failed with `e`.
pub(super) fn internal(what: &str, e: impl std::fmt::Display) -> Status {
    Status::internal(format!("{what}: {e}"))
}

impl KeptState {
    /// Forget what an earlier attempt routed and get ready for `plan`.
    pub(super) fn prepare(&mut self, dir: PathBuf, plan: ZonePlan) -> Result<(), Status> {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| internal(&format!("creating {}", dir.display()), e))?;
        *self = KeptState {
            plan: Some(plan),
            dir,
            files: HashMap::new(),
            pieces: Vec::new(),
        };
        Ok(())
    }

    /// Append a piece routed here by worker `from` to its file and note where it lies.
    pub(super) fn store(&mut self, chunk: &pb::RoutedChunk, from: u32) -> Result<(), Status> {
        let plan = self.plan.as_ref().ok_or_else(|| {
            Status::failed_precondition("routed states arrived before the expansion was prepared")
        })?;
        if chunk.zone as usize >= plan.zones.len() {
            return Err(Status::invalid_argument(format!(
                "routed states for zone {} of {}",
                chunk.zone,
                plan.zones.len()
            )));
        }
        let path = self.file_of(from);
        let (file, dirty) = match self.files.entry(from) {
            std::collections::hash_map::Entry::Occupied(f) => f.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => v.insert((
                File::options()
                    .create(true)
                    .truncate(true)
                    .read(true)
                    .write(true)
                    .open(&path)
                    .map_err(|e| internal(&format!("opening {}", path.display()), e))?,
                0,
            )),
        };
        let offset = file
            .seek(SeekFrom::End(0))
            .and_then(|at| file.write_all(&chunk.data).map(|_| at))
            .map_err(|e| internal(&format!("writing {}", path.display()), e))?;
        *dirty += chunk.data.len() as u64;
        if *dirty >= WRITEBACK_BYTES {
            start_writeback(file);
            *dirty = 0;
        }
        self.pieces.push(Piece {
            zone: chunk.zone,
            from,
            seq: chunk.seq,
            offset,
            len: chunk.data.len() as u64,
            states: chunk.states,
        });
        Ok(())
    }
    /// The file of the pieces worker `from` routed here.
    pub(super) fn file_of(&self, from: u32) -> PathBuf {
        self.dir.join(format!("from-{from:04}"))
    }
}
