#!/usr/bin/env bash
# The test command of the README: install what the tests need (if missing), build the binaries
# the end-to-end tests start, then run every test of the workspace (unit, property, end-to-end)
# in release mode, the library crates' tests again with debug assertions, and the Python
# package's tests (python/: built and installed with pip, which runs maturin; tested with pytest
# against the binary built here).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
cargo build --release --workspace --bins
cargo test --release --workspace "$@"
# The library crates again with debug assertions (overflow checks), which release builds drop:
# arithmetic that wraps by accident fails here.
cargo test -p kingmaker-tablefmt -p kingmaker-kernel -p kingmaker-games -p kingmaker-probe
python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore ./python pytest numpy hypothesis
python3 -m pytest -q python/tests
