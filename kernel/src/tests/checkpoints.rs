//! The kernel's checkpoints: counts outside the cells, older versions, shards placed otherwise.

use super::*;

/// A checkpoint keeps the counts that overflow the cells, and a resume finds them; a manifest
/// that lost them is refused, not resumed with cells that cannot count down.
#[test]
fn a_checkpoint_keeps_the_counts_outside_the_cells() {
    use kingmaker_tablefmt::checkpoint::{manifest_path, read_manifest, write_manifest};
    for stop_after in [1, 2] {
        resume_wide_game(stop_after, |cpdir| {
            let cp = read_manifest(&manifest_path(cpdir, 0, "solo", stop_after)).unwrap();
            let counted: usize = cp.shards.iter().map(|s| s.overflow.len()).sum();
            assert!(
                counted > 0 || stop_after > 1,
                "counts outside the cells after wave 1"
            );
        });
    }
    let run = WideRun::new();
    run.stop_after(1);
    let path = manifest_path(&run.checkpoints(), 0, "solo", 1);
    let mut cp = read_manifest(&path).unwrap();
    cp.shards.iter_mut().for_each(|s| s.overflow.clear());
    write_manifest(&path, &cp).unwrap();
    let err = run.workers()[0].restore(1).unwrap_err().to_string();
    assert!(err.contains("without its count cannot count down"), "{err}");
}

/// A checkpoint of byte cells (version 1) is converted as it is restored: rewrite a checkpoint
/// as version 1 wrote it, and the layer still ends with the reference solver's tables.
#[test]
fn a_version_1_checkpoint_of_byte_cells_resumes() {
    use kingmaker_tablefmt::checkpoint::{
        format_chunk_name, manifest_path, read_chunk, read_manifest, write_chunk, write_manifest,
        CellsFormat,
    };
    for stop_after in [1, 3] {
        resume_wide_game(stop_after, |cpdir| {
            let path = manifest_path(cpdir, 0, "solo", stop_after);
            let mut cp = read_manifest(&path).unwrap();
            for s in &mut cp.shards {
                let mut codes = Vec::new();
                for r in &s.cells {
                    let bytes = read_chunk(cpdir, r).unwrap();
                    for word in bytes.chunks(4) {
                        let w = u32::from_le_bytes(word.try_into().unwrap());
                        codes.extend((0..5).map(|j| crate::cell_code::field(w, 6 * j)));
                    }
                }
                codes.truncate(plan_len(s.shard));
                // Version 1: 0–248 undecided as now, 249–255 the decided codes in the same order.
                let mut bytes: Vec<u8> = codes
                    .iter()
                    .map(|&c| match c {
                        c if c <= crate::cell_code::CELL_OVERFLOW => c,
                        c => c - crate::cell_code::CELL_WIN_OLD + 249,
                    })
                    .collect();
                for &(i, n) in &s.overflow {
                    assert_eq!(codes[i as usize], crate::cell_code::CELL_OVERFLOW);
                    assert!(n <= 248, "a count version 1 could hold");
                    bytes[i as usize] = n as u8;
                }
                let overflowing = codes
                    .iter()
                    .filter(|&&c| c == crate::cell_code::CELL_OVERFLOW)
                    .count();
                assert_eq!(
                    overflowing,
                    s.overflow.len(),
                    "every overflowing cell has its count"
                );
                s.cells = bytes
                    .chunks(1 << 22)
                    .enumerate()
                    .map(|(c, b)| {
                        let name = format_chunk_name(CellsFormat::Bytes, s.shard, c as u64, 0);
                        write_chunk(cpdir, &name, b).unwrap()
                    })
                    .collect();
                s.overflow.clear();
            }
            write_manifest(&path, &cp).unwrap();
        });
    }

    /// The states of shard `s` of the wide game's plan (6000 states in shards of 2048).
    fn plan_len(s: usize) -> usize {
        (6000 - 2048 * s).min(2048)
    }
}

/// A checkpoint names the game it was made for: workers of another game (same index space, same
/// layer) refuse it, and so do workers of another layer; the error is a refusal, not damage to
/// fall back from.
#[test]
fn a_checkpoint_of_another_game_is_refused() {
    let game = Arc::new(RandomGame::new(13, 5_000, 2));
    let layer = Layer::new("solo", 1, 1);
    let plan = ShardPlan::new(game.size(), 1024);
    let dir = tempfile::tempdir().unwrap();
    let named = |name: serde_json::Value| {
        crate::named_local_workers(
            &name,
            game.clone(),
            &layer,
            plan,
            (2, crate::Placement::Interleaved),
            Some(dir.path()),
            CellStorage::Memory,
        )
        .unwrap()
    };
    let four = serde_json::json!({"game": "connect4", "board": "5x4", "connect": 4});
    let three = serde_json::json!({"game": "connect4", "board": "5x4", "connect": 3});
    let mut obs = StopAt {
        stop_after: 2,
        every: 1,
        last: None,
        seen: 0,
    };
    drive_layer(&layer, &named(four.clone()), None, &mut obs).unwrap();
    let err = drive_layer(
        &layer,
        &named(three),
        obs.last,
        &mut |_: &crate::WaveSummary| {},
    )
    .unwrap_err();
    assert!(err.is_refused(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains(r#""connect":4"#)
            && text.contains(r#""connect":3"#)
            && text.contains("worker-0.solo.w00002.json"),
        "{text}"
    );
    // The game it names restores it.
    drive_layer(
        &layer,
        &named(four),
        obs.last,
        &mut |_: &crate::WaveSummary| {},
    )
    .unwrap();
}

/// A router for an engine whose waves are never run.
struct NoRouter;

impl crate::Router for NoRouter {
    fn send(&self, _worker: usize, _batch: crate::Batch<'_>) -> Result<(), crate::KernelError> {
        Ok(())
    }
}

/// A checkpoint of shards placed otherwise (in runs, as before they were interleaved) is refused
/// by a worker that owns other shards now, naming both: not damage to fall back from (that would
/// solve the layer again), and never restored onto the wrong worker.
#[test]
fn a_checkpoint_of_shards_placed_otherwise_is_refused() {
    use crate::{assign_shards, Placement, WorkerEngine};
    let game = Arc::new(RandomGame::new(17, 5_000, 2));
    let layer = Layer::new("solo", 1, 1);
    let plan = ShardPlan::new(game.size(), 1024);
    let dir = tempfile::tempdir().unwrap();
    let cpdir = dir.path().join("checkpoint");
    let name = serde_json::json!({"game": "random"});
    let engine = |placement: Placement, sub: &str| {
        let sub = dir.path().join(sub);
        std::fs::create_dir_all(&sub).unwrap();
        let engine = WorkerEngine::new(
            game.clone(),
            layer.clone(),
            plan,
            assign_shards(&plan, 2, placement),
            0,
            Some(&sub),
            CellStorage::Memory,
            Arc::new(NoRouter),
        )
        .unwrap();
        engine.init_pass().unwrap();
        engine
    };
    let runs = engine(Placement::Runs, "runs");
    runs.checkpoint(0, &cpdir, None, &name).unwrap();
    let err = engine(Placement::Interleaved, "interleaved")
        .restore(0, &cpdir, &name)
        .unwrap_err();
    assert!(err.is_refused(), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("holds shards 0-2") && text.contains("owns shards 0, 2, 4"),
        "{text}"
    );
    // The same placement restores it.
    runs.restore(0, &cpdir, &name).unwrap();
}
