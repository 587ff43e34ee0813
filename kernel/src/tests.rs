//! The kernel against the reference solver, on random game graphs with cycles, several players,
//! several in-process workers and shard sizes.

use super::cells::BLOCK_STATES;
use super::check::reference_solve;
use super::driver::drive_layer;
use super::local::{local_workers, solve_in_memory};
use super::owners::gather;
use super::{CellStorage, Layer, ShardPlan, LOSS, WIN};
use crate::game::{Game, Node};
use rand::{rngs::StdRng, Rng, SeedableRng};
use std::sync::Arc;

/// A random game graph: every state is illegal, terminal, or live with 1..=4 distinct children
/// (or up to `max_children`, [`RandomGame::wide`]).
struct RandomGame {
    players: u8,
    nodes: Vec<Node>,
    succ: Vec<Vec<u64>>,
    pred: Vec<Vec<u64>>,
}

impl RandomGame {
    fn new(seed: u64, n: usize, players: u8) -> RandomGame {
        Self::with(seed, n, players, 4, |rng| rng.gen_range(0..10))
    }

    /// Live states with 1..=`max_children` distinct children, and terminal states rare enough
    /// (one in a hundred) that many states count down for several waves.
    fn wide(seed: u64, n: usize, players: u8, max_children: usize) -> RandomGame {
        Self::with(seed, n, players, max_children, |rng| {
            match rng.gen_range(0..100) {
                0..10 => 0,
                10..11 => 1,
                _ => 3,
            }
        })
    }

    /// A state is illegal where `kind` draws 0, terminal where it draws 1 or 2, live otherwise.
    fn with(
        seed: u64,
        n: usize,
        players: u8,
        max_children: usize,
        kind: impl Fn(&mut StdRng) -> u32,
    ) -> RandomGame {
        let mut rng = StdRng::seed_from_u64(seed);
        let nodes: Vec<Node> = (0..n)
            .map(|i| match kind(&mut rng) {
                0 => Node::Illegal,
                1 | 2 => Node::Terminal {
                    outcome: rng.gen_range(0..players),
                },
                _ => Node::Live {
                    mover: (i % players as usize) as u8,
                },
            })
            .collect();
        let mut succ = vec![Vec::new(); n];
        let mut pred = vec![Vec::new(); n];
        for i in 0..n {
            if let Node::Live { .. } = nodes[i] {
                let want = rng.gen_range(1..=max_children);
                while succ[i].len() < want {
                    let c = rng.gen_range(0..n as u64);
                    if nodes[c as usize] != Node::Illegal && !succ[i].contains(&c) {
                        succ[i].push(c);
                        pred[c as usize].push(i as u64);
                    }
                }
            }
        }
        RandomGame {
            players,
            nodes,
            succ,
            pred,
        }
    }
}

impl Game for RandomGame {
    fn name(&self) -> String {
        "random".into()
    }
    fn players(&self) -> u8 {
        self.players
    }
    fn size(&self) -> u64 {
        self.nodes.len() as u64
    }
    fn node(&self, index: u64) -> Node {
        self.nodes[index as usize]
    }
    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        out.extend(&self.succ[index as usize]);
    }
    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        out.extend(&self.pred[index as usize]);
    }
    fn mover(&self, index: u64) -> u8 {
        (index % self.players as u64) as u8
    }
    // The kernel's fast path; `LearningGame`, which does not forward it, takes the other.
    fn mover_period(&self) -> Option<u8> {
        Some(self.players)
    }
}

/// The values and depths of a solved layer, gathered from its workers in index order.
fn gathered(plan: &ShardPlan, workers: &[Arc<dyn super::WorkerHandle>]) -> (Vec<u8>, Vec<u16>) {
    let (mut v, mut d) = (Vec::new(), Vec::new());
    gather(plan, workers, |_, sv, sd| {
        v.extend(sv);
        d.extend(sd);
        Ok::<(), super::KernelError>(())
    })
    .unwrap();
    (v, d)
}

#[test]
fn in_memory_matches_reference_solver() {
    let mut draws = 0;
    for seed in 0..20 {
        let players = 2 + (seed % 2) as u8;
        let game = Arc::new(RandomGame::new(seed, 3000, players));
        for layer in [Layer::new("solo", 1, 1), Layer::new("enable", 0b011, 0b010)] {
            let (values, depth) = reference_solve(game.as_ref(), &layer);
            // Two threads update cells by compare-and-swap, one by plain stores (`exclusive`).
            for threads in [2, 1] {
                let solved = solve_in_memory(&game, &layer, threads);
                assert_eq!(
                    solved.values, values,
                    "values, seed {seed}, {threads} threads"
                );
                assert_eq!(
                    solved.depth, depth,
                    "depths, seed {seed}, {threads} threads"
                );
            }
            draws += values.iter().filter(|&&v| v == super::DRAW).count();
        }
    }
    assert!(draws > 0, "the random graphs should have draws");
}

/// A random game that also reports, with each state's predecessors, the successor count of the
/// next index when it is live (as cc3p reports the previous player's count of the same placement):
/// `Game::predecessors_and_count`. Records the states the kernel counts itself.
struct LearningGame {
    inner: RandomGame,
    learn: bool,
    counted: std::sync::Mutex<Vec<u64>>,
}

impl Game for LearningGame {
    fn name(&self) -> String {
        "learning".into()
    }
    fn players(&self) -> u8 {
        self.inner.players
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
    fn node(&self, index: u64) -> Node {
        self.inner.node(index)
    }
    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        self.inner.successors(index, out);
    }
    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        self.inner.predecessors(index, out);
    }
    fn mover(&self, index: u64) -> u8 {
        self.inner.mover(index)
    }
    fn successor_count(&self, index: u64) -> usize {
        self.counted.lock().unwrap().push(index);
        self.inner.succ[index as usize].len()
    }
    fn predecessors_and_count(&self, index: u64, out: &mut Vec<u64>) -> Option<(u64, usize)> {
        self.inner.predecessors(index, out);
        let next = (index + 1) % self.size();
        (self.learn && matches!(self.inner.nodes[next as usize], Node::Live { .. }))
            .then(|| (next, self.inner.succ[next as usize].len()))
    }
}

#[test]
fn counts_learned_with_the_predecessors_spare_counting_and_change_nothing() {
    let layer = Layer::new("solo", 1, 1);
    let mut counted = [0u64; 2];
    for (k, learn) in [false, true].into_iter().enumerate() {
        let game = Arc::new(LearningGame {
            inner: RandomGame::new(11, 4000, 3),
            learn,
            counted: Default::default(),
        });
        let (values, depth) = reference_solve(game.as_ref(), &layer);
        // Shards of 64 states: some learned counts belong to the next shard (or worker).
        let plan = ShardPlan::new(game.size(), 64);
        let handles =
            local_workers(game.clone(), &layer, plan, 2, None, CellStorage::Memory).unwrap();
        game.counted.lock().unwrap().clear();
        drive_layer(&layer, &handles, None, &mut |_: &super::WaveSummary| {}).unwrap();
        counted[k] = game.counted.lock().unwrap().len() as u64;
        let (v, d) = gathered(&plan, &handles);
        assert_eq!(v, values, "learn = {learn}");
        assert_eq!(d, depth, "learn = {learn}");
    }
    assert!(
        counted[1] < counted[0],
        "learned counts spare counting: {counted:?}"
    );
}

/// A state is counted only when an unfavourable child reaches it while it is undecided: a state
/// decided at depth d by a favourable child needs an unfavourable child of depth below d (whose
/// update came in the same wave or earlier) to have been counted. Counting the others is wasted
/// move generation (a favourable child decides a state whatever its count).
#[test]
fn only_states_reached_by_an_unfavourable_child_are_counted() {
    for (seed, players, layer) in [
        (3, 2, Layer::new("solo", 1, 1)),
        (4, 3, Layer::new("solo", 1, 1)),
        (5, 3, Layer::new("enable", 0b011, 0b010)),
    ] {
        let game = Arc::new(LearningGame {
            inner: RandomGame::new(seed, 4000, players),
            learn: false,
            counted: Default::default(),
        });
        assert!(!game.alternates_sides());
        let (values, depth) = reference_solve(game.as_ref(), &layer);
        let plan = ShardPlan::new(game.size(), 256);
        let handles =
            local_workers(game.clone(), &layer, plan, 2, None, CellStorage::Memory).unwrap();
        drive_layer(&layer, &handles, None, &mut |_: &super::WaveSummary| {}).unwrap();
        let counted: std::collections::HashSet<u64> =
            game.counted.lock().unwrap().iter().copied().collect();
        let mut spared = 0;
        for (x, value) in values.iter().enumerate() {
            let Node::Live { mover } = game.node(x as u64) else {
                continue;
            };
            let good = if layer.in_coalition(mover) { WIN } else { LOSS };
            let bad = if good == WIN { LOSS } else { WIN };
            let kids = &game.inner.succ[x];
            let early_bad = kids.iter().any(|&c| {
                values[c as usize] == bad && (*value != good || depth[c as usize] < depth[x])
            });
            // (Two threads may both count a state that their updates reach at the same time.)
            assert!(
                !counted.contains(&(x as u64)) || early_bad,
                "seed {seed}: state {x} ({value}, depth {}) counted, but no unfavourable child \
                 reached it while it was undecided",
                depth[x]
            );
            // Decided by a favourable child before any unfavourable one came: counting it is waste.
            spared += usize::from(*value == good && !early_bad);
        }
        assert!(spared > 100, "seed {seed}: {spared} states to spare");
    }
}

#[test]
fn several_workers_and_shards_give_the_same_tables() {
    let game = Arc::new(RandomGame::new(7, 5000, 3));
    let layer = Layer::new("solo", 1, 1);
    let (values, depth) = reference_solve(game.as_ref(), &layer);
    let dir = tempfile::tempdir().unwrap();
    for (workers, shard_size, on_disk, storage) in [
        (1, 64, false, CellStorage::Memory),
        (2, 640, true, CellStorage::FILE),
        (3, 1000, false, CellStorage::Memory),
        (4, 128, true, CellStorage::Memory),
    ] {
        let plan = ShardPlan::new(game.size(), shard_size);
        let path = on_disk.then(|| dir.path().join(format!("w{workers}")));
        let handles = local_workers(
            game.clone(),
            &layer,
            plan,
            workers,
            path.as_deref(),
            storage,
        )
        .unwrap();
        drive_layer(&layer, &handles, None, &mut |_: &super::WaveSummary| {}).unwrap();
        let (v, d) = gathered(&plan, &handles);
        assert_eq!(v, values, "{workers} workers, shard size {shard_size}");
        assert_eq!(d, depth, "{workers} workers, shard size {shard_size}");
    }
}

/// Gathering reads a window of shards per pass (one shard per thread, the next window read ahead
/// on more than one thread) and frees each shard's cells once it is taken: the tables come whole
/// and in order on any number of threads, and a freed shard is refused, never read as values.
#[test]
fn gathering_on_any_thread_count_gives_the_tables_and_frees_each_shard() {
    let game = Arc::new(RandomGame::new(11, 5000, 2));
    let layer = Layer::new("solo", 1, 1);
    let (values, depth) = reference_solve(game.as_ref(), &layer);
    let dir = tempfile::tempdir().unwrap();
    for threads in [1, 3] {
        // 17 shards: windows of one shard, and of three with a shorter last one.
        let plan = ShardPlan::new(game.size(), 300);
        let path = dir.path().join(format!("t{threads}"));
        let workers = local_workers(
            game.clone(),
            &layer,
            plan,
            2,
            Some(&path),
            CellStorage::Memory,
        )
        .unwrap();
        let outcome =
            drive_layer(&layer, &workers, None, &mut |_: &super::WaveSummary| {}).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let (v, d) = pool.install(|| gathered(&plan, &workers));
        assert_eq!(v, values, "{threads} threads");
        assert_eq!(d, depth, "{threads} threads");
        let owners =
            super::owners::assign_shards(&plan, workers.len(), super::Placement::Interleaved);
        for (shard, &owner) in owners.iter().enumerate() {
            assert!(
                matches!(workers[owner].shard_values(shard), Err(super::KernelError::Released { shard: s }) if s == shard),
                "shard {shard} was read after it was gathered"
            );
        }
        assert!(matches!(
            workers[0].checkpoint(outcome.waves),
            Err(super::KernelError::Released { .. })
        ));
    }
}

/// Shards of several blocks: the block flags (which blocks hold frontier or fresh cells) must
/// never hide a cell from expansion or from the close of a wave, also across a resume.
#[test]
fn shards_of_many_blocks_give_the_same_tables() {
    let n = 3 * BLOCK_STATES + 1000;
    let game = Arc::new(RandomGame::new(5, n, 2));
    let layer = Layer::new("solo", 1, 1);
    let (values, depth) = reference_solve(game.as_ref(), &layer);
    let plan = ShardPlan::new(game.size(), 2 * BLOCK_STATES as u64);
    let dir = tempfile::tempdir().unwrap();
    let first = local_workers(
        game.clone(),
        &layer,
        plan,
        2,
        Some(dir.path()),
        CellStorage::Memory,
    )
    .unwrap();
    let mut obs = StopAt {
        stop_after: 3,
        every: 3,
        last: None,
        seen: 0,
    };
    drive_layer(&layer, &first, None, &mut obs).unwrap();
    drop(first);
    let second = local_workers(
        game.clone(),
        &layer,
        plan,
        2,
        Some(dir.path()),
        CellStorage::Memory,
    )
    .unwrap();
    drive_layer(&layer, &second, obs.last, &mut |_: &super::WaveSummary| {}).unwrap();
    let (v, d) = gathered(&plan, &second);
    assert!(v == values, "values differ");
    assert!(d == depth, "depths differ");
}

/// Stops after `stop_after` waves, checkpointing every `every` waves (and at the stop).
struct StopAt {
    stop_after: u32,
    every: u32,
    last: Option<super::ResumePoint>,
    seen: u32,
}

impl super::LayerObserver for StopAt {
    fn wave(&mut self, s: &super::WaveSummary) {
        self.seen = s.wave;
    }
    fn want_checkpoint(&mut self, s: &super::WaveSummary) -> bool {
        s.wave.is_multiple_of(self.every)
    }
    fn checkpointed(&mut self, wave: u32, decided_total: u64) -> Result<(), super::KernelError> {
        self.last = Some(super::ResumePoint {
            wave,
            decided_total,
            settled: false,
        });
        Ok(())
    }
    fn should_stop(&mut self) -> bool {
        self.seen >= self.stop_after
    }
}

#[test]
fn a_stopped_layer_resumes_from_its_checkpoint_to_identical_tables() {
    let game = Arc::new(RandomGame::new(11, 20_000, 3));
    let layer = Layer::new("solo", 1, 1);
    let (values, depth) = reference_solve(game.as_ref(), &layer);
    let plan = ShardPlan::new(game.size(), 4096);
    for (stop_after, storage) in [
        (0, CellStorage::FILE),
        (1, CellStorage::Memory),
        (3, CellStorage::FILE),
        (6, CellStorage::Memory),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let first =
            local_workers(game.clone(), &layer, plan, 2, Some(dir.path()), storage).unwrap();
        let mut obs = StopAt {
            stop_after,
            every: 2,
            last: None,
            seen: 0,
        };
        let outcome = drive_layer(&layer, &first, None, &mut obs).unwrap();
        assert!(outcome.stopped, "stopped after wave {stop_after}");
        drop(first);
        // Fresh workers (as after a crash) on the same directory pick up from the checkpoint.
        let second =
            local_workers(game.clone(), &layer, plan, 2, Some(dir.path()), storage).unwrap();
        drive_layer(&layer, &second, obs.last, &mut |_: &super::WaveSummary| {}).unwrap();
        let (v, d) = gathered(&plan, &second);
        assert_eq!(v, values, "values after a stop at wave {stop_after}");
        assert_eq!(d, depth, "depths after a stop at wave {stop_after}");
    }
}

#[test]
fn a_corrupt_checkpoint_chunk_is_named_and_not_loaded() {
    let game = Arc::new(RandomGame::new(12, 5_000, 2));
    let layer = Layer::new("solo", 1, 1);
    let plan = ShardPlan::new(game.size(), 1024);
    let dir = tempfile::tempdir().unwrap();
    let workers = local_workers(
        game.clone(),
        &layer,
        plan,
        1,
        Some(dir.path()),
        CellStorage::Memory,
    )
    .unwrap();
    let mut obs = StopAt {
        stop_after: 2,
        every: 1,
        last: None,
        seen: 0,
    };
    drive_layer(&layer, &workers, None, &mut obs).unwrap();
    let cpdir = dir.path().join("worker-0").join("checkpoint");
    let chunk = std::fs::read_dir(&cpdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("cells") && p.to_string_lossy().contains("w00002"))
        .expect("a cells chunk of wave 2");
    let mut bytes = std::fs::read(&chunk).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&chunk, bytes).unwrap();
    let err = drive_layer(&layer, &workers, obs.last, &mut |_: &super::WaveSummary| {})
        .unwrap_err()
        .to_string();
    let name = chunk.file_name().unwrap().to_string_lossy().to_string();
    assert!(err.contains(&name), "{err}");
    // The previous checkpoint (wave 1) is still there, loads, and the layer finishes from it with
    // the reference solver's tables.
    drive_layer(
        &layer,
        &workers,
        Some(super::ResumePoint {
            wave: 1,
            decided_total: 0,
            settled: false,
        }),
        &mut |_: &super::WaveSummary| {},
    )
    .unwrap();
    let (v, d) = gathered(&plan, &workers);
    let (values, depth) = reference_solve(game.as_ref(), &layer);
    assert_eq!(v, values, "values after falling back to wave 1");
    assert_eq!(d, depth, "depths after falling back to wave 1");
}

/// A worker that reports `bytes` sent on a wire in every wave, as a remote worker does.
struct OnAWire {
    inner: Arc<dyn super::WorkerHandle>,
    bytes: u64,
}

impl super::WorkerHandle for OnAWire {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn init_pass(&self) -> Result<(), super::KernelError> {
        self.inner.init_pass()
    }
    fn run_wave(&self, wave: u32) -> Result<(), super::KernelError> {
        self.inner.run_wave(wave)
    }
    fn close_wave(&self, wave: u32) -> Result<super::ClosedWave, super::KernelError> {
        Ok(super::ClosedWave {
            wire_bytes: Some(self.bytes),
            ..self.inner.close_wave(wave)?
        })
    }
    fn shard_values(&self, shard: usize) -> Result<Vec<u8>, super::KernelError> {
        self.inner.shard_values(shard)
    }
    fn shard_depth(&self, shard: usize) -> Result<Vec<u16>, super::KernelError> {
        self.inner.shard_depth(shard)
    }
}

/// The wave summary carries the bytes the workers sent on their wires (summed), and none for
/// in-process workers.
#[test]
fn wave_summaries_sum_the_wire_bytes_of_the_workers() {
    let game = Arc::new(RandomGame::new(13, 3000, 2));
    let layer = Layer::new("solo", 1, 1);
    let plan = ShardPlan::new(game.size(), 256);
    let open = || local_workers(game.clone(), &layer, plan, 2, None, CellStorage::Memory).unwrap();
    let mut wire = Vec::new();
    drive_layer(&layer, &open(), None, &mut |s: &super::WaveSummary| {
        wire.push(s.wire_bytes)
    })
    .unwrap();
    assert!(
        wire.len() > 1 && wire.iter().all(Option::is_none),
        "{wire:?}"
    );
    let remote: Vec<Arc<dyn super::WorkerHandle>> = open()
        .into_iter()
        .zip([5, 7])
        .map(|(inner, bytes)| Arc::new(OnAWire { inner, bytes }) as _)
        .collect();
    wire.clear();
    drive_layer(&layer, &remote, None, &mut |s: &super::WaveSummary| {
        wire.push(s.wire_bytes)
    })
    .unwrap();
    assert!(
        wire.len() > 1 && wire.iter().all(|&w| w == Some(12)),
        "{wire:?}"
    );
}

/// Dropping a layer's in-process workers frees them (and their cells): the router between them
/// must not keep them alive, or a finished layer's memory stays held while the next one is built.
#[test]
fn dropped_local_workers_release_their_engines() {
    let game = Arc::new(RandomGame::new(17, 3000, 2));
    let layer = Layer::new("solo", 1, 1);
    let plan = ShardPlan::new(game.size(), 256);
    let workers = local_workers(game.clone(), &layer, plan, 3, None, CellStorage::Memory).unwrap();
    drive_layer(&layer, &workers, None, &mut |_: &super::WaveSummary| {}).unwrap();
    assert!(Arc::strong_count(&game) > 1);
    drop(workers);
    assert_eq!(
        Arc::strong_count(&game),
        1,
        "an engine outlived its workers"
    );
}

/// A game over `0..n` without tables: state i moves to 2i + 1 and 2i + 2 (those below n) and back
/// to i / 3, and every seventh state is terminal (so some states are never reached). Big enough
/// for the reachable search's checkpoint chunks, in about 25 levels.
struct DoublingGame {
    n: u64,
}

impl Game for DoublingGame {
    fn name(&self) -> String {
        "doubling".into()
    }
    fn players(&self) -> u8 {
        2
    }
    fn size(&self) -> u64 {
        self.n
    }
    fn node(&self, index: u64) -> Node {
        if index % 7 == 6 {
            Node::Terminal { outcome: 0 }
        } else {
            Node::Live { mover: 0 }
        }
    }
    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        if index % 7 != 6 {
            out.extend(
                [2 * index + 1, 2 * index + 2]
                    .into_iter()
                    .filter(|&c| c < self.n),
            );
            out.push(index / 3);
        }
    }
    fn predecessors(&self, _index: u64, _out: &mut Vec<u64>) {
        unreachable!("the reachable search needs successors only")
    }
    fn mover(&self, _index: u64) -> u8 {
        0
    }
}

/// What a finished search gives in these tests: the states reached, the new states per depth,
/// and the sizes of the levels as the caller counted them.
type Searched = (Vec<u64>, Vec<u64>, Vec<u64>);

/// The search with its levels' sizes counted (what a caller keeps in a checkpoint).
fn search_counting(
    game: &DoublingGame,
    checkpoints: Option<&super::reach::ReachCheckpoints>,
    purpose: &str,
    stop_at: Option<u32>,
) -> Result<Option<Searched>, super::KernelError> {
    let mut sizes: Vec<u64> = Vec::new();
    let stop = checkpoints.and_then(|cp| cp.stop.clone());
    let found = super::reach::reachable_resumable(
        game,
        0,
        purpose,
        checkpoints,
        &mut sizes,
        |sizes, depth, level| {
            assert_eq!(sizes.len(), depth as usize, "levels counted before {depth}");
            sizes.push(level.count());
            if Some(depth) == stop_at {
                stop.as_ref().unwrap().request();
            }
        },
    )?;
    Ok(found.map(|(seen, per_depth)| {
        let bits = (0..game.n).filter(|&i| seen.contains(i)).collect();
        (bits, per_depth, sizes)
    }))
}

fn reach_checkpoints(dir: &std::path::Path) -> super::reach::ReachCheckpoints {
    super::reach::ReachCheckpoints {
        dir: dir.join("reach"),
        every: std::time::Duration::ZERO,
        stop: Some(Arc::new(super::reach::StopRequest::default())),
        game: serde_json::json!({"game": "test"}),
    }
}

#[test]
fn a_stopped_reachable_search_resumes_to_the_same_states_and_counts() {
    // Two checkpoint chunks of the bitmaps, the second partial.
    let game = DoublingGame {
        n: kingmaker_tablefmt::reach::CHUNK_STATES + 1_234_567,
    };
    let whole = search_counting(&game, None, "sizes", None)
        .unwrap()
        .unwrap();
    assert!(whole.1.len() > 12, "{} levels", whole.1.len());
    assert_eq!(whole.1, whole.2, "each level's size is its new states");
    let dir = tempfile::tempdir().unwrap();
    for stop_at in [3, 9] {
        let cp = reach_checkpoints(dir.path());
        assert!(search_counting(&game, Some(&cp), "sizes", Some(stop_at))
            .unwrap()
            .is_none());
        let manifest = kingmaker_tablefmt::reach::read_manifest(&cp.dir)
            .unwrap()
            .unwrap();
        assert_eq!(manifest.depth, stop_at + 1, "saved at the next level");
        assert_eq!(manifest.per_depth, whole.1[..=stop_at as usize + 1]);
    }
    let cp = reach_checkpoints(dir.path());
    let resumed = search_counting(&game, Some(&cp), "sizes", None)
        .unwrap()
        .unwrap();
    assert_eq!(resumed, whole);
    assert!(!cp.dir.exists(), "a finished search removes its checkpoint");
}

#[test]
fn a_reachable_checkpoint_of_another_search_or_damaged_is_refused_by_name() {
    let game = DoublingGame { n: 100_000 };
    let dir = tempfile::tempdir().unwrap();
    let cp = reach_checkpoints(dir.path());
    assert!(search_counting(&game, Some(&cp), "sizes", Some(4))
        .unwrap()
        .is_none());
    let cp = reach_checkpoints(dir.path());
    let err = search_counting(&game, Some(&cp), "other counts", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("another search"), "{err}");
    let manifest = kingmaker_tablefmt::reach::read_manifest(&cp.dir)
        .unwrap()
        .unwrap();
    let chunk = cp.dir.join(&manifest.level[0].file);
    let mut bytes = std::fs::read(&chunk).unwrap();
    bytes[0] ^= 0x10;
    std::fs::write(&chunk, bytes).unwrap();
    let err = search_counting(&game, Some(&cp), "sizes", None)
        .unwrap_err()
        .to_string();
    assert!(err.contains(&manifest.level[0].file), "{err}");
}

/// States with more successors than a cell counts (55) count down outside their cells: the
/// tables are the reference solver's on one and two threads, several workers, cells in files.
#[test]
fn states_with_more_successors_than_a_cell_counts_are_solved_exactly() {
    for seed in 0..4 {
        let game = Arc::new(RandomGame::wide(seed, 3000, 2 + (seed % 2) as u8, 120));
        let wide = (0..game.size())
            .filter(|&i| game.successor_count(i) > super::cell_code::CELL_MAX_COUNTER as usize)
            .count();
        assert!(wide > 1000, "seed {seed}: {wide} states overflow a cell");
        for layer in [Layer::new("solo", 1, 1), Layer::new("enable", 0b011, 0b010)] {
            let (values, depth) = reference_solve(game.as_ref(), &layer);
            for threads in [2, 1] {
                let solved = solve_in_memory(&game, &layer, threads);
                assert_eq!(solved.values, values, "seed {seed}, {threads} threads");
                assert_eq!(solved.depth, depth, "seed {seed}, {threads} threads");
            }
            let plan = ShardPlan::new(game.size(), 640);
            let dir = tempfile::tempdir().unwrap();
            let workers = local_workers(
                game.clone(),
                &layer,
                plan,
                3,
                Some(dir.path()),
                CellStorage::FILE,
            )
            .unwrap();
            drive_layer(&layer, &workers, None, &mut |_: &super::WaveSummary| {}).unwrap();
            assert_eq!(
                gathered(&plan, &workers),
                (values, depth),
                "seed {seed}, in files"
            );
        }
    }
}

/// A layer of a wide game (many states count outside their cells) with its checkpoints in a
/// temporary directory, on one in-process worker.
struct WideRun {
    game: Arc<RandomGame>,
    layer: Layer,
    plan: ShardPlan,
    dir: tempfile::TempDir,
}

impl WideRun {
    fn new() -> WideRun {
        let game = Arc::new(RandomGame::wide(21, 6000, 3, 200));
        let plan = ShardPlan::new(game.size(), 2048);
        WideRun {
            game,
            layer: Layer::new("solo", 1, 1),
            plan,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Fresh workers on the run's directory (as after a crash).
    fn workers(&self) -> Vec<Arc<dyn super::WorkerHandle>> {
        let dir = Some(self.dir.path());
        local_workers(
            self.game.clone(),
            &self.layer,
            self.plan,
            1,
            dir,
            CellStorage::Memory,
        )
        .unwrap()
    }

    /// Solve until `stop_after` waves are closed, checkpointing every wave.
    fn stop_after(&self, stop_after: u32) -> Option<super::ResumePoint> {
        let mut obs = StopAt {
            stop_after,
            every: 1,
            last: None,
            seen: 0,
        };
        let outcome = drive_layer(&self.layer, &self.workers(), None, &mut obs).unwrap();
        assert!(outcome.stopped);
        obs.last
    }

    /// The worker's checkpoint directory.
    fn checkpoints(&self) -> std::path::PathBuf {
        self.dir.path().join("worker-0").join("checkpoint")
    }
}

/// Stop a layer of a wide game after `stop_after` waves, let `edit` change the checkpoint
/// directory of its one worker, and finish it with fresh workers: the reference solver's tables.
fn resume_wide_game(stop_after: u32, edit: impl Fn(&std::path::Path)) {
    let run = WideRun::new();
    let (values, depth) = reference_solve(run.game.as_ref(), &run.layer);
    let last = run.stop_after(stop_after);
    edit(&run.checkpoints());
    let second = run.workers();
    drive_layer(&run.layer, &second, last, &mut |_: &super::WaveSummary| {}).unwrap();
    let tables = gathered(&run.plan, &second);
    assert_eq!(tables, (values, depth), "stopped after wave {stop_after}");
}

mod checkpoints;
mod routing;
