#!/usr/bin/env bash
# The test command of the README: install what the tests need (if missing), build the binaries
# the end-to-end tests start, then run every test of the workspace (unit, property, end-to-end)
# in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
cargo build --release --workspace --bins
cargo test --release --workspace "$@"
