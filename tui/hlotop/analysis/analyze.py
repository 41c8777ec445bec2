"""Memory analysis of a parsed dump: pure functions over :mod:`hlotop.model`.

Two sizes matter for every value, and hlotop keeps them apart:

* **logical bytes**: ``ShapeUtil::ByteSizeOf(value shape, 8)``, tiling padding
  ignored. XLA's printed peak lists (V2+) and the stack-trace totals use these.
* **allocated bytes**: the ``size=`` of the value's slot in its allocation, which
  includes TPU tiling padding (``f32[]{:T(128)}`` takes 512 bytes for 4 logical).

XLA picks the peak step with a third: the *defining instruction's* shape (a tuple
instruction counts 8 bytes per element), see :func:`xla_peak_step`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from hlotop.analysis.memory_stats import memory_stats, peak_memory_in_bytes
from hlotop.analysis.occupancy import Occupancy
from hlotop.analysis.peak import (
    live_bytes_per_step,
    live_set,
    live_steps,
    occupied_bytes,
    xla_peak_step,
)
from hlotop.analysis.platform import platform_of
from hlotop.analysis.totals import kind_totals, totals_by_color
from hlotop.analysis.values import ValuesBeforeLiveRanges, join_values
from hlotop.model import (
    AllocationTable,
    Analysis,
    BufferAllocation,
    CurveOnFirstRead,
    Diagnostic,
    MemorySpace,
    OnFirstRead,
    ParsedSections,
    ValueInfo,
    ValuesById,
)
from hlotop.model.figures import NO_LIVE_RANGES
from hlotop.model.memory_space import report_space_names, xla_space_name

__all__ = [  # the analysis, and the pieces of it other layers and tests use
    "Analysis",
    "BeforeLiveRanges",
    "ValueInfo",
    "analyze",
    "join_values",
    "kind_totals",
    "live_bytes_per_step",
    "live_set",
    "memory_stats",
    "occupied_bytes",
    "totals_by_color",
    "xla_peak_step",
]


class BeforeLiveRanges:
    """What :func:`analyze` works out from a dump's allocations, records and module
    text alone, made while its live ranges are still being read (on another core, see
    :mod:`hlotop.loading.ahead`): the values joined and sized
    (:class:`~hlotop.analysis.values.ValuesBeforeLiveRanges`), the totals by kind and
    by colour, the padding and JAX's ``memory_analysis()`` figures.

    ``sections``: the dump read so far; its allocations, ``Used values`` records,
    stack frames and input/output aliases must be the very objects of the sections
    later handed to :func:`analyze` (else they are worked out again). Raises nothing."""

    def __init__(self, sections: ParsedSections):
        self.sections = sections
        self.values = ValuesBeforeLiveRanges(sections)
        allocations = self.values.allocations  # the sections' (an AllocationTable)
        # allocation index -> allocation, made when looked up
        self.allocation_of = allocations.by_index()
        self.by_kind = kind_totals(allocations)
        self.by_color = totals_by_color(allocations)
        self.padding = self.values.padding()
        self.memory_stats = memory_stats(allocations, sections.input_output_alias)

    def holds(self, sections: ParsedSections) -> bool:
        """Whether this was made from the same allocations, records, frames and aliases
        as ``sections``."""
        mine = self.sections
        return (
            mine.allocations is sections.allocations
            and mine.used_values is sections.used_values
            and mine.stack_frames is sections.stack_frames
            and mine.input_output_alias is sections.input_output_alias
        )


def analyze(
    sections: ParsedSections,
    diagnostics: list[Diagnostic] | None = None,
    path: str = "",
    before: BeforeLiveRanges | None = None,
) -> Analysis:
    """Derive every figure hlotop shows from the parsed sections; ``before``, if given
    and made from these sections (:meth:`BeforeLiveRanges.holds`), is used (once) for
    what it holds. Raises nothing."""
    if before is None or not before.holds(sections):
        before = BeforeLiveRanges(sections)
    infos = before.values.join(sections.live_range, diagnostics, path)
    live = sections.live_range
    max_time = live.max_time if live else 0
    if live is not None:
        max_time = max(max_time, max(live.buffers.ends, default=max_time))
        # A schedule has a step per instruction; a damaged header or range end far
        # beyond what is listed would size the curve (and the timeline) by it.
        plausible = 4 * (len(live.instruction_sequence) + len(live.buffers)) + 1024
        if max_time > plausible:
            if diagnostics is not None:
                diagnostics.append(
                    Diagnostic(
                        path,
                        live.line,
                        f"the schedule ends at step "
                        f"{max_time}, far beyond the "
                        f"{len(live.instruction_sequence)} steps and "
                        f"{len(live.buffers)} live ranges listed; steps "
                        f"after {plausible} are not shown",
                        "warning",
                    )
                )
            max_time = plausible
    # Worked out when first read: a report that shows no curve never does.
    curve = CurveOnFirstRead(lambda: live_bytes_per_step(infos, max_time)) if live else []
    peak_step: int | None = None
    peak_bytes = 0  # unknown (see the source): no live ranges, no peak
    source: str | None = NO_LIVE_RANGES
    peak_values: list[ValueInfo] = []
    if live is not None:
        # Every step swept, unless a damaged range is far from the rest.
        last = max(max(live.buffers.starts, default=0), max(live.buffers.ends, default=0))
        peak_step, sweep_bytes = xla_peak_step(
            live_steps(infos, "sweep"), last if last <= plausible else None
        )
        peak_values = live_set(infos, peak_step)
        printed = live.peak
        if printed is not None and printed.time == peak_step:
            peak_bytes, source = sum(printed.entries.bytes), "list"
        else:
            peak_bytes, source = sweep_bytes, "sweep"
    allocations = before.values.allocations
    allocation_of = before.allocation_of
    occupancy = Occupancy(infos, allocation_of, max_time) if live else None
    by_kind = before.by_kind
    platform = platform_of(path, allocations)
    stats = before.memory_stats
    if stats is not None and (peak := peak_memory_in_bytes(allocations, infos, platform)):
        stats = replace(stats, peak_memory_in_bytes=peak[0], peak_memory_rule=peak[1])
    return Analysis(
        values=infos,
        by_id=ValuesById(infos),
        max_time=max_time,
        live_bytes=curve,
        peak_step=peak_step,
        peak_bytes=peak_bytes,
        peak_values=peak_values,
        peak_occupied_bytes=occupied_bytes(peak_values),
        totals_by_kind=by_kind[0],
        allocations_by_kind=by_kind[1],
        totals_by_color=before.by_color,
        allocation_of=allocation_of,
        peak_bytes_source=source,
        peak_logical_bytes=sum(i.logical_bytes for i in peak_values),
        platform=platform,
        memory_stats=stats,
        memory_spaces=memory_spaces(
            allocations,
            before.by_color,
            before.padding,
            occupancy.peaks() if occupancy is not None else {},
            platform,
            report_space_names(sections.memory_usage_report),
        ),
        occupied_bytes=OnFirstRead(occupancy.curves) if occupancy is not None else {},
    )


def memory_spaces(
    allocations: Sequence[BufferAllocation],
    totals: Mapping[int, int],
    padding: Mapping[int, int],
    peaks: Mapping[int, tuple[int | None, int]],
    platform: str,
    dump_names: dict[int, str],
) -> tuple[MemorySpace, ...]:
    """Each memory space that has an allocation, colours ascending, with its totals,
    the peak of its occupied bytes and its padding (see :class:`MemorySpace`).
    ``totals``: bytes by colour (:func:`totals_by_color`); ``padding``: tiling padding
    by colour (:func:`padding_by_color`); ``peaks``: (step, bytes) of each colour's
    occupied bytes (:meth:`Occupancy.peaks`; none without live ranges);
    ``dump_names`` are the memory-usage report's labels. Raises nothing."""
    count: dict[int, int] = {}
    for color in AllocationTable.of(allocations).colors:
        count[color] = count.get(color, 0) + 1
    out = []
    for color in sorted(count):
        step, top = peaks.get(color, (None, 0))
        out.append(
            MemorySpace(
                color=color,
                name=xla_space_name(color, platform),
                dump_name=dump_names.get(color),
                total_bytes=totals[color],
                allocations=count[color],
                peak_step=step,
                peak_bytes=top,
                padding_bytes=padding.get(color, 0),
            )
        )
    return tuple(out)
