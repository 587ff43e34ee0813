//! Position and move notation (docs/go.md, "Notation"): `ROWS:SIDE[:FLAG]`, rows from the top
//! split by `/` (`X` Black, `O` White, `.` empty), `B` or `W` to move, `pass`, `end` or `ko=PT`.
//! 1. A point is its column letter (`a` leftmost) and row number (`1` the top row): `b3`. A move is
//!    a point or `pass`. Letters are case-insensitive.

use super::board::Board;
use super::index::{Flag, State};
use super::{moves, Go, GoError};
use crate::drawing::Drawing;
use crate::notation::Notation;
use serde_json::{json, Map, Value};

impl Go {
    fn bad(text: &str, why: impl Into<String>) -> GoError {
        GoError::BadPosition {
            text: text.into(),
            why: why.into(),
        }
    }

    /// The name of point `p`, e.g. `a1` for the top-left point.
    pub fn point_name(&self, p: usize) -> String {
        let (r, c) = (p / self.geom.cols, p % self.geom.cols);
        format!("{}{}", (b'a' + c as u8) as char, r + 1)
    }

    /// Parses a point name on this board.
    pub fn parse_point(&self, text: &str) -> Option<usize> {
        let t = text.trim().to_ascii_lowercase();
        let mut chars = t.chars();
        let col = chars.next()?;
        if !col.is_ascii_lowercase() {
            return None;
        }
        let c = (col as u8 - b'a') as usize;
        let r: usize = chars.as_str().parse().ok()?;
        (c < self.geom.cols && (1..=self.geom.rows).contains(&r))
            .then(|| (r - 1) * self.geom.cols + c)
    }

    /// Writes a position (legal or not) in the notation above.
    pub fn format_position(&self, index: u64) -> String {
        let s = self.space.decode(index);
        let rows: Vec<String> = (0..self.geom.rows)
            .map(|r| {
                (0..self.geom.cols)
                    .map(|c| match s.board.at(r * self.geom.cols + c) {
                        Some(0) => 'X',
                        Some(_) => 'O',
                        None => '.',
                    })
                    .collect()
            })
            .collect();
        let side = if s.side == 0 { 'B' } else { 'W' };
        let flag = match s.flag {
            Flag::Clear => String::new(),
            Flag::Pass => ":pass".into(),
            Flag::End => ":end".into(),
            Flag::Ko(p) => format!(":ko={}", self.point_name(p as usize)),
        };
        format!("{}:{side}{flag}", rows.join("/"))
    }

    /// Parses a position into its index; illegal positions are rejected with the reason.
    pub fn parse_position(&self, text: &str) -> Result<u64, GoError> {
        let parts: Vec<&str> = text.trim().split(':').map(str::trim).collect();
        if parts.len() < 2 || parts.len() > 3 {
            return Err(Self::bad(
                text,
                "expected ROWS:SIDE or ROWS:SIDE:FLAG, e.g. `X./.O:B` or `XO./...:W:pass`",
            ));
        }
        let rows: Vec<&str> = parts[0].split('/').collect();
        if rows.len() != self.geom.rows || rows.iter().any(|r| r.chars().count() != self.geom.cols)
        {
            return Err(Self::bad(
                text,
                format!(
                    "the board is {} rows of {} points",
                    self.geom.rows, self.geom.cols
                ),
            ));
        }
        let mut board = Board::default();
        for (r, row) in rows.iter().enumerate() {
            for (c, ch) in row.chars().enumerate() {
                let p = 1u64 << (r * self.geom.cols + c);
                match ch.to_ascii_uppercase() {
                    'X' => board.black |= p,
                    'O' => board.white |= p,
                    '.' => {}
                    other => {
                        return Err(Self::bad(
                            text,
                            format!("{other:?} is not a point: write X, O or ."),
                        ))
                    }
                }
            }
        }
        let side = match parts[1].to_ascii_uppercase().as_str() {
            "B" => 0,
            "W" => 1,
            other => {
                return Err(Self::bad(
                    text,
                    format!("side to move {other:?}: write B or W"),
                ))
            }
        };
        let flag = match parts.get(2).map(|f| f.to_ascii_lowercase()) {
            None => Flag::Clear,
            Some(f) if f == "pass" => Flag::Pass,
            Some(f) if f == "end" => Flag::End,
            Some(f) if f.starts_with("ko=") => match self.parse_point(&f[3..]) {
                Some(p) => Flag::Ko(p as u8),
                None => return Err(Self::bad(text, format!("{:?} is not a point", &f[3..]))),
            },
            Some(f) => {
                return Err(Self::bad(
                    text,
                    format!("flag {f:?}: write pass, end or ko=POINT"),
                ))
            }
        };
        let state = State { board, side, flag };
        if !board.all_groups_breathe(&self.geom) {
            return Err(Self::bad(text, "a group has no liberty"));
        }
        if !super::legal::is_legal(&self.geom, &state) {
            return Err(Self::bad(
                text,
                "no stone move of the last player can have set this ko ban",
            ));
        }
        Ok(self.space.encode(&state))
    }

    /// The legal moves of a live state, named (`b2`, `pass`), with the child each leads to.
    pub fn moves(&self, index: u64) -> Vec<(String, u64)> {
        let Some(s) = self.live(index) else {
            return Vec::new();
        };
        let mut kids = Vec::new();
        moves::successors(&self.geom, &s, &mut kids);
        kids.iter()
            .map(|c| {
                let placed = c.board.stones(s.side) & !s.board.stones(s.side);
                let name = if placed == 0 {
                    "pass".to_string()
                } else {
                    self.point_name(placed.trailing_zeros() as usize)
                };
                (name, self.space.encode(c))
            })
            .collect()
    }
}

impl Notation for Go {
    fn parse_position(&self, text: &str) -> anyhow::Result<u64> {
        Ok(Go::parse_position(self, text)?)
    }
    fn format_position(&self, index: u64) -> String {
        Go::format_position(self, index)
    }
    fn moves(&self, index: u64) -> Vec<(String, u64)> {
        Go::moves(self, index)
    }
    /// The board with column letters and row numbers, and how its edges are glued.
    fn picture(&self, index: u64) -> String {
        let s = self.space.decode(index);
        let (rows, cols) = (self.geom.rows, self.geom.cols);
        let mut out = String::from("   ");
        for c in 0..cols {
            out.push((b'a' + c as u8) as char);
            out.push(' ');
        }
        out = out.trim_end().to_string();
        out.push('\n');
        for r in 0..rows {
            out += &format!("{:<3}", r + 1);
            for c in 0..cols {
                out.push(match s.board.at(r * cols + c) {
                    Some(0) => 'X',
                    Some(_) => 'O',
                    None => '.',
                });
                out.push(' ');
            }
            out = out.trim_end().to_string();
            out.push('\n');
        }
        let [lr, tb] = self.geom.surface.gluings();
        out += &format!(
            "{}: left/right edges glued {lr}, top/bottom {tb}\n",
            self.geom.surface.name()
        );
        out
    }
    fn player_name(&self, player: u8) -> String {
        ["Black", "White"][player as usize].to_string()
    }
    /// The final score, Black's area minus White's.
    fn outcome_text(&self, outcome: u8) -> String {
        format!(
            "final score {:+} (Black − White)",
            self.outcome_score(outcome)
        )
    }
    /// Black with a positive score, White with a negative one, nobody on a tie.
    fn outcome_winner(&self, outcome: u8) -> Option<u8> {
        match self.outcome_score(outcome) {
            0 => None,
            s => Some((s < 0) as u8),
        }
    }
    fn start_index(&self) -> Option<u64> {
        Some(self.start())
    }
}

impl Drawing for Go {
    fn board_drawing(&self) -> Value {
        let [left_right, top_bottom] = self.geom.surface.gluings();
        json!({
            "kind": "go",
            "surface": self.geom.surface.name(),
            "rows": self.geom.rows,
            "cols": self.geom.cols,
            "left_right": left_right,
            "top_bottom": top_bottom,
        })
    }

    /// The stones row by row (`X` Black, `O` White, `.` empty) and the ko-banned point.
    fn position_drawing(&self, index: u64) -> Map<String, Value> {
        let text = Go::format_position(self, index);
        let rows: Vec<&str> = text.split(':').next().unwrap_or("").split('/').collect();
        let s = self.space.decode(index);
        let ko = match s.flag {
            super::index::Flag::Ko(p) => json!(self.point_name(p as usize)),
            _ => Value::Null,
        };
        let mut out = Map::new();
        out.insert("stones".into(), json!({"rows": rows, "ko": ko}));
        out
    }
}
