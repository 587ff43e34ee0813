//! Choosing a game on the command line: `kingmaker <command> cc3p --level 1`, ...

use clap::{Args, Subcommand};
use kingmaker_worker::spec::GameSpec;

/// The game to work on, with its parameters.
#[derive(Subcommand, Clone, Debug)]
pub enum GameChoice {
    /// 3-player Chinese Checkers (levels 1, 2; level 3 for counts only).
    Cc3p(Cc3pArgs),
    /// TOPPEN: every position of every terrain in one universal table.
    Toppen(ToppenArgs),
}

#[derive(Args, Clone, Debug)]
pub struct ToppenArgs {
    /// Who moves first at the start: A (the colour of player 0, the default) or B.
    #[arg(long, default_value = "A", value_parser = ["A", "B", "a", "b"])]
    pub first: String,
    /// Let tiles move to the 8 neighbouring cells (diagonals too), not only the 4 orthogonal ones.
    #[arg(long)]
    pub diagonal: bool,
}

#[derive(Args, Clone, Debug)]
pub struct Cc3pArgs {
    /// Level n: n(n+1)/2 pieces per player (1, 3 or 6).
    #[arg(long, default_value_t = 1)]
    pub level: u8,
}

impl GameChoice {
    pub fn spec(&self) -> GameSpec {
        match self {
            GameChoice::Cc3p(a) => GameSpec::Cc3p { level: a.level },
            GameChoice::Toppen(a) => {
                GameSpec::Toppen { first: u8::from(a.first.eq_ignore_ascii_case("b")), diagonal: a.diagonal }
            }
        }
    }
}
