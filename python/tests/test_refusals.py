"""What the package refuses (issue 43): reads outside the game, huge reads, bad indices and
arguments of the wrong type raise a documented exception before anything is read."""

import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import kingmaker
from conftest import run_kingmaker

U64 = 2**64


def test_reads_past_the_end_do_not_wrap(level1, in_parts):
    """`first + count` past 2**64 once wrapped to a read of the first states."""
    run, rel = level1
    t = kingmaker.open(rel)
    for read in (t.values, t.depths):
        with pytest.raises(IndexError):
            read("solo", U64 - 1, 2)
        with pytest.raises(IndexError):
            read("solo", t.states - 1, 2)
        with pytest.raises(IndexError):
            read("solo", t.states + 1, 0)
        # The edges inside the game still read.
        assert len(read("solo", t.states - 2, 2)) == 2
        assert len(read("solo", t.states, 0)) == 0
    # A layer read across its parts: the same check, and the run's values inside the game.
    p = kingmaker.open(in_parts)
    with pytest.raises(IndexError):
        p.values("solo", U64 - 5, 10)
    with pytest.raises(IndexError):
        p.depths("solo", U64 - 5, 10)
    whole = kingmaker.open(run)
    for layer in ("solo", "enable_ab"):
        assert np.array_equal(p.values(layer), whole.values(layer))
        assert np.array_equal(p.depths(layer), whole.depths(layer))


def test_huge_reads_are_refused_not_allocated(level1):
    """Reads of up to 2**63 states once aborted the interpreter (an allocation failed) or panicked
    (capacity overflow): run in a child, so that an abort fails this test and not the run."""
    _, rel = level1
    script = f"""
import kingmaker
t = kingmaker.open({str(rel)!r})
reads = [
    lambda: t.values("solo", 0, 2**62),
    lambda: t.depths("solo", 1000, 10**12),
    lambda: t._t.values_bytes("solo", 2**63, 2**63),
    lambda: t._t.depths_bytes("solo", 2**63, 2**63),
    lambda: t._t.values_bytes("solo", 0, 2**64 - 1),
    lambda: t._t.depths_bytes("solo", 1, 2**64 - 1),
]
for read in reads:
    try:
        read()
    except IndexError:
        print("IndexError")
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["IndexError"] * 6, out.stdout


def test_moves_of_an_index_outside_the_game(level1, cc2p_small):
    """cc3p's rules panicked past the end of their index; cc2p's decoded the number and listed no
    moves. Both are a PositionError, as `probe` gives."""
    _, rel = level1
    for t in (kingmaker.open(rel), kingmaker.open(cc2p_small)):
        for index in (t.states, t.states + 1, 99999 + t.states, U64 - 1, U64, -1):
            with pytest.raises(kingmaker.PositionError):
                t.moves(index)
            with pytest.raises(kingmaker.PositionError):
                t.probe(index)
            with pytest.raises(kingmaker.PositionError):
                t.position(index)
            with pytest.raises(kingmaker.PositionError):
                t.children(index)
        assert t.moves(t.index("start"))
        assert t.position(t.states - 1)


class _Path:
    """An os.PathLike that is not a pathlib.Path."""

    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path


def test_arguments_of_the_wrong_type(level1):
    """`open(None)` and `open(123)` opened directories named "None" and "123", and `probe(True)`
    read index 1."""
    _, rel = level1
    for path in (None, 123, 1.5, ["x"]):
        with pytest.raises(TypeError):
            kingmaker.open(path)
    t = kingmaker.open(rel)
    for bad in (True, False, None, 1.0, b"start"):
        for call in (t.probe, t.moves, t.position, t.children):
            with pytest.raises(TypeError):
                call(bad)
        with pytest.raises(TypeError):
            t.values("solo", bad, 1)
        if bad is not None:  # a count of None reads to the end
            with pytest.raises(TypeError):
                t.depths("solo", 0, bad)
    # Python's other ints stand for themselves.
    assert t.probe(np.int64(1))["index"] == 1
    assert len(t.values("solo", np.uint64(1), np.int32(3))) == 3


def test_paths_are_str_bytes_or_pathlike(level1):
    _, rel = level1
    want = kingmaker.open(str(rel))
    for path in (os.fsencode(rel), pathlib.Path(rel), _Path(str(rel)), _Path(os.fsencode(rel))):
        t = kingmaker.open(path)
        assert (t.path, t.states, t.kind) == (want.path, want.states, want.kind)


def test_query_and_probe_agree_on_a_partial_release(solo_only):
    """A release fetched with `--layers solo`: `query` refused it while Python answered
    `incomplete`; both now give the partial answer."""
    t = kingmaker.open(solo_only)
    missing = [l["name"] for l in t.layers if not l["present"]]
    assert missing
    start = t.probe("")
    assert start["verdict"] == {"kind": "incomplete", "missing": missing}
    query = json.loads(run_kingmaker("query", solo_only, "start", "--json"))
    for key in ("position", "index", "status", "layers", "verdict"):
        assert query[key] == start[key], key
    mine = {m["move"]: m["child"]["layers"] for m in t.moves("")}
    assert mine == {m["move"]: m["child"]["layers"] for m in query["moves"]}
    text = run_kingmaker("query", solo_only, "start")
    assert "incomplete" in text and all(name in text for name in missing), text
