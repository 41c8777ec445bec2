"""Figures worked out when first read: what only some views show (the live and the
occupied bytes at every step) costs a report that never shows it nothing, and is made
once, from whichever thread reads it first (a browser's load thread, see
:meth:`hlotop.model.Analysis.settle`)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any


class _WorkedOut:
    """What ``make()`` gives, worked out when first asked for, once, from any thread."""

    __slots__ = ("_make", "_made", "_lock")

    def __init__(self, make: Callable[[], Any]):
        self._make: Callable[[], Any] | None = make
        self._made: Any = None
        self._lock = threading.Lock()

    def _value(self) -> Any:
        made = self._made
        if made is None:
            with self._lock:
                made = self._made
                if made is None:
                    assert self._make is not None
                    made = self._made = self._make()
                    self._make = None  # and what it held
        return made


class OnFirstRead(_WorkedOut, Mapping[int, Sequence[int]]):
    """A mapping (memory space -> a curve) worked out by ``make()`` when it is first
    read: a figure only some views show (the occupied bytes at every step) costs a
    report that never shows it nothing. Read-only."""

    __slots__ = ()

    def __getitem__(self, key: int) -> Sequence[int]:
        return self._value()[key]

    def __iter__(self) -> Iterator[int]:
        return iter(self._value())

    def __len__(self) -> int:
        return len(self._value())

    def __repr__(self) -> str:
        return f"OnFirstRead({dict(self._value())!r})"


class CurveOnFirstRead(_WorkedOut, Sequence[int]):
    """A per-step curve (an ``array("q")``) worked out by ``make()`` when it is first
    read, as :class:`OnFirstRead`; equal to the curve itself. Read-only."""

    __slots__ = ()

    def __getitem__(self, index):  # an int or a slice
        return self._value()[index]

    def __len__(self) -> int:
        return len(self._value())

    def __iter__(self) -> Iterator[int]:
        return iter(self._value())

    def index(self, value: Any, start: int = 0, stop: int = sys.maxsize) -> int:
        return self._value().index(value, start, stop)

    def __eq__(self, other: object) -> bool:
        mine = self._value()
        return mine == (other._value() if isinstance(other, CurveOnFirstRead) else other)

    __hash__ = None  # type: ignore[assignment]  # as an array's

    def __repr__(self) -> str:
        return f"CurveOnFirstRead({self._value()!r})"
