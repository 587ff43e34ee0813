//! `kingmaker report DIR --out FILE`: one self-contained HTML page of charts and tables of a run
//! or a release — each layer's counts, the states decided at each depth (the wave that decided
//! them), where the time went (a run's `waves.jsonl`), and the game's own sections
//! ([`kingmaker_games::view::GameView::report`]).
//! Charts are drawn with plotters as SVG, their numbers listed beside them.

use crate::cmd::summarize::compute_summary;
use anyhow::{bail, Context, Result};
use clap::Args;
use kingmaker_coordinator::digits::thousands;
use kingmaker_coordinator::rundir::{read_json, RunDir};
use kingmaker_coordinator::summary::{default_reach, is_counts_only};
use kingmaker_coordinator::tables::open_tables;
use kingmaker_coordinator::tables::{kind_name, Tables};
use kingmaker_games::view::report::{Part, Section};
use kingmaker_probe::{Game, Kind, Value as Outcome};
use kingmaker_tablefmt::fsio::{destination, write_atomically, Existing};
use kingmaker_tablefmt::run::{read_waves, WaveRecord};
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A finished run directory or a release.
    pub dir: PathBuf,
    /// The HTML file to write. An existing file is refused unless --force is given.
    #[arg(long, default_value = "report.html")]
    pub out: PathBuf,
    /// Replace --out if it exists.
    #[arg(long)]
    pub force: bool,
}

/// States read at a time for the depth counts.
const CHUNK: usize = 1 << 22;
const CHART: (u32, u32) = (760, 340);
const WIN: RGBColor = RGBColor(31, 107, 58);
const LOSS: RGBColor = RGBColor(155, 28, 28);
const PALETTE: [RGBColor; 6] = [
    RGBColor(47, 111, 214),
    RGBColor(217, 65, 43),
    RGBColor(46, 139, 87),
    RGBColor(122, 86, 0),
    RGBColor(50, 62, 155),
    RGBColor(107, 114, 128),
];

pub fn run(args: ReportArgs) -> Result<()> {
    check_out(&args.out, args.force)?;
    let tables = open_tables(&args.dir)?;
    let summary = summary_of(&tables)?;
    let mut page = Page::default();
    let name = tables.game().name();
    page.title = format!("Kingmaker report: {name}");
    page.intro = format!(
        "{} of {}, {} states, from {}.",
        kind_name(&tables),
        serde_json::to_string(tables.spec())?,
        thousands(tables.states()),
        args.dir.display()
    );
    layers_section(&mut page, &tables, &summary);
    for layer in tables.layers().iter().filter(|l| l.present && l.depths) {
        eprintln!("report: counting the depths of {}", layer.name);
        let counts = depth_counts(&tables, &layer.name)?;
        depth_section(&mut page, &layer.name, &counts)?;
    }
    if tables.kind() == Kind::Run {
        let waves = read_waves(tables.dir())?;
        if !waves.is_empty() {
            time_section(&mut page, &waves)?;
        }
    }
    for section in tables.game().view().report(&tables, &summary)? {
        game_section(&mut page, &section)?;
    }
    // Whole or not at all: a failed write leaves what was there.
    write_atomically(&args.out, page.html().as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    println!("report written to {}", args.out.display());
    Ok(())
}

/// Refuse `--out` before anything is read or computed: an existing file unless `force` (it may
/// be anything, a release's own file among them), a directory, a device or a FIFO, or a file
/// in a directory that does not exist.
fn check_out(out: &Path, force: bool) -> Result<()> {
    match destination(out)? {
        Existing::Nothing => {}
        Existing::File if force => {}
        Existing::File => bail!(
            "{} already exists: pass --force to replace it, or choose another --out",
            out.display()
        ),
        Existing::Dir => bail!(
            "{} is a directory: --out names the HTML file to write",
            out.display()
        ),
        Existing::Other(kind) => bail!(
            "{} is {kind}, not a file: --out names the HTML file to write",
            out.display()
        ),
    }
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => bail!(
            "{} is not a directory: --out names a file in a directory that exists",
            p.display()
        ),
        _ => Ok(()),
    }
}

/// The build's `summary.json`: a run's own, or the copy a release's manifest keeps. A run whose
/// layers stayed on the workers has only their counts there: the rest (classes, the start) is
/// computed from the parts, which `tables` reads too.
fn summary_of(tables: &Tables) -> Result<Value> {
    match tables.manifest() {
        Some(m) => Ok(m.provenance.summary.clone()),
        None => {
            let path = tables.dir().join("summary.json");
            let summary: Value = read_json(&path, "a summary.json")?;
            if !is_counts_only(&summary) {
                return Ok(summary);
            }
            eprintln!("report: computing the summary from the layers kept on the workers");
            let (run, info) = RunDir::open(tables.dir())?;
            compute_summary(&run, &info, default_reach(info.states), None)
        }
    }
}

/// States won and lost at each depth of one layer.
#[derive(Default)]
struct DepthCounts {
    win: Vec<u64>,
    loss: Vec<u64>,
    draw: u64,
    illegal: u64,
}

fn depth_counts(tables: &Tables, layer: &str) -> Result<DepthCounts> {
    let mut c = DepthCounts::default();
    let file = tables.layer(layer)?;
    let (mut values, mut depths) = (vec![0u8; CHUNK], vec![0u16; CHUNK]);
    let mut first = 0;
    while first < tables.states() {
        let n = CHUNK.min((tables.states() - first) as usize);
        let (values, depths) = (&mut values[..n], &mut depths[..n]);
        // One read for both: each block is decompressed once.
        file.read_states(first, values, depths)?;
        for (&v, &d) in values.iter().zip(depths.iter()) {
            let slot = match Outcome::from_code(v) {
                Some(Outcome::Win) => &mut c.win,
                Some(Outcome::Loss) => &mut c.loss,
                Some(Outcome::Draw) => {
                    c.draw += 1;
                    continue;
                }
                _ => {
                    c.illegal += 1;
                    continue;
                }
            };
            let d = usize::from(d);
            if slot.len() <= d {
                slot.resize(d + 1, 0);
            }
            slot[d] += 1;
        }
        first += n as u64;
    }
    let len = c.win.len().max(c.loss.len());
    c.win.resize(len, 0);
    c.loss.resize(len, 0);
    Ok(c)
}

fn layers_section(page: &mut Page, tables: &Tables, summary: &Value) {
    let mut rows = String::new();
    for l in tables.layers() {
        let s = &summary["layers"][&l.name];
        let n = |k: &str| s[k].as_u64().map(thousands).unwrap_or_default();
        let digest = s["digest"].as_str().unwrap_or("");
        let _ = writeln!(
            rows,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><code title=\"{digest}\">{}</code></td><td>{}</td></tr>",
            esc(&l.name),
            n("win"),
            n("loss"),
            n("draw"),
            n("max_depth"),
            esc(&digest[..digest.len().min(16)]),
            if !l.present { "missing" } else if l.depths { "values and depths" } else { "values only" },
        );
    }
    page.section(
        "Layers",
        format!(
            "<table><thead><tr><th>layer</th><th>W</th><th>L</th><th>D</th><th>max depth</th>\
             <th>digest</th><th>here</th></tr></thead><tbody>{rows}</tbody></table>"
        ),
    );
}

fn depth_section(page: &mut Page, layer: &str, c: &DepthCounts) -> Result<()> {
    let series = [
        ("W (the coalition wins)", WIN, c.win.clone()),
        ("L (the others win)", LOSS, c.loss.clone()),
    ];
    let svg = bar_chart(
        &format!("{layer}: states decided at each depth"),
        "depth (plies to the end = the wave that decided the state)",
        "states (log scale)",
        &series,
    )?;
    let mut rows = String::new();
    for d in 0..c.win.len() {
        let _ = write!(
            rows,
            "<tr><td>{d}</td><td>{}</td><td>{}</td></tr>",
            thousands(c.win[d]),
            thousands(c.loss[d])
        );
    }
    page.section(
        &format!("Layer {layer}: depths"),
        format!(
            "{svg}<p>Decided: {} W and {} L; {} drawn (never decided), {} illegal.</p>\
             <details><summary>the numbers</summary><table><thead><tr><th>depth</th><th>W</th>\
             <th>L</th></tr></thead><tbody>{rows}</tbody></table></details>",
            thousands(c.win.iter().sum()),
            thousands(c.loss.iter().sum()),
            thousands(c.draw),
            thousands(c.illegal)
        ),
    );
    Ok(())
}

fn time_section(page: &mut Page, waves: &[WaveRecord]) -> Result<()> {
    let mut layers: Vec<&str> = Vec::new();
    for w in waves {
        if !layers.contains(&w.layer.as_str()) {
            layers.push(&w.layer);
        }
    }
    let lines: Vec<(String, Vec<(f64, f64)>)> = layers
        .iter()
        .map(|l| {
            let points = waves
                .iter()
                .filter(|w| w.layer == *l)
                .map(|w| (f64::from(w.wave), w.seconds))
                .collect();
            (l.to_string(), points)
        })
        .collect();
    let svg = line_chart("Seconds per wave", "wave", "seconds", &lines)?;
    let mut rows = String::new();
    let total: f64 = waves.iter().map(|w| w.seconds).sum();
    for l in &layers {
        let of: Vec<&WaveRecord> = waves.iter().filter(|w| w.layer == *l).collect();
        let secs: f64 = of.iter().map(|w| w.seconds).sum();
        let wire: u64 = of.iter().filter_map(|w| w.wire_bytes).sum();
        let slowest = of
            .iter()
            .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
            .map(|w| format!("{} ({} s)", w.wave, seconds(w.seconds)))
            .unwrap_or_default();
        let _ = write!(
            rows,
            "<tr><th>{}</th><td>{}</td><td>{}</td><td>{:.0} %</td><td>{}</td><td>{slowest}</td><td>{}</td></tr>",
            esc(l),
            of.len(),
            seconds(secs),
            100.0 * secs / total.max(1e-9),
            thousands(of.iter().map(|w| w.decided).sum()),
            if wire > 0 { thousands(wire) } else { "—".into() },
        );
    }
    page.section(
        "Where the time went",
        format!(
            "{svg}<p>From the run's <code>waves.jsonl</code> (wall-clock seconds per wave; a wave \
             done again after a resume counts once, as last done).</p><table><thead><tr><th>layer</th>\
             <th>waves</th><th>seconds</th><th>share</th><th>decided</th><th>slowest wave</th>\
             <th>bytes between workers</th></tr></thead><tbody>{rows}</tbody></table>"
        ),
    );
    Ok(())
}

/// A game's own section ([`kingmaker_games::view::GameView::report`]), drawn.
fn game_section(page: &mut Page, section: &Section) -> Result<()> {
    let mut body = String::new();
    for part in &section.parts {
        match part {
            Part::Heading(text) => {
                let _ = write!(body, "<h3>{}</h3>", esc(text));
            }
            Part::Text(text) => {
                let _ = write!(body, "<p>{}</p>", esc(text));
            }
            Part::Table {
                head,
                rows,
                row_heads,
                folded,
            } => {
                let head: String = head
                    .iter()
                    .map(|h| format!("<th>{}</th>", esc(h)))
                    .collect();
                let rows: String = rows
                    .iter()
                    .map(|row| {
                        let cells: String = row
                            .iter()
                            .enumerate()
                            .map(|(k, c)| match k == 0 && *row_heads {
                                true => format!("<th>{}</th>", esc(c)),
                                false => format!("<td>{}</td>", esc(c)),
                            })
                            .collect();
                        format!("<tr>{cells}</tr>")
                    })
                    .collect();
                let head = match head.is_empty() {
                    true => String::new(),
                    false => format!("<thead><tr>{head}</tr></thead>"),
                };
                let table = format!("<table>{head}<tbody>{rows}</tbody></table>");
                body += &match folded {
                    true => format!("<details><summary>the numbers</summary>{table}</details>"),
                    false => table,
                };
            }
            Part::Bars {
                title,
                x,
                y,
                series,
            } => {
                let series: Vec<(&str, RGBColor, Vec<u64>)> = series
                    .iter()
                    .enumerate()
                    .map(|(j, (name, values))| {
                        (name.as_str(), PALETTE[j % PALETTE.len()], values.clone())
                    })
                    .collect();
                body += &bar_chart(title, x, y, &series)?;
            }
            Part::Lines { title, x, y, lines } => body += &line_chart(title, x, y, lines)?,
        }
    }
    page.section(&section.title, body);
    Ok(())
}

/// The page's chart of `title` over the axes `x` and `y` (described `x_desc`, `y_desc`) as SVG:
/// the setup every chart shares (size, caption, margins, mesh, the legend at the upper right),
/// `mesh` adding a chart's own label settings and `draw` its series.
fn svg_chart<X, Y>(
    title: &str,
    (x_desc, y_desc): (&str, &str),
    (x, y): (X, Y),
    mesh: impl FnOnce(&mut MeshStyle<'_, '_, X::CoordDescType, Y::CoordDescType, SVGBackend<'_>>),
    draw: impl FnOnce(&mut Chart<'_, X, Y>) -> Result<()>,
) -> Result<String>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, CHART).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x, y)?;
        let mut style = chart.configure_mesh();
        style
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| format!("{x:.0}"));
        mesh(&mut style);
        style.draw()?;
        draw(&mut chart)?;
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .draw()?;
        root.present()?;
    }
    Ok(svg)
}

/// A chart of [`svg_chart`] over the axes `X` and `Y`.
type Chart<'a, X, Y> = ChartContext<
    'a,
    SVGBackend<'a>,
    Cartesian2d<<X as AsRangedCoord>::CoordDescType, <Y as AsRangedCoord>::CoordDescType>,
>;

/// Bars of one or more series over 0, 1, 2, ...; a log scale, as counts span many decades.
fn bar_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[(&str, RGBColor, Vec<u64>)],
) -> Result<String> {
    let n = series.iter().map(|s| s.2.len()).max().unwrap_or(0).max(1);
    let top = series
        .iter()
        .flat_map(|s| s.2.iter())
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    svg_chart(
        title,
        (x_desc, y_desc),
        (
            -0.5f64..n as f64 - 0.5,
            (0.8f64..top as f64 * 2.0).log_scale(),
        ),
        |mesh| {
            mesh.x_labels(n.min(20))
                .y_label_formatter(&|y| short_number(*y));
        },
        |chart| {
            let k = series.len() as f64;
            for (j, (name, color, values)) in series.iter().enumerate() {
                let color = *color;
                chart
                    .draw_series(values.iter().enumerate().filter(|(_, &v)| v > 0).map(
                        |(x, &v)| {
                            let left = x as f64 - 0.4 + 0.8 * j as f64 / k;
                            let right = left + 0.8 / k;
                            Rectangle::new([(left, 0.8), (right, v as f64)], color.filled())
                        },
                    ))?
                    .label(*name)
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                    });
            }
            Ok(())
        },
    )
}

/// One line per series.
fn line_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[(String, Vec<(f64, f64)>)],
) -> Result<String> {
    let points = || lines.iter().flat_map(|l| l.1.iter());
    let x_max = points().map(|p| p.0).fold(1.0, f64::max);
    let y_max = points().map(|p| p.1).fold(0.0, f64::max).max(1e-3) * 1.1;
    svg_chart(
        title,
        (x_desc, y_desc),
        (0f64..x_max, 0f64..y_max),
        |_| {},
        |chart| {
            for (j, (name, pts)) in lines.iter().enumerate() {
                let color = PALETTE[j % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new([(x, y), (x + 14, y)], color.stroke_width(2))
                    });
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 2, color.filled())))?;
            }
            Ok(())
        },
    )
}

/// Seconds to three significant digits (0.000783, 1.25, 5380).
fn seconds(s: f64) -> String {
    if s >= 100.0 || s == 0.0 {
        format!("{s:.0}")
    } else {
        let digits = (2 - s.log10().floor() as i32).max(0) as usize;
        format!("{s:.digits$}")
    }
}

/// 1, 10, 100, 1k, 10k, 1M, 1G for an axis.
fn short_number(v: f64) -> String {
    let units = [(1e9, "G"), (1e6, "M"), (1e3, "k")];
    for (scale, unit) in units {
        if v >= scale {
            return format!("{}{unit}", (v / scale * 10.0).round() / 10.0);
        }
    }
    format!("{v:.0}")
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page: sections of HTML, written out with the style inline (no file beside it).
#[derive(Default)]
struct Page {
    title: String,
    intro: String,
    sections: Vec<(String, String)>,
}

impl Page {
    fn section(&mut self, heading: &str, body: String) {
        self.sections.push((heading.to_string(), body));
    }

    fn html(&self) -> String {
        let mut out = format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\
             <style>{STYLE}</style></head><body><h1>{}</h1><p class=\"intro\">{}</p>\n",
            esc(&self.title),
            esc(&self.title),
            esc(&self.intro)
        );
        for (heading, body) in &self.sections {
            let _ = writeln!(out, "<section><h2>{}</h2>{body}</section>", esc(heading));
        }
        out + "</body></html>\n"
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:860px;margin:0 auto;\
padding:16px 20px 40px;color:#1d2330;background:#f7f8fa}h1{font-size:1.4rem}h2{font-size:1.1rem;\
margin:0 0 8px}h3{font-size:.95rem;margin:12px 0 4px}.intro{color:#6b7280}section{background:#fff;\
border:1px solid #d8dce3;border-radius:10px;padding:12px 16px;margin:14px 0}table{border-collapse:\
collapse;font-size:.9rem;margin:6px 0}th,td{text-align:right;padding:3px 10px;border-top:1px solid \
#e5e7eb}th:first-child{text-align:left}svg{max-width:100%;height:auto;display:block}details{margin:\
6px 0}summary{cursor:pointer;color:#2f6fd6}code{font-size:.85rem}";
