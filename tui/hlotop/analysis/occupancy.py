"""Occupied bytes: the allocation space in use at each schedule step, per memory space.

A value takes the slice ``[offset, offset + size)`` of its allocation (its slot,
tiling padding included) from the first to the last step of its live range. Values
that share a slice (a donated parameter and the output aliasing it, a bitcast, a
tuple element) occupy it once. Values at one offset with different sizes (a slice
reused by a smaller value) occupy the largest live one. XLA's heap simulator never
places two buffers live at the same step at overlapping, different offsets, so the
sum over slices is the space in use; it is never above the allocations' sizes.
Values with no allocation line or no live range occupy nothing here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from heapq import heappop, heappush
from itertools import accumulate

from hlotop.model import BufferAllocation, ValueInfo


def occupied_bytes_per_step(
    infos: Iterable[ValueInfo], allocation_of: Mapping[int, BufferAllocation], max_time: int
) -> dict[int, list[int]]:
    """Occupied bytes of each memory space at each step 0..max_time.

    ``infos``: the module's values; ``allocation_of``: allocation index -> allocation
    (its colour is the slice's memory space). Returns ``{color: [bytes at step 0, ...,
    bytes at step max_time]}`` for every colour that has an allocation, ascending.
    Raises nothing.
    """
    # (allocation, offset) -> [(size, start, end)]
    at_offset: dict[tuple[int, int], list[tuple[int, int, int]]] = defaultdict(list)
    for info in infos:
        slot, live = info.slot, info.live
        if slot is None or live is None or slot.size <= 0:
            continue
        start, end = max(live.start, 0), min(live.end, max_time)
        if end < start:
            continue
        at_offset[(slot.allocation, slot.offset)].append((slot.size, start, end))
    diffs: dict[int, list[int]] = {
        color: [0] * (max_time + 2) for color in sorted({a.color for a in allocation_of.values()})
    }
    for (index, _), members in at_offset.items():
        alloc = allocation_of.get(index)
        if alloc is not None:
            _add_largest_live(members, diffs[alloc.color])
    out = {}
    for color, diff in diffs.items():
        diff.pop()
        out[color] = list(accumulate(diff))
    return out


def _add_largest_live(members: list[tuple[int, int, int]], diff: list[int]) -> None:
    """Add to the difference array ``diff`` the size of the largest live member of
    ``members`` (``(size, start, end)``, inclusive steps) at each step."""
    if len(members) == 1:
        size, start, end = members[0]
        diff[start] += size
        diff[end + 1] -= size
        return
    events: dict[int, list[tuple[int, int]]] = defaultdict(list)  # step -> (+1/-1, size)
    for size, start, end in members:
        events[start].append((1, size))
        events[end + 1].append((-1, size))
    live: dict[int, int] = defaultdict(int)  # size -> how many live values have it
    heap: list[int] = []  # -size, lazily cleared
    current = 0
    for step in sorted(events):
        for sign, size in events[step]:
            live[size] += sign
            if sign > 0 and live[size] == 1:
                heappush(heap, -size)
        while heap and live[-heap[0]] <= 0:
            heappop(heap)
        largest = -heap[0] if heap else 0
        if largest != current:
            diff[step] += largest - current
            current = largest


def curve_peak(curve: list[int]) -> tuple[int | None, int]:
    """``(earliest step of the maximum, the maximum)`` of a per-step curve; ``(None, 0)``
    for an empty one."""
    if not curve:
        return None, 0
    top = max(curve)
    return curve.index(top), top
