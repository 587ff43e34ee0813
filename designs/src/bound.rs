//! The fewest pictures for K cards of m pictures each, every two cards sharing exactly one.
//! 1. Lower bound by counting incidences and pairs of cards, v ≥ K·m² / (K + m − 1), with an
//!    integer refinement; beyond m² − m + 1 cards every deck is a pencil, so the bound is exact.
//! 2. Upper bounds by construction: the pencil, a projective plane of order m − 1, a picture per
//!    pair of cards. The proofs: docs/decks.md, "How few pictures?".

use crate::field::prime_power;
use serde::Serialize;

/// What is known about the fewest pictures for `cards` cards of `per_card` pictures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FewestPictures {
    /// K, the number of cards.
    pub cards: u64,
    /// m, the pictures on each card.
    pub per_card: u64,
    /// ⌈K·m² / (K + m − 1)⌉.
    pub cauchy_schwarz: u64,
    /// The counting bound with integer r_x (≥ the Cauchy–Schwarz bound).
    pub lower: u64,
    /// 1 + K·(m − 1): the pictures of a pencil.
    pub pencil: u64,
    /// K > m² − m + 1: every deck with these numbers is a pencil.
    pub only_pencils: bool,
    /// The fewest pictures of a deck constructed here, and how.
    pub upper: u64,
    /// The construction that gives `upper` (e.g. "a pencil: one picture on every card").
    pub construction: String,
    /// The minimum when the bounds meet.
    pub exact: Option<u64>,
}

/// The fewest-pictures bounds for K cards of m pictures; `None` when no such deck exists (two or
/// more cards of no picture cannot share one).
pub fn fewest_pictures(cards: u64, per_card: u64) -> Option<FewestPictures> {
    let (k, m) = (cards as u128, per_card as u128);
    if k == 0 {
        return Some(FewestPictures {
            cards,
            per_card,
            cauchy_schwarz: 0,
            lower: 0,
            pencil: 0,
            only_pencils: false,
            upper: 0,
            construction: "no cards".into(),
            exact: Some(0),
        });
    }
    if k == 1 {
        return Some(FewestPictures {
            cards,
            per_card,
            cauchy_schwarz: per_card,
            lower: per_card,
            pencil: per_card,
            only_pencils: false,
            upper: per_card,
            construction: "one card".into(),
            exact: Some(per_card),
        });
    }
    if m == 0 {
        return None;
    }
    let sum = k * m;
    let sum_sq = k * (k + m - 1);
    let cauchy_schwarz = (k * m * m).div_ceil(k + m - 1);
    // The smallest v ≥ the Cauchy–Schwarz bound whose balanced split of K·m fits the squares.
    let balanced = |v: u128| {
        let (a, b) = (sum / v, sum % v);
        (v - b) * a * a + b * (a + 1) * (a + 1)
    };
    let mut lower = cauchy_schwarz.max(1);
    while lower < sum && balanced(lower) > sum_sq {
        lower += 1;
    }
    let pencil = 1 + k * (m.max(1) - 1);
    let plane_size = m * m - m + 1;
    let only_pencils = k > plane_size;
    let (mut upper, mut construction) = (pencil, "a pencil: one picture on every card".to_string());
    let plane_exists = m == 2 || prime_power((m as u64).saturating_sub(1)).is_some();
    if !only_pencils && plane_exists {
        if k <= (m - 1) * (m - 1) && m * m - m < upper {
            (upper, construction) = (
                m * m - m,
                format!(
                    "lines of a projective plane of order {} that miss one point",
                    m - 1
                ),
            );
        } else if plane_size < upper {
            (upper, construction) = (
                plane_size,
                format!("lines of a projective plane of order {}", m - 1),
            );
        }
    }
    // Every two cards share a picture of their own, and the rest of each card is its own:
    // C(K, 2) + K·(m − K + 1) = K·m − C(K, 2) pictures, when K − 1 ≤ m.
    if k <= m + 1 && k * m - k * (k - 1) / 2 < upper {
        (upper, construction) = (
            k * m - k * (k - 1) / 2,
            "a picture for every pair of cards, no three cards sharing one".to_string(),
        );
    }
    if only_pencils {
        lower = pencil;
    }
    Some(FewestPictures {
        cards,
        per_card,
        cauchy_schwarz: cauchy_schwarz as u64,
        lower: lower as u64,
        pencil: pencil as u64,
        only_pencils,
        upper: upper as u64,
        construction,
        exact: (lower == upper).then_some(upper as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deck::Deck;
    use crate::verify::verify;

    #[test]
    fn the_published_deck() {
        let b = fewest_pictures(55, 8).unwrap();
        // 55 · 64 / 62 = 56.77…
        assert_eq!(b.cauchy_schwarz, 57);
        assert_eq!(b.lower, 57);
        assert_eq!(b.upper, 57);
        assert_eq!(b.exact, Some(57));
        assert_eq!(b.pencil, 386);
        assert!(!b.only_pencils);
        // And the construction is real: 55 lines of PG(2, 7) show 57 pictures.
        let mut deck = Deck::projective_plane(7).unwrap();
        deck.keep(55).unwrap();
        let r = verify(deck.cards());
        assert!(r.valid);
        assert_eq!(r.pictures, 57);
    }

    #[test]
    fn known_cases() {
        let exact = |k, m| fewest_pictures(k, m).unwrap().exact;
        // Whole planes are tight.
        for n in [2u64, 3, 4, 5, 7, 8, 9, 11] {
            let size = n * n + n + 1;
            assert_eq!(exact(size, n + 1), Some(size), "order {n}");
        }
        // Two cards: 2m − 1, a pencil.
        for m in 1..20 {
            assert_eq!(exact(2, m), Some(2 * m - 1));
        }
        // One card: m.
        assert_eq!(exact(1, 8), Some(8));
        assert_eq!(exact(0, 8), Some(0));
        assert_eq!(fewest_pictures(2, 0), None);
        // More cards than a plane: pencils only.
        let b = fewest_pictures(58, 8).unwrap();
        assert!(b.only_pencils);
        assert_eq!(b.exact, Some(1 + 58 * 7));
        // 49 cards of 8: the lines of PG(2, 7) missing a point show 56 pictures.
        assert_eq!(exact(49, 8), Some(56));
        // 50 … 57 cards of 8 all need 57.
        for k in 50..=57 {
            assert_eq!(exact(k, 8), Some(57), "{k} cards");
        }
        // Few cards: a picture per pair. 4 cards of 4: 10 (the complete quadrilateral's shape).
        assert_eq!(exact(4, 4), Some(10));
        assert_eq!(exact(3, 3), Some(6));
        // m − 1 = 6 is not a prime power: only the bound is known.
        let b = fewest_pictures(43, 7).unwrap();
        assert_eq!(b.exact, None);
        assert_eq!(b.lower, 43);
    }

    #[test]
    fn the_constructions_are_real() {
        // Lines missing one point: PG(2, 7) minus the 8 lines through a point.
        let deck = Deck::projective_plane(7).unwrap();
        let p = 0;
        let cards: Vec<Vec<u32>> = deck
            .cards()
            .iter()
            .filter(|c| !c.contains(&p))
            .cloned()
            .collect();
        assert_eq!(cards.len(), 49);
        let r = verify(&cards);
        assert!(r.valid);
        assert_eq!(r.pictures, 56);
    }

    /// Is there a deck of k cards of m pictures out of v, every two sharing exactly one?
    /// Backtracking over cards as bitmasks, with pictures numbered in order of first appearance:
    /// a card is some pictures already shown plus the next unused ids (every deck can be
    /// renumbered so), which removes the relabellings from the search.
    fn exists(k: usize, m: usize, v: usize) -> bool {
        fn go(chosen: &mut Vec<u64>, used: usize, k: usize, m: usize, v: usize) -> bool {
            if chosen.len() == k {
                return true;
            }
            // S: the old pictures on the new card (at most m of the `used` shown so far).
            for old in 0u64..1 << used {
                let s = old.count_ones() as usize;
                if s > m || used + (m - s) > v {
                    continue;
                }
                if !chosen.iter().all(|c| (c & old).count_ones() == 1) {
                    continue;
                }
                let fresh = ((1u64 << (m - s)) - 1) << used;
                chosen.push(old | fresh);
                if go(chosen, used + m - s, k, m, v) {
                    return true;
                }
                chosen.pop();
            }
            false
        }
        go(&mut Vec::new(), 0, k, m, v)
    }

    /// The bounds against exhaustive search on small cases: lower ≤ true minimum ≤ upper, and the
    /// exact value when claimed.
    #[test]
    fn bounds_hold_against_exhaustive_search() {
        // The search itself: the Fano plane, the complete quadrilateral, and what is too small.
        assert!(exists(7, 3, 7) && !exists(7, 3, 6) && !exists(8, 3, 16) && exists(8, 3, 17));
        assert!(exists(4, 3, 6) && !exists(4, 3, 5));
        assert!(exists(13, 4, 13) && !exists(6, 4, 10));
        for m in 2..=3usize {
            for k in 1..=8usize {
                let b = fewest_pictures(k as u64, m as u64).unwrap();
                let truth = (1..=1 + k * (m - 1)).find(|&v| exists(k, m, v)).unwrap() as u64;
                assert!(
                    b.lower <= truth && truth <= b.upper,
                    "{k} cards of {m}: {b:?}, truth {truth}"
                );
                if let Some(e) = b.exact {
                    assert_eq!(e, truth, "{k} cards of {m}");
                }
            }
        }
        for k in 1..=6usize {
            let b = fewest_pictures(k as u64, 4).unwrap();
            let truth = (1..=1 + 3 * k).find(|&v| exists(k, 4, v)).unwrap() as u64;
            assert!(
                b.lower <= truth && truth <= b.upper,
                "{k} cards of 4: {b:?}, truth {truth}"
            );
        }
    }
}
