#!/usr/bin/env bash
# The test command of the README: build the binaries the end-to-end tests start, then run every
# test of the workspace (unit, property, end-to-end) in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --workspace --bins
cargo test --release --workspace "$@"
