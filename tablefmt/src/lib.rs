//! Kingmaker's on-disk formats. No async, no game rules: bytes in, bytes out.

#![warn(missing_docs)]

pub mod chained_digest;
pub mod checkpoint;
pub mod fsio;
pub mod kept;
pub mod layer;
pub mod reach;
pub mod release;
pub mod run;
pub mod table;
pub mod update_bucket;
pub mod value;
pub mod wave_log;

pub use value::Value;

use std::path::Path;

/// Errors reading or writing Kingmaker files. Each names the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    // Not a `source` field: the message already carries the cause, and a source would print it
    // twice in an error chain.
    /// A file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file, as displayed.
        path: String,
        /// What the operating system reported.
        error: std::io::Error,
    },
    /// A file was read but its contents are wrong; the message names the file.
    #[error("{0}")]
    Corrupt(String),
}

impl FormatError {
    /// An [`FormatError::Io`] naming `path`.
    pub fn io(path: &Path, source: std::io::Error) -> FormatError {
        FormatError::Io {
            path: path.display().to_string(),
            error: source,
        }
    }
}

/// Random access to one solved layer: a layer file ([`layer::LayerFile`], in a run's `layers/` or
/// in a release) or anything else that answers the same way (tests, in-memory tables).
pub trait Lookup: Send + Sync {
    /// Number of states (the layer's index space is `0..states`).
    fn states(&self) -> u64;
    /// (value, depth) of one state: the value as its code ([`Value`]: 0 illegal, 1 W, 2 L, 3 D).
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError>;
    /// The value code of one state alone: what a table without depths (a values-only file) can
    /// answer.
    fn value(&self, index: u64) -> Result<u8, FormatError> {
        self.lookup(index).map(|(v, _)| v)
    }
}

impl<T: Lookup + ?Sized> Lookup for Box<T> {
    fn states(&self) -> u64 {
        (**self).states()
    }
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        (**self).lookup(index)
    }
    fn value(&self, index: u64) -> Result<u8, FormatError> {
        (**self).value(index)
    }
}

impl<T: Lookup + ?Sized> Lookup for std::sync::Arc<T> {
    fn states(&self) -> u64 {
        (**self).states()
    }
    fn lookup(&self, index: u64) -> Result<(u8, u16), FormatError> {
        (**self).lookup(index)
    }
    fn value(&self, index: u64) -> Result<u8, FormatError> {
        (**self).value(index)
    }
}

#[cfg(test)]
mod tests {
    use super::FormatError;

    #[test]
    fn an_io_error_names_the_file_and_its_cause_once() {
        let e = FormatError::io(
            std::path::Path::new("/x/solo.kmt"),
            std::io::Error::from_raw_os_error(27),
        );
        let text = e.to_string();
        assert!(text.starts_with("/x/solo.kmt: "), "{text}");
        assert_eq!(text.matches("os error 27").count(), 1, "{text}");
        // No separate source: an error chain (`{:#}`) would print the cause a second time.
        assert!(std::error::Error::source(&e).is_none());
    }
}
