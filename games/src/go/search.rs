//! Black's optimal score from the threshold layers: what the start's values at the solved
//! thresholds say, and which threshold to solve next (a binary search solving only what it needs).
//! 1. Values go W…W, D…D, L…L as `k` grows: with `a` the largest W and `b` the smallest L, the
//!    score lies in `[a, b − 1]`, exact when `b = a + 1`. Scores lie in `[−n, n]`, so `k = −n`
//!    (always W) and `k = n + 1` (always L) need no layer.

use kingmaker_kernel::{DRAW, LOSS, WIN};

/// What the solved thresholds show about the start: Black forces a score ≥ `min`, White forces
/// one ≤ `max`. Until the search is done these are the bounds known so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreBounds {
    /// The score Black forces at least.
    pub min: i32,
    /// The score White holds Black to at most.
    pub max: i32,
}

struct Known {
    /// Largest threshold known W (−n if none).
    win: i32,
    /// Smallest threshold known L (n + 1 if none).
    loss: i32,
    /// Smallest and largest thresholds known D.
    draws: Option<(i32, i32)>,
}

fn known(n: usize, solved: &[(i32, u8)]) -> Known {
    let n = n as i32;
    let of = |v: u8| solved.iter().filter(move |s| s.1 == v).map(|s| s.0);
    let draws = of(DRAW).min().zip(of(DRAW).max());
    Known {
        win: of(WIN).max().unwrap_or(-n).max(-n),
        loss: of(LOSS).min().unwrap_or(n + 1).min(n + 1),
        draws,
    }
}

/// The bounds the start's values at the solved thresholds give.
pub fn bounds(n: usize, solved: &[(i32, u8)]) -> ScoreBounds {
    let k = known(n, solved);
    ScoreBounds {
        min: k.win,
        max: k.loss - 1,
    }
}

/// The next threshold to solve, or None when the solved ones pin the score (or its interval, when
/// some thresholds are draws) down. First the edge of the W thresholds, then that of the L ones.
pub fn next_threshold(n: usize, solved: &[(i32, u8)]) -> Option<i32> {
    // The first question is k = 0. Glued surfaces mostly end even or nearly so (4×4: 0 on the
    // torus and the cylinder), so its neighbour comes next: two layers pin a score of 0 or −1
    // down, at the price of one layer more elsewhere.
    if let [(0, value)] = solved {
        match *value {
            WIN => return Some(1),
            // (On one point −1 = −n is W without a layer.)
            LOSS if n > 1 => return Some(-1),
            _ => {}
        }
    }
    let k = known(n, solved);
    let above_win = k.draws.map_or(k.loss, |d| d.0.min(k.loss));
    if above_win - k.win > 1 {
        return Some((k.win + above_win).div_euclid(2));
    }
    let below_loss = k.draws.map_or(k.win, |d| d.1.max(k.win));
    if k.loss - below_loss > 1 {
        return Some((below_loss + k.loss).div_euclid(2));
    }
    None
}

/// The most layers the search solves on `n` points, over every pattern of values the start
/// can have (an upper bound for what a build will write, before it knows the values).
pub fn most_layers(n: usize) -> usize {
    let top = n as i32;
    let mut most = 0;
    for a in -top..=top {
        for b in a + 1..=top + 1 {
            let value = |k: i32| match k {
                k if k <= a => WIN,
                k if k >= b => LOSS,
                _ => DRAW,
            };
            let mut solved = Vec::new();
            // Each step asks a new threshold of the 2n, so the search ends within them.
            while let Some(k) = next_threshold(n, &solved).filter(|_| solved.len() < 2 * n) {
                solved.push((k, value(k)));
            }
            most = most.max(solved.len());
        }
    }
    most
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound is reached by some pattern, and is a few layers above the binary search's.
    #[test]
    fn the_most_layers_bound_the_search() {
        for n in 1..=31usize {
            let most = most_layers(n);
            let search = (usize::BITS - (2 * n + 1).leading_zeros()) as usize;
            assert!(most >= search && most <= 2 * search + 2, "n={n}: {most}");
        }
    }

    /// The search against every monotone pattern of values on small boards: it ends, it asks
    /// only unsolved thresholds, and its bounds are those of the full pattern.
    #[test]
    fn finds_the_bounds_of_every_pattern_with_few_layers() {
        for n in 1..=12usize {
            let ks: Vec<i32> = (-(n as i32) + 1..=n as i32).collect();
            // a = last W, b = first L, a < b, everything between D.
            for a in -(n as i32)..=n as i32 {
                for b in a + 1..=n as i32 + 1 {
                    let value = |k: i32| {
                        if k <= a {
                            WIN
                        } else if k >= b {
                            LOSS
                        } else {
                            DRAW
                        }
                    };
                    let mut solved = Vec::new();
                    while let Some(k) = next_threshold(n, &solved) {
                        assert!(ks.contains(&k), "n={n} asked {k}");
                        assert!(
                            solved.iter().all(|s: &(i32, u8)| s.0 != k),
                            "asked {k} twice"
                        );
                        solved.push((k, value(k)));
                    }
                    assert_eq!(bounds(n, &solved), ScoreBounds { min: a, max: b - 1 });
                    if b == a + 1 {
                        // No draw: a binary search over 2n + 1 outcomes, one layer more for
                        // asking 0's neighbour second, and two layers for a score of 0 or −1.
                        let limit = (usize::BITS - (2 * n + 1).leading_zeros()) as usize + 1;
                        assert!(solved.len() <= limit, "n={n} a={a}: {solved:?}");
                        if a == 0 || a == -1 {
                            assert!(solved.len() <= 2, "n={n} a={a}: {solved:?}");
                        }
                    }
                }
            }
        }
    }
}
