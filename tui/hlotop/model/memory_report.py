"""``BufferAssignment::MemoryUsageReport`` as the dump prints it (sizes read back)."""

from __future__ import annotations

from dataclasses import dataclass


# Not frozen: a frozen dataclass sets each field through object.__setattr__,
# three times the cost, and a big dump makes 10^4 of these (hashable all the same).
@dataclass(slots=True, unsafe_hash=True)
class ReportRow:
    """A row of a memory-usage-report table: the values at one offset of an allocation."""

    cumulative_size: str  # human-readable, as printed
    percent: float
    size: str
    offset: int
    used_by_n_values: int
    shapes: tuple[tuple[int, str], ...]  # (count, shape without layout)
    line: int = 0  # 1-based, in the report's file


# Not frozen: a frozen dataclass sets each field through object.__setattr__,
# three times the cost, and a big dump makes 10^4 of these (hashable all the same).
@dataclass(slots=True, unsafe_hash=True)
class ReportAllocation:
    """An allocation as the memory-usage report lists it (sizes are approximate bytes,
    read back from XLA's human-readable text). Era B tables name no allocation:
    ``index`` -1, ``size`` 0, ``summary`` ""."""

    index: int
    size: int
    summary: str  # the allocation line as printed
    rows: tuple[ReportRow, ...] = ()
    hidden_rows: int = 0  # "The rest N values are less than ..."
    line: int = 0  # 1-based: its header under "...with their values:" (era A), or its
    # table's column line (era B); 0 if the report has neither
    list_line: int = 0  # 1-based: its row under "Allocations sorted by size:" (era A)


@dataclass(frozen=True, slots=True)
class MemorySpaceReport:
    name: str
    color: int
    total_bytes: int
    allocations: tuple[ReportAllocation, ...]


@dataclass(frozen=True, slots=True)
class MemoryUsageReport:
    """``BufferAssignment::MemoryUsageReport``: era ``"A"`` (2024-10..2026-03) lists
    allocations; era ``"B"`` (2026-03 on) groups them by memory space."""

    era: str
    total_bytes: int | None  # its "Total bytes used" (era A; None in era B)
    allocations: tuple[ReportAllocation, ...] = ()
    hidden_allocations: int = 0
    memory_spaces: tuple[MemorySpaceReport, ...] = ()

    @property
    def total(self) -> int | None:
        """The report's total in bytes: era A its ``Total bytes used``; era B the sum of
        its memory spaces' ``Total bytes``, which is the same figure (XLA adds every
        allocation's size into its colour's total, ``GetMemoryUsageReportProto`` in
        ``xla/service/buffer_assignment.cc``, as ``ValuesToString`` adds them all into
        ``Total bytes used``). None when the report prints neither."""
        if self.era == "B" and self.memory_spaces:
            return sum(s.total_bytes for s in self.memory_spaces)
        return self.total_bytes

    def listed(self) -> int:
        """How many allocations the report lists: era A's, era B's tables."""
        if self.era == "B":
            return sum(len(s.allocations) for s in self.memory_spaces)
        return len(self.allocations)
