//! Read Kingmaker's solved tables: open a release or a finished run directory, probe a position,
//! and list its moves best first.
//!
//! ```no_run
//! use kingmaker_probe::{Tables, Verdict};
//!
//! # fn main() -> Result<(), kingmaker_probe::ProbeError> {
//! // A release (`kingmaker pack`, `kingmaker fetch`) or a finished run (`kingmaker build`).
//! let tables = Tables::open("runs/cc3p-1")?;
//! let start = tables.probe("")?; // empty text: the game's start
//! if let Verdict::Cc3p { answers } = &start.verdict {
//!     println!("class {}, A alone: {}", answers.class.name(), answers.solo[0]);
//! }
//! for m in tables.moves(&start.position)? {
//!     println!("{:<12} {:?}", m.text, m.child.layer("solo"));
//! }
//! # Ok(())
//! # }
//! ```
//!
//! A layer's values can be read in bulk, for counting:
//!
//! ```no_run
//! # fn main() -> Result<(), kingmaker_probe::ProbeError> {
//! let tables = kingmaker_probe::Tables::open("runs/cc3p-1")?;
//! let states = tables.states() as usize;
//! let wins = tables.values("solo", 0, states)?.iter().filter(|&&v| v == 1).count();
//! # let _ = wins;
//! # Ok(())
//! # }
//! ```
//!
//! Every file is checked before it is believed: a layer file's identity (the game and layer it
//! holds), its header and index checksums, and every block's crc32 as it is read.
//!
//! - [`Tables`]: opening tables, their layers, and bulk reads.
//! - [`Probe`], [`Move`]: one position, and its moves best first.
//! - [`Answer`], [`Value`]: one layer's answer; [`Verdict`]: what the answers mean in the game.
//! - [`cc3p`], [`go`], [`two_player`]: the games' own readings of their layers.

#![warn(missing_docs)]

pub mod answer;
pub mod cc3p;
pub mod error;
pub mod go;
pub mod probe;
pub mod tables;
pub mod two_player;

pub use answer::{Answer, Value};
pub use error::ProbeError;
pub use kingmaker_games::{AnyGame, GameSpec, Notation};
pub use kingmaker_kernel::Game;
pub use probe::{Category, LayerAnswer, Move, Probe, Status, Verdict};
pub use tables::{Kind, LayerInfo, Tables};
