#!/usr/bin/env bash
# The test command of the README: install what the tests need (if missing), build the binaries
# the end-to-end tests start, then run every test of the workspace (unit, property, end-to-end)
# in release mode, and the Python package's tests (python/: built and installed with pip, which
# runs maturin; tested with pytest against the binary built here).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
cargo build --release --workspace --bins
cargo test --release --workspace "$@"
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore ./python pytest numpy
python3 -m pytest -q python/tests
