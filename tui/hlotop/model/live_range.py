"""The schedule and live ranges (``HloLiveRange::ToString``), in steps.

A step indexes the flattened instruction sequence; ranges are inclusive."""

from __future__ import annotations

import threading
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from hlotop.model.column_rows import ColumnRows
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


class PeakEntries(ColumnRows[PeakEntry]):
    """The lines of a ``Live ranges at N (peak):`` list as columns (``names``,
    ``shape_indexes``, ``bytes``, ``cumulatives``, ``lines``), each a
    :class:`PeakEntry` when first read as one."""

    MAKE = PeakEntry
    FIELDS = ("names", "shape_indexes", "bytes", "cumulatives", "lines")
    NUMBERS = frozenset({"bytes", "lines"})
    INTERNED = frozenset({"names"})
    __slots__ = FIELDS
    names: list[str]
    shape_indexes: list[ShapeIndex | None]
    bytes: array[int]
    cumulatives: list[int | None]
    lines: array[int]


@dataclass(frozen=True, slots=True)
class PeakUsage:
    """XLA's printed peak: the step and the values it listed as live there
    (``entries``: :class:`PeakEntries`; given any sequence of :class:`PeakEntry`, its
    columns are taken)."""

    time: int
    entries: PeakEntries
    variant: str  # "V1".."V4", see FORMATS.md section 5
    line: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.entries, PeakEntries):
            object.__setattr__(self, "entries", PeakEntries.of(self.entries))


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


class StackTrace:
    """The ``Stack trace breakdown for peak usage`` tree: its ``total`` (bytes) and its
    ``roots``. Made from the roots, or (as the parser makes it,
    :meth:`of_columns`) from its nodes' columns in pre-order: then the nodes are made
    when the roots are first read, once, from any thread."""

    __slots__ = ("total", "_roots", "_columns", "_lock")

    def __init__(self, total: int, roots: Iterable[StackTraceNode] = ()):
        self.total = total
        self._roots: tuple[StackTraceNode, ...] | None = tuple(roots)
        self._columns: tuple[tuple, array[int]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def of_columns(cls, total: int, columns: tuple, parents: array[int]) -> StackTrace:
        """The tree whose nodes are ``columns`` (label, percent, total, current,
        remaining, depth and line, one item a node, in pre-order), each under the node
        at its position in ``parents`` (-1: a root)."""
        tree = cls(total)
        tree._roots, tree._columns = None, (columns, parents)
        return tree

    @property
    def roots(self) -> tuple[StackTraceNode, ...]:
        roots = self._roots
        if roots is None:
            with self._lock:
                roots = self._roots
                if roots is None and self._columns is not None:
                    columns, parents = self._columns
                    nodes = list(map(StackTraceNode, *columns))
                    made: list[StackTraceNode] = []
                    for node, parent in zip(nodes, parents, strict=True):
                        (made if parent < 0 else nodes[parent].children).append(node)
                    roots = self._roots = tuple(made)
        assert roots is not None
        return roots

    def last_node(self) -> tuple[int, int] | None:
        """``(remaining bytes, line)`` of the tree's last node in pre-order, the last
        line XLA printed of it: its ``remaining`` is 0 in a whole tree (each node's is
        the total less the ``current`` bytes printed so far), more in one whose lines
        stop early. None for a tree with no node. Makes no node."""
        columns = self._columns
        if self._roots is None and columns is not None:
            remaining, lines = columns[0][4], columns[0][6]
            return (remaining[-1], lines[-1]) if len(remaining) else None
        if not self.roots:
            return None
        node = self.roots[-1]
        while node.children:
            node = node.children[-1]
        return node.remaining, node.line

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StackTrace):
            return NotImplemented
        return self.total == other.total and self.roots == other.roots

    def __hash__(self) -> int:
        return hash((self.total, len(self.roots)))

    def __repr__(self) -> str:
        return f"StackTrace(total={self.total!r}, roots={self.roots!r})"

    def __reduce__(self):
        # Pickled as columns in pre-order, each node with its parent's position (-1: a
        # root): a worker process hands a parsed block back.
        if self._columns is not None and self._roots is None:
            return _stack_trace, (self.total, *self._columns)
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


def _stack_trace(total: int, columns: tuple, parents: array[int]) -> StackTrace:
    return StackTrace.of_columns(total, columns, parents)


class LiveRanges(ColumnRows[BufferLiveRange]):
    """The ``BufferLiveRange`` lines of a schedule, as columns: ``names``,
    ``shape_indexes``, and ``starts``, ``ends`` (inclusive steps) and ``lines`` (1-based)
    as ``array("q")``; each a :class:`BufferLiveRange` when first read as one
    (:class:`~hlotop.model.column_rows.ColumnRows`)."""

    MAKE = BufferLiveRange
    FIELDS = ("names", "shape_indexes", "starts", "ends", "lines")
    NUMBERS = frozenset({"starts", "ends", "lines"})
    INTERNED = frozenset({"names"})
    __slots__ = FIELDS
    names: list[str]
    shape_indexes: list[ShapeIndex]
    starts: array[int]
    ends: array[int]
    lines: array[int]

    def row(self, k: int) -> BufferLiveRange:
        """Row ``k`` as a :class:`BufferLiveRange`: the one made already if it was read
        as one, else a new one, not kept (a value's, :class:`~hlotop.model.ValueInfo`:
        a dump of 10^6 values would keep 10^6 of them)."""
        objects = self._objects
        if objects is not None:
            return objects[k]
        one = self._some.get(k)
        if one is not None:
            return one
        return BufferLiveRange(
            self.names[k], self.shape_indexes[k], self.starts[k], self.ends[k], self.lines[k]
        )


@dataclass(frozen=True, slots=True)
class HloLiveRange:
    """``HloLiveRange::ToString``: the schedule and each value's live range
    (``buffers``: :class:`LiveRanges`; given any sequence of :class:`BufferLiveRange`,
    its columns are taken)."""

    max_time: int
    instruction_sequence: tuple[str, ...]
    buffers: LiveRanges
    peak: PeakUsage | None
    stack_trace: StackTrace | None
    line: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.buffers, LiveRanges):
            object.__setattr__(self, "buffers", LiveRanges.of(self.buffers))

    def __reduce__(self):
        # Pickled with the live ranges as columns (LiveRanges), as PeakUsage is.
        head = (self.max_time, self.instruction_sequence, self.line)
        return _live_range, (head, self.buffers, self.peak, self.stack_trace)


def _live_range(
    head: tuple[int, tuple[str, ...], int],
    buffers: LiveRanges,
    peak: PeakUsage | None,
    stack: StackTrace | None,
) -> HloLiveRange:
    max_time, sequence, line = head
    return HloLiveRange(max_time, sequence, buffers, peak, stack, line)
