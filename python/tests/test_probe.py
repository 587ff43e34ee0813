"""The Python package against the binary's own answers on cc3p level 1 (docs/results.md)."""

import json
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import kingmaker
from conftest import ROOT, run_kingmaker


def test_open_run_and_release(level1):
    run, rel = level1
    for path, kind in [(run, "run"), (rel, "release")]:
        t = kingmaker.open(path)
        assert t.kind == kind
        assert t.game == {"game": "cc3p", "level": 1}
        assert t.players == ["A", "B", "C"]
        assert [l["name"] for l in t.layers] == ["solo", "enable_ab", "enable_ac"]
        assert all(l["present"] and l["depths"] for l in t.layers)


def test_probe_agrees_with_query(level1):
    _, rel = level1
    t = kingmaker.open(rel)
    start = t.probe("")
    query = json.loads(run_kingmaker("query", rel, "start", "--json"))
    assert start["verdict"]["kind"] == "cc3p"
    assert start["verdict"]["answers"] == query["answers"]
    assert start["verdict"]["answers"]["class"] == "kingmaker"
    assert start["position"] == query["position"]
    assert t.probe(start["index"]) == start
    assert start["status"]["kind"] == "live" and start["status"]["mover"] == "A"


def test_moves_come_best_first(level1):
    _, rel = level1
    t = kingmaker.open(rel)
    # Every position two plies from the start: a mover who wins alone at depth d moves first to a
    # child it wins at d - 1.
    frontier = [t.index("")]
    for _ in range(6):
        following = []
        for s in frontier:
            here = t.probe(s)
            if here["status"]["kind"] != "live":
                continue
            seat = here["status"]["seat"]
            own = here["verdict"]["answers"]["solo"][seat]
            moves = t.moves(s)
            best = moves[0]["child"]["verdict"]["answers"]["solo"][seat]
            assert best["value"] == own["value"]
            if own["value"] == "W":
                assert best["depth"] + 1 == own["depth"]
            following += [m["child"]["index"] for m in moves]
        frontier = sorted(set(following))


def test_values_count_and_iterate(level1):
    run, _ = level1
    t = kingmaker.open(run)
    values = t.values("solo")
    assert values.dtype == np.uint8 and len(values) == t.states
    # docs/results.md: solo over the 1,587 legal states, W 449, L 1,138.
    assert int((values == kingmaker.WIN).sum()) == 449
    assert int((values == kingmaker.LOSS).sum()) == 1138
    assert int((values != kingmaker.ILLEGAL).sum()) == 1587
    depths = t.depths("solo")
    assert depths.dtype == np.dtype("<u2") and int(depths[values == kingmaker.WIN].max()) > 0
    pairs = list(t.states_with_values("enable_ab"))
    assert len(pairs) == t.states
    assert sum(1 for _, v in pairs if v == kingmaker.WIN) == 894


def test_errors_are_typed(level1, tmp_path):
    _, rel = level1
    with pytest.raises(kingmaker.NotTablesError):
        kingmaker.open(tmp_path)
    t = kingmaker.open(rel)
    with pytest.raises(kingmaker.PositionError, match="zz9"):
        t.probe("A:zz9;B:b1;C:e1;A")
    partial = tmp_path / "partial"
    shutil.copytree(rel, partial)
    (partial / "enable_ac.kmt").unlink()
    (partial / "enable_ac.values.kmt").unlink()
    p = kingmaker.open(partial)
    assert p.probe("")["verdict"] == {"kind": "incomplete", "missing": ["enable_ac"]}
    with pytest.raises(kingmaker.MissingLayerError, match="enable_ac"):
        p.values("enable_ac")
    assert issubclass(kingmaker.MissingLayerError, kingmaker.KingmakerError)


def test_values_only_release(level1, tmp_path):
    _, rel = level1
    values_only = tmp_path / "values-only"
    shutil.copytree(rel, values_only)
    for layer in ["solo", "enable_ab", "enable_ac"]:
        (values_only / f"{layer}.kmt").unlink()
    t = kingmaker.open(values_only)
    assert all(l["present"] and not l["depths"] for l in t.layers)
    assert t.probe("")["verdict"]["answers"]["solo"][0] == {"value": "L", "depth": None}
    assert int((t.values("solo") == kingmaker.WIN).sum()) == 449


def test_the_example_gives_the_published_row(level1):
    run, _ = level1
    out = subprocess.run(
        [sys.executable, str(ROOT / "python" / "examples" / "kingmaker_per_ply.py"), str(run)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split() for line in out.splitlines()[1:]]
    # docs/results.md, "By ply from the start": new states and kingmaker states per ply.
    assert [int(r[1]) for r in rows] == [1, 2, 4, 8, 20, 53, 143, 261, 324, 256, 132, 34, 7]
    assert [int(r[2]) for r in rows] == [1, 2, 4, 8, 17, 34, 60, 61, 42, 11, 0, 0, 0]


def test_every_reachable_position_agrees_with_query(level1):
    """Every position reachable from the start of level 1: the package's answers are those of
    `kingmaker query --json`, and so are the moves (as a set; the package lists them best first)."""
    _, rel = level1
    t = kingmaker.open(rel)
    start = t.index("start")
    seen = {start}
    frontier = [start]
    checked = 0
    while frontier:
        following = []
        for s in frontier:
            mine = t.probe(s)
            theirs = json.loads(run_kingmaker("query", rel, mine["position"], "--json"))
            assert mine["verdict"]["answers"] == theirs["answers"], mine["position"]
            moves = {m["move"]: m["child"]["verdict"]["answers"] for m in t.moves(s)}
            assert moves == {m["move"]: m["answers"] for m in theirs["moves"]}, mine["position"]
            checked += 1
            if mine["status"]["kind"] != "live":
                continue
            for _move, child in t.children(s):
                if child not in seen:
                    seen.add(child)
                    following.append(child)
        frontier = following
    assert checked == 1245  # docs/results.md: the reachable states of level 1
