"""JAX's ``compiled.memory_analysis()`` sizes, from the allocation lines, the way XLA
works them out (``CompiledMemoryStats::PopulateBufferStatsFromAllocations``,
``xla/pjrt/compiled_memory_stats.cc``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hlotop.model import AllocationTable, BufferAllocation, IoAlias, MemoryStats, ValueInfo
from hlotop.model.allocation_table import CONSTANT, MAYBE_LIVE_OUT, THREAD_LOCAL
from hlotop.model.memory_space import HOST_MEMORY_SPACE
from hlotop.model.value_table import rows_of

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
    table = AllocationTable.of(allocations)
    extras, flags_of = table.extras, table.flags
    firsts, value_colors, colors = table.firsts, table.slots.value_colors, table.colors
    for k, size in enumerate(table.sizes):
        # is_host, over the columns: the first value's colour, else the allocation's
        first = firsts[k]
        color = value_colors[first] if first < firsts[k + 1] else -1
        prefix = "host_" if (color if color >= 0 else colors[k]) == HOST_MEMORY_SPACE else ""
        flags = flags_of[k]
        extra = extras.get(k) if extras else None
        parameter = None if extra is None else extra[0]
        maybe_live_out = bool(flags & MAYBE_LIVE_OUT)
        if parameter is not None:
            sums[prefix + "argument_size_in_bytes"] += size
            if aliased is None:
                alias = maybe_live_out
            else:
                alias = (parameter, extra[2] or ()) in aliased  # type: ignore[index]
            if alias:
                sums[prefix + "alias_size_in_bytes"] += size
        if maybe_live_out:
            sums[prefix + "output_size_in_bytes"] += size
        if parameter is None and not flags & (MAYBE_LIVE_OUT | THREAD_LOCAL | CONSTANT):
            sums[prefix + "temp_size_in_bytes"] += size  # is_preallocated_temp
    source = ALIAS_FROM_HLO if aliased is not None else ALIAS_FROM_ALLOCATIONS
    return MemoryStats(
        argument_size_in_bytes=sums["argument_size_in_bytes"],
        output_size_in_bytes=sums["output_size_in_bytes"],
        alias_size_in_bytes=sums["alias_size_in_bytes"],
        temp_size_in_bytes=sums["temp_size_in_bytes"],
        host_argument_size_in_bytes=sums["host_argument_size_in_bytes"],
        host_output_size_in_bytes=sums["host_output_size_in_bytes"],
        host_alias_size_in_bytes=sums["host_alias_size_in_bytes"],
        host_temp_size_in_bytes=sums["host_temp_size_in_bytes"],
        alias_source=source,
    )


# peak_memory_in_bytes: which form of XLA's rule a platform's PJRT client applies.
PEAK_RULE_STATIC = "static"  # CPU: the heap-simulator traces are cleared before it runs
PEAK_RULE_STATIC_AND_TEMP = "static+temp"  # GPU: the traces kept from compile time
PEAK_RULES = (PEAK_RULE_STATIC, PEAK_RULE_STATIC_AND_TEMP)


def is_static(alloc: BufferAllocation) -> bool:
    """Whether XLA's peak rule counts ``alloc`` as always present
    (``AllocateStaticBuffers``): an entry parameter, a constant or maybe-live-out, and
    not thread-local."""
    return not alloc.is_thread_local and (
        alloc.parameter is not None or alloc.is_constant or alloc.maybe_live_out
    )


def peak_memory_in_bytes(
    allocations: Sequence[BufferAllocation], infos: Iterable[ValueInfo], platform: str
) -> tuple[int, str] | None:
    """JAX's ``memory_analysis().peak_memory_in_bytes`` (jax >= 0.11), by XLA's rule.

    XLA works it out from the buffer-assignment proto (``ComputePeakMemoryImpl``,
    ``xla/service/buffer_assignment.cc``): every static allocation (:func:`is_static`,
    every memory space) counts once at its largest value's size (its value lines'
    ``size=``), and on top of that the peak of the heap simulator's traces, which
    allocate and free the temp values as the schedule goes. On CPU the traces are
    empty: the CPU client builds the proto after ``BufferAssignment::Finalize`` has
    cleared them (``CpuExecutable::Finalize``), so the figure is the static part
    alone. On GPU the proto is taken at compile time, traces included; the dump does
    not print them, so they are rebuilt from the values of the preallocated-temp
    allocations and their live ranges (``start <= step <= end``, allocated before
    freed at a step), leaving out tuple-shaped values, which XLA gives allocations of
    their own outside the heap (``AssignSpecialHloBuffer``). Values the heap
    simulator shared in place (its ``SHARE_WITH`` events) are not in the dump and
    would be counted twice.

    ``allocations``: the module's, with their value slots; ``infos``: its values with
    live ranges (steps); ``platform``: ``"cpu"``, ``"gpu"``, ``"tpu"`` or
    ``"unknown"``. Returns ``(bytes, rule)`` with the rule one of :data:`PEAK_RULES`;
    None on TPU (libtpu's own rule), on an unknown platform, without allocations, when
    a static allocation's value lines are not at hand (a first look), and on GPU
    without live ranges. Raises nothing.
    """
    if not allocations or platform not in ("cpu", "gpu"):
        return None
    table = AllocationTable.of(allocations)
    extras, flags_of, firsts, slot_sizes = (
        table.extras,
        table.flags,
        table.firsts,
        table.slots.sizes,
    )
    static = 0
    temp: set[int] = set()
    for k, flags in enumerate(flags_of):
        extra = extras.get(k) if extras else None
        parameter = None if extra is None else extra[0]
        if not flags & THREAD_LOCAL and (
            parameter is not None or flags & (CONSTANT | MAYBE_LIVE_OUT)
        ):  # is_static
            if firsts[k] == firsts[k + 1]:  # not read (a first look) or not printed: unknown
                return None
            static += max(slot_sizes[firsts[k] : firsts[k + 1]])
        elif parameter is None and not flags & (MAYBE_LIVE_OUT | THREAD_LOCAL | CONSTANT):
            temp.add(table.indexes[k])  # is_preallocated_temp
    if platform == "cpu":
        return static, PEAK_RULE_STATIC
    values = infos if isinstance(infos, Sequence) else list(infos)
    found = rows_of(values)
    if found is None or found[0].slots is None or found[0].ranges is None:
        ranges = [
            (live.start, live.end, slot.size)
            for info in values
            if (slot := info.slot) is not None
            and (live := info.live) is not None
            and slot.allocation in temp
            and not slot.shape.startswith("(")
            and live.start <= live.end
        ]
        any_live = any(info.live is not None for info in values)
    else:
        table_of_values, rows = found
        slots, live_ranges = table_of_values.slots, table_of_values.ranges
        assert slots is not None and live_ranges is not None
        starts, ends = live_ranges.starts, live_ranges.ends
        ranges = [
            (starts[j], ends[j], slots.sizes[k])
            for r in rows
            if (k := table_of_values.slot_rows[r]) >= 0
            and (j := table_of_values.live_rows[r]) >= 0
            and slots.allocations[k] in temp
            and not slots.shapes[k].startswith("(")
            and starts[j] <= ends[j]
        ]
        any_live = any(table_of_values.live_rows[r] >= 0 for r in rows)
    if not ranges and not any_live:
        return None  # no live ranges: the temp heap cannot be rebuilt
    changes: dict[int, int] = {}
    for start, end, size in ranges:
        changes[start] = changes.get(start, 0) + size
        changes[end + 1] = changes.get(end + 1, 0) - size
    usage = heap = 0
    for step in sorted(changes):
        usage += changes[step]
        heap = max(heap, usage)
    return static + heap, PEAK_RULE_STATIC_AND_TEMP
