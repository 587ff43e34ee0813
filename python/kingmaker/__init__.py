"""Read Kingmaker's solved game tables from Python.

>>> import kingmaker
>>> t = kingmaker.open("runs/cc3p-1")          # a release or a finished run   # doctest: +SKIP
>>> t = kingmaker.open("http://host:8080/release/")   # a release where it lies  # doctest: +SKIP
>>> t.probe("")["verdict"]["answers"]["class"]  # the start                    # doctest: +SKIP
'kingmaker'

`open` returns a `Tables`; its positions are text in the game's notation ("" for the start) or
indices. `probe` and `moves` return dicts (the JSON shapes of docs/probe.md); `values` and
`depths` return numpy arrays of a layer for counting; `states_with_values` iterates over them.
Every file is checked before it is believed; a damaged one raises `DamagedTableError`.

What it refuses: every call returns what the tables say or raises one of these (arguments are
checked before anything is read or allocated, so no input crashes the interpreter):

- `TypeError`: an argument of the wrong type. A path is `str`, `bytes` or `os.PathLike`; an
  index, `first` or `count` is an `int` (not a `bool`); a position is text or an index.
- `IndexError`: a bulk read (`values`, `depths`) of states outside the game: `first` or `count`
  negative, or `first + count` past `states`.
- `KingmakerError`, as one of its subclasses: `PositionError` (position text that does not parse,
  or an index outside the game, negative ones too: `probe`, `moves`, `position`, `children`),
  `NotTablesError` (no finished tables at the path), `MissingLayerError` (no such layer here, or
  the depths of a layer held without them), `DamagedTableError` (a file that fails its checks).
  Position text that is not valid Unicode (a lone surrogate) is a `PositionError` too.

`values` and `depths` read into the array they return (nothing else of their size is held) and
release the GIL while they decode.
"""

import operator
import os
from typing import Iterator, List, Optional, Tuple

from ._kingmaker import (
    DamagedTableError,
    KingmakerError,
    MissingLayerError,
    NotTablesError,
    PositionError,
)
from ._kingmaker import Tables as _Tables

__all__ = [
    "open",
    "Tables",
    "KingmakerError",
    "NotTablesError",
    "MissingLayerError",
    "PositionError",
    "DamagedTableError",
    "ILLEGAL",
    "WIN",
    "LOSS",
    "DRAW",
]

# The value codes of `values` (as the tables store them).
ILLEGAL, WIN, LOSS, DRAW = 0, 1, 2, 3

# States read at a time by `states_with_values`.
_CHUNK = 1 << 20


class Tables:
    """Solved tables: a release (manifest.json) or a finished run directory (run.json)."""

    def __init__(self, path):
        # os.fspath takes str, bytes and os.PathLike and raises TypeError for the rest (str()
        # would have read None or 123 as a directory name); bytes are decoded as the OS does.
        path = os.fspath(path)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        self._t = _Tables(path)

    def __repr__(self):
        return f"kingmaker.Tables({self.path!r}: {self.kind} of {self.name}, {self.states} states)"

    path = property(
        lambda self: self._t.path, doc="The directory (or URL) the tables were opened from."
    )
    kind = property(lambda self: self._t.kind, doc='"run" or "release".')
    game = property(lambda self: self._t.game, doc="The game and its parameters (a dict).")
    name = property(lambda self: self._t.name, doc="The game's short name.")
    states = property(lambda self: self._t.states, doc="States of the game's index space.")
    players = property(lambda self: self._t.players, doc="The players' names, by seat.")

    @property
    def layers(self) -> List[dict]:
        """Every layer: name, coalition, objective, present (file here), depths (kept)."""
        return self._t.layers

    def index(self, position: str) -> int:
        """The index of a position ("" for the start)."""
        return self._t.index(position)

    def position(self, index: int) -> str:
        """The position text of an index."""
        return self._t.position(index)

    def probe(self, position="") -> dict:
        """Everything the tables say about a position (text or index): its status, every layer's
        answer, and the verdict in its game (the twelve answers and class of 3-player Chinese
        Checkers, W/L/D of a two-player game, Go's score bounds)."""
        return self._t.probe(position)

    def moves(self, position="") -> List[dict]:
        """Every move from a position, best first for the side to move, each with its child's probe."""
        return self._t.moves(position)

    def children(self, index: int) -> List[Tuple[str, int]]:
        """(move, child index) of a state in the game's order, read from the rules alone."""
        return self._t.children(index)

    def values(self, layer: str, first: int = 0, count: Optional[int] = None):
        """A numpy uint8 array of the value codes (ILLEGAL, WIN, LOSS, DRAW) of `count` states
        from `first` (by default all of them: one byte per state)."""
        import numpy as np

        count = self._rest(first) if count is None else count
        # The native read fills a bytearray, the GIL released, and the array is that memory.
        return np.frombuffer(self._t.values_bytes(layer, first, count), dtype=np.uint8)

    def depths(self, layer: str, first: int = 0, count: Optional[int] = None):
        """A numpy uint16 array of the depths of `count` states from `first`
        (`MissingLayerError` for a layer held without depths: a copy fetched with
        `--values-only`)."""
        import numpy as np

        count = self._rest(first) if count is None else count
        return np.frombuffer(self._t.depths_bytes(layer, first, count), dtype=np.uint16)

    def _rest(self, first):
        """How many states lie from `first` to the end (none past it; the native read refuses
        a `first` outside the game, or not an int)."""
        return max(self.states - operator.index(first), 0)

    def states_with_values(self, layer: str) -> Iterator[Tuple[int, int]]:
        """(index, value code) of every state of a layer, in index order, read a block at a time."""
        first = 0
        while first < self.states:
            count = min(_CHUNK, self.states - first)
            chunk = self._t.values_bytes(layer, first, count)
            for offset, value in enumerate(chunk):
                yield first + offset, value
            first += count


def open(path) -> Tables:
    """Open the release or finished run directory at `path` (str, bytes or os.PathLike), or the
    release at the URL `path` (`http://host:port/path/`): its files are read there, by range
    requests, as they are needed."""
    return Tables(path)
