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
from collections.abc import Iterable, Mapping, Sequence
from math import inf
from operator import add, itemgetter

from hlotop.analysis.peak import running_sums
from hlotop.model import BufferAllocation, ValueInfo

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
        colors = sorted({a.color for a in allocation_of.values()})
        diffs: dict[int, list[int]] = {color: [0] * (max_time + 2) for color in colors}
        # (colour, spans) of each allocation with more than one: the ones to check
        self._shared: list[tuple[int, list[Span]]] = []
        for index, spans in _spans_of(
            _add_lone(infos, allocation_of, max_time, diffs), max_time
        ).items():
            alloc = allocation_of.get(index)
            if alloc is None:
                continue
            _add_sums(spans, diffs[alloc.color])
            if len(spans) > 1:
                self._shared.append((alloc.color, spans))
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


def _add_lone(
    infos: Iterable[ValueInfo],
    allocation_of: Mapping[int, BufferAllocation],
    max_time: int,
    diffs: dict[int, list[int]],
) -> list[ValueInfo]:
    """Add to ``diffs`` (colour -> difference array, bytes by step) the slice of each
    value that is the only one of its allocation to occupy a slice at some step, as
    :func:`_spans_of` and :func:`_add_sums` would (its one span); return the other
    values, in order, for them. A dump of 10^6 small allocations has a value an
    allocation: the slice dictionary and span lists :func:`_spans_of` makes for each
    took 390 bytes an allocation at once, the peak of ``--summary``'s memory."""
    taken: dict[int, int] = {}  # allocation index -> its values that occupy a slice
    get = taken.get
    infos = infos if isinstance(infos, Sequence) else list(infos)
    for info in infos:
        slot, live = info.slot, info.live
        if slot is None or live is None or slot.size <= 0:
            continue
        if (live.end if live.end < max_time else max_time) >= (live.start if live.start > 0 else 0):
            index = slot.allocation
            taken[index] = get(index, 0) + 1
    rest = []
    for info in infos:
        slot = info.slot
        if slot is None or get(slot.allocation, 0) != 1:
            rest.append(info)  # occupies nothing, or shares its allocation
            continue
        live = info.live
        if live is None or slot.size <= 0:
            rest.append(info)  # occupies nothing (the allocation's one is another)
            continue
        start, end = live.start, live.end
        if start < 0:
            start = 0
        if end > max_time:
            end = max_time
        if end < start:
            rest.append(info)
            continue
        alloc = allocation_of.get(slot.allocation)
        if alloc is not None:
            diff = diffs[alloc.color]
            diff[start] += slot.size
            diff[end + 1] -= slot.size
    return rest


def _spans_of(infos: Iterable[ValueInfo], max_time: int) -> dict[int, list[Span]]:
    """Allocation index -> the live spans of its slices (one slice's disjoint,
    :func:`_merged`), steps clipped to 0..max_time."""
    # (allocation, offset, end offset) of each slice -> [first step, last step, ...] of
    # the values that take it
    slices: dict[tuple[int, int, int], list[int]] = {}
    get = slices.get
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
            key = (slot.allocation, slot.offset, slot.offset + slot.size)
            steps = get(key)
            if steps is None:
                slices[key] = [start, end]
            else:
                steps += (start, end)
    spans_of: dict[int, list[Span]] = {}
    for (index, offset, stop), steps in slices.items():
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
