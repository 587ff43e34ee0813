//! A prototype for issue 65: cc2p's quarter solved on one thread with 3 or 4 bits a state, the
//! value or a small count of the children not yet W; a state with more is re-checked by listing
//! its children, once a wave at most. What two_bit_solve measures, with counters where they fit.
//! 1. `cargo run --release -p kingmaker-games --example counted_solve -- 7 3 [--bits 3|4] [--full] [--tmp DIR]`
//! 2. Prints per wave what the kernel's log prints ("decided N"), the totals, CPU time and peak RSS.

mod prototype;

use anyhow::{bail, Context, Result};
use kingmaker_games::cc2p::reduced::Cc2pReduced;
use kingmaker_games::cc2p::{Cc2p, TipRule};
use kingmaker_kernel::{Game, Node};
use prototype::{cpu_seconds, each_node, peak_rss_mib, Frontier, Spool};
use std::path::PathBuf;

/// Never reached by a W child yet, so not counted (illegal states stay here: no move reaches them).
const UNCOUNTED: u64 = 0;
/// Counted, with more children not yet W than a code holds.
const MANY: u64 = 1;
/// To be re-checked once the wave's W states have all reached it.
const PENDING: u64 = 2;
const WIN: u64 = 3;
const LOSS: u64 = 4;
/// Codes `COUNT + n` for `n` in `1..=K`: that many children not yet W.
const COUNT: u64 = 4;

/// Every state's code in `B` bits, `64 / B` to a word: the only memory a state has.
struct Cells<const B: u32>(Vec<u64>);

impl<const B: u32> Cells<B> {
    const PER: u64 = (64 / B) as u64;
    const MASK: u64 = (1 << B) - 1;
    /// The largest count a code holds.
    const K: u64 = Self::MASK - COUNT;

    fn new(states: u64) -> Self {
        Cells(vec![0; states.div_ceil(Self::PER) as usize])
    }

    #[inline]
    fn get(&self, i: u64) -> u64 {
        self.0[(i / Self::PER) as usize] >> (i % Self::PER * B as u64) & Self::MASK
    }

    #[inline]
    fn set(&mut self, i: u64, v: u64) {
        let (w, s) = (
            &mut self.0[(i / Self::PER) as usize],
            i % Self::PER * B as u64,
        );
        *w = *w & !(Self::MASK << s) | v << s;
    }

    fn mib(&self) -> f64 {
        self.0.len() as f64 * 8.0 / (1 << 20) as f64
    }
}

/// What the counters and re-checks did, over the whole solve.
#[derive(Default)]
struct Stats {
    /// States counted when their first W child reached them.
    counted: u64,
    /// Parents listed at the end of a wave, those of them that became L, and those left MANY.
    listed: u64,
    listed_loss: u64,
    listed_many: u64,
    /// Parents made L by their count reaching zero.
    count_loss: u64,
    cpu_wins: f64,
    cpu_listings: f64,
    cpu_losses: f64,
}

struct Solver<'a, const B: u32> {
    game: &'a Cc2pReduced,
    cells: Cells<B>,
    tmp: PathBuf,
    stats: Stats,
    won: u64,
    lost: u64,
    illegal: u64,
    cpu0: f64,
}

impl<const B: u32> Solver<'_, B> {
    /// Wave 0: the terminal states, in runs as the kernel's initial pass classifies them. Live
    /// states are counted only when a W child first reaches them, as the kernel does.
    fn wave0(&mut self) -> Result<(Frontier, Frontier)> {
        let (mut w, mut l) = (Spool::new(&self.tmp)?, Spool::new(&self.tmp)?);
        let game = self.game;
        each_node(game, |i, node| {
            match node {
                Node::Illegal => self.illegal += 1,
                Node::Terminal { outcome: 0 } => {
                    self.cells.set(i, WIN);
                    w.push(i)?;
                }
                Node::Terminal { .. } => {
                    self.cells.set(i, LOSS);
                    l.push(i)?;
                }
                Node::Live { .. } => {}
            }
            Ok(())
        })?;
        self.finish_wave(0, w, l)
    }

    /// Wave `k` from the frontier of wave `k - 1`, in three phases:
    /// 1. the W states' parents count down (counted first where they were not), and those with
    ///    more children left than a code holds are marked PENDING and spooled;
    /// 2. each PENDING parent lists its children: none left but W makes it L, a few are counted;
    /// 3. the L states' parents become W.
    ///
    /// A count never includes a W child whose decrement is still to come: phase 2 runs after every
    /// W state of the wave has reached its parents. The depths are exact as in two_bit_solve: the
    /// L states of wave k are the parents whose last child not W became W in wave k - 1.
    fn wave(
        &mut self,
        k: u32,
        mut won: Frontier,
        mut lost: Frontier,
    ) -> Result<(Frontier, Frontier)> {
        let (mut w, mut l) = (Spool::new(&self.tmp)?, Spool::new(&self.tmp)?);
        let mut pending = Spool::new(&self.tmp)?;
        let mut preds = Vec::new();
        let t0 = cpu_seconds();
        while let Some(c) = won.next()? {
            preds.clear();
            self.game.predecessors(c, &mut preds);
            for &p in &preds {
                let left = match self.cells.get(p) {
                    UNCOUNTED => {
                        self.stats.counted += 1;
                        self.game.successor_count(p) as u64 - 1
                    }
                    MANY => Cells::<B>::K + 1,
                    code if code > COUNT => code - COUNT - 1,
                    _ => continue,
                };
                if left == 0 {
                    self.cells.set(p, LOSS);
                    self.stats.count_loss += 1;
                    l.push(p)?;
                } else if left <= Cells::<B>::K {
                    self.cells.set(p, COUNT + left);
                } else {
                    self.cells.set(p, PENDING);
                    pending.push(p)?;
                }
            }
        }
        let t1 = cpu_seconds();
        let mut pending = pending.into_frontier()?;
        let mut kids = Vec::new();
        while let Some(p) = pending.next()? {
            kids.clear();
            self.game.successors(p, &mut kids);
            self.stats.listed += 1;
            let mut left = 0;
            for &c in &kids {
                left += u64::from(self.cells.get(c) != WIN);
                if left > Cells::<B>::K {
                    break;
                }
            }
            if left == 0 {
                self.cells.set(p, LOSS);
                self.stats.listed_loss += 1;
                l.push(p)?;
            } else if left <= Cells::<B>::K {
                self.cells.set(p, COUNT + left);
            } else {
                self.cells.set(p, MANY);
                self.stats.listed_many += 1;
            }
        }
        let t2 = cpu_seconds();
        while let Some(c) = lost.next()? {
            preds.clear();
            self.game.predecessors(c, &mut preds);
            for &p in &preds {
                if !matches!(self.cells.get(p), WIN | LOSS) {
                    self.cells.set(p, WIN);
                    w.push(p)?;
                }
            }
        }
        let t3 = cpu_seconds();
        self.stats.cpu_wins += t1 - t0;
        self.stats.cpu_listings += t2 - t1;
        self.stats.cpu_losses += t3 - t2;
        self.finish_wave(k, w, l)
    }

    fn finish_wave(&mut self, k: u32, w: Spool, l: Spool) -> Result<(Frontier, Frontier)> {
        self.won += w.len;
        self.lost += l.len;
        let undecided = self.game.size() - self.illegal - self.won - self.lost;
        println!(
            "wave {k}: decided {} (W {} L {}), total {}; W {} L {} D {} illegal {}; \
             {:.2} CPU-s, peak RSS {:.1} MiB",
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
        );
        Ok((w.into_frontier()?, l.into_frontier()?))
    }

    /// The full game's W / D / illegal, as two_bit_solve maps them (each class counts twice).
    fn full_counts(&self) {
        let full = self.game.full();
        let mut n = [0u64; 4];
        for p in 0..full.placements() {
            let q = self.game.reduce(p);
            n[match self.cells.get(q) {
                WIN => 1,
                LOSS => 2,
                _ if self.game.node(q) == Node::Illegal => 3,
                _ => 0,
            }] += 1;
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

fn solve<const B: u32>(game: &Cc2pReduced, tmp: PathBuf, full: bool, cpu0: f64) -> Result<()> {
    let mut s = Solver::<B> {
        game,
        cells: Cells::new(game.size()),
        tmp,
        stats: Stats::default(),
        won: 0,
        lost: 0,
        illegal: 0,
        cpu0,
    };
    println!(
        "{}: {} states, {B} bits a state ({:.1} MiB), counts to {}",
        game.name(),
        game.size(),
        s.cells.mib(),
        Cells::<B>::K
    );
    let (mut won, mut lost) = s.wave0()?;
    let cpu_wave0 = cpu_seconds() - cpu0;
    let mut k = 1;
    while won.len + lost.len > 0 {
        (won, lost) = s.wave(k, won, lost)?;
        k += 1;
    }
    let cpu = cpu_seconds() - cpu0;
    println!(
        "solved in {} waves: {:.2} CPU-s ({:.2} wave 0, {:.2} the waves after), peak RSS {:.1} MiB",
        k - 2,
        cpu,
        cpu_wave0,
        cpu - cpu_wave0,
        peak_rss_mib(),
    );
    let t = &s.stats;
    println!(
        "{} counted, {} L by their count; {} listed ({} became L, {} left MANY); CPU-s: the W \
         states' parents {:.2}, the listings {:.2}, the L states' parents {:.2}",
        t.counted,
        t.count_loss,
        t.listed,
        t.listed_loss,
        t.listed_many,
        t.cpu_wins,
        t.cpu_listings,
        t.cpu_losses
    );
    if full {
        s.full_counts();
    }
    Ok(())
}

fn main() -> Result<()> {
    let usage = "usage: counted_solve BOARD PIECES [--bits 3|4] [--full] [--tmp DIR] (e.g. 7 3)";
    let (mut bits, mut full, mut tmp) = (3u32, false, std::env::temp_dir());
    let mut nums = Vec::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--bits" => bits = it.next().context(usage)?.parse().context(usage)?,
            "--full" => full = true,
            "--tmp" => tmp = it.next().context(usage)?.into(),
            n => nums.push(n.parse::<u8>().with_context(|| format!("{n:?}: {usage}"))?),
        }
    }
    let [board, pieces] = nums[..] else {
        bail!("{usage}");
    };
    let cpu0 = cpu_seconds();
    let game = Cc2p::new(board, pieces, TipRule::Exact)?;
    // As a build reduces it (Cc2pParams::reduced).
    let game = if game.has_reflection() {
        Cc2pReduced::quarter(game)
    } else {
        Cc2pReduced::new(game)
    };
    anyhow::ensure!(
        game.alternates_sides(),
        "the counts assume alternating sides"
    );
    anyhow::ensure!(game.size() <= 1 << 32, "frontier files hold u32 indices");
    match bits {
        3 => solve::<3>(&game, tmp, full, cpu0),
        4 => solve::<4>(&game, tmp, full, cpu0),
        _ => bail!("--bits {bits}: 3 or 4"),
    }
}
