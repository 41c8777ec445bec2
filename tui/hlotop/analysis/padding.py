"""Tiling padding: the bytes a value's slot takes beyond its logical size (TPU tiles
round the minor dimension up to 128 lanes, the second-minor to 8/4/2 sublanes, and
scalars to a whole tile), per memory space and per value."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from hlotop.model import AllocationTable, BufferAllocation, ValueInfo, ValueSlots


def padding_by_color(
    infos: Iterable[ValueInfo], allocation_of: Mapping[int, BufferAllocation]
) -> dict[int, int]:
    """Tiling padding of each memory space (bytes): over its distinct slices, the
    slice's size minus the largest logical size of the values placed in it (never
    below 0). On CPU and GPU this is 0; on TPU, ``f32[]{:T(128)}`` alone pads 508."""
    infos = list(infos)  # looked at twice when a slice is padded
    # Only a slice some value leaves room in can be padded (on CPU and GPU: none), and
    # then only if no other value in it fills it: find those slices first.
    largest: dict[tuple[int, int, int], int] = {}
    for info in infos:
        slot = info.slot
        if slot is not None and info.logical_bytes < slot.size:
            key = (slot.allocation, slot.offset, slot.size)
            if info.logical_bytes > largest.get(key, -1):
                largest[key] = info.logical_bytes
    if largest:
        padded = {index for index, _, _ in largest}
        for info in infos:
            slot = info.slot
            if slot is not None and slot.allocation in padded:
                key = (slot.allocation, slot.offset, slot.size)
                if key in largest and info.logical_bytes > largest[key]:
                    largest[key] = info.logical_bytes
    out: dict[int, int] = defaultdict(int)
    for (index, _, size), logical in largest.items():
        alloc = allocation_of.get(index)
        if alloc is not None:
            out[alloc.color] += max(0, size - logical)
    return dict(out)


def padding_of_columns(
    slot_rows: Sequence[int],
    logical: Sequence[int],
    slots: ValueSlots,
    allocations: AllocationTable,
) -> dict[int, int]:
    """:func:`padding_by_color` of values given as columns: value ``r``'s row of its
    value line in ``slots`` (``slot_rows[r]``, -1: none) and its logical bytes
    (``logical[r]``), over the columns of ``slots`` and ``allocations`` (no object
    made)."""
    sizes, offsets, indexes = slots.sizes, slots.offsets, slots.allocations
    largest: dict[tuple[int, int, int], int] = {}
    for r, k in enumerate(slot_rows):
        if k >= 0 and logical[r] < sizes[k]:
            key = (indexes[k], offsets[k], sizes[k])
            if logical[r] > largest.get(key, -1):
                largest[key] = logical[r]
    if largest:
        padded = {index for index, _, _ in largest}
        for r, k in enumerate(slot_rows):
            if k >= 0 and indexes[k] in padded:
                key = (indexes[k], offsets[k], sizes[k])
                if key in largest and logical[r] > largest[key]:
                    largest[key] = logical[r]
    out: dict[int, int] = defaultdict(int)
    position, colors = allocations.positions(), allocations.colors
    for (index, _, size), most in largest.items():
        at = position.get(index)
        if at is not None:
            out[colors[at]] += max(0, size - most)
    return dict(out)


def most_padded(infos: Iterable[ValueInfo], color: int, count: int) -> list[ValueInfo]:
    """Up to ``count`` values of memory space ``color`` with the most padding bytes
    (allocated minus logical), most first, then by value id; values with none are
    left out. A slice shared by several values is listed at each of them."""
    padded = [i for i in infos if i.slot is not None and i.color == color and i.padding_bytes > 0]
    padded.sort(key=lambda i: (-i.padding_bytes, i.value.id))
    return padded[:count]
