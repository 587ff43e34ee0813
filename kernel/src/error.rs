//! The kernel's errors.

use std::path::Path;

/// Errors of the kernel. Each says what went wrong and where.
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error("state {index} has {count} successors; the one-byte counter holds at most {max}")]
    CounterOverflow { index: u64, count: usize, max: u8 },
    // The cause in the message, not as a source (an error chain would print it twice).
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("worker {worker}: {message}")]
    Worker { worker: String, message: String },
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// Anything that went wrong while the workers restored a checkpoint (a missing or damaged
    /// manifest, chunk or wave log, a worker that lost its files): the caller falls back to an
    /// earlier checkpoint or the start of the layer.
    #[error("restoring the checkpoint after wave {wave}: {source}")]
    Restore { wave: u32, source: Box<KernelError> },
    #[error(transparent)]
    Format(#[from] kingmaker_tablefmt::FormatError),
    #[error("layer {layer} did not settle after {waves} waves (the depth field holds {max})")]
    TooManyWaves { layer: String, waves: u32, max: u32 },
}

impl KernelError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> KernelError {
        KernelError::Io {
            path: path.display().to_string(),
            error: source,
        }
    }
}
