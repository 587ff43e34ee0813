//! The names Kingmaker writes itself at the top of a release or a run directory, in one list.
//! 1. No file of a release may take one: a manifest that lists one is refused, so nothing the tool
//!    writes beside a release's files can replace one of them or be read as one (docs/format.md).

use super::manifest::{MANIFEST, MANIFEST_SHA256};
use super::parts::PARTS;
use crate::run::{RUN_INFO, RUN_STATE, WAVES};

/// The lock file of a directory a process works in (`kingmaker_process::lock::LOCK_FILE`):
/// `build`, `resume` and `fetch` keep it there.
pub const LOCK_FILE: &str = "kingmaker.lock";
/// A run directory's latest wave, for `kingmaker status`.
pub const PROGRESS: &str = "progress.json";
/// A finished run's counts, digests and classes.
pub const SUMMARY: &str = "summary.json";
/// A `checkpoint.json` that could not be read, kept aside by `resume`.
pub const DAMAGED_STATE: &str = "checkpoint.json.damaged";

/// Every name the tool writes itself at the top of a release or a run directory: a release's
/// manifest files and parts list, the lock, and the run directory's files and folders.
pub const RESERVED_NAMES: [&str; 13] = [
    MANIFEST,
    MANIFEST_SHA256,
    PARTS,
    LOCK_FILE,
    RUN_INFO,
    RUN_STATE,
    DAMAGED_STATE,
    PROGRESS,
    SUMMARY,
    WAVES,
    "layers",
    "work",
    "reach",
];

/// Endings of names the tool writes while a file is on its way: `NAME.part`, a download `fetch`
/// resumes, and `NAME.tmp`, a file being written before it is renamed into place.
pub const RESERVED_SUFFIXES: [&str; 2] = [".part", ".tmp"];

/// Why `name` may not be the name of a file of a release, or None when it may.
pub fn reserved_use(name: &str) -> Option<String> {
    if RESERVED_NAMES.contains(&name) {
        return Some(format!(
            "{name} is a name Kingmaker writes itself in a release or run directory"
        ));
    }
    RESERVED_SUFFIXES
        .iter()
        .find(|s| name.ends_with(*s))
        .map(|s| format!("a name ending in {s} is one Kingmaker writes while a file is on its way"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_the_tool_writes_is_reserved_and_a_layer_file_is_not() {
        for name in [
            "manifest.json",
            "manifest.sha256",
            "parts.json",
            "kingmaker.lock",
            "run.json",
            "checkpoint.json",
            "checkpoint.json.damaged",
            "progress.json",
            "summary.json",
            "waves.jsonl",
            "layers",
            "work",
            "reach",
            "solo.kmt.part",
            "solo.kmt.tmp",
        ] {
            assert!(reserved_use(name).is_some(), "{name} is not reserved");
        }
        for name in ["solo.kmt", "solo.values.kmt", "enable_ab.kmt", "notes.txt"] {
            assert_eq!(reserved_use(name), None, "{name}");
        }
    }
}
