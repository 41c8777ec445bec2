"""The bytes live at each schedule step and XLA's peak moment (``HloLiveRange``'s
sweep), the live set at a step, and the allocation space a set of values occupies."""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, compress, repeat
from operator import add, ge, sub

from hlotop.model import ValueInfo, ValueTable
from hlotop.model.value_table import rows_of


def xla_peak_step(
    ranges: Iterable[tuple[int, int, int]], last_step: int | None = None
) -> tuple[int, int]:
    """XLA's peak moment (``HloLiveRange::ComputePeakMemoryMoment``).

    ``ranges`` are ``(start, end, bytes)`` with inclusive steps and the defining
    instruction's ByteSizeOf. Events at ``start`` (+) and ``end + 1`` (-) are swept in
    (time, is_end) order, so starts at a step count before ends at that step; the
    earliest strict maximum wins, 0 if there is none. ``last_step``, if given, is at
    least every range's start and end: the sweep then adds up every step 0..last_step
    in C (a 136 000-step schedule's in half the time), else it goes event by event
    (ranges far apart, a damaged dump's). Returns ``(step, bytes at the sweep's
    maximum)``. Raises nothing.
    """
    if last_step is not None:
        return _peak_over_every_step(ranges, last_step)
    starts: dict[int, int] = {}
    ends: dict[int, int] = {}
    starts_get, ends_get = starts.get, ends.get
    for start, end, size in ranges:
        starts[start] = starts_get(start, 0) + size
        ends[end + 1] = ends_get(end + 1, 0) + size
    usage = peak = peak_time = 0
    for t in sorted(starts.keys() | ends.keys()):
        usage += starts_get(t, 0)
        if usage > peak:
            peak, peak_time = usage, t
        usage -= ends_get(t, 0)
    return peak_time, peak


def _peak_over_every_step(ranges: Iterable[tuple[int, int, int]], last: int) -> tuple[int, int]:
    """:func:`xla_peak_step` by steps: the bytes started and ended at each, and the
    usage the sweep checks at a step, the usage after it plus what ended there (the
    usage before it plus what started). A step with no event repeats the usage after
    the last one, so the earliest maximum is at an event, as in XLA's sweep."""
    started = [0] * (last + 2)
    ended = [0] * (last + 2)
    for start, end, size in ranges:
        started[start] += size
        ended[end + 1] += size
    checked = list(map(add, accumulate(map(sub, started, ended)), ended))
    peak = max(checked)
    return (checked.index(peak), peak) if peak > 0 else (0, 0)


# Steps summed by one call into C at most: the running sums of a 136 000-step schedule
# in one call held the interpreter 20 ms while a browser's keys waited.
_SUM_PIECE = 1 << 14


def running_sums(diff: list[int]) -> array[int]:
    """The running sums of ``diff`` (``accumulate``), as an ``array("q")``, made a
    piece of :data:`_SUM_PIECE` steps at a time. Raises ``OverflowError`` past 64 bits."""
    out = array("q")
    for at in range(0, len(diff), _SUM_PIECE):
        sums = accumulate(diff[at : at + _SUM_PIECE], initial=out[-1] if out else 0)
        next(sums)  # the sum so far, already the last item
        out.extend(sums)
    return out


def live_bytes_per_step(infos: Iterable[ValueInfo], max_time: int) -> array[int]:
    """Logical bytes of the values live at each step 0..max_time (``start <= t <= end``).
    Returns ``max_time + 1`` ints, as an ``array("q")`` (a tenth of a list's memory
    over a big schedule). Raises nothing.
    """
    diff = [0] * (max_time + 2)
    for start, end, logical in live_steps(infos, "logical"):
        if start < 0 or end > max_time:  # only in damaged dumps: clamp to the schedule
            start = min(max(start, 0), max_time + 1)
            end = min(max(end, -1), max_time)
        if end < start:
            continue
        diff[start] += logical
        diff[end + 1] -= logical
    diff.pop()
    return running_sums(diff)


def live_steps(infos: Iterable[ValueInfo], sizes: str) -> Iterator[tuple[int, int, int]]:
    """``(start, end, bytes)`` of each value of ``infos`` that has a live range, in
    order: its ``logical`` or ``sweep`` bytes (``sizes``). Over a table's columns when
    the values are its rows (no object made)."""
    values = infos if isinstance(infos, Sequence) else list(infos)
    found = rows_of(values)
    if found is None:
        field = "logical_bytes" if sizes == "logical" else "sweep_bytes"
        for info in values:
            live = info.live
            if live is not None:
                yield live.start, live.end, getattr(info, field)
        return
    table, rows = found
    ranges = table.ranges
    if ranges is None:
        return
    starts, ends = ranges.starts, ranges.ends
    live_rows, size = table.live_rows, table.logical if sizes == "logical" else table.sweep
    for r in rows:
        k = live_rows[r]
        if k >= 0:
            yield starts[k], ends[k], size[r]


def live_rows(table: ValueTable) -> array[int]:
    """The rows of ``table`` whose values have a live range."""
    return array("q", compress(range(len(table)), map(ge, table.live_rows, repeat(0))))


def live_set(infos: Iterable[ValueInfo], step: int) -> list[ValueInfo]:
    """Values live at ``step``, in XLA's peak-list order: logical bytes descending,
    then instruction name, then ShapeIndex."""
    values = infos if isinstance(infos, Sequence) else list(infos)
    found = rows_of(values)
    if found is None:
        live = [i for i in values if (r := i.live) is not None and r.start <= step <= r.end]
        live.sort(key=lambda i: (-i.logical_bytes, i.value.name, i.value.shape_index or ()))
        return live
    table, rows = found
    ranges = table.ranges
    if ranges is None:
        return []
    starts, ends, live_rows = ranges.starts, ranges.ends, table.live_rows
    there = [r for r in rows if (k := live_rows[r]) >= 0 and starts[k] <= step <= ends[k]]
    logical, name, index = table.logical, table.name, table.shape_index
    there.sort(key=lambda r: (-logical[r], name(r), index(r) or ()))
    return table.rows(there)


def occupied_bytes(infos: Iterable[ValueInfo]) -> int:
    """Bytes of allocation space the values occupy: the union of their slots'
    ``[offset, offset + size)`` ranges in each allocation, padding included.
    Unlike a sum of logical bytes (XLA's peak figure), values that share a slice of an
    allocation (a donated parameter and the output aliasing it, a bitcast) count once.
    Values with no allocation line count their logical bytes. Raises nothing.
    """
    by_alloc: dict[int, list[tuple[int, int]]] = defaultdict(list)
    loose = 0
    values = infos if isinstance(infos, Sequence) else list(infos)
    found = rows_of(values)
    if found is None or found[0].slots is None:
        for info in values:
            if info.slot is None:
                loose += info.logical_bytes
            else:
                by_alloc[info.slot.allocation].append(
                    (info.slot.offset, info.slot.offset + info.slot.size)
                )
    else:
        table, rows = found
        slots = table.slots
        assert slots is not None
        allocations, offsets, sizes = slots.allocations, slots.offsets, slots.sizes
        slot_rows, logical = table.slot_rows, table.logical
        for r in rows:
            k = slot_rows[r]
            if k < 0:
                loose += logical[r]
            else:
                by_alloc[allocations[k]].append((offsets[k], offsets[k] + sizes[k]))
    total = loose
    for ranges in by_alloc.values():
        ranges.sort()
        cur_start, cur_end = ranges[0]
        for start, end in ranges[1:]:
            if start > cur_end:
                total += cur_end - cur_start
                cur_start, cur_end = start, end
            else:
                cur_end = max(cur_end, end)
        total += cur_end - cur_start
    return total
