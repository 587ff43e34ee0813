//! Read a deck from JSON or from text. Bad input gives an error naming the line, never a panic.
//! 1. JSON (`{"cards": [[0, 1, 2], ...]}`, other fields ignored, or a bare array of cards) when the
//!    first non-blank character is `{` or `[`, so that `kingmaker deck --json` reads back.
//! 2. Text: one card per line, ids (0 to 4294967295) separated by spaces and/or commas; blank lines
//!    are skipped and `#` starts a comment to the end of the line.

use crate::deck::Deck;
use serde::Deserialize;

/// Why a deck file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The bytes are not UTF-8.
    #[error("line {line}: the deck is not UTF-8 text")]
    NotUtf8 {
        /// The line (from 1) of the first byte that is not UTF-8.
        line: usize,
    },
    /// The text starts like JSON but is not a JSON deck.
    #[error("line {line}, column {column}: {message} (a JSON deck is {{\"cards\": [[0, 1, 2], [0, 3, 4], ...]}})")]
    Json {
        /// The line (from 1) where serde_json stopped.
        line: usize,
        /// The column (from 1) where serde_json stopped.
        column: usize,
        /// serde_json's message, without its "at line … column …".
        message: String,
    },
    /// A token of a text deck that is not a whole number.
    #[error("line {line}: `{token}` is not a picture id (ids are whole numbers from 0 to 4294967295, separated by spaces or commas)")]
    BadId {
        /// The line (from 1).
        line: usize,
        /// The token, cut to 24 characters.
        token: String,
    },
    /// A picture id of a text deck that does not fit a `u32`.
    #[error(
        "line {line}: picture id {token} is too large (ids are whole numbers from 0 to 4294967295)"
    )]
    IdTooLarge {
        /// The line (from 1).
        line: usize,
        /// The token, cut to 24 characters.
        token: String,
    },
    /// No card in the input.
    #[error("the deck has no cards (text: one card per line, e.g. `0 1 2`; JSON: {{\"cards\": [[0, 1, 2], ...]}})")]
    NoCards,
}

/// Read a deck from bytes (which must be UTF-8).
pub fn parse_bytes(bytes: &[u8]) -> Result<Deck, ParseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => {
            let line = 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            Err(ParseError::NotUtf8 { line })
        }
    }
}

/// Read a deck from text or JSON (see the module docs).
pub fn parse(text: &str) -> Result<Deck, ParseError> {
    let trimmed = text.trim_start_matches('\u{feff}');
    let cards = match trimmed.trim_start().chars().next() {
        Some('{') | Some('[') => parse_json(trimmed)?,
        _ => parse_text(trimmed)?,
    };
    if cards.is_empty() {
        return Err(ParseError::NoCards);
    }
    Ok(Deck::from_cards(cards))
}

/// The JSON form of a deck (other fields are ignored).
#[derive(Deserialize)]
struct JsonDeck {
    cards: Vec<Vec<Id>>,
}

/// A picture id in JSON, with errors that say what is wrong with a number (serde_json reads an
/// integer beyond 64 bits as floating point, which is no reason to call it that).
struct Id(u32);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Id, D::Error> {
        d.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

const ID_RANGE: &str = "ids are whole numbers from 0 to 4294967295";

impl serde::de::Visitor<'_> for IdVisitor {
    type Value = Id;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a picture id ({ID_RANGE})")
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Id, E> {
        u32::try_from(v)
            .map(Id)
            .map_err(|_| E::custom(format!("picture id {v} is too large ({ID_RANGE})")))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Id, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(E::custom(format!(
                "picture id {v} is negative ({ID_RANGE})"
            ))),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Id, E> {
        if !v.is_finite() || v.fract() != 0.0 {
            Err(E::custom(format!(
                "picture id {v} is not a whole number ({ID_RANGE})"
            )))
        } else if v < 0.0 {
            Err(E::custom(format!(
                "picture id {v} is negative ({ID_RANGE})"
            )))
        } else if v > f64::from(u32::MAX) {
            Err(E::custom(format!(
                "picture id {v} is too large ({ID_RANGE})"
            )))
        } else {
            Ok(Id(v as u32))
        }
    }
}

fn ids(cards: Vec<Vec<Id>>) -> Vec<Vec<u32>> {
    cards
        .into_iter()
        .map(|c| c.into_iter().map(|Id(x)| x).collect())
        .collect()
}

fn parse_json(text: &str) -> Result<Vec<Vec<u32>>, ParseError> {
    let result = if text.trim_start().starts_with('{') {
        serde_json::from_str::<JsonDeck>(text).map(|d| ids(d.cards))
    } else {
        serde_json::from_str::<Vec<Vec<Id>>>(text).map(ids)
    };
    result.map_err(|e| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        ParseError::Json {
            line: e.line(),
            column: e.column(),
            message: full.strip_suffix(&suffix).unwrap_or(&full).to_string(),
        }
    })
}

fn parse_text(text: &str) -> Result<Vec<Vec<u32>>, ParseError> {
    let mut cards = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let content = line.split('#').next().unwrap_or("");
        let mut card = Vec::new();
        for token in content
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|t| !t.is_empty())
        {
            // Digits only: `+5` and `-0` are not ids.
            if !token.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ParseError::BadId {
                    line: i + 1,
                    token: shorten(token),
                });
            }
            let id = token.parse::<u32>().map_err(|_| ParseError::IdTooLarge {
                line: i + 1,
                token: shorten(token),
            })?;
            card.push(id);
        }
        if !card.is_empty() {
            cards.push(card);
        }
    }
    Ok(cards)
}

/// A token as shown in an error: at most 24 characters.
fn shorten(token: &str) -> String {
    if token.chars().count() <= 24 {
        token.to_string()
    } else {
        format!("{}…", token.chars().take(24).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::verify;
    use proptest::prelude::*;

    #[test]
    fn text_and_json_read_the_same_deck() {
        let text = "# a triangle\n0 1\n\n1, 2   # a comment\n0,2\n";
        let json = r#"{"order": 1, "cards": [[0, 1], [1, 2], [0, 2]]}"#;
        let expected = [vec![0, 1], vec![1, 2], vec![0, 2]];
        assert_eq!(parse(text).unwrap().cards(), &expected[..]);
        assert_eq!(parse(json).unwrap().cards(), &expected[..]);
        assert_eq!(parse("[[0,1],[1,2],[0,2]]").unwrap().cards(), &expected[..]);
        assert_eq!(parse("\r\n0 1\r\n1 2\r\n").unwrap().cards().len(), 2);
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("0 1 2\n0 3 4\n0 x5 6\n").unwrap_err();
        assert_eq!(
            e,
            ParseError::BadId {
                line: 3,
                token: "x5".into()
            }
        );
        assert!(
            e.to_string()
                .starts_with("line 3: `x5` is not a picture id"),
            "{e}"
        );
        let e = parse("0 1\n-1 2\n").unwrap_err();
        assert_eq!(
            e,
            ParseError::BadId {
                line: 2,
                token: "-1".into()
            }
        );
        let e = parse("0 4294967296\n").unwrap_err();
        assert_eq!(
            e,
            ParseError::IdTooLarge {
                line: 1,
                token: "4294967296".into()
            }
        );
        assert!(e.to_string().contains("is too large"), "{e}");
        // JSON numbers: too large (serde_json reads those past 64 bits as floating point),
        // negative, not whole.
        for (json, want) in [
            ("[[0, 4294967296]]", "picture id 4294967296 is too large"),
            ("[[0, 18446744073709551616]]", "is too large"),
            (
                "{\"cards\": [[0, 100000000000000000000000]]}",
                "is too large",
            ),
            ("[[0, 1e23]]", "is too large"),
            ("[[0, -1]]", "picture id -1 is negative"),
            ("[[0, 1.5]]", "picture id 1.5 is not a whole number"),
            ("[[0, \"7\"]]", "expected a picture id"),
        ] {
            let e = parse(json).unwrap_err();
            let text = e.to_string();
            assert!(text.contains(want), "{json}: {text}");
            assert!(!text.contains("floating point"), "{json}: {text}");
        }
        assert_eq!(parse("[[0, 7.0]]").unwrap().cards(), &[vec![0, 7]][..]);
        let e = parse("{\"cards\": [[0, 1],\n [1, -2]]}").unwrap_err();
        assert!(matches!(e, ParseError::Json { line: 2, .. }), "{e}");
        let e = parse("{\"decks\": []}").unwrap_err();
        assert!(e.to_string().contains("missing field `cards`"), "{e}");
        assert_eq!(parse("").unwrap_err(), ParseError::NoCards);
        assert_eq!(parse("# nothing\n\n").unwrap_err(), ParseError::NoCards);
        assert_eq!(parse("{\"cards\": []}").unwrap_err(), ParseError::NoCards);
        assert_eq!(
            parse_bytes(b"0 1\n1 2\n\xff\n").unwrap_err(),
            ParseError::NotUtf8 { line: 3 }
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Arbitrary bytes: an error or a deck, and every deck gets a verdict; never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            if let Ok(deck) = parse_bytes(&bytes) {
                let _ = verify(deck.cards()).to_string();
            }
        }

        /// Arbitrary strings over the deck alphabet, which reach deeper into both formats.
        #[test]
        fn deck_like_strings_never_panic(text in "[0-9 ,#\n\\[\\]{}\":cards.-]{0,300}") {
            match parse(&text) {
                Ok(deck) => {
                    let _ = verify(deck.cards()).to_string();
                }
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }

        /// Arbitrary Unicode text.
        #[test]
        fn arbitrary_text_never_panics(text in any::<String>()) {
            if let Ok(deck) = parse(&text) {
                let _ = verify(deck.cards());
            }
        }

        /// Any deck written as text or JSON reads back as itself.
        #[test]
        fn round_trip(cards in prop::collection::vec(prop::collection::vec(any::<u32>(), 1..6), 1..10)) {
            let deck = Deck::from_cards(cards.clone());
            prop_assert_eq!(parse(&deck.to_text()).unwrap().cards().to_vec(), cards.clone());
            let json = serde_json::json!({ "cards": cards }).to_string();
            prop_assert_eq!(parse(&json).unwrap().cards().to_vec(), cards);
        }
    }
}
