//! What can go wrong opening tables or probing them: each error names the directory, the layer or
//! the position it is about.

use kingmaker_tablefmt::FormatError;
use std::path::PathBuf;

/// Why tables could not be opened or a position could not be probed.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The directory holds neither a run (`run.json`) nor a release (`manifest.json`).
    #[error("{} is neither a run directory (no run.json) nor a release (no manifest.json)", .path.display())]
    NotTables {
        /// The directory.
        path: PathBuf,
    },
    /// A run directory whose build has not finished (no `summary.json` yet).
    #[error("{} is a build that has not finished (no summary.json); wait for it or resume it", .path.display())]
    Unfinished {
        /// The run directory.
        path: PathBuf,
    },
    /// The tables are of a game this version of Kingmaker cannot build, or their description
    /// does not fit the game (a manifest's state count, say).
    #[error("{}: {reason}", .path.display())]
    Game {
        /// The directory.
        path: PathBuf,
        /// What is wrong with its game.
        reason: String,
    },
    /// A run whose finished layers stay on the workers that built them
    /// (`build --keep-layers-on-workers`): the run directory lists the parts, it holds no table
    /// and not every part's copy.
    #[error("{}: layer {layer} is kept in parts on the workers that built it (layers/{layer}.kept.json lists them), not in the run directory: `kingmaker collect --in-parts` copies the parts here, `kingmaker collect` assembles them", .path.display())]
    KeptOnWorkers {
        /// The run directory.
        path: PathBuf,
        /// The first such layer.
        layer: String,
    },
    /// A layer the tables do not hold, or hold without its file (a partial release).
    #[error("{} has no layer {layer}{}", .path.display(), if .have.is_empty() { String::new() } else { format!(" (it has {})", .have.join(", ")) })]
    MissingLayer {
        /// The directory.
        path: PathBuf,
        /// The layer asked for.
        layer: String,
        /// The layers that can be read.
        have: Vec<String>,
    },
    /// A layer whose files lie in pieces, one of which is neither beside the manifest nor at a
    /// URL the manifest gives (a partial copy of a release in parts).
    #[error("{}: layer {layer}'s file {file} is neither beside the manifest nor at a URL; fetch it (`kingmaker fetch URL {} --layers {layer}`)", .path.display(), .path.display())]
    AbsentFile {
        /// The directory.
        path: PathBuf,
        /// The layer asked for.
        layer: String,
        /// The first of its files that is absent.
        file: String,
    },
    /// A release opened by its URL whose manifest could not be had or believed.
    #[error("{url}: {reason}")]
    Remote {
        /// The URL (of the release, or of the file asked for).
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// Depths asked of a layer held without them (a copy fetched with `--values-only`): the
    /// file is healthy, the part asked for is not here.
    #[error("{} holds layer {layer}'s values without their depths (a copy fetched with --values-only); fetch the layer with its depths (`kingmaker fetch URL {} --layers {layer}`)", .path.display(), .path.display())]
    NoDepths {
        /// The directory.
        path: PathBuf,
        /// The layer asked for.
        layer: String,
    },
    /// Position text that does not parse, or an index outside the game.
    #[error("position {text:?}: {reason}")]
    BadPosition {
        /// The text (or index) given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A bulk read of states outside the game's index space (`first + count` past its end, or
    /// past `u64::MAX`); refused before anything is read or allocated.
    #[error("layer {layer} has {states} states (0..{states}): {count} asked from state {first}")]
    OutOfRange {
        /// The layer asked for.
        layer: String,
        /// The first state asked for.
        first: u64,
        /// How many states were asked for.
        count: u64,
        /// The states of the game.
        states: u64,
    },
    /// A file that could not be read, or whose checksum, identity or contents are wrong.
    #[error(transparent)]
    Format(#[from] FormatError),
}
