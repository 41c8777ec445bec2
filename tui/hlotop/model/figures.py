"""The figures hlotop derives from a dump, joined per value: the result types that
:mod:`hlotop.analysis` computes and the views read. Bytes are ints; steps index the
schedule."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from hlotop.model.allocation import BufferAllocation
from hlotop.model.value_table import ValueInfo, ValueTable, source_of, stack_of

__all__ = [
    "NO_LIVE_RANGES",
    "Analysis",
    "MemorySpace",
    "MemoryStats",
    "ValueInfo",
    "ValuesById",
    "source_of",
    "stack_of",
]


@dataclass(frozen=True, slots=True)
class MemoryStats:
    """JAX's ``compiled.memory_analysis()`` sizes (bytes), worked out from the
    allocations by XLA's own rule (``CompiledMemoryStats::
    PopulateBufferStatsFromAllocations``, ``xla/pjrt/compiled_memory_stats.cc``): an
    allocation counts as host memory when its memory space is 5, else as device memory;
    argument = entry parameters, alias = parameters aliased with an output, output =
    maybe-live-out, temp = the rest that is neither constant nor thread-local. The
    field names are JAX's."""

    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    host_argument_size_in_bytes: int
    host_output_size_in_bytes: int
    host_alias_size_in_bytes: int
    host_temp_size_in_bytes: int
    # Where the aliasing came from: "input_output_alias" (the module's HLO text beside
    # the dump) or "parameter and maybe-live-out" (the allocation lines alone).
    alias_source: str = "parameter and maybe-live-out"
    # jax >= 0.11's peak_memory_in_bytes by XLA's rule (analysis.memory_stats.
    # peak_memory_in_bytes), and which form of it applies: "static" (CPU: arguments,
    # constants and outputs), "static+temp" (GPU: those and the temp heap's peak); None
    # where the rule is not XLA's public one (TPU: libtpu's) or cannot be applied.
    peak_memory_in_bytes: int | None = None
    peak_memory_rule: str | None = None

    FIELDS = (
        "argument_size_in_bytes",
        "output_size_in_bytes",
        "alias_size_in_bytes",
        "temp_size_in_bytes",
        "host_argument_size_in_bytes",
        "host_output_size_in_bytes",
        "host_alias_size_in_bytes",
        "host_temp_size_in_bytes",
    )

    def as_dict(self) -> dict[str, int]:
        """``{JAX field name: bytes}`` for the eight sizes, in JAX's order."""
        return {name: getattr(self, name) for name in self.FIELDS}


@dataclass(frozen=True, slots=True)
class MemorySpace:
    """One memory space (colour) of a module and its figures, in bytes and steps."""

    color: int
    name: str  # XLA's name for the colour on the module's platform (model.memory_space)
    dump_name: str | None  # the label the dump's memory-usage report gives it, if any
    total_bytes: int  # the sizes of its allocations
    allocations: int
    # The maximum of its occupied bytes over the schedule (slices in use, a slice
    # shared by several values once, tiling padding included) and the earliest step
    # it is reached; None and 0 without live ranges.
    peak_step: int | None
    peak_bytes: int
    padding_bytes: int  # its slices' sizes minus the logical bytes placed in them


class ValuesById(Mapping[int, ValueInfo]):
    """Value id -> its :class:`ValueInfo`, over the values sorted by id (as
    :attr:`Analysis.values` is): a bisection in an array of the ids, a tenth of a
    dict's memory over 10^5 values. Read-only."""

    __slots__ = ("_values", "_made")

    def __init__(self, values: Sequence[ValueInfo]):
        """``values``: sorted by value id, each id once. Their ids are laid out when
        first looked up (a report may never look one up)."""
        self._values = values
        self._made: array[int] | None = None

    @property
    def _ids(self) -> array[int]:
        ids = self._made
        if ids is None:  # made twice at worst, by two threads at once: the same array
            values = self._values
            if isinstance(values, ValueTable):
                ids = self._made = values.ids
            else:
                ids = self._made = array("q", [v.value.id for v in values])
        return ids

    def _at(self, value_id: object) -> int:
        if isinstance(value_id, int):
            ids = self._ids
            i = bisect_left(ids, value_id)
            if i < len(ids) and ids[i] == value_id:
                return i
        return -1

    def __getitem__(self, value_id: int) -> ValueInfo:
        i = self._at(value_id)
        if i < 0:
            raise KeyError(value_id)
        return self._values[i]

    def get(self, value_id: int, default=None):
        i = self._at(value_id)
        return self._values[i] if i >= 0 else default

    def __contains__(self, value_id: object) -> bool:
        return self._at(value_id) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._values)


# Analysis.peak_bytes_source of a dump without live ranges (a memory-usage report alone,
# a -buffer-assignment.txt without its -live-range.txt, a dump from before 2021-04):
# no peak step, so XLA's peak figure is unknown.
NO_LIVE_RANGES = "no-live-ranges"


@dataclass(slots=True)
class Analysis:
    """The derived figures of one module. Bytes are ints; steps index the schedule."""

    values: Sequence[ValueInfo]  # sorted by value id (a ValueTable)
    by_id: Mapping[int, ValueInfo]  # a ValuesById
    max_time: int  # the schedule's end; steps run 0..max_time inclusive
    # logical bytes live at each step 0..max_time (an array, or worked out when first
    # read: a CurveOnFirstRead)
    live_bytes: Sequence[int]
    peak_step: int | None  # XLA's peak step, computed (None without live ranges)
    # XLA's peak figure: the sum of its printed "Live ranges at N (peak)" list, or where
    # the dump has none, its sweep's bytes at the peak step (see peak_bytes_source).
    peak_bytes: int
    peak_values: list[ValueInfo]  # live at the peak, XLA's order (bytes desc, name, index)
    peak_occupied_bytes: int  # allocation space those values occupy (shared slices once)
    totals_by_kind: dict[str, int]  # each allocation once, under its first kind
    allocations_by_kind: dict[str, int]  # how many allocations of each kind, likewise
    totals_by_color: dict[int, int]
    # allocation index -> allocation (a dict; the first look's reads them on first use)
    allocation_of: Mapping[int, BufferAllocation] = field(default_factory=dict)
    # "list" (XLA's printed peak list), "sweep" (no list: XLA's sweep), NO_LIVE_RANGES
    # (no peak step: peak_bytes is unknown, 0 here, null in --json) or None (not said:
    # a first look).
    peak_bytes_source: str | None = None
    peak_logical_bytes: int = 0  # logical bytes of the values live at the peak step
    platform: str = "unknown"  # "tpu", "gpu", "cpu" or "unknown" (model.memory_space)
    memory_stats: MemoryStats | None = None  # None without allocations
    memory_spaces: tuple[MemorySpace, ...] = ()  # colours ascending
    # Occupied bytes of each memory space at each step 0..max_time ({} without live
    # ranges): never above the space's total_bytes. Worked out when first read
    # (OnFirstRead): see settle().
    occupied_bytes: Mapping[int, Sequence[int]] = field(default_factory=dict)

    def settle(self) -> None:
        """Work out now what is otherwise worked out when first read (the live and
        occupied bytes at every step: about 0.2 s at 100 MB): for a loading thread, so
        that a UI thread that draws them never waits. Raises nothing."""
        len(self.live_bytes)
        len(self.occupied_bytes)
