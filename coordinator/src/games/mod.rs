//! The coordinator's game registry: the game choices of the command line ([`GameChoice`]) and
//! the per-game views ([`view_of`]). Generic code asks a game for its [`GameView`] and never
//! names a game; a game with nothing of its own to show shares the two-player view.

pub mod cc3p;
mod go;
mod toppen;
pub use toppen::census;
mod two_player;
pub use two_player::combined as two_player_value;
pub mod view;

use kingmaker_games::AnyGame;
pub use kingmaker_games::GameChoice;
use std::sync::Arc;
pub use view::{GameView, Labels};

/// A game's own view, if `game` is that game.
type ViewOf = fn(&Arc<AnyGame>) -> Option<Box<dyn GameView>>;

/// Games with a view of their own, each asked in turn whether `game` is theirs.
const VIEWS: &[ViewOf] = &[cc3p::Cc3pView::of, go::GoView::of];

/// How the coordinator shows `game`.
pub fn view_of(game: &Arc<AnyGame>) -> Box<dyn GameView> {
    VIEWS
        .iter()
        .find_map(|view| view(game))
        .unwrap_or_else(|| Box::new(two_player::TwoPlayerView::new(game.clone())))
}
