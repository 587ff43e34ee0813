//! TOPPEN as it is shown: the two-player view, and the census of every starting layout in
//! `kingmaker report`.

use super::command::all_rows;
use crate::view::report::{Part, Section};
use crate::view::two_player::TwoPlayerView;
use crate::view::{GameView, Labels, Solved};
use crate::AnyGame;
use anyhow::Result;
use kingmaker_tablefmt::release::manifest::thousands;
use serde_json::Value;
use std::sync::Arc;

/// TOPPEN's view: the two-player view, with the census in the report.
pub struct ToppenView(TwoPlayerView);

impl ToppenView {
    /// The view of a TOPPEN game.
    pub fn new(game: &Arc<AnyGame>) -> ToppenView {
        ToppenView(TwoPlayerView::new(game.clone()))
    }
}

impl GameView for ToppenView {
    fn query(&self, tables: &dyn Solved, index: u64, json: bool) -> Result<()> {
        self.0.query(tables, index, json)
    }

    fn labels(&self, tables: &dyn Solved) -> Result<Box<dyn Labels>> {
        self.0.labels(tables)
    }

    fn legend(&self) -> String {
        self.0.legend()
    }

    fn summarize(
        &self,
        tables: &dyn Solved,
        reach: bool,
        out: &mut serde_json::Map<String, Value>,
    ) -> Result<()> {
        self.0.summarize(tables, reach, out)
    }

    /// Terrains by how many of their 252 colourings the first player wins, in bins of 21.
    fn report(&self, tables: &dyn Solved, _summary: &Value) -> Result<Vec<Section>> {
        let Some((first, rows)) = all_rows(tables)? else {
            return Ok(Vec::new());
        };
        let mut bins = vec![0u64; 12];
        for r in &rows {
            bins[(r.first_second(first).0 as usize / 21).min(11)] += 1;
        }
        let (a, b, d) = rows.iter().fold((0u64, 0u64, 0u64), |t, r| {
            (
                t.0 + u64::from(r.a),
                t.1 + u64::from(r.b),
                t.2 + u64::from(r.d),
            )
        });
        Ok(vec![Section {
            title: "The census of every starting layout".into(),
            parts: vec![
                Part::Bars {
                    title: "Terrains by the colourings the first player wins (of 252)".into(),
                    x: "first-player wins, bins of 21".into(),
                    y: "terrains (log scale)".into(),
                    series: vec![("terrains".into(), bins.clone())],
                },
                Part::Text(format!(
                    "{} terrains, {} starting layouts: A wins {}, B wins {}, {} drawn \
                     (`kingmaker census --all` gives every row).",
                    thousands(rows.len() as u64),
                    thousands(a + b + d),
                    thousands(a),
                    thousands(b),
                    thousands(d)
                )),
                Part::Table {
                    head: vec!["first-player wins".into(), "terrains".into()],
                    rows: bins
                        .iter()
                        .enumerate()
                        .map(|(k, n)| vec![format!("{}–{}", 21 * k, 21 * k + 20), n.to_string()])
                        .collect(),
                    row_heads: false,
                    folded: true,
                },
            ],
        }])
    }
}
