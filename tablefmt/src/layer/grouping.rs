//! Values grouped by position (encoding 3): a block's states ordered by position modulo a period.
//! 1. Where the index interleaves sides to move (cc3p: `index mod 3`), states of one side resemble
//!    each other, so zstd finds longer matches (cc3p level 2 `solo`: about 15 % smaller).
//! 2. No game is known here: [`best_period`] keeps the period that compresses samples best.

/// Largest period tried (and accepted by readers: the header's modulus is at most 8).
pub const MAX_TRIED_PERIOD: u8 = 4;

/// `values` in grouped order for `period` (1: unchanged).
pub fn group(values: &[u8], period: u8) -> Vec<u8> {
    let p = period.max(1) as usize;
    (0..p)
        .flat_map(|r| values.iter().skip(r).step_by(p).copied())
        .collect()
}

/// Where each position of a block of `n` states sits in its grouped order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grouping {
    period: usize,
    /// `start[r]`: the grouped position of block position `r` (the first of group `r`).
    start: [usize; 8],
}

impl Grouping {
    /// The grouping of a block of `n` states with `period` (1 to 8).
    pub fn new(n: usize, period: u8) -> Grouping {
        let period = period.clamp(1, 8) as usize;
        let mut start = [0usize; 8];
        for r in 1..period {
            // Group r − 1 holds positions r − 1, r − 1 + P, ... below n.
            start[r] = start[r - 1] + n.saturating_sub(r - 1).div_ceil(period);
        }
        Grouping { period, start }
    }

    /// The grouped position of block position `j`.
    #[inline]
    pub fn position(&self, j: usize) -> usize {
        self.start[j % self.period] + j / self.period
    }
}

/// The period (1 to [`MAX_TRIED_PERIOD`]) whose grouping compresses `samples` (whole blocks of
/// values, 0..=3, each starting at a block boundary) smallest at zstd `level`; 1 on ties, so data
/// without a period keeps the plain encoding.
pub fn best_period(samples: &[Vec<u8>], level: i32) -> u8 {
    let size = |period: u8| -> usize {
        samples
            .iter()
            .map(|block| {
                let mut packed = Vec::with_capacity(block.len().div_ceil(4));
                super::pack_values(&group(block, period), &mut packed);
                zstd::bulk::compress(&packed, level).map_or(usize::MAX, |c| c.len())
            })
            .sum()
    };
    let mut best = (size(1), 1);
    for period in 2..=MAX_TRIED_PERIOD {
        let s = size(period);
        if s < best.0 {
            best = (s, period);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_follow_the_grouped_order() {
        for period in 1..=8u8 {
            for n in 0..40usize {
                let values: Vec<u8> = (0..n).map(|j| j as u8).collect();
                let grouped = group(&values, period);
                let g = Grouping::new(n, period);
                for j in 0..n {
                    assert_eq!(
                        grouped[g.position(j)],
                        j as u8,
                        "period {period}, n {n}, j {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_best_period_is_the_data_s() {
        // Period-3 data: two sides alike, the third random-looking.
        let mut x = 12345u64;
        let block: Vec<u8> = (0..1 << 14)
            .map(|j| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if j % 3 == 2 {
                    (x % 4) as u8
                } else {
                    1
                }
            })
            .collect();
        assert_eq!(best_period(&[block], 3), 3);
        assert_eq!(best_period(&[vec![2u8; 1 << 14]], 3), 1);
    }
}
