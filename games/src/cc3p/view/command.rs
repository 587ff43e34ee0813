//! `kingmaker preferences DIR [--rule RULE]... [--sample N | --all-states] [--json]`: who wins a
//! cc3p build when every player follows a preference rule (docs/rules.md §1.4): the outcome census,
//! the last mover's share, the start's outcome and line. Level 2 gets the start exactly and a
//! uniform sample, or with `--all-states` the exact census by walks (`every_placement.rs`).

use super::every_placement::census_by_walks;
use super::preferences::{
    follow, follow_until, line, move_texts, outcomes, Outcome, Rule, AT_HAND_STATES, ENDLESS,
    ILLEGAL,
};
use super::rule_census::{Census, SEATS};
use crate::cc3p::answers::{answers, Cc3pTables, Class, LAYERS, PLAYERS};
use crate::cc3p::Cc3p;
use crate::view::Solved;
use anyhow::{bail, Result};
use clap::Args;
use kingmaker_kernel::memory::memory_limit;
use kingmaker_kernel::{Game, Node};
use kingmaker_tablefmt::layer::{BytePlane, LayerTable};
use kingmaker_tablefmt::release::manifest::thousands;
use kingmaker_tablefmt::Lookup;
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `kingmaker preferences`'s arguments.
#[derive(Args, Debug)]
pub struct PreferencesArgs {
    /// A finished cc3p run or release (all three layers, with their depths).
    pub dir: PathBuf,
    /// The rules to follow (default: every rule).
    #[arg(long, value_enum)]
    pub rule: Vec<Rule>,
    /// Count over this many states drawn uniformly at random (illegal ones left out), each
    /// followed to its end, instead of over every state: the default for games of more than
    /// 2^24 states, with 100,000. At least 1; a sample as large as the game counts every state
    /// exactly instead.
    #[arg(long, value_name = "N", value_parser = parse_sample)]
    pub sample: Option<u64>,
    /// The sample's seed (with `--sample`; a game's default sample uses seed 1).
    #[arg(long, default_value_t = 1, requires = "sample")]
    pub seed: u64,
    /// Count every state exactly, also where the game is too large for the retrograde pass
    /// (level 2): the rule is followed from every placement, the three layers held in memory
    /// a byte per state and the outcomes found a byte per placement (49.5 GB at level 2).
    /// Progress goes to standard error; one rule at a time (`--rule`) keeps each result as it
    /// comes.
    #[arg(long, conflicts_with = "sample")]
    pub all_states: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `--sample N`: a whole number of at least 1.
fn parse_sample(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err(
            "a sample of 0 states counts nothing: give at least 1, or leave --sample out".into(),
        ),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("{text:?} is not a number of states")),
    }
}

/// The sample size when none is given and the game is too large for the exact census.
const DEFAULT_SAMPLE: u64 = 100_000;

/// How many walked states' outcomes a thread of the sampled census remembers.
const MEMO_STATES: usize = 1 << 24;

/// `kingmaker preferences`: on the tables of a cc3p run or release.
pub fn run(args: PreferencesArgs, tables: &dyn Solved) -> Result<()> {
    let game = tables.game().clone();
    // `kingmaker` checked the family before handing the tables over.
    let game: &Cc3p = game
        .as_any()
        .downcast_ref()
        .expect("`preferences` runs on the tables of its own family");
    let t = Cc3pTables {
        solo: tables.layer(LAYERS[0])?,
        enable_ab: tables.layer(LAYERS[1])?,
        enable_ac: tables.layer(LAYERS[2])?,
        depths: tables.layers().iter().all(|l| l.depths),
    };
    // The rules win fastest and hand the win to whoever wins sooner: values alone would read
    // every depth as 0 and follow other moves.
    if !t.depths {
        let without: Vec<&str> = tables
            .layers()
            .iter()
            .filter(|l| !l.depths)
            .map(|l| l.name.as_str())
            .collect();
        bail!(
            "{} holds the values of {} without their depths (a copy fetched with \
             --values-only): the preference rules choose moves by depth. Fetch the layers with \
             their depths (`kingmaker fetch URL {}`)",
            args.dir.display(),
            without.join(", "),
            args.dir.display()
        );
    }
    let rules = if args.rule.is_empty() {
        Rule::ALL.to_vec()
    } else {
        args.rule.clone()
    };
    let sample = match args.sample {
        None if args.all_states => None,
        None if game.size() > AT_HAND_STATES => Some(DEFAULT_SAMPLE),
        // A sample as large as the game: every state once, exactly, where they can be held.
        Some(n) if n >= game.size() && game.size() <= AT_HAND_STATES => {
            eprintln!(
                "a sample of {} is not smaller than the game's {} states: counting every state \
                 exactly instead",
                thousands(n),
                thousands(game.size())
            );
            None
        }
        Some(n) if n >= game.size() => bail!(
            "a sample of {} is not smaller than the game's {} states, too many to count \
             exactly here: give a sample below that",
            thousands(n),
            thousands(game.size())
        ),
        n => n,
    };
    let out = match sample {
        _ if args.all_states => by_walks(game, &t, &rules)?,
        None => exact(game, &t, &rules)?,
        Some(n) => sampled(game, &t, &rules, n, args.seed)?,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{}: outcomes when every player follows the rule (A, B, C wins; endless: play cycles)",
        game.name()
    );
    if let Some(sample) = out.first().map(|r| &r["sample"]).filter(|s| !s.is_null()) {
        println!(
            "counted over a sample of {} states (seed {}), each followed to its end; shares with \
             95 % intervals",
            thousands(sample["drawn"].as_u64().unwrap_or(0)),
            sample["seed"]
        );
    }
    for r in &out {
        let sampled = !r["sample"].is_null();
        let row = |c: &Value| {
            let total: u64 = ["A", "B", "C", "endless"]
                .iter()
                .map(|k| c[k].as_u64().unwrap_or(0))
                .sum();
            // A group the sample missed has no shares to give (nor intervals).
            if sampled && total == 0 {
                return "no states".to_string();
            }
            ["A", "B", "C", "endless"]
                .iter()
                .map(|k| {
                    let n = c[k].as_u64().unwrap_or(0);
                    if sampled {
                        format!("{k} {}", share(n, total))
                    } else {
                        format!("{k} {}", thousands(n))
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        // Who wins, seen from the mover: a share of the live (or kingmaker) states.
        let seats = |c: &Value| {
            let total: u64 = SEATS.iter().map(|(k, _)| c[k].as_u64().unwrap_or(0)).sum();
            if total == 0 {
                return "no states".to_string();
            }
            SEATS
                .iter()
                .map(|(k, words)| {
                    let n = c[k].as_u64().unwrap_or(0);
                    if sampled {
                        format!("{words} {}", share(n, total))
                    } else {
                        let percent = 100.0 * n as f64 / total as f64;
                        format!("{words} {} ({percent:.1} %)", thousands(n))
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!("\n{}", r["rule"].as_str().unwrap_or(""));
        println!("  all legal states  {}", row(&r["all"]));
        println!("  kingmaker states  {}", row(&r["kingmaker"]));
        println!("  live states, who wins: {}", seats(&r["by_seat"]));
        println!(
            "  kingmaker states, who wins: {}",
            seats(&r["kingmaker_by_seat"])
        );
        let s = &r["start"];
        let moves: Vec<&str> = s["line"]
            .as_array()
            .map(|l| l.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let ending = match s["cycle_from"].as_u64() {
            Some(k) => format!("then the moves from ply {k} repeat for ever"),
            None => format!("{} plies", s["plies"]),
        };
        println!(
            "  the start: {} ({ending}): {}",
            s["outcome"].as_str().unwrap_or(""),
            moves.join(", ")
        );
    }
    Ok(())
}

/// `n` of `total` sampled states as a percentage with its 95 % interval, or "no states" for an
/// empty group.
fn share(n: u64, total: u64) -> String {
    match wilson(n, total) {
        None => "no states".into(),
        Some((lo, hi)) => format!(
            "{:.2} % ({:.2}–{:.2} %)",
            100.0 * n as f64 / total as f64,
            100.0 * lo,
            100.0 * hi
        ),
    }
}

/// The 95 % two-sided quantile of the normal distribution.
const Z95: f64 = 1.959_963_984_540_054;

/// The 95 % Wilson score interval of a proportion, `n` successes of `total` (None when `total`
/// is 0). Wilson, not the normal approximation (p ± z·√(p(1−p)/n)): that one has width 0 at 0
/// and at `total`, and goes below 0 or above 1 on small samples; Wilson's stays inside [0, 1], is
/// wide where the sample is small, and covers close to 95 % at every p (Clopper–Pearson would
/// cover more than asked, and needs the beta quantile).
fn wilson(n: u64, total: u64) -> Option<(f64, f64)> {
    if total == 0 {
        return None;
    }
    let (t, p) = (total as f64, n.min(total) as f64 / total as f64);
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * t)) / (1.0 + z2 / t);
    let half = Z95 / (1.0 + z2 / t) * (p * (1.0 - p) / t + z2 / (4.0 * t * t)).sqrt();
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// Every rule's census over every state, from one retrograde pass per rule.
fn exact<T: Lookup + Sync>(game: &Cc3p, t: &Cc3pTables<T>, rules: &[Rule]) -> Result<Vec<Value>> {
    // The class and mover of every state, once for all rules.
    let classes: Vec<(Class, Option<u8>)> = (0..game.size())
        .map(|s| {
            let mover = match game.node(s) {
                Node::Live { mover } => Some(mover),
                _ => None,
            };
            Ok((answers(game, t, s)?.class, mover))
        })
        .collect::<Result<_>>()?;
    let start = game.start_index();
    let mut out = Vec::new();
    for &rule in rules {
        let o = outcomes(game, t, rule)?;
        let mut census = Census::default();
        for (s, &w) in o.outcome.iter().enumerate() {
            if w != ILLEGAL {
                census.add(w, classes[s].0, classes[s].1);
            }
        }
        let (plies, cycle) = line(game, &o, start);
        let start = start_json(game, o.outcome[start as usize], &plies, cycle);
        out.push(census.json(rule, start));
    }
    Ok(out)
}

/// Every rule's census over every state, by walks from every placement
/// ([`census_by_walks`]) over the three layers held in memory.
fn by_walks(game: &Cc3p, t: &Cc3pTables<Arc<LayerTable>>, rules: &[Rule]) -> Result<Vec<Value>> {
    let gb = |b: u64| format!("{:.1} GB", b as f64 / 1e9);
    let need = 3 * game.size() + game.placements();
    let limit = memory_limit();
    if need > limit.bytes {
        bail!(
            "counting every state by walks holds the three layers in memory, a byte per state, \
             and a byte per placement: {}, more than the {} of {}. Run it on a machine with more \
             memory, or count a sample (--sample N)",
            gb(need),
            gb(limit.bytes),
            limit.source
        );
    }
    let began = Instant::now();
    let plane = |l: &Arc<LayerTable>| BytePlane::of(l);
    let planes = Cc3pTables {
        solo: plane(&t.solo)?,
        enable_ab: plane(&t.enable_ab)?,
        enable_ac: plane(&t.enable_ac)?,
        depths: true,
    };
    eprintln!(
        "the three layers held in memory, a byte per state ({}), in {:.0} s",
        gb(3 * game.size()),
        began.elapsed().as_secs_f64()
    );
    let start = game.start_index();
    let placements = game.placements();
    let mut out = Vec::new();
    for &rule in rules {
        let began = Instant::now();
        let done = AtomicU64::new(0);
        let said = Mutex::new(Instant::now());
        let progress = |n: u64| {
            let done = done.fetch_add(n, Relaxed) + n;
            let mut said = said.lock().unwrap_or_else(|p| p.into_inner());
            if said.elapsed() >= PROGRESS_EVERY {
                *said = Instant::now();
                let secs = began.elapsed().as_secs_f64();
                let left = secs * (placements - done) as f64 / done.max(1) as f64;
                eprintln!(
                    "{}: {} of {} placements ({:.1} %) in {secs:.0} s, about {left:.0} s left",
                    rule.name(),
                    thousands(done),
                    thousands(placements),
                    100.0 * done as f64 / placements as f64
                );
            }
        };
        let census = census_by_walks(game, &planes, rule, &progress)?;
        let r = census.json(rule, start_followed(game, &planes, rule, start)?);
        eprintln!(
            "{}: every state counted in {:.0} s: {}",
            rule.name(),
            began.elapsed().as_secs_f64(),
            r["all"]
        );
        out.push(r);
    }
    Ok(out)
}

/// How often a census by walks says how far it got.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// Every rule's census over `n` states drawn uniformly at random with `seed` (the illegal ones
/// left out), each followed to its end; the start followed exactly.
fn sampled<T: Lookup + Sync>(
    game: &Cc3p,
    t: &Cc3pTables<T>,
    rules: &[Rule],
    n: u64,
    seed: u64,
) -> Result<Vec<Value>> {
    use rayon::prelude::*;
    let start = game.start_index();
    let mut out = Vec::new();
    for &rule in rules {
        // The outcome, class and mover of each sampled legal state.
        // Each thread remembers the outcome of every state its walks passed (`MEMO_STATES`
        // at most): later walks stop where they meet one.
        let drawn: Vec<Option<(Outcome, Class, Option<u8>)>> = (0..n)
            .into_par_iter()
            .map_init(HashMap::new, |memo: &mut HashMap<u64, Outcome>, i| {
                let s = SplitMix64::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i)
                    .next_u64()
                    % game.size();
                let mover = match game.node(s) {
                    Node::Illegal => return Ok(None),
                    Node::Live { mover } => Some(mover),
                    Node::Terminal { .. } => None,
                };
                let (outcome, states, _) =
                    follow_until(game, t, rule, s, |c| memo.get(&c).copied())?;
                if memo.len() > MEMO_STATES {
                    memo.clear();
                }
                memo.extend(states.into_iter().chain([s]).map(|c| (c, outcome)));
                Ok(Some((outcome, answers(game, t, s)?.class, mover)))
            })
            .collect::<Result<_>>()?;
        let mut census = Census::default();
        for &(w, class, mover) in drawn.iter().flatten() {
            census.add(w, class, mover);
        }
        let start = start_followed(game, t, rule, start)?;
        let mut r = census.json(rule, start);
        r["sample"] = json!({"drawn": n, "legal": census.legal(), "seed": seed});
        out.push(r);
    }
    Ok(out)
}

/// The start's outcome and line, found by following `rule` from it (what a census without every
/// state's choices gives: the sampled one, and the one by walks).
fn start_followed<T: Lookup>(
    game: &Cc3p,
    t: &Cc3pTables<T>,
    rule: Rule,
    start: u64,
) -> Result<Value> {
    let (outcome, states, cycle) = follow(game, t, rule, start)?;
    let plies = move_texts(game, start, &states);
    Ok(start_json(game, outcome, &plies, cycle))
}

/// The start's outcome and its line: `plies` are the moves, `cycle` where their repeating part
/// starts.
fn start_json(
    game: &Cc3p,
    outcome: Outcome,
    plies: &[(String, u64)],
    cycle: Option<usize>,
) -> Value {
    json!({
        "outcome": outcome_name(outcome),
        "plies": if cycle.is_some() { 0 } else { plies.len() },
        "line": plies.iter().map(|(m, _)| m).collect::<Vec<_>>(),
        "cycle_from": cycle,
        "end": plies.last().map(|(_, c)| game.format_position(*c)),
    })
}

fn outcome_name(o: u8) -> String {
    match o {
        ENDLESS => "endless".into(),
        ILLEGAL => "illegal".into(),
        w => format!("{} wins", PLAYERS[usize::from(w)]),
    }
}

#[cfg(test)]
mod tests {
    use super::{share, wilson};

    /// The interval, rounded to four places as published.
    fn rounded(n: u64, total: u64) -> (f64, f64) {
        let (lo, hi) = wilson(n, total).expect("a non-empty sample");
        ((lo * 1e4).round() / 1e4, (hi * 1e4).round() / 1e4)
    }

    #[test]
    fn wilson_matches_published_intervals() {
        // Newcombe, "Two-sided confidence intervals for the single proportion" (Statistics in
        // Medicine 17, 1998), table I, method 3 (score interval without continuity correction).
        assert_eq!(rounded(81, 263), (0.2553, 0.3662));
        assert_eq!(rounded(15, 148), (0.0624, 0.1605));
        assert_eq!(rounded(0, 20), (0.0, 0.1611));
        assert_eq!(rounded(1, 29), (0.0061, 0.1718));
        // The other end, by symmetry, and a small sample inside.
        assert_eq!(rounded(20, 20), (0.8389, 1.0));
        assert_eq!(rounded(5, 20), (0.1119, 0.4687));
    }

    #[test]
    fn wilson_holds_at_the_ends_and_for_one_state() {
        // One state says little: the interval is wide, not a point.
        let (lo, hi) = wilson(1, 1).unwrap();
        assert!(lo > 0.2 && lo < 0.21 && hi == 1.0, "{lo} {hi}");
        let (lo, hi) = wilson(0, 1).unwrap();
        assert!(lo == 0.0 && hi > 0.79, "{lo} {hi}");
        for total in [1, 2, 3, 20, 3000] {
            for n in 0..=total.min(40) {
                let (lo, hi) = wilson(n, total).unwrap();
                let p = n as f64 / total as f64;
                assert!((0.0..=p).contains(&lo) && (p..=1.0).contains(&hi) && lo < hi);
            }
        }
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn shares_print_their_interval_or_no_states() {
        assert_eq!(share(5, 20), "25.00 % (11.19–46.87 %)");
        assert_eq!(share(0, 20), "0.00 % (0.00–16.11 %)");
        assert_eq!(share(1, 1), "100.00 % (20.65–100.00 %)");
        assert_eq!(share(0, 0), "no states");
    }
}
