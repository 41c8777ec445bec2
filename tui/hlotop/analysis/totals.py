"""Totals over the allocations: bytes and counts by kind (each allocation once), and
bytes by memory space."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence

from hlotop.model import (
    KIND_CONSTANT,
    KIND_MAYBE_LIVE_OUT,
    KIND_PARAMETER,
    KIND_PREALLOCATED_TEMP,
    KIND_THREAD_LOCAL,
    AllocationTable,
    BufferAllocation,
)
from hlotop.model.allocation_table import CONSTANT, MAYBE_LIVE_OUT, THREAD_LOCAL

# The kinds an allocation is counted under, first match wins. This is the order of
# memory_analysis() (CompiledMemoryStats, xla/pjrt/compiled_memory_stats.cc): a
# parameter is an argument even when it is also an output; a maybe-live-out
# allocation is output before it is a constant; preallocated-temp is what is none of
# the others (BufferAllocation::IsPreallocatedTempBuffer). An allocation whose line
# says "output shape is" is maybe-live-out too, so "output" is not a row of its own.
KIND_PRECEDENCE = (
    KIND_PARAMETER,
    KIND_MAYBE_LIVE_OUT,
    KIND_CONSTANT,
    KIND_THREAD_LOCAL,
    KIND_PREALLOCATED_TEMP,
)


def first_kind(alloc: BufferAllocation) -> str:
    """The kind ``alloc`` is counted under in :func:`kind_totals` (one of
    :data:`KIND_PRECEDENCE`)."""
    if alloc.parameter is not None:
        return KIND_PARAMETER
    if alloc.maybe_live_out or alloc.output_shape is not None:
        return KIND_MAYBE_LIVE_OUT
    if alloc.is_constant:
        return KIND_CONSTANT
    if alloc.is_thread_local:
        return KIND_THREAD_LOCAL
    return KIND_PREALLOCATED_TEMP


def kind_totals(allocations: Sequence[BufferAllocation]) -> tuple[dict[str, int], dict[str, int]]:
    """Bytes, and the number, of the allocations of each kind, each allocation counted
    once under its :func:`first_kind`, so the bytes add up to the total. Every kind of
    :data:`KIND_PRECEDENCE` is present, in that order."""
    size = dict.fromkeys(KIND_PRECEDENCE, 0)
    count = dict.fromkeys(KIND_PRECEDENCE, 0)
    table = AllocationTable.of(allocations)
    for kind, bytes_ in zip(first_kinds(table), table.sizes, strict=True):
        size[kind] += bytes_
        count[kind] += 1
    return size, count


# The kind an allocation of no parameter nor output shape is counted under, by its
# flags (model.allocation_table's bits), as first_kind says.
_KIND_OF_FLAGS = tuple(
    KIND_MAYBE_LIVE_OUT
    if flags & MAYBE_LIVE_OUT
    else KIND_CONSTANT
    if flags & CONSTANT
    else KIND_THREAD_LOCAL
    if flags & THREAD_LOCAL
    else KIND_PREALLOCATED_TEMP
    for flags in range(16)
)


def first_kinds(allocations: AllocationTable) -> Iterator[str]:
    """:func:`first_kind` of each allocation of ``allocations``, in order, from its
    columns."""
    extras = allocations.extras
    for k, flags in enumerate(allocations.flags):
        extra = extras.get(k) if extras else None
        if extra is not None:
            if extra[0] is not None:
                yield KIND_PARAMETER
                continue
            if extra[3] is not None:
                yield KIND_MAYBE_LIVE_OUT
                continue
        yield _KIND_OF_FLAGS[flags]


def totals_by_color(allocations: Sequence[BufferAllocation]) -> dict[int, int]:
    """Bytes of the allocations of each memory space (color), colors ascending."""
    table = AllocationTable.of(allocations)
    return bytes_by_color(table.colors, table.sizes)


def bytes_by_color(colors: Iterable[int], sizes: Iterable[int]) -> dict[int, int]:
    """The ``sizes`` (bytes) added up by their ``colors`` (one each, in the same
    order), colors ascending: :func:`totals_by_color` of allocations given as columns
    (a first look's, :class:`~hlotop.model.AllocationLines`)."""
    out: dict[int, int] = defaultdict(int)
    for color, size in zip(colors, sizes, strict=True):
        out[color] += size
    return dict(sorted(out.items()))
