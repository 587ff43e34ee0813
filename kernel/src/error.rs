//! The kernel's errors.

use std::path::Path;

/// Errors of the kernel. Each says what went wrong and where.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    /// The game counted no successors, or more than 2^32 − 1, for a live state (a pass counts
    /// as one): a fault of the game's move generator.
    #[error("live state {index} has {count} successors: a live state has 1 to 2^32 - 1 (a pass counts as one)")]
    SuccessorCount {
        /// The state.
        index: u64,
        /// Its number of successors, as the game counted them.
        count: usize,
    },
    /// A file could not be read or written.
    // The cause in the message, not as a source (an error chain would print it twice).
    #[error("{path}: {error}")]
    Io {
        /// The file, as displayed.
        path: String,
        /// What the operating system reported.
        error: std::io::Error,
    },
    /// A worker failed, or was asked for something it cannot do (a shard it does not own).
    #[error("worker {worker}: {message}")]
    Worker {
        /// Which worker.
        worker: String,
        /// What went wrong.
        message: String,
    },
    /// A checkpoint cannot be written, read or used.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// Anything that went wrong while the workers restored a checkpoint (a missing or damaged
    /// manifest, chunk or wave log, a worker that lost its files): the caller falls back to an
    /// earlier checkpoint or the start of the layer, unless the source is a
    /// [`KernelError::CheckpointRefused`] ([`KernelError::is_refused`]).
    #[error("restoring the checkpoint after wave {wave}: {source}")]
    Restore {
        /// The wave of the checkpoint being restored.
        wave: u32,
        /// What went wrong.
        source: Box<KernelError>,
    },
    /// A whole checkpoint that is not this run's: of another game or layer, or of a format that
    /// does not say which. The message names both and what to do. Never fallen back from: the
    /// checkpoint before it is no more this run's than it is.
    #[error("checkpoint refused: {0}")]
    CheckpointRefused(String),
    /// A shard's cells were asked for after they were released (the layer was gathered).
    #[error("the cells of shard {shard} were released after its layer was gathered")]
    Released {
        /// The shard.
        shard: usize,
    },
    /// An error of the on-disk formats.
    #[error(transparent)]
    Format(#[from] kingmaker_tablefmt::FormatError),
    /// A layer needs more waves than a depth can record.
    #[error("layer {layer} did not settle after {waves} waves (the depth field holds {max})")]
    TooManyWaves {
        /// The layer's name.
        layer: String,
        /// The wave that would have been one too many.
        waves: u32,
        /// The last wave a depth can record.
        max: u32,
    },
}

impl KernelError {
    /// Whether this is (or wraps, as a [`KernelError::Restore`]) a checkpoint refused as another
    /// run's: to be reported, not fallen back from.
    pub fn is_refused(&self) -> bool {
        match self {
            KernelError::CheckpointRefused(_) => true,
            KernelError::Restore { source, .. } => source.is_refused(),
            _ => false,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> KernelError {
        KernelError::Io {
            path: path.display().to_string(),
            error: source,
        }
    }
}
