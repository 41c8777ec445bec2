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
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from math import inf
from operator import add, itemgetter
from typing import Any

from hlotop.analysis.peak import running_sums
from hlotop.model import BufferAllocation, ValueInfo
from hlotop.model.allocation_table import Positions, TableByIndex
from hlotop.model.value_table import rows_of

Span = tuple[int, int, int, int]  # (offset, end offset, first step, last step)


class Occupancy:
    """Occupied bytes of each memory space: their peaks, worked out at once, and the
    bytes at every step, worked out when first asked for (:meth:`curves`).

    The sums of the live slices' sizes at each step (one difference array) are the
    occupied bytes wherever no two slices live at once overlap, XLA's rule for one
    allocation's buffers, and above them elsewhere. So each space's peak is the sums'
    first maximum if the slices live there do not overlap, which one look at that step
    tells; only where they do is every step's union worked out. The curves need the
    check of every allocation whose slices take turns (0.15 s for the 78 000 spans of
    a 100 MB dump's temporary allocation), which a report that shows only the peaks
    never makes.

    ``infos``: the module's values; ``allocation_of``: allocation index -> allocation
    (its colour is the slice's memory space); ``max_time``: the schedule's last step.
    Raises nothing."""

    def __init__(
        self,
        infos: Iterable[ValueInfo],
        allocation_of: Mapping[int, BufferAllocation],
        max_time: int,
    ):
        color_of = _colors_of(allocation_of)
        colors = sorted(set(color_of.values()))
        diffs: dict[int, list[int]] = {color: [0] * (max_time + 2) for color in colors}
        # (colour, spans) of each allocation with more than one: the ones to check
        self._shared: list[tuple[int, list[Span]]] = []
        slices = _slices(infos)
        for index, spans in _spans_of(
            _add_lone(slices, color_of, max_time, diffs), max_time
        ).items():
            color = color_of.get(index)
            if color is None:
                continue
            _add_sums(spans, diffs[color])
            if len(spans) > 1:
                self._shared.append((color, spans))
        self.sums: dict[int, array[int]] = {}  # colour -> sizes of the live slices by step
        for color, diff in diffs.items():
            diff.pop()
            self.sums[color] = running_sums(diff)
        self._curves: dict[int, Sequence[int]] | None = None

    def peaks(self) -> dict[int, tuple[int | None, int]]:
        """Each colour's :func:`curve_peak` of :meth:`curves`, (earliest step, bytes):
        its sums' first maximum where the slices live at that step do not overlap
        (the curve is never above the sums, and equals them there), else the curve's
        own."""
        out: dict[int, tuple[int | None, int]] = {}
        for color, sums in self.sums.items():
            step, top = curve_peak(sums)
            if step is not None and top and self._overlap_at(color, step):
                step, top = curve_peak(self.curves()[color])
            out[color] = (step, top)
        return out

    def _overlap_at(self, color: int, step: int) -> bool:
        """Whether two slices of one allocation of ``color`` live at ``step`` overlap."""
        for space, spans in self._shared:
            if space != color:
                continue
            live = sorted(
                (offset, stop) for offset, stop, first, last in spans if first <= step <= last
            )
            reach = -1
            for offset, stop in live:
                if offset < reach:
                    return True
                reach = max(reach, stop)
        return False

    def curves(self) -> dict[int, Sequence[int]]:
        """Occupied bytes of each colour at each step 0..max_time (each an
        ``array("q")``, or the sums themselves where they are the curve), for every
        colour that has an allocation, ascending: at each step, the union of each
        allocation's live slices. Worked out once, by one thread at a time (the
        analysis, then :class:`~hlotop.model.OnFirstRead`, which holds a lock)."""
        if self._curves is None:
            fixes: dict[int, list[int]] = {}  # colour -> union minus sums, by step
            for color, spans in self._shared:
                if _overlap(spans):
                    fix = fixes.get(color)
                    if fix is None:
                        fix = fixes[color] = [0] * (len(self.sums[color]) + 1)
                    _add_union(spans, fix)
                    _add_sums(spans, fix, -1)
            curves: dict[int, Sequence[int]] = dict(self.sums)
            for color, fix in fixes.items():
                fix.pop()
                curves[color] = array("q", map(add, self.sums[color], running_sums(fix)))
            self._curves = curves
            self._shared = []  # not needed again
        return self._curves


def occupied_bytes_per_step(
    infos: Iterable[ValueInfo], allocation_of: Mapping[int, BufferAllocation], max_time: int
) -> dict[int, Sequence[int]]:
    """Occupied bytes of each memory space at each step 0..max_time
    (:meth:`Occupancy.curves`).

    ``infos``: the module's values; ``allocation_of``: allocation index -> allocation
    (its colour is the slice's memory space). Returns ``{color: bytes at steps 0 ..
    max_time}`` (each an ``array("q")``) for every colour that has an allocation,
    ascending.
    Raises nothing.
    """
    return Occupancy(infos, allocation_of, max_time).curves()


# A value's slice and live range: (allocation index, offset, size, first step, last
# step), steps as printed (not clipped).
Slice = tuple[int, int, int, int, int]


def _slices(infos: Iterable[ValueInfo]) -> Callable[[], Iterator[Slice]]:
    """A function that gives the :data:`Slice` of each value of ``infos`` that has a
    slot and a live range, in order, each time it is called: from a table's columns
    when the values are its rows (no object made)."""
    values = infos if isinstance(infos, Sequence) else list(infos)
    found = rows_of(values)
    if found is None or found[0].slots is None or found[0].ranges is None:

        def of_objects() -> Iterator[Slice]:
            for info in values:
                slot, live = info.slot, info.live
                if slot is not None and live is not None:
                    yield slot.allocation, slot.offset, slot.size, live.start, live.end

        return of_objects
    table, rows = found
    slots, ranges = table.slots, table.ranges
    assert slots is not None and ranges is not None

    def of_columns() -> Iterator[Slice]:
        slot_rows: Iterable[int] = table.slot_rows
        live_rows: Iterable[int] = table.live_rows
        if not isinstance(rows, range):
            slot_rows = map(table.slot_rows.__getitem__, rows)
            live_rows = map(table.live_rows.__getitem__, rows)
        indexes, offsets, sizes = slots.allocations, slots.offsets, slots.sizes
        starts, ends = ranges.starts, ranges.ends
        for k, j in zip(slot_rows, live_rows, strict=True):
            if k >= 0 and j >= 0:
                yield indexes[k], offsets[k], sizes[k], starts[j], ends[j]

    return of_columns


def _colors_of(allocation_of: Mapping[int, BufferAllocation]) -> Mapping[int, int]:
    """Allocation index -> its colour (from a table's columns when ``allocation_of``
    is a :class:`~hlotop.model.allocation_table.TableByIndex`)."""
    if isinstance(allocation_of, TableByIndex):
        colors = allocation_of.table.colors
        position = allocation_of.position
        if isinstance(position, Positions):
            return _ColorByRow(colors)
        return {index: colors[k] for index, k in position.items()}
    return {index: alloc.color for index, alloc in allocation_of.items()}


class _ColorByRow(Mapping[int, int]):
    """Allocation index -> colour where the indexes are the rows 0..n-1."""

    def __init__(self, colors: array[int]):
        self.colors = colors

    def __getitem__(self, index: int) -> int:
        if 0 <= index < len(self.colors):
            return self.colors[index]
        raise KeyError(index)

    def get(self, index: int, default: Any = None) -> Any:
        return self.colors[index] if 0 <= index < len(self.colors) else default

    def values(self):
        return self.colors

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.colors)))

    def __len__(self) -> int:
        return len(self.colors)


def _add_lone(
    slices: Callable[[], Iterator[Slice]],
    color_of: Mapping[int, int],
    max_time: int,
    diffs: dict[int, list[int]],
) -> Iterator[Slice]:
    """Add to ``diffs`` (colour -> difference array, bytes by step) the slice of each
    value that is the only one of its allocation to occupy a slice at some step, as
    :func:`_spans_of` and :func:`_add_sums` would (its one span); give the other
    values' slices, in order, for them. A dump of 10^6 small allocations has a value an
    allocation: the slice dictionary and span lists :func:`_spans_of` makes for each
    took 390 bytes an allocation at once, the peak of ``--summary``'s memory."""
    taken: dict[int, int] = {}  # allocation index -> its values that occupy a slice
    get = taken.get
    for index, _, size, start, end in slices():
        if size > 0 and (end if end < max_time else max_time) >= (start if start > 0 else 0):
            taken[index] = get(index, 0) + 1
    rest: list[Slice] = []
    for one in slices():
        index, _, size, start, end = one
        if get(index, 0) != 1 or size <= 0:
            rest.append(one)  # shares its allocation, or occupies nothing
            continue
        if start < 0:
            start = 0
        if end > max_time:
            end = max_time
        if end < start:
            rest.append(one)
            continue
        color = color_of.get(index)
        if color is not None:
            diff = diffs[color]
            diff[start] += size
            diff[end + 1] -= size
    return iter(rest)


def _spans_of(slices: Iterable[Slice], max_time: int) -> dict[int, list[Span]]:
    """Allocation index -> the live spans of its slices (one slice's disjoint,
    :func:`_merged`), steps clipped to 0..max_time."""
    # (allocation, offset, end offset) of each slice -> [first step, last step, ...] of
    # the values that take it
    by_slice: dict[tuple[int, int, int], list[int]] = {}
    get = by_slice.get
    for index, offset, size, start, end in slices:
        if size <= 0:
            continue
        if start < 0:
            start = 0
        if end > max_time:
            end = max_time
        if end >= start:
            key = (index, offset, offset + size)
            steps = get(key)
            if steps is None:
                by_slice[key] = [start, end]
            else:
                steps += (start, end)
    spans_of: dict[int, list[Span]] = {}
    for (index, offset, stop), steps in by_slice.items():
        spans = spans_of.get(index)
        if spans is None:
            spans_of[index] = spans = []
        if len(steps) == 2:
            spans.append((offset, stop, steps[0], steps[1]))
        else:
            spans += _merged(offset, stop, steps)
    return spans_of


def _add_sums(spans: list[Span], diff: list[int], sign: int = 1) -> None:
    """Add (``sign`` 1) or take (-1) the size of each span to the difference array
    ``diff`` (bytes by step) over its steps."""
    for offset, stop, first, last in spans:
        diff[first] += sign * (stop - offset)
        diff[last + 1] -= sign * (stop - offset)


def _merged(offset: int, stop: int, steps: list[int]) -> list[tuple[int, int, int, int]]:
    """The live spans ``(offset, end offset, first step, last step)`` of one slice
    taken by several values, whose ``steps`` are ``[first, last, first, last, ...]``:
    spans that overlap or touch merged into one (the slice is in use throughout)."""
    if len(steps) == 4:  # two values (the most common: a parameter and its alias)
        a, b, c, d = steps
        if c < a:
            a, b, c, d = c, d, a, b
        if c <= b + 1:
            return [(offset, stop, a, max(b, d))]
        return [(offset, stop, a, b), (offset, stop, c, d)]
    pairs = sorted(zip(steps[::2], steps[1::2], strict=True))
    out = []
    first, last = pairs[0]
    for start, end in pairs[1:]:
        if start <= last + 1:
            if end > last:
                last = end
            continue
        out.append((offset, stop, first, last))
        first, last = start, end
    out.append((offset, stop, first, last))
    return out


# Up to this many spans every pair is compared: most allocations with more than one
# slice have a handful, and for them this takes a fifth of the sweep's time.
_PAIRWISE = 12
_FIRST, _LAST = itemgetter(2), itemgetter(3)  # of a span
# The sweep keeps the live spans' offsets sorted in blocks of up to twice this many: a
# 108 MB dump's temporary allocation has 10^4 spans live at once, and one sorted list
# of them spent half the sweep moving its items on each insertion.
_BLOCK = 256


def _overlap(spans: list[tuple[int, int, int, int]]) -> bool:
    """Whether two of one allocation's ``spans`` (distinct slices, or one slice's
    disjoint spans) are live at a common step over address ranges that overlap: each
    pair compared, or for more than :data:`_PAIRWISE` spans a sweep over the first
    steps, with the live spans' offsets kept sorted (in blocks, :data:`_BLOCK`). While
    none overlap, a span overlaps a live one only if it overlaps its neighbours by
    offset, so only those are compared."""
    n = len(spans)
    if n <= _PAIRWISE:
        for k, (offset, stop, first, last) in enumerate(spans):
            for other_offset, other_stop, other_first, other_last in spans[k + 1 :]:
                if (
                    offset < other_stop
                    and other_offset < stop
                    and first <= other_last
                    and other_first <= last
                ):
                    return True
        return False
    by_last = sorted(spans, key=_LAST)
    lasts = [*map(_LAST, by_last), inf]  # ends with one no span reaches: no bound check
    gone_at = [span[0] for span in by_last]  # the offset of each, in that order
    blocks: list[list[int]] = []  # the live spans' offsets, ascending, block by block
    heads: list[int] = []  # the first offset of each block
    stop_at: dict[int, int] = {}  # offset of a live span -> its end offset
    j = 0
    for offset, stop, first, _ in sorted(spans, key=_FIRST):
        while lasts[j] < first:  # spans over before this one starts
            gone = gone_at[j]
            k = bisect_right(heads, gone) - 1
            block = blocks[k]
            del block[bisect_left(block, gone)]
            if block:
                heads[k] = block[0]
            else:
                del blocks[k], heads[k]
            j += 1
        k = bisect_right(heads, offset) - 1
        if k < 0:  # before every live span (or none is live)
            if heads and heads[0] < stop:
                return True
            if blocks and len(blocks[0]) < _BLOCK:
                blocks[0].insert(0, offset)
                heads[0] = offset
            else:
                blocks.insert(0, [offset])
                heads.insert(0, offset)
            stop_at[offset] = stop
            continue
        block = blocks[k]
        at = bisect_left(block, offset)  # > 0 unless offset is the block's head
        after = block[at] if at < len(block) else heads[k + 1] if k + 1 < len(heads) else inf
        if after < stop or (at and stop_at[block[at - 1]] > offset):
            return True
        block.insert(at, offset)
        stop_at[offset] = stop
        if len(block) > 2 * _BLOCK:  # split in two
            blocks.insert(k + 1, block[_BLOCK:])
            heads.insert(k + 1, block[_BLOCK])
            del block[_BLOCK:]
    return False


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


def _add_union(spans: list[tuple[int, int, int, int]], diff: list[int]) -> None:
    """Add to the difference array ``diff`` the length of the union of one
    allocation's slices live at each step; ``spans``: ``(offset, end offset, first
    step, last step)``, one slice's spans disjoint (:func:`_merged`).

    A sweep over the steps where a slice starts or stops being live, with the live
    slices in offset order: while none of them overlap (the rule for buffers live at
    once), adding or removing one changes the union by its size; once two overlap, the
    union is measured again at each such step until nothing is live."""
    # (step, +1 start / -1 stop, offset, end offset) of each slice's merged spans
    events: list[tuple[int, int, int, int]] = []
    for offset, stop, first, last in spans:
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
