//! Every registered game, in every example its family lists, passes the one conformance suite
//! (`kingmaker_games::conformance`): nothing here names a game.

use kingmaker_games::conformance::check_game;
use kingmaker_games::GameSpec;
use kingmaker_kernel::Game;
use std::sync::Arc;

#[test]
fn every_example_of_every_game_conforms() {
    let examples = GameSpec::examples();
    let families: std::collections::BTreeSet<&str> = examples.iter().map(|s| s.family()).collect();
    for spec in &examples {
        let game = Arc::new(spec.build().expect("an example builds"));
        eprintln!("{} ({} states)", game.name(), game.size());
        check_game(&game, &spec.layers());
    }
    for family in GameSpec::FAMILIES {
        assert!(families.contains(family), "{family} lists no example");
    }
}
