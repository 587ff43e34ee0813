//! Read Kingmaker's solved tables: open a release or a finished run, probe, list moves best first.
//! 1. Every file is checked before it is believed: a layer file's identity (the game and layer it
//!    holds), its header and index checksums, and every block's crc32 as it is read.
//! 2. Examples: [`tables`]; the main types, a probe's JSON and the order of moves: docs/probe.md.

#![warn(missing_docs)]

pub mod error;
pub mod http;
pub mod probe;
/// Opening tables, probing positions and reading layers in bulk, as in these examples.
///
/// The examples read `tests/data/cc3p-1`, the release of 3-player Chinese Checkers level 1 that
/// `kingmaker build cc3p --level 1` and `kingmaker pack` write (1,662 states, 10 KB).
///
/// ```
/// use kingmaker_probe::games::cc3p::answers::Class;
/// use kingmaker_probe::{Category, Tables, Verdict};
///
/// # fn main() -> Result<(), kingmaker_probe::ProbeError> {
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cc3p-1");
/// let tables = Tables::open(path)?; // a release, or a finished run directory
/// let start = tables.probe("start")?;
/// let Verdict::Cc3p { answers } = &start.verdict else { unreachable!() };
/// // At the start nobody can win alone and every pair can force the third player out.
/// assert_eq!(answers.class, Class::Kingmaker);
/// assert_eq!(answers.solo[0].text(), "L9");
///
/// // A's moves, best first: none wins or draws alone, so the ones that leave nobody a forced
/// // win (`Open`) come first, the slowest loss first.
/// let moves = tables.moves("start")?;
/// assert_eq!(moves[0].category, Category::Open);
/// assert!(moves.windows(2).all(|m| m[0].category <= m[1].category));
/// # Ok(())
/// # }
/// ```
///
/// A layer's values can be read in bulk, for counting:
///
/// ```
/// # fn main() -> Result<(), kingmaker_probe::ProbeError> {
/// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/cc3p-1");
/// let tables = kingmaker_probe::Tables::open(path)?;
/// let solo = tables.values("solo", 0, tables.states() as usize)?;
/// let wins = solo.iter().filter(|&&v| v == kingmaker_probe::Value::Win.code()).count();
/// assert_eq!(wins, 449); // docs/results.md: solo(A) W over level 1
/// # Ok(())
/// # }
/// ```
pub mod tables;

pub use error::ProbeError;
pub use kingmaker_games as games;
pub use kingmaker_games::reading::{Answer, Value};
pub use kingmaker_games::{AnyGame, GameSpec, Notation};
pub use kingmaker_kernel::Game;
pub use probe::{Category, LayerAnswer, Move, Probe, Status, Verdict};
pub use tables::{Kind, LayerInfo, Tables};
