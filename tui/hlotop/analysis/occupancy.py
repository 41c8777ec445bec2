"""Occupied bytes: the allocation space in use at each schedule step, per memory space.

A value takes the slice ``[offset, offset + size)`` of its allocation (its slot,
tiling padding included) from the first to the last step of its live range. At a
step, an allocation's occupied bytes are the length of the union of the slices of the
values live there: values that share a slice (a donated parameter and the output
aliasing it, a bitcast, a tuple element) count once, and so do slices that overlap (a
TPU ``ConcatBitcast`` output starts at the step its operands, slices of it, end). So
the figure is never above the allocations' sizes. Values with no allocation line or
no live range occupy nothing here.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate, groupby
from operator import itemgetter

from hlotop.model import BufferAllocation, ValueInfo


def occupied_bytes_per_step(
    infos: Iterable[ValueInfo], allocation_of: Mapping[int, BufferAllocation], max_time: int
) -> dict[int, Sequence[int]]:
    """Occupied bytes of each memory space at each step 0..max_time.

    ``infos``: the module's values; ``allocation_of``: allocation index -> allocation
    (its colour is the slice's memory space). Returns ``{color: bytes at steps 0 ..
    max_time}`` (each an ``array("q")``) for every colour that has an allocation,
    ascending.
    Raises nothing.
    """
    rows = []  # (allocation, offset, end offset, first step, last step)
    for info in infos:
        slot, live = info.slot, info.live
        if slot is None or live is None or slot.size <= 0:
            continue
        start, end = live.start, live.end
        if start < 0:
            start = 0
        if end > max_time:
            end = max_time
        if end >= start:
            rows.append((slot.allocation, slot.offset, slot.offset + slot.size, start, end))
    rows.sort()
    diffs: dict[int, list[int]] = {
        color: [0] * (max_time + 2) for color in sorted({a.color for a in allocation_of.values()})
    }
    for index, group in groupby(rows, itemgetter(0)):
        alloc = allocation_of.get(index)
        if alloc is not None:
            rows_of = list(group)
            first, last = rows_of[0], rows_of[-1]
            if first[1] == last[1] and first[2] == last[2]:  # one slice (sorted rows)
                _add_slice(rows_of, diffs[alloc.color])
            else:
                _add_union(rows_of, diffs[alloc.color])
    out: dict[int, Sequence[int]] = {}
    for color, diff in diffs.items():
        diff.pop()
        out[color] = array("q", accumulate(diff))
    return out


def _spans(
    rows: list[tuple[int, int, int, int, int]],
) -> Iterator[tuple[int, int, int, int]]:
    """``(offset, end offset, first step, last step)`` of each slice's live spans in
    ``rows`` (one allocation's, sorted), spans of one slice that overlap or touch merged
    into one (a slice's rows are consecutive, by first step)."""
    piece = None
    first = last = -2
    for _, offset, stop, start, end in rows:
        if (offset, stop) == piece and start <= last + 1:
            if end > last:
                last = end
            continue
        if piece is not None:
            yield (*piece, first, last)
        piece, first, last = (offset, stop), start, end
    if piece is not None:
        yield (*piece, first, last)


def _add_slice(rows: list[tuple[int, int, int, int, int]], diff: list[int]) -> None:
    """:func:`_add_union` for rows that are all one slice (most allocations: a value
    and the values that share its slice): each of its live spans adds its size."""
    for offset, stop, first, last in _spans(rows):
        diff[first] += stop - offset
        diff[last + 1] -= stop - offset


def _union_length(active: list[tuple[int, int]]) -> int:
    """Length of the union of ``[start, end)`` intervals sorted by start."""
    total, reach = 0, None
    for start, end in active:
        if reach is None or start >= reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


def _add_union(rows: list[tuple[int, int, int, int, int]], diff: list[int]) -> None:
    """Add to the difference array ``diff`` the length of the union of one
    allocation's slices live at each step; ``rows``: ``(allocation, offset, end offset,
    first step, last step)`` sorted.

    A sweep over the steps where a slice starts or stops being live, with the live
    slices in offset order: while none of them overlap (the rule for buffers live at
    once), adding or removing one changes the union by its size; once two overlap, the
    union is measured again at each such step until nothing is live."""
    # (step, +1 start / -1 stop, offset, end offset) of each slice's merged spans
    events: list[tuple[int, int, int, int]] = []
    for offset, stop, first, last in _spans(rows):
        events += ((first, 1, offset, stop), (last + 1, -1, offset, stop))
    # At a step, stops (-1) before starts (+1); the order among either does not matter.
    events.sort()
    active: list[tuple[int, int]] = []  # live slices, by offset
    overlapping = False
    union = before = 0
    current = events[0][0] if events else 0
    for step, sign, offset, stop in events:
        if step != current:
            if overlapping:
                union = _union_length(active)
                overlapping = bool(active)  # the fast way again once nothing is live
            if union != before:
                diff[current] += union - before
                before = union
            current = step
        item = (offset, stop)
        if sign < 0:
            del active[bisect_left(active, item)]
            if not overlapping:
                union -= stop - offset
            continue
        at = bisect_left(active, item)
        if not overlapping and (
            (at > 0 and active[at - 1][1] > offset) or (at < len(active) and active[at][0] < stop)
        ):
            overlapping = True
        active.insert(at, item)
        if not overlapping:
            union += stop - offset
    if overlapping:
        union = _union_length(active)
    if union != before:
        diff[current] += union - before


def curve_peak(curve: Sequence[int]) -> tuple[int | None, int]:
    """``(earliest step of the maximum, the maximum)`` of a per-step curve; ``(None, 0)``
    for an empty one."""
    if not curve:
        return None, 0
    top = max(curve)
    return curve.index(top), top
