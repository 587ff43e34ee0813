//! Decided states sent in place of their updates, to the worker owning all their predecessors.

use super::*;
use crate::driver::WaveSummary;
use std::ops::Range;

/// A random game whose every state's predecessors lie in one block of `BLOCK` indices (a state's
/// home, drawn at random), named by [`Game::predecessor_span`] as cc2p names its own; with
/// `wrong`, the span named is the next block instead.
struct SpanGame {
    inner: RandomGame,
    home: Vec<u64>,
    wrong: bool,
}

/// Not a multiple of 64, as shards are: some spans cross a shard's edge.
const BLOCK: u64 = 96;

impl SpanGame {
    /// `n` states, a multiple of `BLOCK`.
    fn new(seed: u64, n: usize, players: u8, wrong: bool) -> SpanGame {
        let mut rng = StdRng::seed_from_u64(seed);
        let blocks = n as u64 / BLOCK;
        let home: Vec<u64> = (0..n).map(|_| rng.gen_range(0..blocks)).collect();
        // The states whose predecessors may lie in each block.
        let mut homed = vec![Vec::new(); blocks as usize];
        for (c, &b) in home.iter().enumerate() {
            homed[b as usize].push(c as u64);
        }
        let mut nodes: Vec<Node> = (0..n)
            .map(|i| match rng.gen_range(0..10) {
                0 => Node::Illegal,
                1 | 2 => Node::Terminal {
                    outcome: rng.gen_range(0..players),
                },
                _ => Node::Live {
                    mover: (i % players as usize) as u8,
                },
            })
            .collect();
        let (mut succ, mut pred) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for i in 0..n {
            let Node::Live { .. } = nodes[i] else {
                continue;
            };
            let choices: Vec<u64> = homed[i / BLOCK as usize]
                .iter()
                .copied()
                .filter(|&c| nodes[c as usize] != Node::Illegal)
                .collect();
            for _ in 0..rng.gen_range(1..=4) {
                let Some(&c) = choices.get(rng.gen_range(0..choices.len().max(1))) else {
                    break;
                };
                if !succ[i].contains(&c) {
                    succ[i].push(c);
                    pred[c as usize].push(i as u64);
                }
            }
            if succ[i].is_empty() {
                nodes[i] = Node::Terminal { outcome: 0 };
            }
        }
        let inner = RandomGame {
            players,
            nodes,
            succ,
            pred,
        };
        SpanGame { inner, home, wrong }
    }
}

impl Game for SpanGame {
    fn name(&self) -> String {
        "spans".into()
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
        self.inner.successors(index, out)
    }
    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        self.inner.predecessors(index, out)
    }
    fn mover(&self, index: u64) -> u8 {
        self.inner.mover(index)
    }
    fn predecessor_span(&self, index: u64) -> Option<Range<u64>> {
        let blocks = self.size() / BLOCK;
        let b = (self.home[index as usize] + u64::from(self.wrong)) % blocks;
        Some(b * BLOCK..(b + 1) * BLOCK)
    }
}

/// A solve's values and depths, with the decided states and the updates that crossed.
#[derive(Debug)]
struct Crossed {
    tables: (Vec<u8>, Vec<u16>),
    states: u64,
    updates: u64,
}

/// Solve `game` on `workers` in-process workers.
fn solve_on(
    game: &Arc<SpanGame>,
    workers: usize,
    shard_size: u64,
    dir: Option<&std::path::Path>,
    storage: CellStorage,
) -> Result<Crossed, crate::KernelError> {
    let layer = Layer::new("solo", 1, 1);
    let plan = ShardPlan::new(game.size(), shard_size);
    let handles = local_workers(game.clone(), &layer, plan, workers, dir, storage)?;
    let (mut states, mut updates) = (0, 0);
    drive_layer(&layer, &handles, None, &mut |w: &WaveSummary| {
        states += w.stats.sent_states;
        updates += w.stats.sent;
    })?;
    Ok(Crossed {
        tables: gathered(&plan, &handles),
        states,
        updates,
    })
}

/// In memory and in files, with spans inside shards (shards of two blocks) and across their
/// edges (shards of 128 states: such states send their updates as before).
#[test]
fn states_sent_in_place_of_their_updates_give_the_reference_tables() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..6 {
        let players = 2 + (seed % 2) as u8;
        let game = Arc::new(SpanGame::new(seed, 42 * BLOCK as usize, players, false));
        let want = reference_solve(game.as_ref(), &Layer::new("solo", 1, 1));
        for (workers, shard_size, on_disk, storage) in [
            (2, 192, false, CellStorage::Memory),
            (3, 128, false, CellStorage::Memory),
            (2, 192, true, CellStorage::FILE),
            (4, 128, true, CellStorage::FILE),
        ] {
            let path = on_disk.then(|| dir.path().join(format!("s{seed}w{workers}")));
            let Crossed {
                tables,
                states,
                updates,
            } = solve_on(&game, workers, shard_size, path.as_deref(), storage).unwrap();
            let case = format!("seed {seed}, {workers} workers, shards of {shard_size}");
            assert!(tables == want, "{case}: tables differ from the reference");
            assert!(states > 0, "{case}: no state was sent");
            assert_eq!(
                updates > 0,
                shard_size % BLOCK != 0,
                "{case}: {updates} updates sent"
            );
        }
    }
}

/// A state sent to a worker that does not own its predecessors is refused there by name, never
/// applied to another's cells.
#[test]
fn a_state_sent_to_the_wrong_worker_is_refused() {
    let game = Arc::new(SpanGame::new(1, 42 * BLOCK as usize, 2, true));
    let err = solve_on(&game, 2, 2 * BLOCK, None, CellStorage::Memory).unwrap_err();
    let err = err.to_string();
    assert!(
        err.contains("whose predecessors it does not all own"),
        "{err}"
    );
}
