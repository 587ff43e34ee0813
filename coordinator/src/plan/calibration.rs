//! The rates a plan is priced from, measured on this machine and kept in a file: each game
//! family's moves and unmoves per CPU-second and the kernel's overhead over them (a small solve of
//! the family's own example), and the disk's sequential write rate.

use crate::plan::Source;
use anyhow::{Context, Result};
use cpu_time::ProcessTime;
use kingmaker_games::GameSpec;
use kingmaker_kernel::{Game, Node, Placement};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Live states timed per game (fewer where the index space is too sparse to find them in a few
/// seconds).
const SAMPLE: usize = 100_000;
/// The largest example a family's overhead is measured on (its first layer, one thread; a
/// minute or two of CPU, once per machine): small examples fit the caches and cost less per
/// state than the boards planned.
const OVERHEAD_STATES: u64 = 1 << 28;
/// The smallest example worth it.
const MIN_OVERHEAD_STATES: u64 = 1 << 20;
/// Bytes written to time the disk.
const DISK_PROBE: usize = 256 << 20;

/// What was measured, by whom and when, for the output's "where each figure comes from".
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    /// The machine it was measured on (`/proc/cpuinfo`'s model name and the core count).
    pub machine: String,
    /// The kingmaker that measured it.
    pub version: String,
    /// Sequential writes to the calibration file's disk, fsynced, in bytes per second.
    pub disk_write_bytes_per_sec: Option<f64>,
    /// Per game, as its kernel spec's JSON (the game the kernel solves, with its parameters).
    pub games: BTreeMap<String, GameRates>,
    /// Per family (its kernel spec's `game`): the kernel's CPU over its moves' CPU, on a solve of
    /// the family's largest example of 2^20 to 2^28 states (another family's where it has none).
    pub overhead: BTreeMap<String, Overhead>,
}

/// One game's moves, sampled on random live states of the index space the kernel solves.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct GameRates {
    /// Share of the index space that is live (neither illegal nor terminal).
    pub live: f64,
    /// CPU-nanoseconds to count a live state's successors.
    pub count_ns: f64,
    /// CPU-nanoseconds to list a live state's predecessors.
    pub unmoves_ns: f64,
    /// Predecessors of a live state, on average (the updates it sends once decided).
    pub predecessors: f64,
    /// Share of those updates that go to another worker when the index space is cut into
    /// `CROSSING_WORKERS[k]` contiguous parts, as workers own their shards.
    #[serde(default)]
    pub crossing: Vec<f64>,
    /// Share of the live states whose predecessors the game names one span of
    /// (`Game::predecessor_span`): a distributed build sends such a state once, in place of its
    /// updates. None in a calibration from before it was measured (measured again then).
    #[serde(default)]
    pub spans: Option<f64>,
    /// Unix time of the measurement.
    pub at_unix: u64,
}

/// The worker counts a game's crossing shares are measured for.
pub const CROSSING_WORKERS: [u64; 7] = [2, 4, 8, 16, 32, 64, 256];

impl GameRates {
    /// Share of updates that cross between `workers` workers. Between two counts measured, the
    /// share over a random placement's, `(w - 1) / w`, is interpolated on a log scale: the nearest
    /// count alone put 3 workers at 2 workers' 47 % where the 5×5 / 6 rehearsal sent 64.5 %. Past
    /// the counts measured, or where none was, the random placement's share scaled by the
    /// nearest count's.
    pub fn crossing(&self, workers: u64) -> f64 {
        if workers <= 1 {
            return 0.0;
        }
        let random = |w: u64| (w - 1) as f64 / w as f64;
        let ratios: Vec<(f64, f64)> = CROSSING_WORKERS
            .iter()
            .zip(&self.crossing)
            .map(|(&w, &c)| ((w as f64).log2(), c / random(w)))
            .collect();
        let x = (workers as f64).log2();
        let ratio = match ratios.iter().position(|&(wx, _)| wx >= x) {
            None => ratios.last().map_or(1.0, |r| r.1),
            Some(0) => ratios[0].1,
            Some(k) => {
                let ((x0, r0), (x1, r1)) = (ratios[k - 1], ratios[k]);
                r0 + (r1 - r0) * (x - x0) / (x1 - x0)
            }
        };
        (random(workers) * ratio).min(1.0)
    }

    /// Share of updates that cross between `workers` workers with a layer's shards placed as
    /// `placement` says. Contiguous runs keep a predecessor near its state, as [`Self::crossing`]
    /// measured; interleaved shards are small beside the index space, so a predecessor lands on
    /// any worker alike, `(w - 1) / w` (5×5 / 4 on two workers sent 50.1 %).
    pub fn crossing_placed(&self, workers: u64, placement: Placement) -> f64 {
        match placement {
            _ if workers <= 1 => 0.0,
            Placement::Runs => self.crossing(workers),
            Placement::Interleaved => (workers - 1) as f64 / workers as f64,
        }
    }

    /// CPU-nanoseconds of moves per state of the index space, as the kernel makes them once per
    /// layer (counting at the initial pass, unmoves when decided).
    pub fn moves_ns(&self) -> f64 {
        self.live * (self.count_ns + self.unmoves_ns)
    }
}

/// The kernel's CPU over its moves' on one example of a family.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Overhead {
    /// The example solved, as its spec's JSON.
    pub example: String,
    /// Solve CPU per state over moves CPU per state.
    pub factor: f64,
    /// Unix time of the measurement.
    pub at_unix: u64,
}

/// Where the calibration is kept by default: `$XDG_CACHE_HOME/kingmaker/calibration.json`, else
/// `~/.cache/kingmaker/calibration.json`.
pub fn default_path() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("kingmaker").join("calibration.json")
}

/// This machine, as a calibration names it.
pub fn this_machine() -> String {
    // A file of the kernel's (its length reads as 0), not one a user gave.
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_else(|| "an unknown processor".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} cores")
}

impl Calibration {
    /// The calibration at `path`, or an empty one for this machine where there is none, it does
    /// not parse, or it was measured on another machine (then it is measured again).
    pub fn load(path: &Path) -> Calibration {
        let fresh = Calibration {
            machine: this_machine(),
            version: env!("CARGO_PKG_VERSION").into(),
            ..Calibration::default()
        };
        let Ok(bytes) = kingmaker_tablefmt::fsio::read_bounded(path, 1 << 24, "a calibration")
        else {
            return fresh;
        };
        match serde_json::from_slice::<Calibration>(&bytes) {
            Ok(c) if c.machine == fresh.machine => c,
            Ok(_) => {
                tracing::info!(
                    "{} was measured on another machine: measuring again",
                    path.display()
                );
                fresh
            }
            Err(e) => {
                tracing::warn!("{}: {e}: measuring again", path.display());
                fresh
            }
        }
    }

    /// Write it to `path` atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        let json = serde_json::to_vec_pretty(self)?;
        kingmaker_tablefmt::fsio::write_atomically(path, &json)
            .with_context(|| format!("writing {}", path.display()))
    }

    /// The rates of `kernel_spec`, measured now unless kept (`fresh`: measure again).
    pub fn game_rates(
        &mut self,
        kernel_spec: &GameSpec,
        fresh: bool,
    ) -> Result<(GameRates, Source)> {
        let key = serde_json::to_string(kernel_spec)?;
        if let Some(r) = self
            .games
            .get(&key)
            .filter(|r| !fresh && !r.crossing.is_empty() && r.spans.is_some())
        {
            return Ok((r.clone(), Source::Calibrated));
        }
        let game = kernel_spec.build()?;
        let rates = measure_moves(&game, 7);
        self.games.insert(key, rates.clone());
        Ok((rates, Source::Measured))
    }

    /// The kernel's overhead for the family of `kernel_spec`, measured now unless kept.
    pub fn overhead(&mut self, kernel_spec: &GameSpec, fresh: bool) -> Result<(f64, Source)> {
        let family = family_of(kernel_spec);
        if let Some(o) = self.overhead.get(&family).filter(|_| !fresh) {
            return Ok((o.factor, Source::Calibrated));
        }
        // The family's largest example that is neither too small (it would fit the caches and
        // its fixed costs would dominate) nor too slow; where it has none, another family's
        // smallest such.
        let mut examples: Vec<(bool, u64, GameSpec)> = GameSpec::examples()
            .into_iter()
            .filter_map(|e| Some((family_of(&e) == family, e.build().ok()?.size(), e)))
            .filter(|(_, size, _)| (MIN_OVERHEAD_STATES..=OVERHEAD_STATES).contains(size))
            .collect();
        // Its own largest, else the quickest of another family's.
        examples.sort_by_key(|(own, size, _)| (*own, if *own { *size } else { u64::MAX - size }));
        let (_, _, example) = examples
            .last()
            .context("no game has an example to measure the kernel's overhead on")?;
        let layer = example
            .layers()
            .into_iter()
            .next()
            .with_context(|| format!("the example {example:?} has no layer"))?;
        let game = Arc::new(example.build()?);
        let moves = measure_moves(game.as_ref(), 11).moves_ns();
        let cpu = ProcessTime::now();
        kingmaker_kernel::solve_in_memory(&game, &layer, 1);
        let solve_ns = cpu.elapsed().as_secs_f64() * 1e9 / game.size().max(1) as f64;
        let factor = (solve_ns / moves.max(1e-3)).max(1.0);
        self.overhead.insert(
            family,
            Overhead {
                example: serde_json::to_string(example)?,
                factor,
                at_unix: kingmaker_tablefmt::run::unix_now(),
            },
        );
        Ok((factor, Source::Measured))
    }

    /// The disk's sequential write rate where `path` will be kept, measured now unless kept.
    pub fn disk_rate(&mut self, path: &Path, fresh: bool) -> Result<(f64, Source)> {
        if let Some(r) = self.disk_write_bytes_per_sec.filter(|_| !fresh) {
            return Ok((r, Source::Calibrated));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let probe = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("a file to time the disk in {}", dir.display()))?;
        let chunk = vec![0x5au8; 1 << 20];
        let started = Instant::now();
        {
            use std::io::Write;
            let mut f = probe.as_file();
            for _ in 0..DISK_PROBE / chunk.len() {
                f.write_all(&chunk)?;
            }
            f.sync_all()?;
        }
        let rate = DISK_PROBE as f64 / started.elapsed().as_secs_f64().max(1e-6);
        self.disk_write_bytes_per_sec = Some(rate);
        Ok((rate, Source::Measured))
    }
}

/// The family a spec belongs to (its `game`).
fn family_of(spec: &GameSpec) -> String {
    serde_json::to_value(spec)
        .ok()
        .and_then(|v| v.get("game")?.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Random states of `game`'s index space: the live share, then the moves of up to [`SAMPLE`]
/// live ones, timed on this thread's CPU clock.
fn measure_moves<G: Game>(game: &G, seed: u64) -> GameRates {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::SplitMix64::seed_from_u64(seed);
    let size = game.size().max(1);
    let (mut probes, mut live) = (0u64, Vec::with_capacity(SAMPLE));
    let started = Instant::now();
    // At most a few seconds: sparse index spaces (connect4) are mostly illegal.
    while live.len() < SAMPLE && (probes < 4_000_000 || live.is_empty()) {
        probes += 1;
        let i = rng.gen_range(0..size);
        if matches!(game.node(i), Node::Live { .. }) {
            live.push(i);
        }
        if started.elapsed().as_secs() > 10 && !live.is_empty() {
            break;
        }
    }
    let cpu = cpu_time::ThreadTime::now();
    let mut counted = 0usize;
    for &s in &live {
        counted += game.successor_count(s);
    }
    let count_ns = cpu.elapsed().as_secs_f64() * 1e9 / live.len().max(1) as f64;
    std::hint::black_box(counted);
    let mut out = Vec::new();
    let mut predecessors = 0usize;
    let cpu = cpu_time::ThreadTime::now();
    for &s in &live {
        out.clear();
        game.predecessors(s, &mut out);
        predecessors += out.len();
    }
    let unmoves_ns = cpu.elapsed().as_secs_f64() * 1e9 / live.len().max(1) as f64;
    // Untimed: which of those updates leave their worker's contiguous part of the index space.
    let owner = |i: u64, workers: u64| (i as u128 * workers as u128 / size as u128) as u64;
    let mut crossed = [0u64; CROSSING_WORKERS.len()];
    for &s in &live {
        out.clear();
        game.predecessors(s, &mut out);
        for &p in &out {
            for (k, &w) in CROSSING_WORKERS.iter().enumerate() {
                crossed[k] += u64::from(owner(p, w) != owner(s, w));
            }
        }
    }
    let spanned = live
        .iter()
        .filter(|&&s| game.predecessor_span(s).is_some())
        .count();
    let crossing = crossed
        .iter()
        .map(|&c| c as f64 / predecessors.max(1) as f64)
        .collect();
    GameRates {
        live: live.len() as f64 / probes.max(1) as f64,
        count_ns,
        unmoves_ns,
        predecessors: predecessors as f64 / live.len().max(1) as f64,
        crossing,
        spans: Some(spanned as f64 / live.len().max(1) as f64),
        at_unix: kingmaker_tablefmt::run::unix_now(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(crossing: Vec<f64>) -> GameRates {
        GameRates {
            live: 1.0,
            count_ns: 1.0,
            unmoves_ns: 1.0,
            predecessors: 1.0,
            crossing,
            spans: Some(0.0),
            at_unix: 0,
        }
    }

    #[test]
    fn crossing_between_the_counts_measured_follows_them() {
        // cc2p 5×5 / 6's calibration; the rehearsal on three workers sent 64.5 % of its updates.
        let r = rates(vec![0.471, 0.729, 0.861, 0.929, 0.963, 0.981, 0.996]);
        assert_eq!(r.crossing(1), 0.0);
        assert!((r.crossing(2) - 0.471).abs() < 1e-9);
        assert!((r.crossing(4) - 0.729).abs() < 1e-9);
        let three = r.crossing(3);
        assert!((0.62..0.66).contains(&three), "{three}");
        assert!(r.crossing(5) > 0.729 && r.crossing(5) < 0.861);
        assert!(r.crossing(1000) <= 1.0 && r.crossing(1000) > 0.996);
        // Nothing measured: the random placement's share.
        assert!((rates(vec![]).crossing(3) - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn interleaved_shards_cross_as_a_random_placement_does() {
        let r = rates(vec![0.471, 0.729, 0.861, 0.929, 0.963, 0.981, 0.996]);
        assert_eq!(r.crossing_placed(1, Placement::Interleaved), 0.0);
        assert!((r.crossing_placed(2, Placement::Interleaved) - 0.5).abs() < 1e-9);
        assert!((r.crossing_placed(5, Placement::Interleaved) - 0.8).abs() < 1e-9);
        assert_eq!(r.crossing_placed(4, Placement::Runs), r.crossing(4));
    }
}
