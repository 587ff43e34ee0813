//! A deck: cards, each a set of picture ids from `0..pictures`.
//!
//! A projective plane gives a deck with one card per line and one picture per point. Keeping only
//! some cards keeps the property that any two share exactly one picture; the pictures that no kept
//! card shows can then be dropped (and the rest renumbered densely).

use crate::plane::{Plane, PlaneError};

/// Errors shaping a deck.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeckError {
    /// More cards to keep than the deck has.
    #[error("cannot keep {asked} cards: the deck has {have}")]
    TooManyCards {
        /// The cards asked for.
        asked: usize,
        /// The cards in the deck.
        have: usize,
    },
    /// Keeping no cards.
    #[error("a deck needs at least one card")]
    NoCards,
}

/// Cards of picture ids. Ids are below [`Deck::pictures`]; a card lists its pictures ascending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deck {
    pictures: u32,
    cards: Vec<Vec<u32>>,
}

impl Deck {
    /// A deck of the given cards; the picture set is `0..=max id` (every id up to the largest).
    pub fn from_cards(cards: Vec<Vec<u32>>) -> Deck {
        let pictures = cards
            .iter()
            .flatten()
            .max()
            .map_or(0, |&m| m as u64 + 1)
            .min(u32::MAX as u64) as u32;
        Deck { pictures, cards }
    }

    /// The deck of PG(2, order): a card per line, a picture per point.
    pub fn projective_plane(order: u64) -> Result<Deck, PlaneError> {
        Ok(Deck::from_plane(&Plane::new(order)?))
    }

    /// A card per line of the plane, a picture per point.
    pub fn from_plane(plane: &Plane) -> Deck {
        Deck {
            pictures: plane.size() as u32,
            cards: plane.lines().to_vec(),
        }
    }

    /// The cards.
    pub fn cards(&self) -> &[Vec<u32>] {
        &self.cards
    }

    /// The size of the picture set: ids are `0..pictures` (some may be on no card).
    pub fn pictures(&self) -> u32 {
        self.pictures
    }

    /// The number of distinct pictures shown on the cards.
    pub fn used_pictures(&self) -> usize {
        self.used_ids().len()
    }

    /// The distinct ids shown on the cards, ascending (sorted, so that sparse ids cost no more
    /// than dense ones).
    pub fn used_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.cards.iter().flatten().copied().collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Keep the first `k` cards.
    pub fn keep(&mut self, k: usize) -> Result<(), DeckError> {
        if k == 0 {
            return Err(DeckError::NoCards);
        }
        if k > self.cards.len() {
            return Err(DeckError::TooManyCards {
                asked: k,
                have: self.cards.len(),
            });
        }
        self.cards.truncate(k);
        Ok(())
    }

    /// Drop the pictures that no card shows and renumber the others `0..used`, keeping their order.
    pub fn drop_unused(&mut self) {
        let used = self.used_ids();
        for card in &mut self.cards {
            for x in card.iter_mut() {
                *x = used.binary_search(x).expect("every shown id is used") as u32;
            }
        }
        self.pictures = used.len() as u32;
    }

    /// The pictures cards `a` and `b` share, ascending.
    pub fn shared(&self, a: usize, b: usize) -> Vec<u32> {
        let (ca, cb) = (&self.cards[a], &self.cards[b]);
        let mut out: Vec<u32> = ca.iter().filter(|x| cb.contains(x)).copied().collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// One card per line, ids separated by spaces (the text format `parse` reads).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for card in &self.cards {
            let line: Vec<String> = card.iter().map(u32::to_string).collect();
            out.push_str(&line.join(" "));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_and_drop_unused() {
        let mut deck = Deck::projective_plane(7).unwrap();
        assert_eq!((deck.cards().len(), deck.pictures()), (57, 57));
        deck.keep(55).unwrap();
        // A picture disappears only with all 8 of its cards: two dropped cards free none.
        assert_eq!(deck.used_pictures(), 57);
        deck.drop_unused();
        assert_eq!(deck.pictures(), 57);

        let mut deck = Deck::projective_plane(3).unwrap();
        deck.keep(3).unwrap();
        let used = deck.used_pictures();
        assert!(used < 13);
        let before: Vec<Vec<usize>> = (0..3)
            .map(|a| (0..3).map(|b| deck.shared(a, b).len()).collect())
            .collect();
        deck.drop_unused();
        assert_eq!(deck.pictures() as usize, used);
        assert_eq!(deck.used_pictures(), used);
        assert!(deck.cards().iter().flatten().all(|&x| x < used as u32));
        let after: Vec<Vec<usize>> = (0..3)
            .map(|a| (0..3).map(|b| deck.shared(a, b).len()).collect())
            .collect();
        assert_eq!(before, after);

        assert_eq!(
            deck.keep(4).unwrap_err(),
            DeckError::TooManyCards { asked: 4, have: 3 }
        );
        assert_eq!(deck.keep(0).unwrap_err(), DeckError::NoCards);
    }

    #[test]
    fn text_and_sharing() {
        let deck = Deck::from_cards(vec![vec![0, 1], vec![1, 2], vec![0, 2]]);
        assert_eq!(deck.pictures(), 3);
        assert_eq!(deck.to_text(), "0 1\n1 2\n0 2\n");
        assert_eq!(deck.shared(0, 1), vec![1]);
        assert_eq!(Deck::from_cards(vec![]).pictures(), 0);
    }
}
