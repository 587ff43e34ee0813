"""A property of every reading method of `kingmaker.Tables`: any index, count or layer gives the
tables' answer or one of the package's documented exceptions, never a panic or an abort."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kingmaker

U64 = 2**64
# The package's documented exceptions (its docstring, "What it refuses").
DOCUMENTED = (TypeError, IndexError, kingmaker.KingmakerError)

# Few examples, small tables: the whole file runs in seconds. No deadline: a layer's first read
# opens and checks its file.
FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@pytest.fixture(
    scope="module",
    params=["release", "run", "values_only", "in_parts", "solo_only", "cc2p"],
)
def tables(request, level1, tmp_path_factory):
    """Tables of each kind, and every layer's whole values and depths read at once (None for a
    layer not here, or kept without depths)."""
    run, rel = level1
    if request.param == "values_only":
        path = tmp_path_factory.mktemp("values-only") / "rel"
        path.mkdir()
        for f in rel.iterdir():
            if not (f.name.endswith(".kmt") and not f.name.endswith(".values.kmt")):
                (path / f.name).write_bytes(f.read_bytes())
    else:
        path = {
            "release": rel,
            "run": run,
            "in_parts": lambda: request.getfixturevalue("in_parts"),
            "solo_only": lambda: request.getfixturevalue("solo_only"),
            "cc2p": lambda: request.getfixturevalue("cc2p_small"),
        }[request.param]
        path = path() if callable(path) else path
    t = kingmaker.open(path)
    whole = {}
    for l in t.layers:
        values = t.values(l["name"]) if l["present"] else None
        depths = t.depths(l["name"]) if l["present"] and l["depths"] else None
        whole[l["name"]] = (values, depths)
    return t, whole


def around(t):
    """The indices where the checks turn: the game's ends and the integer types' edges."""
    n = t.states
    edges = {0, 1, n - 1, n, n + 1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, U64 - 1, U64, U64 + 1}
    return sorted(edges | {-e for e in edges})


def ints(t):
    """Any int: near the edges, over u64 and past it, and negative."""
    return st.one_of(
        st.sampled_from(around(t)),
        st.integers(min_value=0, max_value=t.states + 2),
        st.integers(min_value=0, max_value=U64 - 1),
        st.integers(min_value=-(2**70), max_value=2**70),
    )


# Values that are not ints: each is a TypeError where an int is asked for.
NOT_INTS = st.sampled_from([True, False, 1.0, float("nan"), "7", b"7", [1], object()])


def layer_names(t):
    return st.sampled_from([l["name"] for l in t.layers] + ["no_such_layer", ""])


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def refusal(t, whole, layer, first, count, depths):
    """The exception a bulk read must raise (None: it must answer), from the arguments alone."""
    if not is_int(first) or not (count is None or is_int(count)):
        return TypeError
    n = max(t.states - first, 0) if count is None else count
    if first < 0 or n < 0 or first + n > t.states:
        return IndexError
    values, kept_depths = whole.get(layer, (None, None))
    if values is None:
        return kingmaker.MissingLayerError
    if depths and kept_depths is None:
        # A values-only layer is asked for depths it does not hold: the part is missing (the
        # file is healthy), whatever the count.
        return kingmaker.MissingLayerError
    return None


@FAST
@given(data=st.data())
def test_bulk_reads(tables, data):
    """values, depths and the native values_bytes and depths_bytes: the whole layer's states
    asked for, or the refusal the arguments call for."""
    t, whole = tables
    layer = data.draw(layer_names(t), "layer")
    first = data.draw(st.one_of(ints(t), NOT_INTS), "first")
    count = data.draw(st.one_of(ints(t), NOT_INTS, st.none()), "count")
    for method in ("values", "depths", "values_bytes", "depths_bytes"):
        native = method.endswith("_bytes")
        if native and count is None:
            continue
        call = getattr(t._t, method) if native else getattr(t, method)
        depths = method.startswith("depths")
        want = refusal(t, whole, layer, first, count, depths)
        if want is not None:
            with pytest.raises(want):
                call(layer, first, count)
            continue
        got = call(layer, first, count)
        if native:
            got = np.frombuffer(got, dtype=np.uint16 if depths else np.uint8)
        n = t.states - first if count is None else count
        assert np.array_equal(got, whole[layer][depths][first : first + n]), method


@FAST
@given(data=st.data())
def test_bulk_reads_refuse_what_is_outside(tables, data):
    """A range outside the game is IndexError whatever the layer, before anything is read."""
    t, _ = tables
    layer = data.draw(layer_names(t), "layer")
    first = data.draw(ints(t), "first")
    count = data.draw(ints(t), "count")
    if 0 <= first and 0 <= count and first + count <= t.states:
        return
    for call in (t.values, t.depths, t._t.values_bytes, t._t.depths_bytes):
        with pytest.raises(IndexError):
            call(layer, first, count)


@FAST
@given(data=st.data())
def test_positions(tables, data):
    """probe, moves, position and children: an index in the game is answered for that state;
    any other int is PositionError, anything else not text TypeError."""
    t, whole = tables
    i = data.draw(st.one_of(ints(t), NOT_INTS), "index")
    for method in ("probe", "moves", "position", "children"):
        call = getattr(t, method)
        if isinstance(i, str) and method in ("probe", "moves"):
            continue  # text is a position: test_text
        if not is_int(i) or not 0 <= i < t.states:
            want = kingmaker.PositionError if is_int(i) else TypeError
            with pytest.raises(want):
                call(i)
            continue
        got = call(i)
        if method == "probe":
            assert got["index"] == i
            for l in got["layers"]:
                values, depths = whole[l["layer"]]
                assert l["answer"]["value"] == ["illegal", "W", "L", "D"][values[i]]
                if depths is not None and l["answer"]["value"] in ("W", "L"):
                    assert l["answer"]["depth"] == depths[i]
        elif method == "moves":
            children = sorted(c for _, c in t.children(i))
            live = t.probe(i)["status"]["kind"] == "live"
            assert sorted(m["child"]["index"] for m in got) == (children if live else [])
        elif method == "position":
            assert t.index(got) == i
        else:
            assert all(0 <= c < t.states for _, c in got)


@FAST
@given(text=st.text(max_size=40))
def test_text(tables, text):
    """Any text: a position (whose index names it again) or PositionError."""
    t, _ = tables
    try:
        i = t.index(text)
    except kingmaker.PositionError:
        for call in (t.probe, t.moves):
            with pytest.raises(kingmaker.PositionError):
                call(text)
        return
    assert 0 <= i < t.states
    assert t.probe(text)["index"] == i
    assert t.index(t.position(i)) == i


@FAST
@given(layer=st.one_of(st.text(max_size=12), st.sampled_from(["solo", "enable_ab", "second"])))
def test_states_with_values(tables, layer):
    """Every state's value of a layer here, MissingLayerError for any other name."""
    t, whole = tables
    if whole.get(layer, (None,))[0] is None:
        with pytest.raises(kingmaker.MissingLayerError):
            next(t.states_with_values(layer))
        return
    got = np.fromiter((v for _, v in t.states_with_values(layer)), dtype=np.uint8)
    assert np.array_equal(got, whole[layer][0])
