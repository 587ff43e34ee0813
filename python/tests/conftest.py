"""Tables for the tests: cc3p level 1 built and packed by the real `kingmaker` binary
(target/release/kingmaker, or $KINGMAKER_BIN)."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def kingmaker_bin():
    return os.environ.get("KINGMAKER_BIN", str(ROOT / "target" / "release" / "kingmaker"))


def run_kingmaker(*args):
    out = subprocess.run([kingmaker_bin(), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="session")
def level1(tmp_path_factory):
    """(run directory, release directory) of cc3p level 1."""
    base = tmp_path_factory.mktemp("level1")
    run, rel = base / "run", base / "rel"
    run_kingmaker("build", "cc3p", "--level", "1", "--out", run)
    run_kingmaker("pack", run, "--out", rel)
    return run, rel
