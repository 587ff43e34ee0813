//! `kingmaker census DIR --terrain SPEC` / `--all`: TOPPEN results over the 252 starting
//! colourings of one terrain, or of every free decomino, from the `solo` layer of a run or release.
//! 1. The layer reads from A's side whoever moves first, so a census is `(A wins, B wins, draws)`.
//! 2. `--report FILE` (with `--all`) writes a Markdown section answering the questions of
//!    `docs/toppen.md` (scripts/toppen-report.sh assembles that page).

use crate::toppen::{census, Terrain, Toppen};
use crate::view::Solved;
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_kernel::Game;
use kingmaker_tablefmt::layer::ValuesPlane;
use kingmaker_tablefmt::release::manifest::thousands;
use kingmaker_tablefmt::Lookup;
use serde_json::json;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `kingmaker census`'s arguments.
#[derive(Args, Debug)]
pub struct CensusArgs {
    /// A run directory written by `kingmaker build toppen`, or a release packed from one.
    pub dir: PathBuf,
    /// One terrain: a SPEC of 10 edge-connected cells, rows separated by `/`, `#` a cell, `.` no
    /// cell (e.g. `####/#..#/####`).
    #[arg(long, conflicts_with = "all", required_unless_present = "all")]
    pub terrain: Option<String>,
    /// With --terrain: also list every colouring as a position (SPEC:COLOURS:SIDE, ready for
    /// `kingmaker line` or `query`) with its result.
    #[arg(long, requires = "terrain")]
    pub colourings: bool,
    /// Every free decomino (4655 terrains): a summary, and with --csv a row per terrain.
    #[arg(long)]
    pub all: bool,
    /// With --all: write `terrain,a,b,d,graph_class,automorphisms` for every terrain to FILE.
    #[arg(long, requires = "all")]
    pub csv: Option<PathBuf>,
    /// With --all: write a Markdown report (the questions of docs/toppen.md) to FILE.
    #[arg(long, requires = "all")]
    pub report: Option<PathBuf>,
    /// With --all: how many graph classes to list as most favourable to each player.
    #[arg(long, default_value_t = 5)]
    pub top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `kingmaker census`: on the tables of a TOPPEN run or release.
pub fn run(args: CensusArgs, tables: &dyn Solved) -> Result<()> {
    for path in [&args.csv, &args.report].into_iter().flatten() {
        check_output_file(path)?;
    }
    let game = tables.game().clone();
    // `kingmaker` checked the family before handing the tables over.
    let game: &Toppen = game
        .as_any()
        .downcast_ref()
        .expect("`census` runs on the tables of its own family");
    let table = tables.layer("solo")?;
    if table.states() != game.size() {
        bail!(
            "{}: the solo layer has {} states but the game has {}; rebuild the run",
            args.dir.display(),
            table.states(),
            game.size()
        );
    }
    let plane = values_plane(&*table)?;
    let values = &plane;
    if let Some(spec) = &args.terrain {
        let terrain = Toppen::parse_terrain(spec)?;
        let list = if args.colourings {
            Some(colourings(game, &*table, &terrain)?)
        } else {
            None
        };
        let row = census_row(game, values, terrain);
        if args.json {
            let mut out = row_json(game, &row);
            if let Some(list) = &list {
                out["colourings"] = list
                    .iter()
                    .map(|(position, result, depth)| {
                        json!({"position": position, "result": result, "depth": depth})
                    })
                    .collect();
            }
            println!("{}", serde_json::to_string_pretty(&out)?);
        } else {
            print!("{}", row_text(game, &row));
            for (position, result, depth) in list.iter().flatten() {
                match depth {
                    Some(d) => println!("{position}  {result} wins (depth {d})"),
                    None => println!("{position}  draw"),
                }
            }
        }
        return Ok(());
    }
    let rows: Vec<Row> = Toppen::all_decominoes()
        .into_iter()
        .map(|t| census_row(game, values, t))
        .collect();
    if let Some(path) = &args.csv {
        write_csv(path, &rows)?;
    }
    let overview = Overview::new(game, &rows);
    if let Some(path) = &args.report {
        let landmarks: Vec<(&str, Row)> = LANDMARKS
            .iter()
            .map(|&(name, spec)| {
                let terrain = Toppen::parse_terrain(spec).expect("a valid terrain");
                (name, census_row(game, values, terrain))
            })
            .collect();
        std::fs::write(path, report_markdown(&overview, &landmarks))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&overview.json(args.top))?
        );
    } else {
        print!("{}", overview.text(args.top));
        if let Some(path) = &args.csv {
            println!("csv: {} rows written to {}", rows.len(), path.display());
        }
        if let Some(path) = &args.report {
            println!("report written to {}", path.display());
        }
    }
    Ok(())
}

/// The census of every free decomino and who moves first, for `kingmaker report`; None unless
/// `tables` hold TOPPEN.
pub fn all_rows(tables: &dyn Solved) -> Result<Option<(u8, Vec<Row>)>> {
    let Some(game) = tables.game().as_any().downcast_ref::<Toppen>() else {
        return Ok(None);
    };
    let plane = values_plane(&*tables.layer("solo")?)?;
    let rows = Toppen::all_decominoes()
        .into_iter()
        .map(|t| census_row(game, &plane, t))
        .collect();
    Ok(Some((game.options().first, rows)))
}

/// The census of one terrain.
#[derive(Clone, Debug)]
pub struct Row {
    /// The terrain.
    pub terrain: Terrain,
    /// Colourings won by A, won by B, drawn (out of 252).
    pub a: u32,
    /// Won by B.
    pub b: u32,
    /// Drawn.
    pub d: u32,
    /// The terrain's graph class (terrains whose cell graphs are isomorphic).
    pub graph_class: usize,
    /// The automorphisms of its cell graph.
    pub automorphisms: u64,
}

impl Row {
    /// Wins of the player who moves first and of the other one.
    pub fn first_second(&self, first: u8) -> (u32, u32) {
        if first == 0 {
            (self.a, self.b)
        } else {
            (self.b, self.a)
        }
    }
}

/// Every value of the layer in memory (3.4 million states: a fraction of a second).
fn values_plane(table: &dyn Lookup) -> Result<ValuesPlane> {
    let values = (0..table.states())
        .map(|i| table.lookup(i).map(|(v, _)| v))
        .collect::<Result<Vec<u8>, _>>()?;
    Ok(ValuesPlane::from_values(&values))
}

fn census_row(game: &Toppen, values: &ValuesPlane, terrain: Terrain) -> Row {
    let (a, b, d) = census(|i| values.get(i), &game.starting_states(&terrain));
    let graph_class = game.graph_class(&terrain);
    Row {
        a,
        b,
        d,
        graph_class,
        automorphisms: game.automorphisms(graph_class),
        terrain,
    }
}

/// Every colouring of a terrain, in the order of `Toppen::starting_states`, as a position on the
/// terrain as given (the `k`-th mask with five bits set; bit `i` = the `i`-th cell in reading order
/// holds A), with its result (`A`, `B` or `D`) and, when decided, its depth.
fn colourings(
    game: &Toppen,
    table: &dyn Lookup,
    terrain: &Terrain,
) -> Result<Vec<(String, &'static str, Option<u16>)>> {
    let side = player(game.options().first);
    let masks = (0u16..1 << 10).filter(|m| m.count_ones() == 5);
    masks
        .zip(game.starting_states(terrain))
        .map(|(mask, index)| -> Result<_> {
            let colours: String = (0..10)
                .map(|i| if mask >> i & 1 == 1 { 'A' } else { 'B' })
                .collect();
            let position = format!("{}:{colours}:{side}", terrain.spec());
            let (value, depth) = table.lookup(index)?;
            Ok(match value {
                kingmaker_kernel::WIN => (position, "A", Some(depth)),
                kingmaker_kernel::LOSS => (position, "B", Some(depth)),
                _ => (position, "D", None),
            })
        })
        .collect()
}

fn player(p: u8) -> &'static str {
    ["A", "B"][p as usize]
}

fn variant(game: &Toppen) -> String {
    let o = game.options();
    format!(
        "{} moves, {} moves first",
        if o.diagonal {
            "8-neighbour"
        } else {
            "orthogonal"
        },
        player(o.first)
    )
}

fn row_json(game: &Toppen, row: &Row) -> serde_json::Value {
    let o = game.options();
    json!({
        "a": row.a,
        "b": row.b,
        "d": row.d,
        "terrain": row.terrain.spec(),
        "graph_class": row.graph_class,
        "automorphisms": row.automorphisms,
        "first": player(o.first),
        "diagonal": o.diagonal,
    })
}

/// A terrain drawn row by row (`#` a cell, `.` none), each line prefixed by `indent`.
fn terrain_picture(terrain: &Terrain, indent: &str) -> String {
    terrain
        .spec()
        .split('/')
        .map(|r| format!("{indent}{r}\n"))
        .collect()
}

fn row_text(game: &Toppen, row: &Row) -> String {
    let mut out = format!(
        "terrain {}  (graph class {}, {} automorphisms; {})\n",
        row.terrain.spec(),
        row.graph_class,
        row.automorphisms,
        variant(game)
    );
    out += &terrain_picture(&row.terrain, "  ");
    out += &format!(
        "over the 252 colourings: A wins {}, B wins {}, draws {}\n",
        row.a, row.b, row.d
    );
    out
}

/// Refuse an output file before the census is counted, not after: a directory there, or a
/// directory to write it in that does not exist. A file there is replaced (scripts/toppen-report.sh
/// reruns), and a device is written to (`/dev/null`, `/dev/stdout`).
fn check_output_file(path: &Path) -> Result<()> {
    use kingmaker_tablefmt::fsio::{destination, Existing};
    if destination(path)? == Existing::Dir {
        bail!("{} is a directory, not a file to write", path.display());
    }
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => {
            bail!(
                "{}: no such directory to write {} in",
                p.display(),
                path.display()
            )
        }
        _ => Ok(()),
    }
}

fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    let mut text = String::from("terrain,a,b,d,graph_class,automorphisms\n");
    for r in rows {
        writeln!(
            text,
            "{},{},{},{},{},{}",
            r.terrain.spec(),
            r.a,
            r.b,
            r.d,
            r.graph_class,
            r.automorphisms
        )?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// One graph class among the terrains: its census (the same for all its terrains), how many
/// terrains have it, and the first of them (in the order of `Toppen::all_decominoes`).
#[derive(Clone, Debug)]
struct ClassRow {
    row: Row,
    terrains: usize,
}

/// What `census --all` says, computed once for the text, the JSON and the report.
struct Overview {
    variant: String,
    first: u8,
    diagonal: bool,
    terrains: usize,
    classes: Vec<ClassRow>,
    /// Colourings over all terrains: A wins, B wins, draws.
    totals: (u64, u64, u64),
    /// Terrains on which the first player wins more colourings than the second, fewer, as many.
    first_ahead: usize,
    second_ahead: usize,
    even: usize,
    /// Classes with the second player ahead.
    second_ahead_classes: usize,
    /// Distinct (a, b, d) results and how many terrains have each.
    results: BTreeMap<(u32, u32, u32), usize>,
}

impl Overview {
    fn new(game: &Toppen, rows: &[Row]) -> Overview {
        let first = game.options().first;
        let mut by_class: BTreeMap<usize, ClassRow> = BTreeMap::new();
        let mut results = BTreeMap::new();
        let (mut ta, mut tb, mut td) = (0u64, 0u64, 0u64);
        let (mut first_ahead, mut second_ahead, mut even) = (0, 0, 0);
        for r in rows {
            by_class
                .entry(r.graph_class)
                .or_insert_with(|| ClassRow {
                    row: r.clone(),
                    terrains: 0,
                })
                .terrains += 1;
            *results.entry((r.a, r.b, r.d)).or_insert(0) += 1;
            ta += u64::from(r.a);
            tb += u64::from(r.b);
            td += u64::from(r.d);
            let (f, s) = r.first_second(first);
            match f.cmp(&s) {
                std::cmp::Ordering::Greater => first_ahead += 1,
                std::cmp::Ordering::Less => second_ahead += 1,
                std::cmp::Ordering::Equal => even += 1,
            }
        }
        let classes: Vec<ClassRow> = by_class.into_values().collect();
        let second_ahead_classes = classes
            .iter()
            .filter(|c| {
                let (f, s) = c.row.first_second(first);
                s > f
            })
            .count();
        Overview {
            variant: variant(game),
            first,
            diagonal: game.options().diagonal,
            terrains: rows.len(),
            classes,
            totals: (ta, tb, td),
            first_ahead,
            second_ahead,
            even,
            second_ahead_classes,
            results,
        }
    }

    fn first_name(&self) -> &'static str {
        player(self.first)
    }

    fn second_name(&self) -> &'static str {
        player(1 - self.first)
    }

    /// Classes best for player `p` (0 = A): most wins for `p`, then fewest for the other, then
    /// the first drawing.
    fn best_for(&self, p: u8) -> Vec<&ClassRow> {
        let mut v: Vec<&ClassRow> = self.classes.iter().collect();
        let key = |c: &ClassRow| {
            let (mine, theirs) = if p == 0 {
                (c.row.a, c.row.b)
            } else {
                (c.row.b, c.row.a)
            };
            (std::cmp::Reverse(mine), theirs)
        };
        v.sort_by_key(|c| key(c));
        v
    }

    /// Classes ordered by the first player's wins, fewest first (ties: the second player's wins,
    /// most first).
    fn worst_for_first(&self) -> Vec<&ClassRow> {
        let mut v: Vec<&ClassRow> = self.classes.iter().collect();
        v.sort_by_key(|c| {
            let (f, s) = c.row.first_second(self.first);
            (f, std::cmp::Reverse(s))
        });
        v
    }

    /// Classes ordered by the second player's expected score (win 1, draw 1/2), best first.
    fn best_score_for_second(&self) -> Vec<&ClassRow> {
        let mut v: Vec<&ClassRow> = self.classes.iter().collect();
        v.sort_by_key(|c| {
            let (f, s) = c.row.first_second(self.first);
            (std::cmp::Reverse(2 * s + c.row.d), f)
        });
        v
    }

    fn class_json(c: &ClassRow) -> serde_json::Value {
        json!({
            "terrain": c.row.terrain.spec(),
            "a": c.row.a,
            "b": c.row.b,
            "d": c.row.d,
            "graph_class": c.row.graph_class,
            "automorphisms": c.row.automorphisms,
            "terrains_in_class": c.terrains,
        })
    }

    fn json(&self, top: usize) -> serde_json::Value {
        let list = |v: Vec<&ClassRow>| -> Vec<serde_json::Value> {
            v.into_iter().take(top).map(Self::class_json).collect()
        };
        json!({
            "first": self.first_name(),
            "diagonal": self.diagonal,
            "terrains": self.terrains,
            "graph_classes": self.classes.len(),
            "colourings": {"a": self.totals.0, "b": self.totals.1, "d": self.totals.2},
            "terrains_first_ahead": self.first_ahead,
            "terrains_second_ahead": self.second_ahead,
            "terrains_even": self.even,
            "classes_second_ahead": self.second_ahead_classes,
            "distinct_results": self.results.len(),
            "best_for_a": list(self.best_for(0)),
            "best_for_b": list(self.best_for(1)),
            "worst_for_first": list(self.worst_for_first()),
        })
    }

    fn pct(&self, n: u64) -> f64 {
        100.0 * n as f64 / (252 * self.terrains) as f64
    }

    fn text(&self, top: usize) -> String {
        let (ta, tb, td) = self.totals;
        let (f, s) = (self.first_name(), self.second_name());
        let mut out = format!(
            "TOPPEN census of {} free decominoes ({}), 252 colourings each\n",
            self.terrains, self.variant
        );
        out += &format!(
            "graph classes: {} (terrains with isomorphic cell graphs have identical censuses)\n",
            self.classes.len()
        );
        out += &format!(
            "colourings: {} in all: A wins {} ({:.1}%), B wins {} ({:.1}%), draws {} ({:.1}%)\n",
            252 * self.terrains,
            ta,
            self.pct(ta),
            tb,
            self.pct(tb),
            td,
            self.pct(td)
        );
        out += &format!(
            "terrains: the first player ({f}) wins more colourings on {}, the second ({s}) on {} \
             ({} graph classes), as many on {}\n",
            self.first_ahead, self.second_ahead, self.second_ahead_classes, self.even
        );
        out += &format!(
            "distinct results (A, B, D): {}; most common:",
            self.results.len()
        );
        let mut common: Vec<_> = self.results.iter().collect();
        common.sort_by_key(|(k, n)| (std::cmp::Reverse(**n), **k));
        for ((a, b, d), n) in common.into_iter().take(3) {
            out += &format!("  {a}/{b}/{d} on {n} terrains");
        }
        out.push('\n');
        for (p, name) in [(0u8, "A"), (1u8, "B")] {
            out += &format!(
                "most favourable to {name} (A/B/D, terrains in the graph class, one drawing):\n"
            );
            for c in self.best_for(p).into_iter().take(top) {
                out += &format!(
                    "  {:>3}/{:>3}/{:>3}  {:>3} terrains  {}\n",
                    c.row.a,
                    c.row.b,
                    c.row.d,
                    c.terrains,
                    c.row.terrain.spec()
                );
            }
        }
        out
    }
}

fn chance(n: u32) -> String {
    format!("{n}/252 = {:.1}%", 100.0 * f64::from(n) / 252.0)
}

/// A Markdown table of classes with their census and one drawing.
fn class_table(classes: &[&ClassRow], first: u8) -> String {
    let mut out = format!(
        "| terrain (one drawing) | first player ({}) wins | second player ({}) wins | draws | terrains in the class |\n|---|---|---|---|---|\n",
        player(first),
        player(1 - first)
    );
    for c in classes {
        let (f, s) = c.row.first_second(first);
        out += &format!(
            "| `{}` | {f} | {s} | {} | {} |\n",
            c.row.terrain.spec(),
            c.row.d,
            c.terrains
        );
    }
    out
}

fn picture_block(c: &ClassRow) -> String {
    format!("```\n{}```\n", terrain_picture(&c.row.terrain, ""))
}

/// The terrains of docs/rules.md §2, shown in every report.
const LANDMARKS: [(&str, &str); 3] = [
    ("path", "##########"),
    ("ring", "####/#..#/####"),
    ("cross", "..#.../..#.../######/..#.../..#..."),
];

/// The Markdown section of docs/toppen.md for one run.
fn report_markdown(o: &Overview, landmarks: &[(&str, Row)]) -> String {
    let (f, s) = (o.first_name(), o.second_name());
    let (ta, tb, td) = o.totals;
    let all = 252 * o.terrains as u64;
    let mut build = String::from("kingmaker build toppen");
    if o.diagonal {
        build += " --diagonal";
    }
    if o.first == 1 {
        build += " --first B";
    }
    let mut heading = o.variant.clone();
    heading[..1].make_ascii_uppercase();
    let mut out = format!("## {heading}\n\n");
    {
        let pick = o.worst_for_first()[0];
        let (pf, ps) = pick.row.first_second(o.first);
        let (first_total, _) = if o.first == 0 { (ta, tb) } else { (tb, ta) };
        out += &format!(
            "**In brief.** Over all starting positions the first player ({f}) wins {:.1}%. {} \
             If {s} chooses the terrain, it picks `{}`, and {f}'s winning chance drops to {:.1}% \
             ({s} wins {:.1}%, draws {:.1}%).\n\n",
            o.pct(first_total),
            if o.second_ahead == 0 {
                format!("The second player ({s}) never wins more often than {f}.")
            } else {
                format!(
                    "The second player ({s}) wins more often than {f} on {} of the {} terrains.",
                    o.second_ahead, o.terrains
                )
            },
            pick.row.terrain.spec(),
            100.0 * f64::from(pf) / 252.0,
            100.0 * f64::from(ps) / 252.0,
            100.0 * f64::from(pick.row.d) / 252.0,
        );
    }
    out += &format!(
        "Built with `{build} --out DIR`, counted with `kingmaker census DIR --all`: {} terrains \
         (free decominoes) × 252 colourings = {} starting positions, {} graph classes among the \
         terrains.\n\n",
        o.terrains,
        thousands(all),
        o.classes.len()
    );
    out += &format!(
        "| | A wins | B wins | draws |\n|---|---|---|---|\n| colourings | {} ({:.1}%) | {} ({:.1}%) | {} ({:.1}%) |\n\n",
        thousands(ta),
        o.pct(ta),
        thousands(tb),
        o.pct(tb),
        thousands(td),
        o.pct(td)
    );
    out += "The terrains of docs/rules.md §2:\n\n| terrain | SPEC | A wins | B wins | draws |\n|---|---|---|---|---|\n";
    for (name, r) in landmarks {
        out += &format!(
            "| {name} | `{}` | {} | {} | {} |\n",
            r.terrain.spec(),
            r.a,
            r.b,
            r.d
        );
    }
    out.push('\n');
    out += &format!(
        "The first player ({f}) wins more colourings than the second ({s}) on {} terrains, fewer \
         on {}, as many on {}. There are {} distinct results (A, B, D).\n\n",
        o.first_ahead,
        o.second_ahead,
        o.even,
        o.results.len()
    );

    // Is there a terrain on which the second player wins more often than the first?
    out += "### Does the second player ever win more often than the first?\n\n";
    let second_best: Vec<&ClassRow> = o
        .best_for(1 - o.first)
        .into_iter()
        .filter(|c| {
            let (fw, sw) = c.row.first_second(o.first);
            sw > fw
        })
        .collect();
    if second_best.is_empty() {
        out += &format!(
            "No: on every terrain the first player ({f}) wins at least as many colourings as the \
             second ({s}).\n\n"
        );
    } else {
        out += &format!(
            "Yes: on {} of the {} terrains ({} graph classes) the second player ({s}) wins more \
             colourings than the first ({f}). The graph classes where {s} wins most:\n\n",
            o.second_ahead, o.terrains, o.second_ahead_classes
        );
        out += &class_table(
            &second_best.iter().take(10).copied().collect::<Vec<_>>(),
            o.first,
        );
        out.push('\n');
    }

    // If the second player chooses the terrain.
    out += "### If the second player chooses the terrain\n\n";
    out += &format!(
        "The second player ({s}) lays out the tiles, so it picks the terrain; the colours fall at \
         random (each of the 252 colourings equally likely), and then {f} moves first.\n\n"
    );
    let worst = o.worst_for_first();
    let pick = worst[0];
    let (pf, ps) = pick.row.first_second(o.first);
    let ties: Vec<&ClassRow> = worst
        .iter()
        .copied()
        .take_while(|c| c.row.first_second(o.first).0 == pf)
        .collect();
    out += &format!(
        "To make {f}'s winning chance as small as possible, {s} chooses `{}` ({}{}):\n\n",
        pick.row.terrain.spec(),
        if pick.terrains == 1 {
            "the only terrain with this cell graph".to_string()
        } else {
            format!(
                "or any of the {} terrains with the same cell graph",
                pick.terrains
            )
        },
        if ties.len() > 1 {
            format!("; {} classes tie", ties.len())
        } else {
            String::new()
        }
    );
    out += &picture_block(pick);
    out += &format!(
        "\nThen {f} wins with probability {}, {s} wins with {}, and {} end in a draw.\n\n",
        chance(pf),
        chance(ps),
        chance(pick.row.d)
    );
    let score = o.best_score_for_second();
    let best_wins = o.best_for(1 - o.first)[0];
    if best_wins.row.graph_class != pick.row.graph_class {
        let (bf, bs) = best_wins.row.first_second(o.first);
        out += &format!(
            "If {s} wants the most wins of its own instead, it chooses `{}`: {s} wins {}, {f} {}, \
             draws {}.\n\n",
            best_wins.row.terrain.spec(),
            chance(bs),
            chance(bf),
            chance(best_wins.row.d)
        );
        out += &picture_block(best_wins);
        out.push('\n');
    }
    let by_score = score[0];
    let (sf, ss) = by_score.row.first_second(o.first);
    out += &format!(
        "Counting a draw as half a win, {s}'s best expected score is {:.1}% on `{}` ({f} {}, \
         {s} {}, draws {}).\n\n",
        100.0 * (f64::from(ss) + f64::from(by_score.row.d) / 2.0) / 252.0,
        by_score.row.terrain.spec(),
        chance(sf),
        chance(ss),
        chance(by_score.row.d)
    );
    out += &format!("The ten graph classes worst for {f}:\n\n");
    out += &class_table(&worst.iter().take(10).copied().collect::<Vec<_>>(), o.first);
    out.push('\n');

    // The other end.
    out += &format!("### Most favourable to the first player ({f})\n\n");
    let best_first = o.best_for(o.first);
    out += &class_table(
        &best_first.iter().take(5).copied().collect::<Vec<_>>(),
        o.first,
    );
    out.push('\n');
    out += &picture_block(best_first[0]);
    out.push('\n');
    out
}
