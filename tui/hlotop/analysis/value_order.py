"""The orders the browser's value lists can be sorted in (``s``): by size, live-range
start or end, name or memory space.

Each order ranks every value of a dump once (:class:`ValueOrder`), so a list of any
subset (the live set at a step, the values a filter keeps) is put in order by its
values' ranks: integers, sorted at C speed, not a key made per value at every step.
"""

from __future__ import annotations

import re
import threading
from array import array
from collections.abc import Callable, Iterable, Sequence

from hlotop.model import ValueInfo
from hlotop.model.value_table import sorted_by_id_rank

ORDERS = ("size", "start", "end", "name", "space")
# What each order is, as the panes say it ("by size": largest logical bytes first).
ORDER_TEXT = {
    "size": "size",
    "start": "start step",
    "end": "end step",
    "name": "name",
    "space": "memory space",
}
# Up to this many values a worker ranks every order ahead of the key (ValueOrders.warm):
# 0.1-0.4 s an order at 70 000 values. Beyond, each order is ranked at its first ``s``:
# ahead of it, five orders of 10^6 values would hold their views and keys at once.
WARM_AT_MOST = 250_000
_DIGITS = re.compile(r"(\d+)")
_NO_STEP = 1 << 62  # a value without live range: after every step


def natural(text: str) -> tuple:
    """A sort key that puts ``fusion.2`` before ``fusion.12`` (numbers as numbers)."""
    return tuple(int(p) if i % 2 else p for i, p in enumerate(_DIGITS.split(text)))


def _start(info: ValueInfo) -> int:
    return info.live.start if info.live is not None else _NO_STEP


def _end(info: ValueInfo) -> int:
    return info.live.end if info.live is not None else _NO_STEP


def order_key(order: str):
    """The sort key of ``order`` (one of :data:`ORDERS`) for one value: ``size`` is
    XLA's peak-list order (largest logical bytes first, then name and ShapeIndex, as
    :func:`hlotop.analysis.peak.live_set`); the others break ties by live-range start,
    then value id. Raises ValueError for another order."""
    if order == "size":  # XLA's peak-list order
        return lambda i: (-i.logical_bytes, i.value.name, i.value.shape_index or (), i.value_id)
    if order == "start":
        return lambda i: (_start(i), i.value_id)
    if order == "end":
        return lambda i: (_end(i), _start(i), i.value_id)
    if order == "name":
        return lambda i: (natural(i.value.label), i.value_id)
    if order == "space":
        return lambda i: (i.color, -i.logical_bytes, _start(i), i.value_id)
    raise ValueError(f"unknown order {order!r} (one of {', '.join(ORDERS)})")


class ValueOrder:
    """Every value of a dump ranked in one :data:`ORDERS` order: ``sort`` puts any of
    them in that order by their ranks."""

    def __init__(self, values: Sequence[ValueInfo], order: str):
        """Rank ``values`` (a dump's, each id once) in ``order``: one sort, O(n log n).
        Raises ValueError for an unknown order."""
        self.order = order
        ranked = sorted(values, key=order_key(order))
        ids = [i.value_id for i in ranked]
        self._low = min(ids, default=0)  # synthetic values have negative ids
        rank = array("q", [0]) * (max(ids, default=0) - self._low + 1)
        for position, vid in enumerate(ids):
            rank[vid - self._low] = position
        self._rank = rank

    def rank(self, info: ValueInfo) -> int:
        """``info``'s place in the order (it is one of the values ranked)."""
        return self._rank[info.value_id - self._low]

    def sort(self, values: Iterable[ValueInfo]) -> Sequence[ValueInfo]:
        """``values`` (some of those ranked) in this order: a table's rows sorted by
        their id column when they are (no value made), else a list."""
        return sorted_by_id_rank(values, self._rank, self._low)


class ValueOrders:
    """One dump's values ranked in each of :data:`ORDERS`, each order ranked once, on
    first use or ahead of it (:meth:`warm`, for a worker thread): the timeline and the
    live set share them, so ``s`` in either pane sorts integers (tens of ms at 70 000
    values) instead of ranking the dump (0.1-0.4 s an order at 70 000 values)."""

    def __init__(self, values: Sequence[ValueInfo]):
        """``values``: every value of the dump (each id once)."""
        self._values = values
        self._made: dict[str, ValueOrder] = {}
        self._lock = threading.Lock()

    def get(self, order: str) -> ValueOrder:
        """The values ranked in ``order`` (ranked now if no thread has yet). Raises
        ValueError for an order not in :data:`ORDERS`."""
        made = self._made.get(order)
        if made is None:
            with self._lock:  # a worker may be ranking it: wait for it, not twice
                made = self._made.get(order)
                if made is None:
                    made = self._made[order] = ValueOrder(self._values, order)
        return made

    def ranked(self) -> tuple[str, ...]:
        """The orders ranked so far, in :data:`ORDERS` order."""
        return tuple(order for order in ORDERS if order in self._made)

    def warm(
        self, pause: Callable[[], object] = lambda: None, stop: Callable[[], bool] = lambda: False
    ) -> None:
        """Rank every order not yet ranked, calling ``pause`` before each (a worker
        stands aside while keys come in) and stopping once ``stop()`` is true. Does
        nothing for more than :data:`WARM_AT_MOST` values."""
        if len(self._values) > WARM_AT_MOST:
            return
        for order in ORDERS:
            pause()
            if stop():
                return
            self.get(order)
