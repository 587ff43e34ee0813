//! Cards drawn as SVG, and a page (`index.html`) to look at a deck and compare two cards.
//! 1. A picture is a shape × a colour (10 × 12 symbols; from picture 120 on it carries its number).
//! 2. Places, sizes and angles come from a hash of the card's and picture's numbers, so the drawing
//!    is the same every time (docs/decks.md, "Drawing the cards").

use crate::deck::Deck;
use rand_xoshiro::rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;
use std::fmt::Write;

/// The shapes, in order of picture number modulo 10.
pub const SHAPES: [&str; 10] = [
    "circle", "square", "triangle", "diamond", "star", "hexagon", "cross", "heart", "crescent",
    "ring",
];

/// The colours (name, fill).
pub const COLOURS: [(&str, &str); 12] = [
    ("red", "#e6194b"),
    ("green", "#3cb44b"),
    ("yellow", "#ffe119"),
    ("blue", "#4363d8"),
    ("orange", "#f58231"),
    ("purple", "#911eb4"),
    ("cyan", "#42d4f4"),
    ("magenta", "#f032e6"),
    ("brown", "#9a6324"),
    ("navy", "#000075"),
    ("olive", "#808000"),
    ("pink", "#fabed4"),
];

/// How a picture is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Symbol {
    /// An index into [`SHAPES`].
    pub shape: usize,
    /// An index into [`COLOURS`].
    pub colour: usize,
    /// Pictures beyond the 120 shape × colour pairs also show their number.
    pub label: Option<u32>,
}

impl Symbol {
    /// Picture `id`'s symbol: shape id mod 10, colour (id + id / 10) mod 12, so that consecutive
    /// pictures differ in both and the first 120 pictures are 120 different symbols (11 and 12
    /// are coprime).
    pub fn of(id: u32) -> Symbol {
        let n = (SHAPES.len() * COLOURS.len()) as u32;
        Symbol {
            shape: (id % 10) as usize,
            colour: ((id + id / 10) % 12) as usize,
            label: (id >= n).then_some(id),
        }
    }

    /// E.g. "red star" or "blue ring 130".
    pub fn name(&self) -> String {
        let base = format!("{} {}", COLOURS[self.colour].0, SHAPES[self.shape]);
        match self.label {
            Some(n) => format!("{base} {n}"),
            None => base,
        }
    }
}

/// The outline of a shape in a unit circle, as SVG elements without fill.
fn shape_element(shape: usize) -> String {
    let polygon = |pts: Vec<(f64, f64)>| {
        let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.3},{y:.3}")).collect();
        format!("<polygon points=\"{}\"", p.join(" "))
    };
    let regular = |n: usize, r: f64, start: f64| -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| {
                let a = start + i as f64 * std::f64::consts::TAU / n as f64;
                (r * a.cos(), r * a.sin())
            })
            .collect()
    };
    let up = -std::f64::consts::FRAC_PI_2;
    match SHAPES[shape] {
        "circle" => "<circle r=\"0.85\"".to_string(),
        "square" => "<rect x=\"-0.7\" y=\"-0.7\" width=\"1.4\" height=\"1.4\" rx=\"0.1\"".into(),
        "triangle" => polygon(regular(3, 1.0, up)),
        "diamond" => polygon(vec![(0.0, -1.0), (0.62, 0.0), (0.0, 1.0), (-0.62, 0.0)]),
        "star" => {
            let outer = regular(5, 1.0, up);
            let inner = regular(5, 0.42, up + std::f64::consts::PI / 5.0);
            polygon(outer.into_iter().zip(inner).flat_map(|(a, b)| [a, b]).collect())
        }
        "hexagon" => polygon(regular(6, 0.92, 0.0)),
        "cross" => polygon(vec![
            (-0.3, -0.9),
            (0.3, -0.9),
            (0.3, -0.3),
            (0.9, -0.3),
            (0.9, 0.3),
            (0.3, 0.3),
            (0.3, 0.9),
            (-0.3, 0.9),
            (-0.3, 0.3),
            (-0.9, 0.3),
            (-0.9, -0.3),
            (-0.3, -0.3),
        ]),
        "heart" => "<path d=\"M0,0.85 C-0.35,0.55 -0.95,0.2 -0.95,-0.3 C-0.95,-0.75 -0.45,-0.95 0,-0.5 C0.45,-0.95 0.95,-0.75 0.95,-0.3 C0.95,0.2 0.35,0.55 0,0.85 Z\"".into(),
        // The disc of radius 0.9 minus the disc of radius 0.75 centred at (0.4, 0); they cross
        // at (0.509, ±0.742).
        "crescent" => "<path d=\"M0.509,-0.742 A0.9,0.9 0 1,0 0.509,0.742 A0.75,0.75 0 1,1 0.509,-0.742 Z\"".into(),
        _ => "<path fill-rule=\"evenodd\" d=\"M-0.9,0 A0.9,0.9 0 1,0 0.9,0 A0.9,0.9 0 1,0 -0.9,0 Z M-0.45,0 A0.45,0.45 0 1,1 0.45,0 A0.45,0.45 0 1,1 -0.45,0 Z\"".into(),
    }
}

/// A small deterministic hash (SplitMix64's first output from state `x`), the source of every
/// "random" choice.
fn hash(x: u64) -> u64 {
    SplitMix64::seed_from_u64(x).next_u64()
}

/// A number in [0, 1) from a hash of the inputs.
fn unit(a: u64, b: u64, c: u64) -> f64 {
    (hash(hash(hash(a) ^ b) ^ c) >> 11) as f64 / (1u64 << 53) as f64
}

/// m slots in the unit disc and their radius: a sunflower spiral pushed apart until no two
/// slots overlap.
pub fn layout(m: usize) -> (Vec<(f64, f64)>, f64) {
    if m <= 1 {
        return (vec![(0.0, 0.0); m], 0.5);
    }
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let mut pts: Vec<(f64, f64)> = (0..m)
        .map(|i| {
            let r = ((i as f64 + 0.5) / m as f64).sqrt() * 0.8;
            let a = i as f64 * golden;
            (r * a.cos(), r * a.sin())
        })
        .collect();
    let rho = (0.55 / m as f64).sqrt().min(0.42);
    for _ in 0..300 {
        for i in 0..m {
            for j in i + 1..m {
                let (dx, dy) = (pts[j].0 - pts[i].0, pts[j].1 - pts[i].1);
                let d = (dx * dx + dy * dy).sqrt().max(1e-9);
                if d < 2.0 * rho {
                    let push = (2.0 * rho - d) / 2.0 / d;
                    pts[i].0 -= dx * push;
                    pts[i].1 -= dy * push;
                    pts[j].0 += dx * push;
                    pts[j].1 += dy * push;
                }
            }
        }
        for p in &mut pts {
            let d = (p.0 * p.0 + p.1 * p.1).sqrt();
            if d > 1.0 - rho {
                let s = (1.0 - rho) / d;
                p.0 *= s;
                p.1 *= s;
            }
        }
    }
    // The radius that is sure not to overlap, whatever the relaxation reached.
    let mut r = rho;
    for i in 0..m {
        let d = (pts[i].0.powi(2) + pts[i].1.powi(2)).sqrt();
        r = r.min(1.0 - d);
        for j in i + 1..m {
            let d = ((pts[j].0 - pts[i].0).powi(2) + (pts[j].1 - pts[i].1).powi(2)).sqrt();
            r = r.min(d / 2.0);
        }
    }
    (pts, r)
}

/// Draws the cards of one deck (the layout is computed once).
pub struct Drawer<'a> {
    deck: &'a Deck,
    slots: Vec<(f64, f64)>,
    radius: f64,
}

/// The card circle's radius in SVG units.
const CARD: f64 = 100.0;

impl<'a> Drawer<'a> {
    /// A drawer for `deck`, with the layout for its largest card.
    pub fn new(deck: &'a Deck) -> Drawer<'a> {
        let m = deck.cards().iter().map(Vec::len).max().unwrap_or(0);
        let (slots, radius) = layout(m);
        Drawer {
            deck,
            slots,
            radius,
        }
    }

    /// Card `c` as a standalone SVG document.
    pub fn card(&self, c: usize) -> String {
        let card = &self.deck.cards()[c];
        let c64 = c as u64;
        // Deal the pictures to the slots: sort the slots by a hash, then turn the whole layout.
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_by_key(|&s| hash(hash(c64) ^ s as u64));
        let turn = unit(c64, 1, 0) * std::f64::consts::TAU;
        let (sin, cos) = turn.sin_cos();
        let ids: Vec<String> = card.iter().map(u32::to_string).collect();
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"card\" data-card=\"{c}\" \
             viewBox=\"-104 -104 208 208\" width=\"208\" height=\"208\">\
             <title>card {c}: pictures {}</title>\
             <circle class=\"rim\" r=\"{CARD}\" fill=\"#fffdf7\" stroke=\"#333\" stroke-width=\"3\"/>",
            ids.join(", ")
        );
        for (i, &id) in card.iter().enumerate() {
            let (x, y) = self.slots[order[i]];
            let (x, y) = (x * cos - y * sin, x * sin + y * cos);
            let size = self.radius * CARD * (0.62 + 0.38 * unit(c64, id as u64, 2));
            let angle = unit(c64, id as u64, 3) * 360.0;
            let sym = Symbol::of(id);
            // The halo stays hidden until the page's script marks the picture `shared`.
            let _ = write!(
                out,
                "<g class=\"pic\" data-picture=\"{id}\" transform=\"translate({:.2} {:.2}) rotate({angle:.1}) scale({size:.2})\">\
                 <title>picture {id}: {}</title>\
                 <circle class=\"halo\" r=\"1.22\" fill=\"#fff3a0\" fill-opacity=\"0.8\" stroke=\"#d40000\" stroke-width=\"0.14\" visibility=\"hidden\"/>\
                 {} fill=\"{}\" stroke=\"#222\" stroke-width=\"0.05\"/>",
                x * CARD,
                y * CARD,
                sym.name(),
                shape_element(sym.shape),
                COLOURS[sym.colour].1,
            );
            if let Some(n) = sym.label {
                let _ = write!(
                    out,
                    "<text font-size=\"0.7\" text-anchor=\"middle\" dominant-baseline=\"central\" \
                     font-family=\"sans-serif\" font-weight=\"bold\" fill=\"#fff\" stroke=\"#000\" \
                     stroke-width=\"0.04\">{n}</text>"
                );
            }
            out.push_str("</g>");
        }
        out.push_str("</svg>\n");
        out
    }

    /// The name of card `c`'s SVG file: `card-007.svg` (zero-padded to the largest number).
    pub fn file_name(&self, c: usize) -> String {
        let width = self.deck.cards().len().saturating_sub(1).to_string().len();
        format!("card-{c:0width$}.svg")
    }

    /// Every file of a deck's directory: one SVG per card, and `index.html`.
    pub fn files(&self, title: &str) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = (0..self.deck.cards().len())
            .map(|c| (self.file_name(c), self.card(c)))
            .collect();
        files.push(("index.html".into(), self.page(title)));
        files
    }

    /// The page: the pair view and every card.
    pub fn page(&self, title: &str) -> String {
        let title = escape(title);
        let k = self.deck.cards().len();
        let mut cards = String::new();
        for c in 0..k {
            let _ = writeln!(
                cards,
                "<figure class=\"cell\" data-card=\"{c}\">{}<figcaption><a href=\"{}\">card {c}</a></figcaption></figure>",
                self.card(c).trim_end(),
                self.file_name(c)
            );
        }
        PAGE.replace("{title}", &title)
            .replace("{max}", &k.saturating_sub(1).to_string())
            .replace("{cards}", &cards)
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const PAGE: &str = r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 1.5em; background: #f4f1ea; color: #222; }
  h1 { font-size: 1.4em; margin: 0 0 .5em; }
  #pair { background: #fff; border-radius: 12px; padding: 1em; box-shadow: 0 1px 4px #0002; }
  #pair .cards { display: flex; gap: 2em; justify-content: center; }
  #pair .cards svg { width: 300px; height: 300px; }
  #answer { text-align: center; font-size: 1.15em; min-height: 1.4em; }
  .controls { display: flex; gap: .6em; align-items: center; justify-content: center; flex-wrap: wrap; }
  .controls input { width: 5em; }
  .pic.shared .halo { visibility: visible; }
  #deck { display: flex; flex-wrap: wrap; gap: .8em; margin-top: 1.5em; }
  #deck figure { margin: 0; text-align: center; cursor: pointer; }
  #deck figure svg { width: 150px; height: 150px; }
  #deck figure.selected svg .rim { stroke: #d40000; stroke-width: 6; }
  figcaption { font-size: .85em; }
</style>
</head>
<body>
<h1>{title}</h1>
<section id="pair">
  <div class="controls">
    <label>card <input id="a" type="number" min="0" max="{max}" value="0"></label>
    <label>and card <input id="b" type="number" min="0" max="{max}" value="1"></label>
    <button id="show">Show</button>
    <button id="another">Another pair</button>
  </div>
  <div class="cards"><div id="left"></div><div id="right"></div></div>
  <p id="answer"></p>
</section>
<p>Click a card to compare it with the card on the right; <code>?a=3&amp;b=17</code> in the address picks a pair.</p>
<section id="deck">
{cards}</section>
<script>
"use strict";
const cells = [...document.querySelectorAll("#deck figure.cell")];
const count = cells.length;
const pictures = svg => [...svg.querySelectorAll("g.pic")].map(g => g.dataset.picture);
let current = [0, 1];

function show(a, b) {
  if (count < 2) { document.getElementById("pair").hidden = true; return; }
  a = Math.min(Math.max(0, a | 0), count - 1);
  b = Math.min(Math.max(0, b | 0), count - 1);
  if (a === b) b = (a + 1) % count;
  current = [a, b];
  const left = cells[a].querySelector("svg").cloneNode(true);
  const right = cells[b].querySelector("svg").cloneNode(true);
  const onLeft = new Set(pictures(left));
  const shared = pictures(right).filter(p => onLeft.has(p));
  for (const svg of [left, right]) {
    for (const g of svg.querySelectorAll("g.pic")) {
      if (shared.includes(g.dataset.picture)) g.classList.add("shared");
    }
  }
  document.getElementById("left").replaceChildren(left);
  document.getElementById("right").replaceChildren(right);
  document.getElementById("a").value = a;
  document.getElementById("b").value = b;
  const names = shared.map(p => left.querySelector(`g.pic[data-picture="${p}"] title`).textContent);
  document.getElementById("answer").textContent = shared.length === 1
    ? `Cards ${a} and ${b} share ${names[0]}.`
    : `Cards ${a} and ${b} share ${shared.length} pictures${shared.length ? ": " + names.join("; ") : ""}.`;
  cells.forEach((cell, i) => cell.classList.toggle("selected", i === a || i === b));
  document.body.dataset.a = a;
  document.body.dataset.b = b;
  document.body.dataset.shared = shared.join(",");
  try { history.replaceState(null, "", `?a=${a}&b=${b}`); } catch (e) { /* file: pages may refuse */ }
}

document.getElementById("show").addEventListener("click", () =>
  show(+document.getElementById("a").value, +document.getElementById("b").value));
document.getElementById("another").addEventListener("click", () => {
  const a = Math.floor(Math.random() * count);
  show(a, (a + 1 + Math.floor(Math.random() * (count - 1))) % count);
});
cells.forEach((cell, i) => cell.addEventListener("click", e => {
  if (e.target.closest("a")) return;
  show(current[1], i);
}));
const params = new URLSearchParams(location.search);
show(+(params.get("a") ?? 0), +(params.get("b") ?? 1));
</script>
</body>
</html>
"##;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn the_first_120_symbols_are_distinct_and_neighbours_differ() {
        let symbols: HashSet<(usize, usize)> = (0..120)
            .map(|i| (Symbol::of(i).shape, Symbol::of(i).colour))
            .collect();
        assert_eq!(symbols.len(), 120);
        for i in 0..200 {
            let (a, b) = (Symbol::of(i), Symbol::of(i + 1));
            assert!(a.shape != b.shape && a.colour != b.colour, "{i}");
        }
        assert_eq!(Symbol::of(119).label, None);
        assert_eq!(Symbol::of(120).label, Some(120));
        assert_eq!(Symbol::of(4).name(), "orange star");
    }

    #[test]
    fn layouts_do_not_overlap_and_stay_inside() {
        for m in 1..=40 {
            let (pts, r) = layout(m);
            assert_eq!(pts.len(), m);
            assert!(r > 0.5 / (m as f64).sqrt() * 0.8, "m = {m}: radius {r}");
            for (i, p) in pts.iter().enumerate() {
                assert!((p.0 * p.0 + p.1 * p.1).sqrt() + r <= 1.0 + 1e-9);
                for q in &pts[i + 1..] {
                    assert!(((p.0 - q.0).powi(2) + (p.1 - q.1).powi(2)).sqrt() >= 2.0 * r - 1e-9);
                }
            }
        }
    }

    #[test]
    fn cards_are_deterministic_and_show_every_picture() {
        let deck = Deck::projective_plane(7).unwrap();
        let drawer = Drawer::new(&deck);
        let svg = drawer.card(5);
        assert_eq!(svg, Drawer::new(&deck).card(5), "deterministic");
        assert_ne!(svg, drawer.card(6));
        assert!(svg.starts_with(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"card\" data-card=\"5\""
        ));
        for id in &deck.cards()[5] {
            assert_eq!(svg.matches(&format!("data-picture=\"{id}\"")).count(), 1);
        }
        assert_eq!(svg.matches("class=\"pic\"").count(), 8);
        assert_eq!(drawer.file_name(5), "card-05.svg");
        let files = drawer.files("PG(2,7) <test>");
        assert_eq!(files.len(), 58);
        let page = &files[57].1;
        assert_eq!(files[57].0, "index.html");
        assert_eq!(page.matches("<figure class=\"cell\"").count(), 57);
        assert!(page.contains("<title>PG(2,7) &lt;test&gt;</title>"));
        assert!(page.contains("max=\"56\""));
    }
}
