"""The schedule and live ranges (``HloLiveRange::ToString``), in steps.

A step indexes the flattened instruction sequence; ranges are inclusive."""

from __future__ import annotations

from dataclasses import dataclass, field

from hlotop.model.values import ShapeIndex


@dataclass(slots=True, unsafe_hash=True)
class BufferLiveRange:
    """``name{index}:start-end``: the value is live from step start to end inclusive."""

    name: str
    shape_index: ShapeIndex
    start: int
    end: int
    line: int = 0

    @property
    def key(self) -> tuple[str, ShapeIndex]:
        return (self.name, self.shape_index)


@dataclass(frozen=True, slots=True)
class PeakEntry:
    """One line under ``Live ranges at N (peak):``."""

    name: str
    shape_index: ShapeIndex | None  # None in V1 (2021-04 .. 2025-04) lines
    bytes: int
    cumulative: int | None = None  # V3+ only
    line: int = 0  # 1-based, in the file that holds the HloLiveRange block


@dataclass(frozen=True, slots=True)
class PeakUsage:
    """XLA's printed peak: the step and the values it listed as live there."""

    time: int
    entries: tuple[PeakEntry, ...]
    variant: str  # "V1".."V4", see FORMATS.md section 5
    line: int = 0


@dataclass(slots=True)
class StackTraceNode:
    """A node of the ``Stack trace breakdown for peak usage`` tree (bytes)."""

    label: str
    percent: float
    total: int
    current: int
    remaining: int
    depth: int
    line: int = 0
    children: list[StackTraceNode] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StackTrace:
    total: int
    roots: tuple[StackTraceNode, ...]


@dataclass(frozen=True, slots=True)
class HloLiveRange:
    """``HloLiveRange::ToString``: the schedule and each value's live range."""

    max_time: int
    instruction_sequence: tuple[str, ...]
    buffers: tuple[BufferLiveRange, ...]
    peak: PeakUsage | None
    stack_trace: StackTrace | None
    line: int = 0
