"""JAX's ``compiled.memory_analysis()`` sizes, from the allocation lines, the way XLA
works them out (``CompiledMemoryStats::PopulateBufferStatsFromAllocations``,
``xla/pjrt/compiled_memory_stats.cc``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hlotop.model import BufferAllocation, IoAlias, MemoryStats
from hlotop.model.memory_space import HOST_MEMORY_SPACE

ALIAS_FROM_HLO = "input_output_alias"
ALIAS_FROM_ALLOCATIONS = "parameter and maybe-live-out"


def is_host(alloc: BufferAllocation) -> bool:
    """Whether XLA counts ``alloc`` as host memory: the memory space of its first
    value (``@5``), else its own colour, is ``Layout::kHostMemorySpace`` (5)."""
    for slot in alloc.values:
        color = slot.value.color
        if color is not None:
            return color == HOST_MEMORY_SPACE
        break
    return alloc.color == HOST_MEMORY_SPACE


def is_preallocated_temp(alloc: BufferAllocation) -> bool:
    """``BufferAllocation::IsPreallocatedTempBuffer``: not an entry parameter, not
    maybe-live-out, not thread-local, not constant."""
    return not (
        alloc.parameter is not None
        or alloc.maybe_live_out
        or alloc.is_thread_local
        or alloc.is_constant
    )


def memory_stats(
    allocations: Sequence[BufferAllocation], aliases: Iterable[IoAlias] | None = None
) -> MemoryStats | None:
    """The eight sizes of ``memory_analysis()`` (bytes) from ``allocations``.

    An entry-parameter allocation is aliased with an output when ``aliases`` (the HLO
    module's ``input_output_alias``) names its (parameter, ShapeIndex); without them,
    when it is also maybe-live-out (true of every sample whose HLO text says which).
    Returns None for no allocations. Raises nothing.
    """
    if not allocations:
        return None
    aliased = {(a.parameter, a.parameter_index) for a in aliases} if aliases is not None else None
    sums = dict.fromkeys(MemoryStats.FIELDS, 0)
    for alloc in allocations:
        prefix = "host_" if is_host(alloc) else ""
        size = alloc.size
        if alloc.parameter is not None:
            sums[prefix + "argument_size_in_bytes"] += size
            if aliased is None:
                alias = alloc.maybe_live_out
            else:
                alias = (alloc.parameter, alloc.parameter_shape_index or ()) in aliased
            if alias:
                sums[prefix + "alias_size_in_bytes"] += size
        if alloc.maybe_live_out:
            sums[prefix + "output_size_in_bytes"] += size
        if is_preallocated_temp(alloc):
            sums[prefix + "temp_size_in_bytes"] += size
    source = ALIAS_FROM_HLO if aliased is not None else ALIAS_FROM_ALLOCATIONS
    return MemoryStats(**sums, alias_source=source)
