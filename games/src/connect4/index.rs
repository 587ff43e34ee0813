//! The dense index: each column is a number below `2^(H+1) − 1` (its height h and, as h bits,
//! whose disc is at each row: `2^h − 1 + discs`), and a position is those numbers as the digits
//! of one number in base `2^(H+1) − 1`, column 0 the lowest digit. The side to move follows from
//! the counts (X moves first), so it takes no digit.

/// The board's shape and the index arithmetic.
#[derive(Clone, Debug)]
pub struct Columns {
    pub width: usize,
    pub height: usize,
    /// `2^(height+1) − 1`: the numbers a column can be.
    pub base: u64,
    /// `base^col` for every column, and `base^width` (the index space's size) last.
    pub power: Vec<u64>,
}

/// A position as discs: bit `col * height + row` of `discs[p]` is player p's disc (row 0 the
/// bottom), and each column's height.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discs {
    pub discs: [u64; 2],
    pub heights: Vec<usize>,
}

impl Discs {
    /// Discs on the board.
    pub fn count(&self) -> u32 {
        (self.discs[0] | self.discs[1]).count_ones()
    }
}

impl Columns {
    /// The arithmetic of a `width`×`height` board; None when its index space exceeds `limit`.
    pub fn new(width: usize, height: usize, limit: u128) -> Option<Columns> {
        let base = (1u64 << (height + 1)) - 1;
        let mut power = vec![1u64];
        for _ in 0..width {
            let next = u128::from(*power.last()?) * u128::from(base);
            if next > limit {
                return None;
            }
            power.push(next as u64);
        }
        Some(Columns {
            width,
            height,
            base,
            power,
        })
    }

    /// The index space's size.
    pub fn size(&self) -> u64 {
        self.power[self.width]
    }

    /// The cell of `row` (0 the bottom) in `col`, as a bit.
    pub fn cell(&self, col: usize, row: usize) -> u64 {
        1 << (col * self.height + row)
    }

    /// The discs of `index` (`index < size()`).
    pub fn decode(&self, mut index: u64) -> Discs {
        let mut discs = [0u64; 2];
        let mut heights = Vec::with_capacity(self.width);
        for col in 0..self.width {
            let code = index % self.base;
            index /= self.base;
            let h = (code + 1).ilog2() as usize;
            let owners = code + 1 - (1 << h);
            for row in 0..h {
                discs[(owners >> row & 1) as usize] |= self.cell(col, row);
            }
            heights.push(h);
        }
        Discs { discs, heights }
    }

    /// The index of `d`.
    pub fn encode(&self, d: &Discs) -> u64 {
        let mut index = 0;
        for col in (0..self.width).rev() {
            let h = d.heights[col];
            let owners: u64 = (0..h)
                .filter(|&row| d.discs[1] & self.cell(col, row) != 0)
                .map(|row| 1 << row)
                .sum();
            index = index * self.base + (1 << h) - 1 + owners;
        }
        index
    }

    /// What dropping player `p`'s disc into `col`, now `h` high, adds to the index (and taking
    /// it out again subtracts): the column's number grows by `2^h`, and by `2^h` more for O.
    pub fn drop_delta(&self, col: usize, h: usize, p: u8) -> u64 {
        ((1 + u64::from(p)) << h) * self.power[col]
    }
}
