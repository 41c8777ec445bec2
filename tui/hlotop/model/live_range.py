"""The schedule and live ranges (``HloLiveRange::ToString``), in steps.

A step indexes the flattened instruction sequence; ranges are inclusive."""

from __future__ import annotations

import sys
from array import array
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


# Not frozen: a frozen dataclass sets each field through object.__setattr__,
# three times the cost, and a big dump makes 10^4 of these (hashable all the same).
@dataclass(slots=True, unsafe_hash=True)
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

    def __reduce__(self):
        # Pickled as columns (a worker process hands a parsed block back): 10^4 entries
        # go across in milliseconds, not a tenth of a second as objects.
        e = self.entries
        columns = (
            [x.name for x in e],
            [x.shape_index for x in e],
            array("q", [x.bytes for x in e]),
            [x.cumulative for x in e],
            array("q", [x.line for x in e]),
        )
        return _peak_usage, (self.time, columns, self.variant, self.line)


def _peak_usage(time: int, columns: tuple, variant: str, line: int) -> PeakUsage:
    names, *rest = columns
    return PeakUsage(time, tuple(map(PeakEntry, map(sys.intern, names), *rest)), variant, line)


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
    """The ``Stack trace breakdown for peak usage`` tree (bytes)."""

    total: int
    roots: tuple[StackTraceNode, ...]

    def __reduce__(self):
        # Pickled as columns in pre-order, each node with its parent's position (-1: a
        # root), as PeakUsage is.
        nodes: list[StackTraceNode] = []
        parents = array("q")
        todo = [(root, -1) for root in reversed(self.roots)]
        while todo:
            node, parent = todo.pop()
            parents.append(parent)
            nodes.append(node)
            here = len(nodes) - 1
            todo.extend((child, here) for child in reversed(node.children))
        columns = (
            [n.label for n in nodes],
            [n.percent for n in nodes],
            array("q", [n.total for n in nodes]),
            array("q", [n.current for n in nodes]),
            array("q", [n.remaining for n in nodes]),
            array("q", [n.depth for n in nodes]),
            array("q", [n.line for n in nodes]),
        )
        return _stack_trace, (self.total, columns, parents)


def _stack_trace(total: int, columns: tuple, parents: array) -> StackTrace:
    nodes = list(map(StackTraceNode, *columns))
    roots: list[StackTraceNode] = []
    for node, parent in zip(nodes, parents, strict=True):
        (roots if parent < 0 else nodes[parent].children).append(node)
    return StackTrace(total, tuple(roots))


@dataclass(frozen=True, slots=True)
class HloLiveRange:
    """``HloLiveRange::ToString``: the schedule and each value's live range."""

    max_time: int
    instruction_sequence: tuple[str, ...]
    buffers: tuple[BufferLiveRange, ...]
    peak: PeakUsage | None
    stack_trace: StackTrace | None
    line: int = 0

    def __reduce__(self):
        # Pickled with the live ranges as columns, as PeakUsage is.
        b = self.buffers
        columns = (
            [r.name for r in b],
            [r.shape_index for r in b],
            array("q", [r.start for r in b]),
            array("q", [r.end for r in b]),
            array("q", [r.line for r in b]),
        )
        head = (self.max_time, self.instruction_sequence, self.line)
        return _live_range, (head, columns, self.peak, self.stack_trace)


def _live_range(
    head: tuple[int, tuple[str, ...], int],
    columns: tuple,
    peak: PeakUsage | None,
    stack: StackTrace | None,
) -> HloLiveRange:
    max_time, sequence, line = head
    # Names interned again, as the parser does: shared with the values' names.
    names, *rest = columns
    buffers = tuple(map(BufferLiveRange, map(sys.intern, names), *rest))
    sequence = tuple(map(sys.intern, sequence))
    return HloLiveRange(max_time, sequence, buffers, peak, stack, line)
