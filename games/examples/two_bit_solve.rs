//! A prototype for issue 65: cc2p's quarter solved on one thread with 2 bits a state and
//! re-checks instead of successor counters, each wave's frontier in temporary files.
//! 1. `cargo run --release -p kingmaker-games --example two_bit_solve -- 7 3 [--batch N]
//!    [--shortcut] [--mark] [--stats] [--full] [--tmp DIR]`
//! 2. Prints per wave what the kernel's log prints ("decided N"), the totals, CPU time and peak RSS.

mod prototype;

use anyhow::{bail, Context, Result};
use kingmaker_games::cc2p::reduced::Cc2pReduced;
use kingmaker_games::cc2p::{Cc2p, TipRule};
use kingmaker_kernel::{Game, Node};
use prototype::{cpu_seconds, each_node, peak_rss_mib, Frontier, Spool};
use std::path::PathBuf;

const UNDECIDED: u64 = 0;
const WIN: u64 = 1;
const LOSS: u64 = 2;
const ILLEGAL: u64 = 3;
/// With `--mark`, code 3 means "undecided, re-checked and failed in this wave" while waves run:
/// illegal states are kept as undecided (no move reaches or leaves them) and told apart at the end.
const FAILED: u64 = 3;

/// Every state's value in 2 bits, 32 to a word: the only memory a state has.
struct Values(Vec<u64>);

impl Values {
    fn new(states: u64) -> Values {
        Values(vec![0; states.div_ceil(32) as usize])
    }

    #[inline]
    fn get(&self, i: u64) -> u64 {
        self.0[(i / 32) as usize] >> (i % 32 * 2) & 3
    }

    #[inline]
    fn set(&mut self, i: u64, v: u64) {
        let (w, s) = (&mut self.0[(i / 32) as usize], i % 32 * 2);
        *w = *w & !(3 << s) | v << s;
    }

    /// Every code 3 back to 0 (the marks of a wave's failed re-checks).
    fn clear_threes(&mut self) {
        const LOW: u64 = 0x5555_5555_5555_5555;
        for w in &mut self.0 {
            let threes = *w & *w >> 1 & LOW;
            *w &= !(threes | threes << 1);
        }
    }
}

#[derive(Default)]
struct Options {
    /// Predecessors gathered, sorted and deduplicated before their re-checks (1: one at a time).
    batch: usize,
    /// A parent whose successor count equals its edges into the batch is L without a listing.
    shortcut: bool,
    /// Mark a parent whose re-check failed (code 3) so it is not re-checked again in the wave.
    mark: bool,
    /// Count where each re-check ends.
    stats: bool,
    /// Map the quarter's counts to the full game's.
    full: bool,
    tmp: PathBuf,
}

/// What the re-checks did, over the whole solve.
#[derive(Default)]
struct Stats {
    candidates: u64,
    rechecks: u64,
    became_loss: u64,
    shortcut_calls: u64,
    shortcut_hits: u64,
    listed: u64,
    examined: u64,
    at_first: u64,
    examined_backwards: u64,
    at_last: u64,
    /// With `--mark`: parents whose re-check failed and that became W in the same wave.
    failed_then_won: u64,
    /// CPU-s of the W states' side (their predecessors and the re-checks) and of the L states'.
    cpu_rechecks: f64,
    cpu_wins: f64,
}

fn parse_args() -> Result<(u8, u8, Options)> {
    let usage =
        "usage: two_bit_solve BOARD PIECES [--batch N] [--shortcut] [--mark] [--stats] [--full] \
                 [--tmp DIR] (e.g. 7 3)";
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Options {
        batch: 1 << 16,
        tmp: std::env::temp_dir(),
        ..Options::default()
    };
    let mut nums = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--batch" => {
                let n = it.next().context(usage)?;
                opts.batch = n
                    .parse()
                    .with_context(|| format!("--batch {n:?}: {usage}"))?;
                opts.batch = opts.batch.max(1);
            }
            "--shortcut" => opts.shortcut = true,
            "--mark" => opts.mark = true,
            "--stats" => opts.stats = true,
            "--full" => opts.full = true,
            "--tmp" => opts.tmp = it.next().context(usage)?.into(),
            n => nums.push(n.parse::<u8>().with_context(|| format!("{n:?}: {usage}"))?),
        }
    }
    let [board, pieces] = nums[..] else {
        bail!("{usage}");
    };
    Ok((board, pieces, opts))
}

/// Where the solve is: the values, the totals, and what to print.
struct Solver<'a> {
    game: &'a Cc2pReduced,
    values: Values,
    opts: Options,
    stats: Stats,
    /// W, L, illegal so far.
    won: u64,
    lost: u64,
    illegal: u64,
    cpu0: f64,
    /// The most bytes of frontier files on disk at once (the one read and the one written).
    most_bytes: u64,
}

impl Solver<'_> {
    /// Wave 0: classify every state in runs, as the kernel's initial pass does. In an
    /// `alternates_sides` game a terminal outcome 0 means the side to move has won.
    fn wave0(&mut self) -> Result<(Frontier, Frontier)> {
        let (mut w, mut l) = (Spool::new(&self.opts.tmp)?, Spool::new(&self.opts.tmp)?);
        let game = self.game;
        each_node(game, |i, node| {
            match node {
                Node::Illegal => {
                    if !self.opts.mark {
                        self.values.set(i, ILLEGAL);
                    }
                    self.illegal += 1;
                }
                Node::Terminal { outcome: 0 } => {
                    self.values.set(i, WIN);
                    w.push(i)?;
                }
                Node::Terminal { .. } => {
                    self.values.set(i, LOSS);
                    l.push(i)?;
                }
                Node::Live { .. } => {}
            }
            Ok(())
        })?;
        self.finish_wave(0, w, l)
    }

    /// Wave `k` from the frontier of wave `k - 1`.
    ///
    /// First the W states' parents are re-checked, then the L states' parents become W. In that
    /// order the depths are exact: during the re-checks every W state was decided in a wave
    /// before `k`, so a parent whose children are all W has them all at depth <= k - 1, one of
    /// them (the one in the frontier) at k - 1; it was not all-W a wave earlier, or it would have
    /// been re-checked then and be L already. Had the new W states of wave k been set first, a
    /// parent whose last undecided child just became W would be made L at k instead of k + 1.
    /// An L state set during the re-checks only makes later re-checks fail, as its undecided
    /// state did, and no parent of an L child is ever all-W, so phase two never meets one.
    fn wave(
        &mut self,
        k: u32,
        mut won: Frontier,
        mut lost: Frontier,
    ) -> Result<(Frontier, Frontier)> {
        let (mut w, mut l) = (Spool::new(&self.opts.tmp)?, Spool::new(&self.opts.tmp)?);
        let mut preds = Vec::new();
        let mut kids = Vec::new();
        let mut cands: Vec<u32> = Vec::with_capacity(self.opts.batch);
        let t0 = cpu_seconds();
        while let Some(c) = won.next()? {
            preds.clear();
            self.game.predecessors(c, &mut preds);
            for &p in &preds {
                if self.values.get(p) == UNDECIDED {
                    cands.push(p as u32);
                }
            }
            if cands.len() >= self.opts.batch {
                self.recheck(&mut cands, &mut kids, &mut l)?;
            }
        }
        self.recheck(&mut cands, &mut kids, &mut l)?;
        let t1 = cpu_seconds();
        while let Some(c) = lost.next()? {
            preds.clear();
            self.game.predecessors(c, &mut preds);
            for &p in &preds {
                let v = self.values.get(p);
                if v == UNDECIDED || self.opts.mark && v == FAILED {
                    self.stats.failed_then_won += (v == FAILED) as u64;
                    self.values.set(p, WIN);
                    w.push(p)?;
                }
            }
        }
        if self.opts.mark {
            self.values.clear_threes();
        }
        let t2 = cpu_seconds();
        self.stats.cpu_rechecks += t1 - t0;
        self.stats.cpu_wins += t2 - t1;
        self.most_bytes = self
            .most_bytes
            .max((won.len + lost.len + w.len + l.len) * 4);
        self.finish_wave(k, w, l)
    }

    /// Re-check the parents gathered: sorted (for locality) and each once (a parent that fails
    /// fails again within the wave: no W is added before the re-checks end).
    fn recheck(&mut self, cands: &mut Vec<u32>, kids: &mut Vec<u64>, l: &mut Spool) -> Result<()> {
        self.stats.candidates += cands.len() as u64;
        if self.opts.batch > 1 {
            cands.sort_unstable();
        }
        let mut i = 0;
        while i < cands.len() {
            let p = cands[i];
            let edges = cands[i..].iter().take_while(|&&x| x == p).count();
            i += edges;
            let p = p as u64;
            if self.values.get(p) != UNDECIDED {
                continue;
            }
            let all_won = if self.opts.shortcut && {
                self.stats.shortcut_calls += 1;
                self.game.successor_count(p) == edges
            } {
                self.stats.shortcut_hits += 1;
                true
            } else {
                self.stats.rechecks += 1;
                kids.clear();
                self.game.successors(p, kids);
                let first_bad = kids.iter().position(|&c| self.values.get(c) != WIN);
                if self.opts.stats {
                    self.stats.listed += kids.len() as u64;
                    let n = first_bad.map_or(kids.len(), |j| j + 1);
                    self.stats.examined += n as u64;
                    self.stats.at_first += (first_bad == Some(0)) as u64;
                    let back = kids.iter().rev().position(|&c| self.values.get(c) != WIN);
                    self.stats.examined_backwards += back.map_or(kids.len(), |j| j + 1) as u64;
                    self.stats.at_last += (back == Some(0)) as u64;
                }
                first_bad.is_none()
            };
            if all_won {
                self.values.set(p, LOSS);
                self.stats.became_loss += 1;
                l.push(p)?;
            } else if self.opts.mark {
                self.values.set(p, FAILED);
            }
        }
        cands.clear();
        Ok(())
    }

    fn finish_wave(&mut self, k: u32, w: Spool, l: Spool) -> Result<(Frontier, Frontier)> {
        self.won += w.len;
        self.lost += l.len;
        let legal = self.game.size() - self.illegal;
        let undecided = legal - self.won - self.lost;
        println!(
            "wave {k}: decided {} (W {} L {}), total {}; W {} L {} D {} illegal {}; \
             {:.2} CPU-s, peak RSS {:.1} MiB, frontier files {} B",
            w.len + l.len,
            w.len,
            l.len,
            self.won + self.lost,
            self.won,
            self.lost,
            undecided,
            self.illegal,
            cpu_seconds() - self.cpu0,
            peak_rss_mib(),
            (w.len + l.len) * 4,
        );
        Ok((w.into_frontier()?, l.into_frontier()?))
    }

    /// With `--mark`: the illegal states among the undecided ones marked as such.
    fn mark_illegal(&mut self) {
        for i in 0..self.game.size() {
            if self.values.get(i) == UNDECIDED && self.game.node(i) == Node::Illegal {
                self.values.set(i, ILLEGAL);
            }
        }
    }

    /// The full game's W / D / illegal: every placement with player 1 to move is the half state
    /// `reduce(placement)`, and the colour swap maps the placements with player 0 to move onto
    /// the same multiset of half states, so each class counts twice; W = L by the swap.
    fn full_counts(&self) {
        let full = self.game.full();
        let mut n = [0u64; 4];
        for p in 0..full.placements() {
            n[self.values.get(self.game.reduce(p)) as usize] += 1;
        }
        println!(
            "{}: W {} L {} D {} illegal {} of {}",
            full.name(),
            n[1] + n[2],
            n[1] + n[2],
            2 * n[0],
            2 * n[3],
            full.size()
        );
    }
}

fn main() -> Result<()> {
    let (board, pieces, opts) = parse_args()?;
    let cpu0 = cpu_seconds();
    let full = Cc2p::new(board, pieces, TipRule::Exact)?;
    // As a build reduces it (Cc2pParams::reduced): the quarter where the board's reflection is a
    // symmetry, else the half.
    let game = if full.has_reflection() {
        Cc2pReduced::quarter(full)
    } else {
        Cc2pReduced::new(full)
    };
    anyhow::ensure!(
        game.alternates_sides(),
        "the re-checks assume alternating sides"
    );
    anyhow::ensure!(game.size() <= 1 << 32, "frontier files hold u32 indices");
    println!(
        "{}: {} states, values {:.1} MiB; batch {}, shortcut {}, mark {}",
        game.name(),
        game.size(),
        game.size().div_ceil(32) as f64 * 8.0 / (1 << 20) as f64,
        opts.batch,
        opts.shortcut,
        opts.mark
    );
    let mut s = Solver {
        game: &game,
        values: Values::new(game.size()),
        opts,
        stats: Stats::default(),
        won: 0,
        lost: 0,
        illegal: 0,
        cpu0,
        most_bytes: 0,
    };
    let (mut won, mut lost) = s.wave0()?;
    let cpu_wave0 = cpu_seconds() - cpu0;
    let mut k = 1;
    while won.len + lost.len > 0 {
        (won, lost) = s.wave(k, won, lost)?;
        k += 1;
    }
    let cpu = cpu_seconds() - cpu0;
    println!(
        "solved in {} waves: {:.2} CPU-s ({:.2} wave 0, {:.2} the waves after), peak RSS {:.1} \
         MiB, frontier files at most {} B on disk at once",
        k - 2,
        cpu,
        cpu_wave0,
        cpu - cpu_wave0,
        peak_rss_mib(),
        s.most_bytes
    );
    let t = &s.stats;
    println!(
        "re-checks: {} parents gathered, {} listed ({} became L, {} failed and became W in the \
         same wave), shortcut {} of {} calls; CPU-s: the W states' predecessors and re-checks \
         {:.2}, the L states' predecessors {:.2}",
        t.candidates,
        t.rechecks,
        t.became_loss,
        t.failed_then_won,
        t.shortcut_hits,
        t.shortcut_calls,
        t.cpu_rechecks,
        t.cpu_wins
    );
    if s.opts.stats && t.rechecks > 0 {
        let r = t.rechecks as f64;
        println!(
            "per listing: {:.2} successors, {:.2} examined to the first not W ({:.1} % at the \
             first child); from the back {:.2} ({:.1} % at the last)",
            t.listed as f64 / r,
            t.examined as f64 / r,
            t.at_first as f64 * 100.0 / r,
            t.examined_backwards as f64 / r,
            t.at_last as f64 * 100.0 / r
        );
    }
    if s.opts.full {
        if s.opts.mark {
            s.mark_illegal();
        }
        s.full_counts();
    }
    Ok(())
}
