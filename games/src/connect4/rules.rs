//! The rules on the index: fours, classification, moves and unmoves.

use super::index::Discs;
use super::{Connect4, DRAW_OUTCOME};
use kingmaker_kernel::{Game, Node};

impl Connect4 {
    /// Every line of `connect` cells on the board: across, up and both diagonals.
    pub(super) fn lines_of(width: usize, height: usize, connect: usize) -> Vec<u64> {
        let mut lines = Vec::new();
        let cell = |c: usize, r: usize| 1u64 << (c * height + r);
        for (dc, dr) in [(1i64, 0i64), (0, 1), (1, 1), (1, -1)] {
            for c in 0..width as i64 {
                for r in 0..height as i64 {
                    let (ec, er) = (c + dc * (connect as i64 - 1), r + dr * (connect as i64 - 1));
                    if ec < 0 || ec >= width as i64 || er < 0 || er >= height as i64 {
                        continue;
                    }
                    let line = (0..connect as i64)
                        .map(|k| cell((c + dc * k) as usize, (r + dr * k) as usize))
                        .fold(0, |a, b| a | b);
                    lines.push(line);
                }
            }
        }
        lines
    }

    /// Whether `discs` hold a line.
    // Clippy's `contains` suggestion would test `discs & line` outside the closure that binds
    // `line`: not the same test.
    #[allow(clippy::manual_contains)]
    pub(super) fn has_line(&self, discs: u64) -> bool {
        self.lines.iter().any(|&line| discs & line == line)
    }

    /// The side to move in a position with these discs, if the counts allow one: X moves first,
    /// so X has as many discs as O (X to move) or one more (O to move).
    pub(super) fn mover_of(d: &Discs) -> Option<u8> {
        let (x, o) = (d.discs[0].count_ones(), d.discs[1].count_ones());
        match x.checked_sub(o) {
            Some(0) => Some(0),
            Some(1) => Some(1),
            _ => None,
        }
    }

    pub(super) fn classify(&self, d: &Discs) -> Node {
        let Some(mover) = Self::mover_of(d) else {
            return Node::Illegal;
        };
        let last = 1 - mover;
        // The side to move cannot have a four: the game would have ended when it was made.
        if self.has_line(d.discs[mover as usize]) {
            Node::Illegal
        } else if self.has_line(d.discs[last as usize]) {
            Node::Terminal { outcome: last }
        } else if d.count() as usize == self.cols.width * self.cols.height {
            Node::Terminal {
                outcome: DRAW_OUTCOME,
            }
        } else {
            Node::Live { mover }
        }
    }
}

impl Game for Connect4 {
    fn name(&self) -> String {
        let connect = match self.connect {
            4 => String::new(),
            n => format!("-connect{n}"),
        };
        format!("connect4-{}x{}{connect}", self.cols.width, self.cols.height)
    }
    fn players(&self) -> u8 {
        2
    }
    fn size(&self) -> u64 {
        self.cols.size()
    }
    fn node(&self, index: u64) -> Node {
        self.classify(&self.cols.decode(index))
    }
    /// A disc of the side to move into every column with room.
    fn successors(&self, index: u64, out: &mut Vec<u64>) {
        let d = self.cols.decode(index);
        let Node::Live { mover } = self.classify(&d) else {
            return;
        };
        for (col, &h) in d.heights.iter().enumerate() {
            if h < self.cols.height {
                out.push(index + self.cols.drop_delta(col, h, mover));
            }
        }
    }
    /// The top disc of the player who moved last out of any column, where that leaves a
    /// position still in play.
    fn predecessors(&self, index: u64, out: &mut Vec<u64>) {
        let d = self.cols.decode(index);
        if self.classify(&d) == Node::Illegal {
            return;
        }
        let Some(mover) = Self::mover_of(&d) else {
            return;
        };
        let last = 1 - mover;
        for (col, &h) in d.heights.iter().enumerate() {
            if h == 0 || d.discs[last as usize] & self.cols.cell(col, h - 1) == 0 {
                continue;
            }
            let parent = index - self.cols.drop_delta(col, h - 1, last);
            if matches!(self.node(parent), Node::Live { .. }) {
                out.push(parent);
            }
        }
    }
    fn mover(&self, index: u64) -> u8 {
        Self::mover_of(&self.cols.decode(index)).unwrap_or(0)
    }
}
