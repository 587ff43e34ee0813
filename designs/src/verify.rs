//! Check any deck: every two cards share exactly one picture, all cards show as many, none twice.
//! 1. The first violation is named: for the pairs, the smallest b, then the smallest a (cards
//!    numbered from 0 in deck order); optionally the expected numbers are checked too.
//! 2. The cheaper of two checks runs, by pairs of cards or by pairs of pictures: a large pencil
//!    costs a few steps per incidence (docs/decks.md, "How verification is fast").

use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

/// What the deck is expected to have (`None`: anything).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expect {
    /// The number of cards.
    pub cards: Option<usize>,
    /// The pictures on every card (otherwise card 0's count is expected of all).
    pub per_card: Option<usize>,
    /// The number of distinct pictures shown.
    pub pictures: Option<usize>,
}

/// The first thing wrong with a deck.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Violation {
    /// A card shows no picture: it can share none.
    EmptyCard {
        /// The empty card.
        card: usize,
    },
    /// A card shows the same picture twice.
    RepeatedPicture {
        /// The card.
        card: usize,
        /// The picture it shows twice (its id in the deck).
        picture: u32,
    },
    /// A card shows a different number of pictures from card 0 (or from the expected number).
    CardSize {
        /// The first card of another size.
        card: usize,
        /// The pictures it shows.
        pictures: usize,
        /// The pictures every card should show.
        expected: usize,
    },
    /// Two cards share no picture, or more than one.
    Shared {
        /// The earlier card.
        a: usize,
        /// The later card.
        b: usize,
        /// The pictures they share, ascending (empty when none).
        shared: Vec<u32>,
    },
    /// The deck has another number of cards than expected.
    Cards {
        /// The cards in the deck.
        found: usize,
        /// The cards expected.
        expected: usize,
    },
    /// The cards show another number of distinct pictures than expected.
    Pictures {
        /// The distinct pictures shown.
        found: usize,
        /// The distinct pictures expected.
        expected: usize,
    },
}

/// "1 card", "3 cards".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "were" or "was", for `n` things.
fn were(n: usize) -> &'static str {
    if n == 1 {
        "was"
    } else {
        "were"
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::EmptyCard { card } => write!(
                f,
                "card {card} shows no picture (an empty card shares none; every card needs pictures)"
            ),
            Violation::RepeatedPicture { card, picture } => {
                write!(f, "card {card} shows picture {picture} more than once")
            }
            Violation::CardSize {
                card,
                pictures,
                expected,
            } => write!(
                f,
                "card {card} shows {} where {expected} {} expected",
                count(*pictures, "picture", "pictures"),
                were(*expected)
            ),
            Violation::Shared { a, b, shared } if shared.is_empty() => {
                write!(f, "cards {a} and {b} share no picture")
            }
            Violation::Shared { a, b, shared } => {
                let list: Vec<String> = shared.iter().map(u32::to_string).collect();
                write!(
                    f,
                    "cards {a} and {b} share {} pictures ({})",
                    shared.len(),
                    list.join(", ")
                )
            }
            Violation::Cards { found, expected } => write!(
                f,
                "the deck has {} where {expected} {} expected",
                count(*found, "card", "cards"),
                were(*expected)
            ),
            Violation::Pictures { found, expected } => write!(
                f,
                "the cards show {} where {expected} {} expected",
                count(*found, "distinct picture", "distinct pictures"),
                were(*expected)
            ),
        }
    }
}

/// The verdict on a deck, with its numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Whether every check passed.
    pub valid: bool,
    /// The number of cards.
    pub cards: usize,
    /// Distinct pictures shown.
    pub pictures: usize,
    /// The number of pictures on every card, when all cards show as many.
    pub per_card: Option<usize>,
    /// The fewest pictures on a card.
    pub min_per_card: usize,
    /// The most pictures on a card.
    pub max_per_card: usize,
    /// The fewest cards showing one picture (over the pictures shown).
    pub min_cards_per_picture: usize,
    /// The most cards showing one picture (over the pictures shown).
    pub max_cards_per_picture: usize,
    /// n when the deck is a whole projective plane of order n: n² + n + 1 cards and pictures,
    /// n + 1 pictures per card, valid.
    pub projective_plane_order: Option<usize>,
    /// The first violation, if any.
    pub violation: Option<Violation>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let per_card = match self.per_card {
            Some(m) => count(m, "picture", "pictures"),
            None => format!("{}–{} pictures", self.min_per_card, self.max_per_card),
        };
        let on = if self.min_cards_per_picture == self.max_cards_per_picture {
            count(self.min_cards_per_picture, "card", "cards")
        } else {
            format!(
                "{}–{} cards",
                self.min_cards_per_picture, self.max_cards_per_picture
            )
        };
        let pictures = count(self.pictures, "distinct picture", "distinct pictures");
        let each = match self.pictures {
            0 => String::new(),
            1 => format!(" (on {on})"),
            _ => format!(" (each on {on})"),
        };
        write!(
            f,
            "{} of {per_card}, {pictures}{each}: ",
            count(self.cards, "card", "cards")
        )?;
        match &self.violation {
            None => {
                write!(f, "valid, every two cards share exactly one picture")?;
                if let Some(n) = self.projective_plane_order {
                    write!(f, " (a whole projective plane of order {n})")?;
                }
                Ok(())
            }
            Some(v) => write!(f, "NOT valid: {v}"),
        }
    }
}

/// Verify a deck with no expectations on its numbers.
pub fn verify(cards: &[Vec<u32>]) -> Report {
    verify_expecting(cards, &Expect::default())
}

/// Verify a deck, and that it has the expected numbers.
pub fn verify_expecting(cards: &[Vec<u32>], expect: &Expect) -> Report {
    let k = cards.len();
    let dense = Dense::new(cards);
    let v = dense.pictures;
    let sizes = cards.iter().map(Vec::len);
    let mut report = Report {
        valid: false,
        cards: k,
        pictures: v,
        per_card: None,
        min_per_card: sizes.clone().min().unwrap_or(0),
        max_per_card: sizes.max().unwrap_or(0),
        min_cards_per_picture: dense.incidence.iter().map(Vec::len).min().unwrap_or(0),
        max_cards_per_picture: dense.incidence.iter().map(Vec::len).max().unwrap_or(0),
        projective_plane_order: None,
        violation: None,
    };
    if report.min_per_card == report.max_per_card && k > 0 {
        report.per_card = Some(report.min_per_card);
    }
    report.violation = first_violation(cards, &dense, expect);
    report.valid = report.violation.is_none();
    if let (true, Some(m)) = (report.valid, report.per_card) {
        if m >= 3 && k == m * m - m + 1 && v == k {
            report.projective_plane_order = Some(m - 1);
        }
    }
    report
}

fn first_violation(cards: &[Vec<u32>], dense: &Dense, expect: &Expect) -> Option<Violation> {
    if let Some(card) = cards.iter().position(Vec::is_empty) {
        return Some(Violation::EmptyCard { card });
    }
    for (c, card) in dense.cards.iter().enumerate() {
        let mut sorted = card.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            let picture = dense.ids[w[0] as usize];
            return Some(Violation::RepeatedPicture { card: c, picture });
        }
    }
    let expected_size = expect
        .per_card
        .or_else(|| cards.first().map(Vec::len))
        .unwrap_or(0);
    if let Some((card, c)) = cards
        .iter()
        .enumerate()
        .find(|(_, c)| c.len() != expected_size)
    {
        return Some(Violation::CardSize {
            card,
            pictures: c.len(),
            expected: expected_size,
        });
    }
    if let Some((a, b)) = first_bad_pair(dense) {
        let mut shared: Vec<u32> = cards[a]
            .iter()
            .filter(|x| cards[b].contains(x))
            .copied()
            .collect();
        shared.sort_unstable();
        return Some(Violation::Shared { a, b, shared });
    }
    if let Some(expected) = expect.cards.filter(|&e| e != cards.len()) {
        return Some(Violation::Cards {
            found: cards.len(),
            expected,
        });
    }
    if let Some(expected) = expect.pictures.filter(|&e| e != dense.pictures) {
        return Some(Violation::Pictures {
            found: dense.pictures,
            expected,
        });
    }
    None
}

/// The deck with pictures renumbered `0..pictures`, and each picture's cards.
struct Dense {
    pictures: usize,
    /// The original id of each dense picture.
    ids: Vec<u32>,
    cards: Vec<Vec<u32>>,
    /// For each picture, the cards showing it, ascending (a card showing it twice is listed twice).
    incidence: Vec<Vec<u32>>,
}

impl Dense {
    fn new(cards: &[Vec<u32>]) -> Dense {
        let total: usize = cards.iter().map(Vec::len).sum();
        let max = cards.iter().flatten().max().copied();
        let dense_cards: Vec<Vec<u32>>;
        let ids: Vec<u32>;
        match max {
            // Small ids: a lookup table.
            Some(max) if (max as usize) <= 4 * total + 1024 => {
                let mut map = vec![u32::MAX; max as usize + 1];
                let mut list = Vec::new();
                for &x in cards.iter().flatten() {
                    if map[x as usize] == u32::MAX {
                        map[x as usize] = 0;
                        list.push(x);
                    }
                }
                list.sort_unstable();
                for (i, &x) in list.iter().enumerate() {
                    map[x as usize] = i as u32;
                }
                dense_cards = cards
                    .iter()
                    .map(|c| c.iter().map(|&x| map[x as usize]).collect())
                    .collect();
                ids = list;
            }
            // Sparse ids: a hash map.
            _ => {
                let mut list: Vec<u32> = cards.iter().flatten().copied().collect();
                list.sort_unstable();
                list.dedup();
                let map: HashMap<u32, u32> = list
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| (x, i as u32))
                    .collect();
                dense_cards = cards
                    .iter()
                    .map(|c| c.iter().map(|x| map[x]).collect())
                    .collect();
                ids = list;
            }
        }
        let mut incidence = vec![Vec::new(); ids.len()];
        for (c, card) in dense_cards.iter().enumerate() {
            for &x in card {
                incidence[x as usize].push(c as u32);
            }
        }
        Dense {
            pictures: ids.len(),
            ids,
            cards: dense_cards,
            incidence,
        }
    }
}

/// The first pair (a, b), a < b, smallest b then smallest a, that does not share exactly one
/// picture, by the cheaper of the two checks (docs/decks.md). Cards show no picture twice
/// here.
fn first_bad_pair(dense: &Dense) -> Option<(usize, usize)> {
    let pairs = |n: usize| (n as u128) * (n as u128).saturating_sub(1) / 2;
    let by_cards: u128 = dense.incidence.iter().map(|l| pairs(l.len())).sum();
    let by_pictures: u128 = dense.cards.iter().map(|c| pairs(c.len())).sum();
    if by_cards <= by_pictures {
        first_bad_pair_by_cards(dense)
    } else {
        first_bad_pair_by_pictures(dense)
    }
}

/// [`first_bad_pair`] by pairs of pictures: the first card repeating a pair of pictures of an
/// earlier card, and before it the first card whose pictures' earlier cards do not add up to
/// its number.
fn first_bad_pair_by_pictures(dense: &Dense) -> Option<(usize, usize)> {
    let k = dense.cards.len();
    let sorted: Vec<Vec<u32>> = dense
        .cards
        .iter()
        .map(|c| {
            let mut c = c.clone();
            c.sort_unstable();
            c
        })
        .collect();
    // The first card that shows two pictures together with an earlier card (k: none). For each
    // picture x, `mark[y] == x` says an earlier card of x's list shows y (y > x).
    let mut over = k;
    let mut mark = vec![u32::MAX; dense.pictures];
    for (x, cards) in dense.incidence.iter().enumerate() {
        let x = x as u32;
        for &c in cards {
            if c as usize >= over {
                break;
            }
            let card = &sorted[c as usize];
            let above = card.partition_point(|&y| y <= x);
            for &y in &card[above..] {
                if mark[y as usize] == x {
                    over = c as usize;
                    break;
                }
                mark[y as usize] = x;
            }
        }
    }
    // Before `over`, two cards share at most one picture, so the earlier cards showing card b's
    // pictures are distinct and b meets them all exactly when there are b of them.
    let mut earlier = vec![0u32; dense.pictures];
    let mut bad = over;
    for (b, card) in dense.cards.iter().enumerate().take(over) {
        let mut met = 0u64;
        for &x in card {
            met += u64::from(earlier[x as usize]);
            earlier[x as usize] += 1;
        }
        if met != b as u64 {
            bad = b;
            break;
        }
    }
    if bad == k {
        return None;
    }
    // Which earlier card: count what each shares with `bad`.
    let b = bad;
    let mut shared = vec![0u32; b];
    for &x in &dense.cards[b] {
        for &a in &dense.incidence[x as usize] {
            if a as usize >= b {
                break;
            }
            shared[a as usize] += 1;
        }
    }
    let a = shared
        .iter()
        .position(|&n| n != 1)
        .expect("a card that does not share exactly one picture");
    Some((a, b))
}

/// [`first_bad_pair`] by pairs of cards: for each card b, count what each earlier card shares
/// with it by walking its pictures' cards up to b (docs/decks.md).
fn first_bad_pair_by_cards(dense: &Dense) -> Option<(usize, usize)> {
    let k = dense.cards.len();
    // Per earlier card a: [the card b it was last counted for, how many pictures it shares with b],
    // side by side so that a step touches one cache line.
    let mut seen = vec![[u32::MAX, 0u32]; k];
    for b in 0..k {
        let b32 = b as u32;
        let mut steps = 0usize;
        let mut over = false;
        for &x in &dense.cards[b] {
            for &a in &dense.incidence[x as usize] {
                if a >= b32 {
                    break;
                }
                let s = &mut seen[a as usize];
                if s[0] != b32 {
                    *s = [b32, 1];
                } else {
                    s[1] += 1;
                    over = true;
                }
                steps += 1;
            }
        }
        if steps != b || over {
            let a = (0..b)
                .find(|&a| seen[a] != [b32, 1])
                .expect("a card that does not share exactly one picture");
            return Some((a, b));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deck::Deck;
    use proptest::prelude::*;

    /// The definition, pair by pair.
    fn brute_force(cards: &[Vec<u32>]) -> Option<(usize, usize)> {
        for b in 0..cards.len() {
            for a in 0..b {
                let n = cards[a].iter().filter(|x| cards[b].contains(x)).count();
                if n != 1 {
                    return Some((a, b));
                }
            }
        }
        None
    }

    #[test]
    fn whole_planes_are_valid_and_recognised() {
        for q in [2, 3, 4, 5, 7, 8, 9] {
            let deck = Deck::projective_plane(q).unwrap();
            let r = verify(deck.cards());
            assert!(r.valid, "PG(2,{q}): {r}");
            assert_eq!(r.projective_plane_order, Some(q as usize));
            assert_eq!(r.per_card, Some(q as usize + 1));
            assert_eq!(r.min_cards_per_picture, q as usize + 1);
            assert_eq!(r.max_cards_per_picture, q as usize + 1);
        }
    }

    #[test]
    fn the_published_deck_size() {
        let mut deck = Deck::projective_plane(7).unwrap();
        deck.keep(55).unwrap();
        let expect = Expect {
            cards: Some(55),
            per_card: Some(8),
            pictures: Some(57),
        };
        let r = verify_expecting(deck.cards(), &expect);
        assert!(r.valid, "{r}");
        assert_eq!(r.projective_plane_order, None);
        assert_eq!((r.min_cards_per_picture, r.max_cards_per_picture), (6, 8));
        let r = verify_expecting(
            deck.cards(),
            &Expect {
                pictures: Some(56),
                ..expect
            },
        );
        assert_eq!(
            r.violation,
            Some(Violation::Pictures {
                found: 57,
                expected: 56
            })
        );
        let r = verify_expecting(
            deck.cards(),
            &Expect {
                cards: Some(57),
                ..expect
            },
        );
        assert_eq!(
            r.violation,
            Some(Violation::Cards {
                found: 55,
                expected: 57
            })
        );
    }

    #[test]
    fn every_violation_is_named() {
        let ok = vec![vec![0, 1], vec![1, 2], vec![0, 2]];
        assert!(verify(&ok).valid);

        let mut bad = ok.clone();
        bad[1] = vec![2, 2];
        assert_eq!(
            verify(&bad).violation,
            Some(Violation::RepeatedPicture {
                card: 1,
                picture: 2
            })
        );
        let mut bad = ok.clone();
        bad[2] = vec![0, 2, 3];
        let v = verify(&bad).violation.unwrap();
        assert_eq!(
            v.to_string(),
            "card 2 shows 3 pictures where 2 were expected"
        );
        let mut bad = ok.clone();
        bad[2] = vec![3, 4];
        let v = verify(&bad).violation.unwrap();
        assert_eq!(v.to_string(), "cards 0 and 2 share no picture");
        let bad = vec![vec![0, 1, 2], vec![0, 3, 4], vec![0, 3, 5]];
        let v = verify(&bad).violation.unwrap();
        assert_eq!(v.to_string(), "cards 1 and 2 share 2 pictures (0, 3)");
        // Sparse ids go through the hash map and are reported as written.
        let bad = vec![vec![7, 4_000_000_000], vec![7, 4_000_000_000]];
        let v = verify(&bad).violation.unwrap();
        assert_eq!(
            v.to_string(),
            "cards 0 and 1 share 2 pictures (7, 4000000000)"
        );
        // One card, or none: nothing to compare.
        assert!(verify(&[vec![5, 6]]).valid);
        assert!(verify(&[]).valid);
    }

    #[test]
    fn a_broken_plane_names_the_first_bad_pair() {
        let deck = Deck::projective_plane(5).unwrap();
        let mut cards = deck.cards().to_vec();
        // Swap one picture of card 20 for one that card 20 does not show.
        let other = (0..31).find(|x| !cards[20].contains(x)).unwrap();
        cards[20][3] = other;
        let expected = brute_force(&cards).unwrap();
        let r = verify(&cards);
        assert!(!r.valid);
        match r.violation {
            Some(Violation::Shared { a, b, .. }) => assert_eq!((a, b), expected),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_empty_card_is_refused() {
        assert_eq!(
            verify(&[vec![]]).violation,
            Some(Violation::EmptyCard { card: 0 })
        );
        let r = verify(&[vec![0, 1], vec![1, 2], vec![]]);
        assert_eq!(r.violation, Some(Violation::EmptyCard { card: 2 }));
        assert!(r.to_string().contains("card 2 shows no picture"), "{r}");
    }

    #[test]
    fn numbers_of_one_read_in_the_singular() {
        let r = verify(&[vec![4, 5, 6]]);
        assert_eq!(
            r.to_string(),
            "1 card of 3 pictures, 3 distinct pictures (each on 1 card): valid, every two cards \
             share exactly one picture"
        );
        let r = verify(&[vec![0], vec![0]]);
        assert!(
            r.to_string()
                .starts_with("2 cards of 1 picture, 1 distinct picture (on 2 cards): valid"),
            "{r}"
        );
        let r = verify_expecting(
            &[vec![0, 1]],
            &Expect {
                cards: Some(2),
                ..Expect::default()
            },
        );
        assert_eq!(
            r.violation.unwrap().to_string(),
            "the deck has 1 card where 2 were expected"
        );
        let r = verify(&[vec![0, 1], vec![1]]);
        assert_eq!(
            r.violation.unwrap().to_string(),
            "card 1 shows 1 picture where 2 were expected"
        );
    }

    /// A pencil of `k` cards of 3 pictures: picture 0 on every card, two of its own on each.
    fn pencil(k: u32) -> Vec<Vec<u32>> {
        (0..k).map(|i| vec![0, 2 * i + 1, 2 * i + 2]).collect()
    }

    #[test]
    fn a_large_pencil_is_checked_in_linear_time() {
        // 10^6 cards: the walk by cards would take 5·10^11 steps.
        let mut cards = pencil(1_000_000);
        let started = std::time::Instant::now();
        let r = verify(&cards);
        assert!(r.valid, "{r}");
        // The last card without the common picture: it meets card 0 in nothing.
        cards[999_999] = vec![1, 5_000_000, 5_000_001];
        let r = verify(&cards);
        assert_eq!(
            r.violation,
            Some(Violation::Shared {
                a: 1,
                b: 999_999,
                shared: vec![]
            })
        );
        // Sharing two pictures with card 3 (and none with card 0).
        let mut cards = pencil(1_000_000);
        cards[500_000] = vec![7, 8, 9_999_999];
        let r = verify(&cards);
        assert_eq!(
            r.violation,
            Some(Violation::Shared {
                a: 0,
                b: 500_000,
                shared: vec![]
            })
        );
        let mut cards = pencil(1_000_000);
        cards[500_000] = vec![0, 7, 8];
        let r = verify(&cards);
        assert_eq!(
            r.violation,
            Some(Violation::Shared {
                a: 3,
                b: 500_000,
                shared: vec![0, 7, 8]
            })
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_pencil_is_valid() {
        let cards: Vec<Vec<u32>> = (0..10).map(|i| vec![0, 2 * i + 1, 2 * i + 2]).collect();
        let r = verify(&cards);
        assert!(r.valid, "{r}");
        assert_eq!(r.pictures, 21);
        assert_eq!(r.max_cards_per_picture, 10);
    }

    proptest! {
        /// Small random decks: the verdict agrees with the definition checked pair by pair.
        #[test]
        fn agrees_with_brute_force(cards in prop::collection::vec(
            prop::collection::btree_set(0u32..9, 2..4).prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            0..8,
        )) {
            let r = verify(&cards);
            let sizes_ok = cards.iter().all(|c| c.len() == cards[0].len());
            let pair = brute_force(&cards);
            prop_assert_eq!(r.valid, sizes_ok && pair.is_none(), "{}", r);
            if sizes_ok {
                if let Some((a, b)) = pair {
                    prop_assert!(
                        matches!(r.violation, Some(Violation::Shared { a: x, b: y, .. }) if (x, y) == (a, b)),
                        "{:?}",
                        r.violation
                    );
                }
            }
        }

        /// Both checks of the pairs name the first bad pair of the definition (on decks whose
        /// cards all show m distinct pictures, as they do by the time the pairs are checked).
        #[test]
        fn both_pair_checks_agree_with_brute_force(cards in (1usize..5).prop_flat_map(|m| prop::collection::vec(
            prop::collection::btree_set(0u32..10, m).prop_map(|s| s.into_iter().collect::<Vec<_>>()),
            0..12,
        ))) {
            let dense = Dense::new(&cards);
            let pair = brute_force(&cards);
            prop_assert_eq!(first_bad_pair_by_cards(&dense), pair);
            prop_assert_eq!(first_bad_pair_by_pictures(&dense), pair);
        }

        /// Pencils and planes with a card damaged, both checks.
        #[test]
        fn both_pair_checks_find_damage(k in 2u32..40, card in 0usize..40, slot in 0usize..3, to in 0u32..90, plane in any::<bool>()) {
            let mut cards = if plane {
                Deck::projective_plane(5).unwrap().cards().to_vec()
            } else {
                (0..k).map(|i| vec![0, 2 * i + 1, 2 * i + 2]).collect()
            };
            let c = card % cards.len();
            let slot = slot % cards[c].len();
            if !cards[c].contains(&to) {
                cards[c][slot] = to;
            }
            let dense = Dense::new(&cards);
            let pair = brute_force(&cards);
            prop_assert_eq!(first_bad_pair_by_cards(&dense), pair);
            prop_assert_eq!(first_bad_pair_by_pictures(&dense), pair);
        }

        /// Random subsets of PG(2, 4)'s lines with one picture changed, or not.
        #[test]
        fn damaged_planes(keep in prop::collection::vec(any::<bool>(), 21), card in 0usize..21, slot in 0usize..5, to in 0u32..21) {
            let deck = Deck::projective_plane(4).unwrap();
            let mut cards: Vec<Vec<u32>> = deck.cards().iter().zip(&keep).filter(|(_, &k)| k).map(|(c, _)| c.clone()).collect();
            if !cards.is_empty() {
                let c = card % cards.len();
                if !cards[c].contains(&to) {
                    cards[c][slot] = to;
                }
            }
            let r = verify(&cards);
            prop_assert_eq!(r.valid, brute_force(&cards).is_none());
        }
    }
}
