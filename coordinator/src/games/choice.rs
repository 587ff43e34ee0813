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
    /// 2-player Chinese Checkers on Sturtevant's m×m boards.
    Cc2p(Cc2pArgs),
    /// Go on the plane, cylinder, torus, Klein bottle or projective plane (docs/go.md).
    Go(GoArgs),
}

#[derive(Args, Clone, Debug)]
pub struct GoArgs {
    /// The surface: plane, cylinder, torus, klein or projective.
    #[arg(long, default_value = "plane")]
    pub surface: String,
    /// The board: RxC with 1 <= R <= C and R·C <= 31 (e.g. 3x3).
    #[arg(long, default_value = "2x2", value_parser = parse_size)]
    pub size: (u8, u8),
    /// Solve these thresholds k ("Black's final score >= k"), comma-separated, instead of the
    /// binary search for the start's optimal score (e.g. for the explorer: -2,0,1,2).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub thresholds: Vec<i32>,
}

/// "3x4" -> (3, 4).
fn parse_size(text: &str) -> Result<(u8, u8), String> {
    let bad = || format!("size {text:?} is not of the form RxC (e.g. 3x3)");
    let (a, b) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    ))
}

#[derive(Args, Clone, Debug)]
pub struct Cc2pArgs {
    /// The board: MxM for M in 4..=9 (e.g. 7x7).
    #[arg(long, default_value = "7x7", value_parser = parse_board)]
    pub board: u8,
    /// Pieces per player (1..=6).
    #[arg(long, default_value_t = 1)]
    pub pieces: u8,
    /// Apply the 6-piece tip rule as the published solver does (skipping it when the player to
    /// move has no piece in its own start or goal area), to compare with its 5x5 and 6x6 rows.
    #[arg(long)]
    pub shortcut_tip_rule: bool,
}

/// "7x7" -> 7.
fn parse_board(text: &str) -> Result<u8, String> {
    let bad = || format!("board {text:?} is not of the form MxM with M in 4..=9 (e.g. 7x7)");
    let (a, b) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (a, b): (u8, u8) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a != b || !(4..=9).contains(&a) {
        return Err(bad());
    }
    Ok(a)
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
            GameChoice::Cc2p(a) => GameSpec::Cc2p {
                board: a.board,
                pieces: a.pieces,
                shortcut_tip_rule: a.shortcut_tip_rule,
            },
            GameChoice::Go(a) => GameSpec::Go {
                surface: a.surface.to_ascii_lowercase(),
                rows: a.size.0,
                cols: a.size.1,
                thresholds: a.thresholds.clone(),
            },
            GameChoice::Toppen(a) => GameSpec::Toppen {
                first: u8::from(a.first.eq_ignore_ascii_case("b")),
                diagonal: a.diagonal,
            },
        }
    }
}
