"""Inputs a hostile new user tries (issue 63): depths of a values-only copy, position text that
is not Unicode, and bulk reads that must not copy what they return."""

import numpy as np
import pytest

import kingmaker
from conftest import run_kingmaker, serving


@pytest.fixture(scope="module")
def values_only(level1, tmp_path_factory):
    """cc3p level 1's release fetched over HTTP with `--values-only`, as a user would."""
    _, rel = level1
    out = tmp_path_factory.mktemp("fetched") / "values-only"
    with serving(rel) as url:
        run_kingmaker("fetch", url, out, "--values-only")
    return out


def test_depths_of_a_values_only_copy_is_a_missing_part(values_only):
    """The copy is healthy: its depths are missing, not damaged (DamagedTableError before)."""
    t = kingmaker.open(values_only)
    assert all(l["present"] and not l["depths"] for l in t.layers)
    for count in (None, 10, 0):
        with pytest.raises(kingmaker.MissingLayerError) as e:
            t.depths("solo", 0, count)
        assert not isinstance(e.value, kingmaker.DamagedTableError)
        assert "without their depths" in str(e.value) and "--values-only" in str(e.value)
    # Its values still read.
    assert int((t.values("solo") == kingmaker.WIN).sum()) == 449


@pytest.mark.parametrize("text", ["\udcff", "0:\ud800", "start\udfff"])
def test_text_that_is_not_unicode_is_a_position_error(level1, text):
    """A lone surrogate (what os.fsdecode makes of undecodable bytes) raised UnicodeEncodeError,
    which is neither the package's error nor a TypeError."""
    _, rel = level1
    t = kingmaker.open(rel)
    for call in (t.probe, t.moves, t.index):
        with pytest.raises(kingmaker.PositionError):
            call(text)
    # index() still takes text alone.
    with pytest.raises(TypeError):
        t.index(3)


def test_bulk_reads_return_the_memory_they_filled(level1):
    """values() and depths() are numpy arrays over the buffer the native read filled (before:
    a Rust vector copied into bytes, 2-3 times the array at the peak)."""
    run, rel = level1
    for path in (run, rel):
        t = kingmaker.open(path)
        for read, dtype in ((t.values, np.uint8), (t.depths, np.uint16)):
            a = read("solo")
            assert a.dtype == dtype and len(a) == t.states
            # Its memory is the native read's own buffer (a bytearray, seen through a
            # memoryview), not a copy of it.
            base = a.base.obj if isinstance(a.base, memoryview) else a.base
            assert isinstance(base, bytearray), type(base)
            assert a.nbytes == len(base)
            assert a.flags.writeable
    # The same states as one at a time.
    t = kingmaker.open(rel)
    values, depths = t.values("solo"), t.depths("solo")
    for i in range(0, t.states, 97):
        answer = t.probe(i)["layers"][0]
        assert answer["layer"] == "solo"
        assert values[i] == {"W": 1, "L": 2, "D": 3, "illegal": 0}[answer["answer"]["value"]]
        if answer["answer"]["value"] in ("W", "L"):
            assert depths[i] == answer["answer"]["depth"]
