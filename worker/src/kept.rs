//! Finished layers kept on the workers: RouteExpansion, RoutedStates, KeepPart and ChainDigest.
//! 1. A zone reads what each worker sent it in worker order, each worker's pieces in the order
//!    they were made: the order in which the whole reduced table would have routed them, so the
//!    expansion is the single-process one's (`kingmaker_games::reduction`) cut at the workers.
//! 2. docs/coordinator.md and docs/format.md ("A layer kept on its workers") say how.

use super::layer::{check_name, OpenLayer};
use super::routed::{internal, KeptState, Piece, ZonePlan};
use super::{ChunkStream, WorkerService};
use kingmaker_games::reduction::Rows;
use kingmaker_proto::v1 as pb;
use kingmaker_tablefmt::chained_digest::ChainedDigest;
use kingmaker_tablefmt::layer::{LayerFile, LayerIdentity};
use kingmaker_tablefmt::table::TableWriter;
use kingmaker_tablefmt::FormatError;
use rayon::prelude::*;
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use tonic::{Request, Response, Status, Streaming};

/// Routed states per message at most (3 bytes each before compression: under tonic's 4 MiB).
const PIECE_STATES: usize = 1 << 18;
/// Compressed bytes sent to one peer in one stream, at most.
const BATCH_BYTES: usize = 2 << 20;
/// The shares of the worker's memory budget that the expansion's buffers may take, each at most:
/// the shard slice being routed (values and depths), the batches waiting for every peer, and the
/// zones being filled. The coordinator cuts zones and runs to the smallest budget too
/// (`coordinator/src/kept.rs`), so that a small worker expands a layer out of core as it solved it.
const SLICE_SHARE: u64 = 8;
const BATCH_SHARE: u64 = 8;
const ZONE_SHARE: u64 = 4;
/// And the rows routed to each zone and held until a zone has a whole piece: sent after every run,
/// a reduced table scattered over thousands of zones made pieces of a hundred states, whose
/// records (kept by their owner until it fills its zones) outgrew the budget at 6 pieces.
const HELD_SHARE: u64 = 8;

/// Values then depths of `values.len()` states, compressed.
fn pack_piece(values: &[u8], depth: &[u16]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(values.len() * 3);
    raw.extend_from_slice(values);
    for d in depth {
        raw.extend_from_slice(&d.to_le_bytes());
    }
    zstd::bulk::compress(&raw, 1).expect("zstd compresses into a vector")
}

fn unpack_piece(data: &[u8], states: usize) -> Result<(Vec<u8>, Vec<u16>), Status> {
    let raw = zstd::bulk::decompress(data, states * 3)
        .map_err(|e| Status::data_loss(format!("a routed piece does not decompress: {e}")))?;
    if raw.len() != states * 3 {
        return Err(Status::data_loss(format!(
            "a routed piece holds {} bytes for {states} states",
            raw.len()
        )));
    }
    let (values, depth) = raw.split_at(states);
    let depth = depth
        .chunks_exact(2)
        .map(|d| u16::from_le_bytes([d[0], d[1]]))
        .collect();
    Ok((values.to_vec(), depth))
}

impl WorkerService {
    pub(super) async fn route_expansion_call(
        &self,
        req: Request<pb::RouteExpansionRequest>,
    ) -> Result<Response<pb::RouteExpansionReply>, Status> {
        let req = req.into_inner();
        let layer = self.coordinator_call(&req.run_id)?;
        let _turn = self.inner.step.lock().await;
        if req.zones.len() != req.zone_owners.len() || req.zones.is_empty() {
            return Err(Status::invalid_argument(format!(
                "{} zones with {} owners",
                req.zones.len(),
                req.zone_owners.len()
            )));
        }
        let workers = layer.peers.len();
        let owners: Vec<usize> = req.zone_owners.iter().map(|&o| o as usize).collect();
        if owners.windows(2).any(|w| w[0] > w[1]) || owners.iter().any(|&o| o >= workers) {
            return Err(Status::invalid_argument(
                "zone owners must be worker numbers, non-decreasing",
            ));
        }
        let zones: Vec<Range<u64>> = req.zones.iter().map(|z| z.start..z.end).collect();
        if req.prepare {
            let dir = layer.layer_dir.join("routed");
            let plan = ZonePlan {
                zones,
                owners,
                run_states: req.run_states.max(1),
            };
            layer.kept.lock().expect("kept state").prepare(dir, plan)?;
            return Ok(Response::new(pb::RouteExpansionReply::default()));
        }
        let runtime = self.inner.runtime.clone();
        let budget = self.inner.opts.memory_budget;
        let reply = layer
            .blocking(move |l| {
                route(l, &runtime, budget).map_err(|s| kingmaker_kernel::KernelError::Worker {
                    worker: "this worker".into(),
                    message: s.message().to_string(),
                })
            })
            .await?;
        Ok(Response::new(reply))
    }

    pub(super) async fn routed_states_call(
        &self,
        req: Request<Streaming<pb::RoutedChunk>>,
    ) -> Result<Response<pb::RoutedStatesReply>, Status> {
        let mut stream = req.into_inner();
        let mut header: Option<(Arc<OpenLayer>, u32)> = None;
        let mut states = 0;
        while let Some(chunk) = stream.message().await? {
            let (layer, from) = match &header {
                Some(h) => h.clone(),
                None => {
                    let layer = self.layer_of(&chunk.run_id)?;
                    header = Some((layer.clone(), chunk.from));
                    (layer, chunk.from)
                }
            };
            if let Some(reason) = layer.failure() {
                return Err(Status::aborted(format!(
                    "this worker abandoned run {}: {reason}",
                    layer.run_id
                )));
            }
            states += chunk.states;
            tokio::task::spawn_blocking(move || {
                layer.kept.lock().expect("kept state").store(&chunk, from)
            })
            .await
            .map_err(|e| internal("storing routed states panicked", e))??;
        }
        Ok(Response::new(pb::RoutedStatesReply { states }))
    }

    pub(super) async fn keep_part_call(
        &self,
        req: Request<pb::KeepPartRequest>,
    ) -> Result<Response<pb::KeepPartReply>, Status> {
        let req = req.into_inner();
        let layer = self.coordinator_call(&req.run_id)?;
        let _turn = self.inner.step.lock().await;
        let identity = part_identity(&req.identity_json)?;
        let data_dir = self.inner.opts.data_dir.clone();
        let budget = self.inner.opts.memory_budget;
        let reply =
            tokio::task::spawn_blocking(move || keep_part(&layer, &identity, &data_dir, budget))
                .await
                .map_err(|e| internal("writing the part panicked", e))??;
        Ok(Response::new(reply))
    }

    pub(super) async fn chain_digest_call(
        &self,
        req: Request<pb::ChainDigestRequest>,
    ) -> Result<Response<pb::ChainDigestReply>, Status> {
        let req = req.into_inner();
        let _layer = self.coordinator_call(&req.run_id)?;
        let identity = part_identity(&req.identity_json)?;
        let expected = format!("{}/layers/{}.kmt", req.run_id, identity.layer);
        if req.file != expected {
            return Err(Status::invalid_argument(format!(
                "part file {:?}: a kept part of this run is {expected:?}",
                req.file
            )));
        }
        let state = req
            .state
            .ok_or_else(|| Status::invalid_argument("no digest state given"))?;
        let state = ChainedDigest {
            words: state.words.try_into().map_err(|w: Vec<u32>| {
                Status::invalid_argument(format!("{} words of sha256 state, not 8", w.len()))
            })?,
            bytes: state.bytes,
            pending: state.pending,
        }
        .checked()
        .map_err(Status::invalid_argument)?;
        let path = self.inner.opts.data_dir.join(&req.file);
        // Read in groups a zone's share of the budget holds (3 bytes a state).
        let group = (self.inner.opts.memory_budget / ZONE_SHARE / 3).clamp(1 << 16, 1 << 22);
        let state = tokio::task::spawn_blocking(move || chain(&path, &identity, state, group))
            .await
            .map_err(|e| internal("hashing the part panicked", e))??;
        Ok(Response::new(pb::ChainDigestReply {
            state: Some(pb::DigestState {
                words: state.words.to_vec(),
                bytes: state.bytes,
                pending: state.pending,
            }),
        }))
    }
}

impl WorkerService {
    pub(super) async fn read_part_call(
        &self,
        req: Request<pb::ReadPartRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let req = req.into_inner();
        check_name("run id", &req.run_id)?;
        let name = req
            .file
            .strip_prefix(&format!("{}/layers/", req.run_id))
            .filter(|n| n.contains(".part-") && n.ends_with(".kmt"))
            .ok_or_else(|| {
                Status::invalid_argument(format!(
                    "{:?} is not a kept part of run {}",
                    req.file, req.run_id
                ))
            })?;
        check_name("part file", name)?;
        // The caller names the part it asked for: these messages say what is wrong with it.
        let path = self.inner.opts.data_dir.join(&req.file);
        let mut file = File::open(&path).map_err(|e| Status::not_found(format!("opening: {e}")))?;
        let size = file
            .metadata()
            .map_err(|e| Status::internal(format!("reading its size: {e}")))?
            .len();
        let end = match req.length {
            0 => size,
            n => req.offset.saturating_add(n),
        };
        if req.offset > size || end > size {
            return Err(Status::out_of_range(format!(
                "bytes {}..{end} asked of a file of {size} bytes",
                req.offset
            )));
        }
        file.seek(SeekFrom::Start(req.offset))
            .map_err(|e| Status::internal(format!("seeking: {e}")))?;
        let mut file = file.take(end - req.offset);
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::task::spawn_blocking(move || loop {
            let mut data = vec![0u8; 1 << 20];
            let n = match file.read(&mut data) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) => {
                    let _ = tx.blocking_send(Err(Status::internal(format!("reading: {e}"))));
                    return;
                }
            };
            data.truncate(n);
            if tx
                .blocking_send(Ok(pb::DataChunk { zstd: false, data }))
                .is_err()
            {
                return;
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }
}

fn part_identity(json: &str) -> Result<LayerIdentity, Status> {
    let identity: LayerIdentity = serde_json::from_str(json)
        .map_err(|e| Status::invalid_argument(format!("not a layer identity: {e}")))?;
    check_name("part name", &identity.layer)?;
    Ok(identity)
}

/// Route this worker's shards of the finished reduced layer to the zones' owners.
fn route(
    layer: &OpenLayer,
    runtime: &tokio::runtime::Handle,
    budget: u64,
) -> Result<pb::RouteExpansionReply, Status> {
    let reduction = layer
        .game
        .reduction()
        .ok_or_else(|| Status::failed_precondition("the game is not a reduced one"))?;
    let (zones, owners, run_states) = {
        let kept = layer.kept.lock().expect("kept state");
        let plan = kept
            .plan
            .as_ref()
            .ok_or_else(|| Status::failed_precondition("the expansion was not prepared"))?;
        (plan.zones.clone(), plan.owners.clone(), plan.run_states)
    };
    let engine = &layer.engine;
    let me = engine.me();
    let owned = engine.owned_shards();
    let mut reply = pb::RouteExpansionReply::default();
    let Some(&first_shard) = owned.first() else {
        return Ok(reply);
    };
    let plan = *engine.plan();
    let block = reduction.block_states();
    let mut first = plan.range(first_shard).start;
    if !first.is_multiple_of(block) || !plan.shard_size.is_multiple_of(block) {
        return Err(Status::failed_precondition(format!(
            "this worker's shards start at state {first}, inside a block of {block}: a reduced \
             layer kept on its workers needs shards of whole blocks"
        )));
    }
    let run = (run_states / block).max(1) * block;
    // A shard is read a slice of whole runs at a time (a multiple of 64 states: depths are
    // read by whole bitmap words).
    let unit = run / gcd(run, 64) * 64;
    let slice = (budget / SLICE_SHARE / 3 / unit).max(1) * unit;
    let peers = layer.peers.len().max(1) as u64;
    let mut sender = Sender {
        layer,
        runtime,
        me,
        owners: &owners,
        seq: 0,
        batches: vec![(Vec::new(), 0); layer.peers.len()],
        batch_bytes: (budget / BATCH_SHARE / peers).clamp(64 << 10, BATCH_BYTES as u64) as usize,
        holding: Holding {
            piece: PIECE_STATES,
            bytes: (budget / HELD_SHARE).max(1 << 20) as usize,
        },
        reply: &mut reply,
    };
    let mut out = vec![(Vec::new(), Vec::new()); zones.len()];
    let not_mine = |s| Status::internal(format!("shard {s} is not this worker's"));
    // Shards are whole blocks: each is routed on its own, in runs, with nothing carried over.
    for &shard in &owned {
        let len = plan.range(shard).end - plan.range(shard).start;
        for at in (0..len).step_by(slice as usize) {
            let rows = at..(at + slice).min(len);
            let values = engine
                .shard_values_in(shard, rows.clone())
                .map_err(|e| internal("reading values", e))?
                .ok_or_else(|| not_mine(shard))?;
            let depth = engine
                .shard_depth_in(shard, rows)
                .map_err(|e| internal("reading depths", e))?
                .ok_or_else(|| not_mine(shard))?;
            for (v, d) in values.chunks(run as usize).zip(depth.chunks(run as usize)) {
                reduction.scatter(&zones, first, v, d, &mut out);
                sender.send(&mut out, false)?;
                first += v.len() as u64;
            }
        }
    }
    sender.send(&mut out, true)?;
    sender.flush_all()?;
    let pieces = sender.seq;
    tracing::info!(
        "run {}: routed {} states of the reduced layer in {pieces} pieces",
        layer.run_id,
        reply.routed
    );
    Ok(reply)
}

/// Sends routed pieces: to this worker's own store, or batched to their zone's owner.
struct Sender<'a> {
    layer: &'a OpenLayer,
    runtime: &'a tokio::runtime::Handle,
    me: usize,
    owners: &'a [usize],
    seq: u64,
    /// Per worker: the chunks not yet sent and their bytes.
    batches: Vec<(Vec<pb::RoutedChunk>, usize)>,
    /// A worker's batch is sent when it holds this many bytes.
    batch_bytes: usize,
    holding: Holding,
    reply: &'a mut pb::RouteExpansionReply,
}

/// How the rows routed to the zones are cut into pieces: `piece` states a piece at most, and the
/// rows held for all zones sent once they take `bytes` (3 a row).
#[derive(Clone, Copy)]
struct Holding {
    piece: usize,
    bytes: usize,
}

impl Holding {
    /// Hand `piece` the whole pieces the zones hold, each zone's in order; everything they hold
    /// when `all`, or when it takes `self.bytes` or more (the rest stays, to join what the next
    /// runs route to the same zones).
    fn cut(
        self,
        out: &mut [(Vec<u8>, Vec<u16>)],
        all: bool,
        mut piece: impl FnMut(usize, &[u8], &[u16]) -> Result<(), Status>,
    ) -> Result<(), Status> {
        let held: usize = out.iter().map(|(v, _)| 3 * v.len()).sum();
        let all = all || held >= self.bytes;
        for (zone, (values, depth)) in out.iter_mut().enumerate() {
            let whole = if all {
                values.len()
            } else {
                values.len() / self.piece * self.piece
            };
            if whole == 0 {
                continue;
            }
            let (v, d): (Vec<u8>, Vec<u16>) = if whole == values.len() {
                // Taken, not cleared: buffers kept at their size by every zone would hold many
                // runs' worth.
                (std::mem::take(values), std::mem::take(depth))
            } else {
                (
                    values.drain(..whole).collect(),
                    depth.drain(..whole).collect(),
                )
            };
            for (v, d) in v.chunks(self.piece).zip(d.chunks(self.piece)) {
                piece(zone, v, d)?;
            }
        }
        Ok(())
    }
}

impl Sender<'_> {
    /// Send what [`Holding::cut`] cuts of the rows the zones hold.
    fn send(&mut self, out: &mut [(Vec<u8>, Vec<u16>)], all: bool) -> Result<(), Status> {
        let holding = self.holding;
        holding.cut(out, all, |zone, v, d| self.piece(zone, v, d))
    }

    /// One piece of zone `zone`: stored here if the zone is this worker's, else batched to its
    /// owner.
    fn piece(&mut self, zone: usize, v: &[u8], d: &[u16]) -> Result<(), Status> {
        let chunk = pb::RoutedChunk {
            run_id: self.layer.run_id.clone(),
            from: self.me as u32,
            seq: self.seq,
            zone: zone as u32,
            states: v.len() as u64,
            data: pack_piece(v, d),
        };
        self.seq += 1;
        self.reply.routed += chunk.states;
        let owner = self.owners[zone];
        if owner == self.me {
            return self
                .layer
                .kept
                .lock()
                .expect("kept state")
                .store(&chunk, self.me as u32);
        }
        let batch = &mut self.batches[owner];
        batch.1 += chunk.data.len();
        batch.0.push(chunk);
        if batch.1 >= self.batch_bytes {
            self.flush(owner)?;
        }
        Ok(())
    }

    fn flush(&mut self, to: usize) -> Result<(), Status> {
        let (chunks, bytes) = std::mem::take(&mut self.batches[to]);
        if chunks.is_empty() {
            return Ok(());
        }
        let (addr, client) = &self.layer.peers[to];
        let mut client = client.clone();
        self.runtime
            .block_on(async move { client.routed_states(tokio_stream::iter(chunks)).await })
            .map_err(|s| {
                Status::unavailable(format!("sending routed states to {addr}: {}", s.message()))
            })?;
        self.reply.bytes_sent += bytes as u64;
        Ok(())
    }

    fn flush_all(&mut self) -> Result<(), Status> {
        (0..self.batches.len()).try_for_each(|to| self.flush(to))
    }
}

/// Write this worker's part of the finished layer into `data_dir/<run id>/layers/`.
fn keep_part(
    layer: &OpenLayer,
    identity: &LayerIdentity,
    data_dir: &std::path::Path,
    budget: u64,
) -> Result<pb::KeepPartReply, Status> {
    let dir = data_dir.join(&layer.run_id).join("layers");
    std::fs::create_dir_all(&dir)
        .map_err(|e| internal(&format!("creating {}", dir.display()), e))?;
    let file = format!("{}/layers/{}.kmt", layer.run_id, identity.layer);
    let format_err = |e: kingmaker_tablefmt::FormatError| internal("writing the part", e);
    let (first, written) = match layer.game.reduction() {
        None => {
            let engine = &layer.engine;
            let owned = engine.owned_shards();
            let plan = *engine.plan();
            let Some((&a, &b)) = owned.first().zip(owned.last()) else {
                return Ok(pb::KeepPartReply::default());
            };
            let rows = plan.range(a).start..plan.range(b).end;
            let mut writer =
                TableWriter::create(&dir, identity, rows.end - rows.start).map_err(format_err)?;
            for shard in owned {
                let values = engine
                    .shard_values(shard)
                    .map_err(|e| internal("reading values", e))?
                    .ok_or_else(|| Status::internal("an owned shard has no values"))?;
                let depth = engine
                    .shard_depth(shard)
                    .map_err(|e| internal("reading depths", e))?
                    .ok_or_else(|| Status::internal("an owned shard has no depths"))?;
                writer.append(&values, &depth).map_err(format_err)?;
            }
            (rows.start, writer.finish_written().map_err(format_err)?)
        }
        Some(reduction) => {
            let mut kept = layer.kept.lock().expect("kept state");
            let plan = kept
                .plan
                .as_ref()
                .ok_or_else(|| Status::failed_precondition("the expansion was not prepared"))?;
            let me = layer.engine.me();
            let mine: Vec<usize> = (0..plan.zones.len())
                .filter(|&z| plan.owners[z] == me)
                .collect();
            let Some((&a, &b)) = mine.first().zip(mine.last()) else {
                return Ok(pb::KeepPartReply::default());
            };
            let rows = plan.zones[a].start..plan.zones[b].end;
            let mut writer =
                TableWriter::create(&dir, identity, rows.end - rows.start).map_err(format_err)?;
            let mut pieces: Vec<Vec<Piece>> = vec![Vec::new(); plan.zones.len()];
            for p in &kept.pieces {
                pieces[p.zone as usize].push(*p);
            }
            for p in &mut pieces {
                p.sort_by_key(|p| (p.from, p.seq));
            }
            // As many zones at once as threads, and as the budget holds (3 bytes a row).
            let widest = mine
                .iter()
                .map(|&z| plan.zones[z].end - plan.zones[z].start);
            let zone_bytes = widest.max().unwrap_or(1) * 3;
            let threads = (budget / ZONE_SHARE / zone_bytes)
                .clamp(1, rayon::current_num_threads().max(1) as u64)
                as usize;
            let files: HashMap<u32, PathBuf> = kept
                .files
                .keys()
                .map(|&from| (from, kept.file_of(from)))
                .collect();
            for group in mine.chunks(threads) {
                let filled: Vec<Result<Rows, Status>> = group
                    .par_iter()
                    .map(|&z| fill_zone(reduction, &plan.zones[z], &pieces[z], &files))
                    .collect();
                for zone in filled {
                    let (values, depth) = zone?;
                    writer.append(&values, &depth).map_err(format_err)?;
                }
            }
            let written = writer.finish_written().map_err(format_err)?;
            let dir = kept.dir.clone();
            *kept = KeptState::default();
            let _ = std::fs::remove_dir_all(dir);
            (rows.start, written)
        }
    };
    Ok(pb::KeepPartReply {
        first,
        states: written.counts.win
            + written.counts.loss
            + written.counts.draw
            + written.counts.illegal,
        file,
        size: written.size,
        sha256: written.sha256,
        win: written.counts.win,
        loss: written.counts.loss,
        draw: written.counts.draw,
        illegal: written.counts.illegal,
        max_depth: u32::from(written.max_depth),
    })
}

/// One zone of the full table from the pieces routed to it, read in order.
fn fill_zone(
    reduction: &dyn kingmaker_games::reduction::Reduction,
    zone: &Range<u64>,
    pieces: &[Piece],
    files: &HashMap<u32, PathBuf>,
) -> Result<Rows, Status> {
    let mut open: HashMap<u32, File> = HashMap::new();
    let mut next = pieces.iter();
    kingmaker_games::reduction::fill_zone(reduction, zone.clone(), || {
        let Some(p) = next.next() else {
            return Ok(None);
        };
        let f = match open.entry(p.from) {
            std::collections::hash_map::Entry::Occupied(f) => f.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(File::open(&files[&p.from])?),
        };
        let mut data = vec![0u8; p.len as usize];
        f.seek(SeekFrom::Start(p.offset))?;
        f.read_exact(&mut data)?;
        let rows = unpack_piece(&data, p.states as usize)
            .map_err(|s| anyhow::anyhow!(s.message().to_string()))?;
        Ok(Some(rows))
    })
    .map_err(|e| Status::data_loss(format!("filling zone {zone:?}: {e:#}")))
}

/// Go on with `state` over the values of the part file at `path`.
fn chain(
    path: &std::path::Path,
    identity: &LayerIdentity,
    mut state: ChainedDigest,
    group: u64,
) -> Result<ChainedDigest, Status> {
    let file = LayerFile::open_as(path, identity).map_err(|e| Status::data_loss(e.to_string()))?;
    file.for_each_group_of(group, |values, _| -> Result<(), FormatError> {
        state.update(values);
        Ok(())
    })
    .map_err(|e| Status::data_loss(e.to_string()))?;
    Ok(state)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kingmaker_games::cc2p::reduced::Cc2pReduced;
    use kingmaker_games::cc2p::{Cc2p, TipRule};
    use kingmaker_games::Reduction;
    use kingmaker_kernel::Game;

    /// Issue 63: a reduced table routed in runs of one block, each scattered over most of the
    /// zones, is sent in whole pieces, a zone's last rows only when the rows held reach their
    /// limit or the table ends. So the pieces (whose records a zone's owner keeps until it fills
    /// the zone) are bounded by the rows and the limits, not by the runs; each zone still gets
    /// its rows in the order it reads them. Sent after every run, they were a piece per zone per
    /// run: records that grew with the table past the budget.
    #[test]
    fn scattered_runs_are_sent_in_whole_pieces_within_the_held_limit() {
        let game = Cc2pReduced::quarter(Cc2p::new(5, 2, TipRule::Exact).unwrap());
        let block = game.block_states() as usize;
        // Zones of one row of the full table: a block answers a state or two in most of them.
        let zones = game.zones(1);
        let holding = Holding {
            piece: 1024,
            bytes: 3 * 8192,
        };
        let n = game.size() as usize;
        let values: Vec<u8> = (0..n).map(|i| (i % 4) as u8).collect();
        let depth: Vec<u16> = (0..n).map(|i| (i % 65521) as u16).collect();
        let empty = vec![(Vec::new(), Vec::new()); zones.len()];
        let (mut out, mut routed, mut sent) = (empty.clone(), empty.clone(), empty);
        let (mut pieces, mut zones_touched) = (0, 0);
        let mut take = |zone: usize, v: &[u8], d: &[u16]| {
            assert!(v.len() <= holding.piece && v.len() == d.len());
            pieces += 1;
            sent[zone].0.extend_from_slice(v);
            sent[zone].1.extend_from_slice(d);
            Ok(())
        };
        for (k, (v, d)) in values.chunks(block).zip(depth.chunks(block)).enumerate() {
            let first = (k * block) as u64;
            let before: Vec<usize> = routed.iter().map(|(v, _)| v.len()).collect();
            game.scatter(&zones, first, v, d, &mut routed);
            zones_touched += routed
                .iter()
                .zip(&before)
                .filter(|((v, _), &b)| v.len() > b)
                .count();
            game.scatter(&zones, first, v, d, &mut out);
            holding.cut(&mut out, false, &mut take).unwrap();
            let held: usize = out.iter().map(|(v, _)| 3 * v.len()).sum();
            assert!(held < holding.bytes, "{held} bytes held after run {k}");
        }
        holding.cut(&mut out, true, &mut take).unwrap();
        assert!(out.iter().all(|(v, d)| v.is_empty() && d.is_empty()));
        assert!(sent == routed, "a zone got its rows out of order");
        let rows: usize = routed.iter().map(|(v, _)| v.len()).sum();
        assert_eq!(rows as u64, game.full_size());
        // Whole pieces, then at most one short piece a zone at each flush: each forced one sends
        // at least the limit's rows, and one more flush ends the table.
        let forced = 3 * rows / holding.bytes;
        let bound = rows / holding.piece + (forced + 1) * zones.len();
        assert!(
            zones_touched > 4 * bound,
            "{zones_touched} (run, zone) pairs: too few for a test of scattered runs"
        );
        assert!(
            pieces <= bound,
            "{pieces} pieces for {rows} rows in {} zones (at most {bound})",
            zones.len()
        );
    }
}
