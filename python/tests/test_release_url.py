"""A release read where it lies: opened by its URL, its files read by range requests from
`kingmaker serve`, answers as its directory does; a server that ignores ranges is refused."""

import contextlib
import subprocess

import numpy as np
import pytest

import kingmaker
from conftest import kingmaker_bin, serving


@contextlib.contextmanager
def kingmaker_serve(directory):
    """`kingmaker serve DIRECTORY` on a free local port: its base URL."""
    proc = subprocess.Popen(
        [kingmaker_bin(), "serve", str(directory), "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield proc.stdout.readline().split()[-1]
    finally:
        proc.kill()
        proc.wait()


def test_a_release_opened_by_its_url_answers_as_its_directory(level1):
    _, rel = level1
    here = kingmaker.open(rel)
    with kingmaker_serve(rel) as url:
        there = kingmaker.open(url + "release/")
        assert there.kind == "release" and there.path == url + "release/"
        assert there.layers == here.layers
        for position in ["", here.position(100), here.position(1000)]:
            assert there.probe(position) == here.probe(position)
            assert there.moves(position) == here.moves(position)
        for layer in [l["name"] for l in here.layers]:
            assert np.array_equal(there.values(layer), here.values(layer))
            assert np.array_equal(there.depths(layer), here.depths(layer))


def test_a_server_that_ignores_ranges_is_refused(level1):
    _, rel = level1
    # Python's static server answers every GET with the whole file (200).
    with serving(rel) as url:
        there = kingmaker.open(url)
        with pytest.raises(kingmaker.DamagedTableError, match="ignores range requests"):
            there.probe("")


def test_no_release_at_a_url_is_refused(level1):
    _, rel = level1
    with serving(rel / "nowhere") as url:
        with pytest.raises(kingmaker.NotTablesError, match="manifest.sha256"):
            kingmaker.open(url)
