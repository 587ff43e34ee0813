//! Helpers for the end-to-end tests: locate and run the real `kingmaker` and `kingmaker-worker`
//! binaries (built by `cargo build --release --bins` before the tests run; see scripts/test.sh).

use std::path::PathBuf;
use std::process::{Command, Output};

/// Path of a workspace binary: `$KINGMAKER_BIN_DIR/NAME`, or next to the test executable's
/// `deps/` directory (the same cargo profile directory).
pub fn bin(name: &str) -> PathBuf {
    let dir = match std::env::var_os("KINGMAKER_BIN_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            let exe = std::env::current_exe().expect("test executable path");
            exe.parent()
                .and_then(|deps| deps.parent())
                .expect("target profile directory")
                .to_path_buf()
        }
    };
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} not found: build the binaries first (`cargo build --release --bins`, as scripts/test.sh does)",
        path.display()
    );
    path
}

/// `kingmaker ARGS...`, waited for.
pub fn kingmaker(args: &[&str]) -> Output {
    Command::new(bin("kingmaker"))
        .args(args)
        .output()
        .expect("running kingmaker")
}

/// Stdout of a successful `kingmaker ARGS...` (panics with stderr otherwise).
pub fn kingmaker_ok(args: &[&str]) -> String {
    let out = kingmaker(args);
    assert!(
        out.status.success(),
        "kingmaker {args:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Parse a JSON file.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}
