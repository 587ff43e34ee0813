//! Spot It decks: finite projective planes PG(2, q) over GF(q), q = p^k, as decks of cards, a
//! verifier for any deck, a parser for deck files, SVG drawings of the cards, and the
//! fewest-pictures bound. See docs/decks.md.

#![warn(missing_docs)]

pub mod bound;
pub mod deck;
pub mod field;
pub mod parse;
pub mod plane;
pub mod svg;
pub mod verify;
