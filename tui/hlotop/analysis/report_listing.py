"""A memory-usage report's allocations as the front ends list them where the report is
all a module has (``ModuleDump.layout == "report-only"``): what
``BufferAssignment::MemoryUsageReport`` prints of each (FORMATS.md 7), and nothing it
does not.

Era A (jax 0.4.35 .. 0.9.1) heads each allocation's table with its line
(``allocation 37: size 432.0KiB, preallocated-temp:``): its index, rounded size,
colour and kinds. Era B (jax >= 0.9.2) prints the tables alone under each memory
space (``Memory Space: vmem (color=1)``), largest allocation first, and names no
allocation: no index, size or kind. Both list, for each offset of an allocation, the
largest size placed there and the shapes of the values placed there.
"""

from __future__ import annotations

from dataclasses import dataclass

from hlotop.model import BufferAllocation, MemoryUsageReport, ReportAllocation, ReportRow
from hlotop.model.allocation import kinds_text
from hlotop.model.memory_space import xla_space_name
from hlotop.parse.memory_report import allocation_line

# XLA's cut-off of a report's allocation list (GetMemoryUsageReportProto in
# xla/service/buffer_assignment.cc, called with MemoryUsageReport's defaults): past
# MORE_THAN_K allocations, it stops once the rest are under PERCENTILE of the total.
MORE_THAN_K = 50
PERCENTILE = 0.05


@dataclass(frozen=True, slots=True)
class ReportListing:
    """One allocation of a memory-usage report, as listed (see the module's
    docstring). Sizes in bytes."""

    table: ReportAllocation  # as the report prints it: its rows, one per offset
    color: int  # its memory space: era A its line's "color N" (0 without); era B its header's
    space: str  # the space's name: era B the report's label; era A XLA's on the platform
    head: BufferAllocation | None  # era A: its allocation line, read; era B: None
    number: int  # its place in the report's order, from 1 (era B: within its space)

    @property
    def index(self) -> int | None:
        """The allocation's index (era A); None where the report names none (era B)."""
        return self.head.index if self.head is not None else None

    @property
    def size(self) -> int | None:
        """Its size as the report prints it, read back (``432.0KiB`` -> 442368: XLA's
        ``HumanReadableNumBytes`` rounds to 2 or 1 decimals); None in era B."""
        return self.head.size if self.head is not None else None

    @property
    def kinds(self) -> str:
        """``"parameter 2, maybe-live-out"`` (era A); ``""`` in era B."""
        return kinds_text(self.head) if self.head is not None else ""

    @property
    def rows(self) -> tuple[ReportRow, ...]:
        return self.table.rows

    @property
    def cumulative(self) -> str:
        """The last row's ``cumulative_size`` as printed: the sizes at the table's
        offsets added up (each offset's largest value; ``hidden_rows`` rows left out
        of the sum); ``""`` for a table without rows."""
        return self.table.rows[-1].cumulative_size if self.table.rows else ""

    def shapes_text(self, row: ReportRow | None = None) -> str:
        """The shapes of ``row`` (default: the table's first, its largest offset) as
        XLA prints them: ``"f32[256,1024], 2×f32[512,1024]"``; ``""`` with no row."""
        row = row if row is not None else (self.table.rows[0] if self.table.rows else None)
        if row is None:
            return ""
        return ", ".join(shape if n == 1 else f"{n}×{shape}" for n, shape in row.shapes)


def report_listings(report: MemoryUsageReport, platform: str = "unknown") -> list[ReportListing]:
    """The allocations ``report`` lists, in its order (largest first: era A all of
    them, era B each memory space's, colours ascending, each cut off by XLA as
    :func:`cut_off` says). ``platform`` (``"tpu"``, ``"gpu"``, ``"cpu"``) names an era-A
    colour. Raises nothing: an era-A table whose head does not read has ``head`` None."""
    out: list[ReportListing] = []
    if report.era == "B":
        for space in report.memory_spaces:
            for n, table in enumerate(space.allocations, 1):
                out.append(ReportListing(table, space.color, space.name, None, n))
        return out
    for n, table in enumerate(report.allocations, 1):
        head = allocation_line(table.summary, table.line or table.list_line)
        color = head.color if head is not None else 0
        out.append(ReportListing(table, color, xla_space_name(color, platform), head, n))
    return out


def cut_off(report: MemoryUsageReport) -> list[tuple[str, int]]:
    """The memory spaces of an era-B ``report`` whose list XLA may have cut short:
    (name, tables listed) for each that lists more than :data:`MORE_THAN_K`, past which
    XLA stops once the rest are under :data:`PERCENTILE` of the space's total, and
    says nothing of those left out. Era A lists every allocation's table (its short
    list says how many it leaves out: ``hidden_allocations``): []."""
    if report.era != "B":
        return []
    return [
        (s.name, len(s.allocations))
        for s in report.memory_spaces
        if len(s.allocations) > MORE_THAN_K
    ]
