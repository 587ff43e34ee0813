//! Replicas of checkpoints on the ring successor: worker `me`'s go to worker `(me + 1) % n`.
//! 1. A worker that cannot restore from its own disk fetches what it lacks there: a lost host
//!    costs only the work since the last checkpoint (docs/format.md, "Replicas").
//! 2. Not on the coordinator, which cannot hold a copy of every worker's cells past one machine's
//!    size: a ring spreads copies and traffic over the workers and survives losing any one host.

use super::layer::{check_name, OpenLayer};
use super::{ChunkStream, WorkerService};
use kingmaker_kernel::KernelError;
use kingmaker_proto::v1 as pb;
use kingmaker_rpc::convert::Convert;
use kingmaker_rpc::status::{caused_by_peer, status_message};
use kingmaker_tablefmt::checkpoint::{
    check_frame, is_manifest_of, manifest_name, parse_chunk_name, parse_manifest, replica_dir,
    WorkerCheckpoint,
};
use kingmaker_tablefmt::fsio::open_regular_with;
use kingmaker_tablefmt::wave_log;
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tonic::{Request, Response, Status, Streaming};

/// Bytes of file data per message.
const PIECE: usize = 1 << 20;

/// What a replica file is, from its name; `None` for a name that is none of them (which could
/// leave the replica directory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Chunk,
    WaveLog,
    Manifest,
}

fn kind_of(owner: usize, layer: &str, name: &str) -> Option<Kind> {
    if parse_chunk_name(name).is_some() {
        Some(Kind::Chunk)
    } else if wave_log::parse_file_name(name).is_some() {
        Some(Kind::WaveLog)
    } else if is_manifest_of(owner, name)
        && name.starts_with(&format!("worker-{owner}.{layer}.w"))
        && !name.contains('/')
    {
        Some(Kind::Manifest)
    } else {
        None
    }
}

fn checked_kind(owner: usize, layer: &str, name: &str) -> Result<Kind, Status> {
    kind_of(owner, layer, name).ok_or_else(|| {
        Status::invalid_argument(format!(
            "{name:?} is not a checkpoint file of worker {owner}'s layer {layer}"
        ))
    })
}

fn io_status(path: &Path, e: std::io::Error) -> Status {
    Status::internal(format!("{}: {e}", path.display()))
}

/// Bytes one checkpoint put on the wire to its replica.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Replicated {
    pub files: u64,
    pub bytes: u64,
}

impl OpenLayer {
    /// The ring successor (the holder of this worker's replica), if the run has another worker.
    fn successor(&self) -> Option<(usize, &(String, kingmaker_rpc::connect::Client))> {
        let n = self.peers.len();
        let me = self.engine.me();
        (n > 1).then(|| ((me + 1) % n, &self.peers[(me + 1) % n]))
    }

    /// Send checkpoint `cp` (just saved in `checkpoints`) to the successor: the chunk files it
    /// lacks, the new tail of every wave log, then the manifest, which the successor stores only
    /// once everything it names checks out. A replica the successor cannot make whole from the
    /// tails is sent again in full.
    pub(super) async fn replicate(
        self: &Arc<Self>,
        cp: &WorkerCheckpoint,
    ) -> Result<Replicated, Status> {
        let Some((to, (addr, client))) = self.successor() else {
            return Ok(Replicated::default());
        };
        let mut client = client.clone();
        let owner = self.engine.me() as u32;
        let mut names: Vec<String> = Vec::new();
        for s in &cp.shards {
            names.extend(s.cells.iter().map(|r| r.file.clone()));
            names.push(wave_log::file_name(s.shard));
        }
        // The successor's failure is not this worker's: the coordinator is told whose it is.
        let me = owner as usize;
        let blame = |e: &Status| {
            caused_by_peer(
                e,
                to,
                format!(
                    "the replica of worker {me}'s checkpoint after wave {} could not be stored on \
                     worker {to} ({addr}): {}; worker {me} ({}) saved the checkpoint itself",
                    cp.wave,
                    status_message(e),
                    self.peers[me].0
                ),
            )
        };
        let status = client
            .replica_status(pb::ReplicaStatusRequest {
                run_id: self.run_id.clone(),
                layer: self.layer.clone(),
                owner,
                names: names.clone(),
            })
            .await
            .map_err(|e| blame(&e))?
            .into_inner();
        let held: std::collections::HashMap<String, u64> =
            status.files.into_iter().map(|f| (f.name, f.len)).collect();
        let mut last = Err(Status::internal("not sent"));
        for full in [false, true] {
            let (tx, rx) = tokio::sync::mpsc::channel::<pb::ReplicaPiece>(4);
            let (layer, cp2, held2) = (self.clone(), cp.clone(), held.clone());
            let producer = tokio::task::spawn_blocking(move || {
                layer.replica_pieces(&cp2, if full { None } else { Some(&held2) }, &tx)
            });
            let sent = client
                .put_replica(tokio_stream::wrappers::ReceiverStream::new(rx))
                .await;
            let counted = producer
                .await
                .map_err(|e| Status::internal(format!("reading the checkpoint panicked: {e}")))?
                .map_err(Status::convert)?;
            match sent {
                Ok(_) => {
                    tracing::info!(
                        "run {}: layer {} checkpoint after wave {} replicated on worker {to} ({addr}): \
                         {} files, {} bytes",
                        self.run_id,
                        self.layer,
                        cp.wave,
                        counted.files,
                        counted.bytes
                    );
                    return Ok(counted);
                }
                Err(e) => {
                    tracing::warn!(
                        "run {}: replica on worker {to} ({addr}) refused the checkpoint after wave {}{}: {}",
                        self.run_id,
                        cp.wave,
                        if full { " in full" } else { "" },
                        e.message()
                    );
                    last = Err(blame(&e));
                }
            }
        }
        last
    }

    /// Feed `tx` the pieces of checkpoint `cp`: every chunk file `held` lacks (all of them when
    /// `held` is `None`), each wave log from the length `held` has, and the manifest last.
    fn replica_pieces(
        &self,
        cp: &WorkerCheckpoint,
        held: Option<&std::collections::HashMap<String, u64>>,
        tx: &tokio::sync::mpsc::Sender<pb::ReplicaPiece>,
    ) -> Result<Replicated, KernelError> {
        let dir = self.checkpoints.dir().to_path_buf();
        let mut count = Replicated::default();
        let mut first = true;
        let mut send = |name: &str, offset: u64, data: &[u8]| -> Result<(), KernelError> {
            // An empty file still needs its one piece, so that it exists.
            let pieces: Vec<&[u8]> = if data.is_empty() {
                vec![data]
            } else {
                data.chunks(PIECE).collect()
            };
            let mut at = offset;
            for piece in pieces {
                let msg = pb::ReplicaPiece {
                    run_id: if first {
                        self.run_id.clone()
                    } else {
                        String::new()
                    },
                    layer: if first {
                        self.layer.clone()
                    } else {
                        String::new()
                    },
                    owner: self.engine.me() as u32,
                    name: name.to_string(),
                    offset: at,
                    data: piece.to_vec(),
                };
                first = false;
                at += piece.len() as u64;
                count.bytes += piece.len() as u64;
                // A closed channel: the call failed, and says why.
                if tx.blocking_send(msg).is_err() {
                    return Ok(());
                }
            }
            count.files += 1;
            Ok(())
        };
        let has = |name: &str| held.and_then(|h| h.get(name).copied()).unwrap_or(0);
        for s in &cp.shards {
            for r in &s.cells {
                if has(&r.file) == r.frame_len {
                    continue;
                }
                let path = dir.join(&r.file);
                let bytes = std::fs::read(&path).map_err(|e| KernelError::io(&path, e))?;
                send(&r.file, 0, &bytes)?;
            }
            let log = wave_log::file_name(s.shard);
            // A replica log longer than ours was cut back by a restore: the holder checks its
            // prefix and truncates it; a shorter one gets our tail.
            let from = has(&log).min(s.wave_log_len);
            if from < s.wave_log_len || held.is_none() {
                let bytes = self.engine.wave_log_bytes(s.shard, from, s.wave_log_len)?;
                send(&log, from, &bytes)?;
            }
        }
        let manifest = serde_json::to_vec_pretty(cp).expect("serialisable");
        send(&manifest_name(cp.worker, &cp.layer, cp.wave), 0, &manifest)?;
        Ok(count)
    }

    /// Fetch from the successor what this worker's own disk lacks of its checkpoint after `wave`:
    /// the manifest, every chunk that is missing or damaged here, and every wave log that does not
    /// begin as the manifest says. Afterwards a local restore can succeed.
    /// Returns what was fetched, in words.
    pub(super) async fn fetch_replica(self: &Arc<Self>, wave: u32) -> Result<String, Status> {
        let Some((from, (addr, client))) = self.successor() else {
            return Err(Status::data_loss(
                "no other worker holds a replica (a run of one worker)",
            ));
        };
        let client = client.clone();
        let me = self.engine.me();
        let get = |name: String, max_len: u64| {
            let mut client = client.clone();
            let req = pb::GetReplicaRequest {
                run_id: self.run_id.clone(),
                layer: self.layer.clone(),
                owner: me as u32,
                name,
                max_len,
            };
            async move {
                let mut stream = client.get_replica(req).await?.into_inner();
                let mut out = Vec::new();
                while let Some(chunk) = stream.message().await? {
                    out.extend_from_slice(&chunk.data);
                }
                Ok::<_, Status>(out)
            }
        };
        let name = manifest_name(me, &self.layer, wave);
        let bytes = get(name.clone(), 0).await.map_err(|e| {
            Status::data_loss(format!(
                "worker {from} ({addr}) has no replica of {name}: {}",
                e.message()
            ))
        })?;
        let cp = parse_manifest(&bytes)
            .map_err(|e| Status::data_loss(format!("replica {name}: {e}")))?;
        if cp.worker != me || cp.wave != wave || cp.layer != self.layer {
            return Err(Status::data_loss(format!(
                "replica {name} is worker {}'s checkpoint of {} after wave {}",
                cp.worker, cp.layer, cp.wave
            )));
        }
        let dir = self.checkpoints.dir().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| io_status(&dir, e))?;
        let (mut files, mut total) = (0u64, 0u64);
        for s in &cp.shards {
            for r in &s.cells {
                if check_frame(&dir, r).is_ok() {
                    continue;
                }
                let data = get(r.file.clone(), 0).await?;
                kingmaker_tablefmt::fsio::write_atomically(&dir.join(&r.file), &data)
                    .map_err(|e| Status::internal(e.to_string()))?;
                check_frame(&dir, r).map_err(|e| Status::data_loss(format!("replica: {e}")))?;
                files += 1;
                total += data.len() as u64;
            }
            let matches = self
                .engine
                .wave_log_matches(s.shard, s.wave_log_len, s.wave_log_crc)
                .unwrap_or(false);
            if !matches {
                let data = get(wave_log::file_name(s.shard), s.wave_log_len.max(1)).await?;
                let data = &data[..(s.wave_log_len as usize).min(data.len())];
                self.engine
                    .replace_wave_log(s.shard, data)
                    .map_err(Status::convert)?;
                files += 1;
                total += data.len() as u64;
            }
        }
        kingmaker_tablefmt::checkpoint::write_manifest(&dir.join(&name), &cp)
            .map_err(|e| Status::internal(e.to_string()))?;
        let fetched = format!(
            "fetched {files} file(s), {total} bytes, from the replica on worker {from} ({addr})"
        );
        tracing::warn!("run {}: layer {}: {fetched}", self.run_id, self.layer);
        Ok(fetched)
    }
}

impl WorkerService {
    /// The open layer a replica call names, and the owner's replica directory in it. Only the
    /// ring predecessor's replica is kept here.
    fn replica_target(
        &self,
        run_id: &str,
        layer: &str,
        owner: u32,
    ) -> Result<(Arc<OpenLayer>, PathBuf), Status> {
        let open = self.layer_of(run_id)?;
        if open.layer != layer {
            return Err(Status::failed_precondition(format!(
                "this worker has layer {} of run {run_id} open, not {layer}",
                open.layer
            )));
        }
        let n = open.peers.len();
        let me = open.engine.me();
        if n < 2 || owner as usize != (me + n - 1) % n {
            return Err(Status::invalid_argument(format!(
                "worker {me} of {n} keeps the replica of worker {}, not of worker {owner}",
                (me + n - 1) % n
            )));
        }
        let dir = replica_dir(&open.layer_dir, owner as usize);
        Ok((open, dir))
    }

    pub(super) async fn replica_status_call(
        &self,
        req: Request<pb::ReplicaStatusRequest>,
    ) -> Result<Response<pb::ReplicaStatusReply>, Status> {
        let req = req.into_inner();
        let (_, dir) = self.replica_target(&req.run_id, &req.layer, req.owner)?;
        let mut files = Vec::with_capacity(req.names.len());
        for name in req.names {
            checked_kind(req.owner as usize, &req.layer, &name)?;
            let len = std::fs::metadata(dir.join(&name)).map_or(0, |m| m.len());
            files.push(pb::ReplicaFile { name, len });
        }
        Ok(Response::new(pb::ReplicaStatusReply { files }))
    }

    pub(super) async fn put_replica_call(
        &self,
        req: Request<Streaming<pb::ReplicaPiece>>,
    ) -> Result<Response<pb::ReplicaStatusReply>, Status> {
        let mut stream = req.into_inner();
        let Some(first) = stream.message().await? else {
            return Ok(Response::new(pb::ReplicaStatusReply::default()));
        };
        let (run_id, layer, owner) = (first.run_id.clone(), first.layer.clone(), first.owner);
        let (_open, dir) = self.replica_target(&run_id, &layer, owner)?;
        let (tx, mut rx) = tokio::sync::mpsc::channel::<pb::ReplicaPiece>(4);
        let writer =
            tokio::task::spawn_blocking(move || -> Result<Vec<pb::ReplicaFile>, Status> {
                let mut writer = ReplicaWriter::new(dir, owner as usize, layer)?;
                while let Some(piece) = rx.blocking_recv() {
                    writer.piece(piece)?;
                }
                writer.finish()
            });
        let mut piece = Some(first);
        let mut failed = None;
        while let Some(p) = piece.take() {
            if tx.send(p).await.is_err() {
                break; // the writer failed: its error is the answer
            }
            match stream.message().await {
                Ok(next) => piece = next,
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        drop(tx);
        let written = writer
            .await
            .map_err(|e| Status::internal(format!("storing the replica panicked: {e}")))?;
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(Response::new(pb::ReplicaStatusReply { files: written? }))
    }

    pub(super) async fn get_replica_call(
        &self,
        req: Request<pb::GetReplicaRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let req = req.into_inner();
        // Not through the open layer: the owner asks while both are restoring, and the files are
        // only read.
        check_name("run id", &req.run_id)?;
        check_name("layer name", &req.layer)?;
        checked_kind(req.owner as usize, &req.layer, &req.name)?;
        let layer_dir = self.inner.opts.data_dir.join(&req.run_id).join(&req.layer);
        let path = replica_dir(&layer_dir, req.owner as usize).join(&req.name);
        let data = tokio::task::spawn_blocking(move || -> Result<Vec<u8>, Status> {
            let mut f = std::fs::File::open(&path).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    Status::not_found(format!("no replica file {}", path.display()))
                }
                _ => io_status(&path, e),
            })?;
            let mut out = Vec::new();
            let limit = if req.max_len == 0 {
                u64::MAX
            } else {
                req.max_len
            };
            (&mut f)
                .take(limit)
                .read_to_end(&mut out)
                .map_err(|e| io_status(&path, e))?;
            Ok(out)
        })
        .await
        .map_err(|e| Status::internal(format!("reading the replica panicked: {e}")))??;
        let chunks: Vec<Result<pb::DataChunk, Status>> = if data.is_empty() {
            vec![Ok(pb::DataChunk { zstd: false, data })]
        } else {
            data.chunks(PIECE)
                .map(|c| {
                    Ok(pb::DataChunk {
                        zstd: false,
                        data: c.to_vec(),
                    })
                })
                .collect()
        };
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }
}

/// Writes the pieces of one PutReplica stream into a replica directory, then checks the manifest
/// against what it names and keeps only the two newest checkpoints.
struct ReplicaWriter {
    dir: PathBuf,
    owner: usize,
    layer: String,
    open: Option<(String, std::fs::File)>,
    written: HashSet<String>,
    manifest: Option<(String, Vec<u8>)>,
}

impl ReplicaWriter {
    fn new(dir: PathBuf, owner: usize, layer: String) -> Result<Self, Status> {
        std::fs::create_dir_all(&dir).map_err(|e| io_status(&dir, e))?;
        Ok(ReplicaWriter {
            dir,
            owner,
            layer,
            open: None,
            written: HashSet::new(),
            manifest: None,
        })
    }

    fn close_open(&mut self) -> Result<(), Status> {
        if let Some((name, f)) = self.open.take() {
            f.sync_data()
                .map_err(|e| io_status(&self.dir.join(&name), e))?;
        }
        Ok(())
    }

    fn piece(&mut self, p: pb::ReplicaPiece) -> Result<(), Status> {
        let kind = checked_kind(self.owner, &self.layer, &p.name)?;
        if kind == Kind::Manifest {
            // Kept in memory, written only once everything it names checks out.
            let (_, bytes) = self
                .manifest
                .get_or_insert_with(|| (p.name.clone(), Vec::new()));
            if p.offset != bytes.len() as u64 {
                return Err(Status::invalid_argument("manifest pieces out of order"));
            }
            bytes.extend_from_slice(&p.data);
            return Ok(());
        }
        if self.open.as_ref().map(|(n, _)| n) != Some(&p.name) {
            self.close_open()?;
            let path = self.dir.join(&p.name);
            let f = open_regular_with(
                &path,
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(false),
            )
            .map_err(|e| io_status(&path, e))?;
            self.open = Some((p.name.clone(), f));
            self.written.insert(p.name.clone());
        }
        let path = self.dir.join(&p.name);
        let (_, f) = self.open.as_mut().expect("opened above");
        f.set_len(p.offset).map_err(|e| io_status(&path, e))?;
        f.seek(SeekFrom::Start(p.offset))
            .map_err(|e| io_status(&path, e))?;
        f.write_all(&p.data).map_err(|e| io_status(&path, e))?;
        Ok(())
    }

    fn finish(mut self) -> Result<Vec<pb::ReplicaFile>, Status> {
        self.close_open()?;
        let Some((name, bytes)) = self.manifest.take() else {
            return Ok(Vec::new());
        };
        let cp = parse_manifest(&bytes)
            .map_err(|e| Status::invalid_argument(format!("replica manifest {name}: {e}")))?;
        if cp.worker != self.owner
            || cp.layer != self.layer
            || name != manifest_name(cp.worker, &cp.layer, cp.wave)
        {
            return Err(Status::invalid_argument(format!(
                "replica manifest {name} is worker {}'s checkpoint of {} after wave {}",
                cp.worker, cp.layer, cp.wave
            )));
        }
        for s in &cp.shards {
            for r in &s.cells {
                let fresh = self.written.contains(&r.file);
                let ok = if fresh {
                    check_frame(&self.dir, r).is_ok()
                } else {
                    std::fs::metadata(self.dir.join(&r.file)).is_ok_and(|m| m.len() == r.frame_len)
                };
                if !ok {
                    return Err(Status::data_loss(format!(
                        "replica chunk {} does not match the manifest {name}",
                        r.file
                    )));
                }
            }
            let log = self.dir.join(wave_log::file_name(s.shard));
            let bytes = std::fs::read(&log).unwrap_or_default();
            if !wave_log::starts_with(&bytes, s.wave_log_len, s.wave_log_crc) {
                return Err(Status::data_loss(format!(
                    "replica wave log {} does not begin as the manifest {name} says",
                    log.display()
                )));
            }
            if bytes.len() as u64 > s.wave_log_len {
                let f = open_regular_with(&log, std::fs::OpenOptions::new().write(true))
                    .map_err(|e| io_status(&log, e))?;
                f.set_len(s.wave_log_len).map_err(|e| io_status(&log, e))?;
                f.sync_data().map_err(|e| io_status(&log, e))?;
            }
        }
        kingmaker_tablefmt::checkpoint::write_manifest(&self.dir.join(&name), &cp)
            .map_err(|e| Status::internal(e.to_string()))?;
        self.prune(&cp)?;
        Ok(vec![pb::ReplicaFile {
            name,
            len: bytes.len() as u64,
        }])
    }

    /// Keep the two newest manifests and the chunks they name.
    fn prune(&self, newest: &WorkerCheckpoint) -> Result<(), Status> {
        let mut manifests: Vec<(u32, String)> = Vec::new();
        let entries = std::fs::read_dir(&self.dir).map_err(|e| io_status(&self.dir, e))?;
        let names: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        for name in &names {
            if kind_of(self.owner, &self.layer, name) == Some(Kind::Manifest) {
                if let Ok(cp) = kingmaker_tablefmt::checkpoint::read_manifest(&self.dir.join(name))
                {
                    manifests.push((cp.wave, name.clone()));
                }
            }
        }
        manifests.sort();
        let keep: Vec<String> = manifests
            .iter()
            .rev()
            .filter(|(w, _)| *w <= newest.wave)
            .take(2)
            .map(|(_, n)| n.clone())
            .collect();
        let mut chunks: HashSet<String> = HashSet::new();
        for m in &keep {
            if let Ok(cp) = kingmaker_tablefmt::checkpoint::read_manifest(&self.dir.join(m)) {
                chunks.extend(
                    cp.shards
                        .iter()
                        .flat_map(|s| s.cells.iter().map(|r| r.file.clone())),
                );
            }
        }
        for name in names {
            let stale = match kind_of(self.owner, &self.layer, &name) {
                Some(Kind::Manifest) => !keep.contains(&name),
                Some(Kind::Chunk) => !chunks.contains(&name),
                _ => name.ends_with(".tmp"),
            };
            if stale {
                let path = self.dir.join(&name);
                std::fs::remove_file(&path).map_err(|e| io_status(&path, e))?;
            }
        }
        Ok(())
    }
}
