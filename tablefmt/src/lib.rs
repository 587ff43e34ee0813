//! Kingmaker's on-disk formats. No async, no game rules: bytes in, bytes out.

pub mod checkpoint;
pub mod table;

use std::path::Path;

/// Errors reading or writing Kingmaker files. Each names the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{0}")]
    Corrupt(String),
}

impl FormatError {
    pub fn io(path: &Path, source: std::io::Error) -> FormatError {
        FormatError::Io { path: path.display().to_string(), source }
    }
}
