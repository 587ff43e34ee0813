//! Positions as rows of discs, top row first (`..../..../.O../.XX.`: `X`, `O`, `.` for empty),
//! moves as the column's number (1 the leftmost), and pictures (docs/connect4.md).

use super::index::Discs;
use super::{Connect4, Connect4Error, DRAW_OUTCOME};
use crate::drawing::Drawing;
use crate::notation::Notation;
use kingmaker_kernel::{Game, Node};
use serde_json::{json, Map, Value};

const NAMES: [char; 2] = ['X', 'O'];

impl Connect4 {
    fn rows(&self, index: u64) -> Vec<String> {
        let d = self.cols.decode(index);
        (0..self.cols.height)
            .rev()
            .map(|row| {
                (0..self.cols.width)
                    .map(|col| {
                        let c = self.cols.cell(col, row);
                        if d.discs[0] & c != 0 {
                            'X'
                        } else if d.discs[1] & c != 0 {
                            'O'
                        } else {
                            '.'
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// The point name of `col` at `row` (0 the bottom) on the explorer's drawing, whose rows
    /// count from the top: `a1` is the top left.
    fn point_name(&self, col: usize, row: usize) -> String {
        format!("{}{}", (b'a' + col as u8) as char, self.cols.height - row)
    }
}

impl Notation for Connect4 {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        let bad = |problem: String| Connect4Error::Position {
            text: text.to_string(),
            problem,
        };
        let (w, h) = (self.cols.width, self.cols.height);
        let rows: Vec<&str> = text.trim().split('/').collect();
        if rows.len() != h {
            return Err(bad(format!(
                "{} rows; this board has {h}, top row first",
                rows.len()
            ))
            .into());
        }
        let mut d = Discs {
            discs: [0, 0],
            heights: vec![0; w],
        };
        // Bottom row first, so that a disc must stand on one below it.
        for (k, line) in rows.iter().rev().enumerate() {
            let cells: Vec<char> = line.trim().chars().collect();
            if cells.len() != w {
                return Err(bad(format!(
                    "row {} has {} cells; this board is {w} wide",
                    h - k,
                    cells.len()
                ))
                .into());
            }
            for (col, ch) in cells.into_iter().enumerate() {
                let who = match ch.to_ascii_uppercase() {
                    'X' => 0,
                    'O' => 1,
                    '.' => continue,
                    other => {
                        return Err(bad(format!("{other:?} is no disc: X, O or . for empty")).into())
                    }
                };
                if d.heights[col] != k {
                    return Err(bad(format!("the disc in column {} floats", col + 1)).into());
                }
                d.discs[who] |= self.cols.cell(col, k);
                d.heights[col] += 1;
            }
        }
        let Some(mover) = Self::mover_of(&d) else {
            return Err(bad(format!(
                "X has {} discs and O {}: X moves first, so X has as many as O or one more",
                d.discs[0].count_ones(),
                d.discs[1].count_ones()
            ))
            .into());
        };
        if self.has_line(d.discs[mover as usize]) {
            return Err(bad(format!(
                "{} is to move but already has {} in a row",
                NAMES[mover as usize], self.connect
            ))
            .into());
        }
        Ok(self.cols.encode(&d))
    }

    fn format_position(&self, index: u64) -> String {
        self.rows(index).join("/")
    }

    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        let mut children = Vec::new();
        self.successors(index, &mut children);
        let d = self.cols.decode(index);
        children
            .into_iter()
            .map(|child| {
                let col = (0..self.cols.width)
                    .find(|&c| self.cols.decode(child).heights[c] != d.heights[c])
                    .expect("a move fills one column");
                ((col + 1).to_string(), child)
            })
            .collect()
    }

    fn picture(&self, index: u64) -> String {
        let mut out = String::new();
        for row in self.rows(index) {
            let cells: Vec<String> = row.chars().map(String::from).collect();
            out += &format!(" {}\n", cells.join(" "));
        }
        let numbers: Vec<String> = (1..=self.cols.width)
            .map(|c| (c % 10).to_string())
            .collect();
        out += &format!(" {}\n", numbers.join(" "));
        out
    }

    fn player_name(&self, player: u8) -> String {
        NAMES[player as usize].to_string()
    }

    fn outcome_text(&self, outcome: u8) -> String {
        match outcome {
            DRAW_OUTCOME => "a draw: the board is full".into(),
            p => format!("{} has won", self.player_name(p)),
        }
    }

    fn outcome_winner(&self, outcome: u8) -> Option<u8> {
        (outcome != DRAW_OUTCOME).then_some(outcome)
    }

    fn start_index(&self) -> Option<u64> {
        Some(0)
    }
}

impl Drawing for Connect4 {
    /// Drawn as a grid of points with stones, as Go's plane is.
    fn board_drawing(&self) -> Value {
        json!({"kind": "stones", "rows": self.cols.height, "cols": self.cols.width})
    }

    /// The discs row by row from the top, and the point each move drops onto.
    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        let d = self.cols.decode(index);
        let mut targets = Map::new();
        if matches!(self.classify(&d), Node::Live { .. }) {
            for (col, &h) in d.heights.iter().enumerate() {
                if h < self.cols.height {
                    targets.insert(self.point_name(col, h), json!((col + 1).to_string()));
                }
            }
        }
        let mut out = Map::new();
        out.insert(
            "stones".into(),
            json!({"rows": self.rows(index), "ko": null, "targets": targets}),
        );
        out
    }
}
