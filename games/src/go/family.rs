//! Go's parameters, as the command line and `run.json` give them, and its threshold layers.

use super::{search, Go, Surface};
use crate::family::GameFamily;
use kingmaker_kernel::Layer;
use serde::{Deserialize, Serialize};

/// Go on one surface and board.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GoParams {
    /// The surface: plane, cylinder, torus, klein or projective.
    #[arg(long, default_value = "plane", value_parser = lowercase)]
    pub surface: String,
    /// The board: RxC with 1 <= R <= C and R·C <= 31 (e.g. 3x3).
    #[arg(long = "size", default_value = "2x2", value_parser = parse_size)]
    #[serde(flatten)]
    pub size: BoardSize,
    /// Solve these thresholds k ("Black's final score >= k"), comma-separated, instead of the
    /// binary search for the start's optimal score (e.g. for the explorer: -2,0,1,2).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<i32>,
}

/// A board of `rows`×`cols` points (written `RxC`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardSize {
    /// R, the number of rows.
    pub rows: u8,
    /// C, the number of columns.
    pub cols: u8,
}

fn lowercase(text: &str) -> Result<String, String> {
    Ok(text.to_ascii_lowercase())
}

/// "3x4" -> 3 rows, 4 columns.
fn parse_size(text: &str) -> Result<BoardSize, String> {
    let (rows, cols) = crate::family::parse_dimensions(text, "size", "RxC (e.g. 3x3)")?;
    Ok(BoardSize { rows, cols })
}

impl GameFamily for GoParams {
    type Game = Go;
    const ABOUT: &'static str =
        "Go on the plane, cylinder, torus, Klein bottle or projective plane (docs/go.md).";

    fn build(&self) -> anyhow::Result<Go> {
        let BoardSize { rows, cols } = self.size;
        let game = Go::new(Surface::parse(&self.surface)?, rows.into(), cols.into())?;
        for (i, &k) in self.thresholds.iter().enumerate() {
            anyhow::ensure!(
                !self.thresholds[..i].contains(&k),
                "--thresholds lists {k} twice; list each threshold once"
            );
            game.threshold_layer(k)?;
        }
        Ok(game)
    }

    /// Every surface on a tiny board, with every threshold (their layers are solved twice).
    fn examples() -> Vec<Self> {
        [
            ("plane", 2, 2),
            ("cylinder", 1, 3),
            ("torus", 2, 2),
            ("klein", 2, 2),
            ("projective", 1, 3),
        ]
        .map(|(surface, rows, cols)| {
            let n = i32::from(rows) * i32::from(cols);
            GoParams {
                surface: surface.into(),
                size: BoardSize { rows, cols },
                thresholds: (-n + 1..=n).collect(),
            }
        })
        .to_vec()
    }

    /// The listed thresholds, or the first step of the search for the start's optimal score.
    /// Bad sizes or thresholds give no layer here; `build` refuses them.
    fn layers(&self) -> Vec<Layer> {
        let Ok(game) = self.build() else {
            return Vec::new();
        };
        let ks = if self.thresholds.is_empty() {
            search::next_threshold(game.geometry().n, &[])
                .into_iter()
                .collect()
        } else {
            self.thresholds.clone()
        };
        ks.iter()
            .filter_map(|&k| game.threshold_layer(k).ok())
            .collect()
    }

    /// The listed thresholds, or the most the search may solve.
    fn most_layers(&self) -> usize {
        match self.build() {
            Ok(game) if self.thresholds.is_empty() => search::most_layers(game.geometry().n),
            _ => self.thresholds.len(),
        }
    }

    /// The binary search's next threshold, unless the thresholds were listed.
    fn next_layer(&self, start_values: &[(String, u8)]) -> Option<Layer> {
        if !self.thresholds.is_empty() {
            return None;
        }
        let game = self.build().ok()?;
        let solved: Vec<(i32, u8)> = start_values
            .iter()
            .filter_map(|(name, v)| Some((Go::layer_threshold(name)?, *v)))
            .collect();
        let k = search::next_threshold(game.geometry().n, &solved)?;
        game.threshold_layer(k).ok()
    }

    fn verdict(
        game: &Self::Game,
        index: u64,
        at: &crate::reading::LayersAt,
    ) -> Option<Result<crate::reading::Verdict, kingmaker_tablefmt::FormatError>> {
        Some(Ok(super::bounds::verdict(game, index, at)))
    }

    fn view(game: &std::sync::Arc<crate::AnyGame>) -> Option<Box<dyn crate::view::GameView>> {
        super::view::GoView::of(game)
    }
}
