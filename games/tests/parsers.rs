//! Fuzzing the position parsers of every game (every example the registry lists) with arbitrary
//! text: never a panic; what parses is a valid index whose printed form parses back to it; and
//! every printed legal position parses back.

use kingmaker_games::Notation;
use kingmaker_games::{AnyGame, GameSpec};
use kingmaker_kernel::{Game, Node};
use proptest::prelude::*;
use std::sync::OnceLock;

/// Every example of every registered game (`GameFamily::examples`).
fn games() -> &'static Vec<AnyGame> {
    static GAMES: OnceLock<Vec<AnyGame>> = OnceLock::new();
    GAMES.get_or_init(|| {
        GameSpec::examples()
            .iter()
            .map(|s| s.build().expect("an example builds"))
            .collect()
    })
}

/// Text that looks like positions of the games: their separators, digits, letters and cell names.
fn position_like() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[A-Ca-f0-9:;,#./ \\-_xX\u{e9}]{0,40}").unwrap()
}

fn check(game: &AnyGame, text: &str) {
    if let Ok(index) = game.parse_position(text) {
        assert!(index < game.size(), "{text:?} parsed to {index}");
        let printed = game.format_position(index);
        assert_eq!(
            game.parse_position(&printed).ok(),
            Some(index),
            "{text:?} → {printed:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_text_never_panics(text in any::<String>()) {
        for game in games() {
            check(game, &text);
        }
    }

    #[test]
    fn position_like_text_never_panics(text in position_like()) {
        for game in games() {
            check(game, &text);
        }
    }

    #[test]
    fn printed_positions_parse_back(seed in any::<u64>()) {
        for game in games() {
            let index = seed % game.size();
            // Illegal states need not parse (a game may refuse them with the reason).
            if game.node(index) == Node::Illegal {
                continue;
            }
            let printed = game.format_position(index);
            prop_assert_eq!(game.parse_position(&printed).ok(), Some(index), "{}", printed);
        }
    }

    #[test]
    fn printed_positions_with_one_character_changed_never_panic(
        seed in any::<u64>(), at in any::<usize>(), c in any::<char>()
    ) {
        for game in games() {
            let mut chars: Vec<char> = game.format_position(seed % game.size()).chars().collect();
            if !chars.is_empty() {
                let k = at % chars.len();
                chars[k] = c;
            }
            check(game, &chars.into_iter().collect::<String>());
        }
    }
}
