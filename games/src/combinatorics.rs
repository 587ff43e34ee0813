//! Ranking arithmetic the games share: exact binomials, Pascal tables, and the colex rank, unrank
//! and order of k-subsets.
//! 1. The colex rank of {b₀ < b₁ < … < b₍ₖ₋₁₎} is Σ C(bᵢ, i + 1): the largest element varies
//!    slowest, which is also the numeric order of the bit masks. Hot paths keep faster variants
//!    (cc2p's bucketed unrank, cc3p's stairs), tested against these.

use num_traits::PrimInt;
use std::fmt::Binary;

/// C(n, k) exactly; 0 when k > n.
pub fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    // Each partial product is itself a binomial, so every division is exact.
    (0..k).fold(1u128, |r, i| r * (n - i) as u128 / (i + 1) as u128)
}

/// The binomials C(n, k) for k < K and n < N, held as `K` columns so that a loop over the
/// elements of a set walks one column. K and N are powers of two: an index is masked rather
/// than checked, which the hot paths rely on.
#[derive(Clone, Debug)]
pub struct Pascal<const K: usize, const N: usize> {
    columns: [[u64; N]; K],
}

impl<const K: usize, const N: usize> Pascal<K, N> {
    const POWERS_OF_TWO: () = assert!(K.is_power_of_two() && N.is_power_of_two());

    /// The table; panics if an entry overflows u64.
    pub fn new() -> Self {
        let () = Self::POWERS_OF_TWO;
        let mut columns = [[0u64; N]; K];
        for n in 0..N {
            columns[0][n] = 1;
            for k in 1..K {
                columns[k][n] = if n == 0 {
                    0
                } else {
                    columns[k - 1][n - 1]
                        .checked_add(columns[k][n - 1])
                        .expect("a binomial of the table overflows u64")
                };
            }
        }
        Pascal { columns }
    }

    /// C(n mod N, k mod K): the hot paths compute indices that may wrap where the entry is
    /// multiplied by zero or never used, and pay no check for them.
    #[inline(always)]
    pub fn c(&self, n: usize, k: usize) -> u64 {
        self.columns[k & (K - 1)][n & (N - 1)]
    }

    /// C(a, k) for every a < N.
    #[inline(always)]
    pub fn column(&self, k: usize) -> &[u64; N] {
        &self.columns[k & (K - 1)]
    }

    /// The colex rank of `set` (elements below N; a mask of any width) among the sets of its size.
    #[inline]
    pub fn colex_rank<S: PrimInt + Binary>(&self, set: S) -> u64 {
        debug_assert!(
            N >= 8 * std::mem::size_of::<S>() || set >> N == S::zero(),
            "an element of {set:b} is outside the table"
        );
        let mut rank = 0;
        let mut rest = set;
        let mut i = 1;
        while rest != S::zero() {
            rank += self.c(rest.trailing_zeros() as usize, i);
            i += 1;
            rest = rest & (rest - S::one());
        }
        rank
    }

    /// The k-subset of colex rank `rank` (below C(N, k)): element i − 1 is the largest a with
    /// C(a, i) ≤ what is left of the rank, taken from the top.
    pub fn colex_unrank(&self, mut rank: u64, k: usize) -> u128 {
        let mut set = 0u128;
        let mut top = N;
        for i in (1..=k).rev() {
            let a = (i - 1..top)
                .rev()
                .find(|&a| self.c(a, i) <= rank)
                .expect("the rank is below C(N, k)");
            rank -= self.c(a, i);
            set |= 1 << a;
            top = a;
        }
        set
    }
}

impl<const K: usize, const N: usize> Default for Pascal<K, N> {
    fn default() -> Self {
        Self::new()
    }
}

/// The next k-subset after `set` in colex order (Gosper's hack: the next larger integer with as
/// many bits set). `set` is not empty and its successor stays below its word's top bit.
#[inline]
pub fn next_subset<S: PrimInt>(set: S) -> S {
    debug_assert!(set != S::zero(), "the empty set has no successor");
    let one = S::one();
    let fill = set | (set - one);
    (fill + one) | (((!fill & (fill + one)) - one) >> (set.trailing_zeros() as usize + 1))
}

/// Every k-subset of 0..n (n ≤ 127) in colex order, as bit masks; the empty set once for k = 0.
pub fn subsets(n: usize, k: usize) -> impl Iterator<Item = u128> {
    assert!(n < 128, "subsets of at most 127 elements");
    let end = 1u128 << n;
    let first = (k <= n).then_some((1u128 << k) - 1);
    std::iter::successors(first, move |&set| {
        (set != 0)
            .then(|| next_subset(set))
            .filter(|&next| next < end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials_match_pascals_rule() {
        let pascal = Pascal::<8, 64>::new();
        for n in 0..64 {
            for k in 0..8 {
                assert_eq!(pascal.c(n, k) as u128, binomial(n, k), "C({n}, {k})");
            }
        }
        assert_eq!(binomial(81, 6), 324_540_216);
        assert_eq!(binomial(5, 7), 0);
        assert_eq!(binomial(100, 50), 100_891_344_545_564_193_334_812_497_256);
    }

    #[test]
    fn subsets_come_in_rank_order_and_unrank_back() {
        let pascal = Pascal::<8, 128>::new();
        for (n, k) in [(0, 0), (5, 0), (5, 5), (9, 3), (12, 6), (20, 2), (127, 1)] {
            let all: Vec<u128> = subsets(n, k).collect();
            assert_eq!(all.len() as u128, binomial(n, k), "C({n}, {k}) subsets");
            for (rank, &set) in all.iter().enumerate() {
                assert_eq!(set.count_ones() as usize, k);
                assert_eq!(pascal.colex_rank(set), rank as u64, "{set:b}");
                assert_eq!(pascal.colex_unrank(rank as u64, k), set, "rank {rank}");
            }
        }
        assert_eq!(subsets(3, 4).count(), 0);
    }

    #[test]
    fn the_next_subset_is_the_next_integer_with_as_many_bits() {
        for set in 1u128..4096 {
            let next = (set + 1..).find(|m| m.count_ones() == set.count_ones());
            assert_eq!(Some(next_subset(set)), next, "{set:b}");
        }
    }
}
