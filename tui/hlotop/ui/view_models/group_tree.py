"""The grouped live set as a tree to browse (the grouped view of pane 3), and one
dump's groupings, made on demand and kept.

A :class:`~hlotop.analysis.grouping.Grouping` is flat: one row per combination of its
keys (``("forward", "Block_*/attn")``). :class:`GroupTree` nests it, one level per
key, the values under the last level, as memray's and Bloaty's trees do: each level
sorted by bytes, and the nodes of a level below the threshold (a share of the step's
total) folded into one node, ``N values below X``, which opens to them. A level's
nodes are made when their parent is first opened, so a step with tens of thousands of
values costs no more than the nodes on screen.

No Textual here: the widget (:mod:`hlotop.ui.widgets.grouped_view`) draws the nodes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from hlotop.analysis.grouping import Grouping, GroupRow, group_live_set
from hlotop.analysis.labels import Labeller
from hlotop.analysis.value_order import natural
from hlotop.atomic_write import write_atomically
from hlotop.model import ModuleDump, ValueInfo
from hlotop.report.export import export_directory, to_text, write_groups, write_values
from hlotop.units import human_bytes, with_commas


class TreeRow(Protocol):
    """A row of a tree the views list: its identity and whether it has children."""

    @property
    def key(self) -> tuple: ...

    @property
    def opens(self) -> bool: ...


R = TypeVar("R", bound=TreeRow)

# The grouping keys ``b`` steps through (``B`` types any others).
PRESETS: tuple[tuple[str, ...], ...] = (
    ("phase", "scope"),
    ("scope", "opcode"),
    ("kind", "space"),
    ("source",),
    ("param",),
    ("shape",),
)
# The shares of the step's total under which nodes fold (``t`` raises, ``T`` lowers).
THRESHOLDS = (0.0, 0.001, 0.01, 0.05)
DEFAULT_THRESHOLD = 0.01

Key = tuple  # a node's identity, the same in every grouping: see Node.key


def visible_rows(
    roots: Sequence[R], children: Callable[[R], Sequence[R]], expanded: set
) -> list[R]:
    """The rows of a tree shown when the nodes whose ``key`` is in ``expanded`` are
    open: each node (it has ``key`` and ``opens``), then, if open, ``children(node)``'s
    rows, depth first."""
    out: list[R] = []

    def walk(nodes: Sequence[R]) -> None:
        for node in nodes:
            out.append(node)
            if node.opens and node.key in expanded:
                walk(children(node))

    walk(roots)
    return out


@dataclass(eq=False, slots=True)
class Node:
    """One row of the tree: a group, a node of folded nodes, or a value.

    ``key`` names it the same way in every grouping of the same keys (at another step,
    under the other accounting), so what is open and where the cursor is survive a
    regrouping: ``("g", *prefix)`` for a group, ``("below", *parent prefix)`` for the
    folded nodes of a level, ``("v", value id)`` for a value."""

    key: Key
    kind: str  # "group", "below" or "value"
    label: str
    bytes: int  # counted under the grouping's accounting
    count: int  # values under it
    depth: int
    level: int = 0  # a group: its key's index in the grouping's keys
    rows: tuple[GroupRow, ...] = ()  # a group: the grouping's rows under it
    folded: list[Node] = field(default_factory=list)  # a "below" node: what it holds
    info: ValueInfo | None = None  # a value

    @property
    def opens(self) -> bool:
        return self.kind != "value"


class GroupTree:
    """``grouping`` as a tree; nodes under ``threshold`` (a share of the total, 0:
    none) fold, where at least two of a level do. Each level is sorted by bytes
    (largest first), or ``by_name`` (numbers in names as numbers)."""

    def __init__(self, grouping: Grouping, threshold: float, by_name: bool = False):
        self.grouping = grouping
        self.threshold = threshold
        self.by_name = by_name
        self.limit = int(threshold * grouping.total_bytes)  # bytes below which nodes fold
        self._children: dict[Key, list[Node]] = {}
        self._path: dict[int, tuple[str, ...]] | None = None  # value id -> its group's key
        self.roots = self._level(grouping.rows, 0, 0, ())

    @property
    def total(self) -> int:
        return self.grouping.total_bytes

    def children(self, node: Node) -> list[Node]:
        """The nodes under ``node`` (made on first call)."""
        if node.kind == "below":
            return node.folded
        if node.kind == "value":
            return []
        found = self._children.get(node.key)
        if found is None:
            prefix = node.key[1:]
            found = self._children[node.key] = self._level(
                node.rows, node.level + 1, node.depth + 1, prefix
            )
        return found

    def visible(self, expanded: set[Key]) -> list[Node]:
        """The rows shown when the nodes whose keys are in ``expanded`` are open."""
        return visible_rows(self.roots, self.children, expanded)

    def lineage(self, value_id: int) -> list[Key]:
        """The keys of the nodes that may show value ``value_id``, itself first, then
        the nodes above it up to the top (empty if it is not live at this step)."""
        if self._path is None:
            self._path = {i.value.id: r.key for r in self.grouping.rows for i in r.values}
        path = self._path.get(value_id)
        if path is None:
            return []
        keys: list[Key] = [("v", value_id)]
        for n in range(len(path), 0, -1):
            keys += [("below", *path[:n]), ("g", *path[:n])]
        return [*keys, ("below",)]

    # -- making a level ----------------------------------------------------------------
    def _level(
        self, rows: Sequence[GroupRow], level: int, depth: int, prefix: tuple[str, ...]
    ) -> list[Node]:
        if level < len(self.grouping.keys):
            groups: dict[str, list[GroupRow]] = {}
            for row in rows:
                groups.setdefault(row.key[level], []).append(row)
            nodes = [
                Node(
                    ("g", *prefix, label),
                    "group",
                    label,
                    sum(r.bytes for r in members),
                    sum(len(r.values) for r in members),
                    depth,
                    level,
                    rows=tuple(members),
                )
                for label, members in groups.items()
            ]
            nodes.sort(key=(lambda n: natural(n.label)) if self.by_name else _by_bytes)
        else:
            counted = self.grouping.bytes_of
            values = sorted(
                (info for row in rows for info in row.values),
                key=lambda i: -counted[i.value.id],  # stable: XLA's order among equals
            )
            nodes = [
                Node(
                    ("v", i.value.id), "value", i.value.label, counted[i.value.id], 1, depth, info=i
                )
                for i in values
            ]
            if self.by_name:
                nodes.sort(key=lambda n: natural(n.label))
        return self._fold(nodes, depth, prefix)

    def _fold(self, nodes: list[Node], depth: int, prefix: tuple[str, ...]) -> list[Node]:
        small = [n for n in nodes if n.bytes < self.limit]
        # Two at least (one node stands for itself), and not all (opening a group to
        # find one node holding all it holds shows nothing).
        if 2 <= len(small) < len(nodes):
            nodes = [n for n in nodes if n.bytes >= self.limit]
            for n in small:
                n.depth += 1
            count = sum(n.count for n in small)
            groups = "" if small[0].kind == "value" else f" ({len(small)} groups)"
            nodes.append(
                Node(
                    ("below", *prefix),
                    "below",
                    f"{with_commas(count)} values below {human_bytes(self.limit)}{groups}",
                    sum(n.bytes for n in small),
                    count,
                    depth,
                    folded=small,
                )
            )
        return nodes


def _by_bytes(node: Node) -> tuple:
    return (-node.bytes, node.label)


class Groupings:
    """One dump's groupings of the live set, by (step, keys, accounting), made on
    demand and the last few kept. Safe to use from a worker thread and the UI thread
    at once. The first one makes the dump's :class:`Labeller`, which reads every
    value's op_name (seconds at 100 MB): call :meth:`get` off the UI thread."""

    def __init__(self, dump: ModuleDump, keep: int = 16):
        self.dump = dump
        self._keep = keep
        self._labeller: Labeller | None = None
        self._lock = threading.Lock()  # the kept groupings (held for microseconds)
        self._making = threading.Lock()  # the labeller (held while it is made: seconds)
        self._made: OrderedDict[tuple, Grouping] = OrderedDict()

    @property
    def labelled(self) -> bool:
        """Whether the labeller is made (groupings then take milliseconds, not seconds)."""
        return self._labeller is not None

    def labeller(self) -> Labeller:
        with self._making:
            if self._labeller is None:
                self._labeller = Labeller(self.dump)
            return self._labeller

    def cached(self, step: int, keys: tuple[str, ...], accounting: str) -> Grouping | None:
        with self._lock:
            found = self._made.get((step, keys, accounting))
            if found is not None:
                self._made.move_to_end((step, keys, accounting))
            return found

    def get(self, step: int, keys: tuple[str, ...], accounting: str) -> Grouping:
        """:func:`~hlotop.analysis.grouping.group_live_set` of ``step``, ``keys`` and
        ``accounting``, kept. Raises what it raises (ValueError)."""
        found = self.cached(step, keys, accounting)
        if found is not None:
            return found
        grouping = group_live_set(self.dump, keys, step, accounting, labeller=self.labeller())
        with self._lock:
            self._made[(step, keys, accounting)] = grouping
            while len(self._made) > self._keep:
                self._made.popitem(last=False)
        return grouping


def export_name(module: str, step: int, keys: tuple[str, ...] | None, accounting: str) -> str:
    """``hlotop-<module>-step<N>-<keys or values>-<accounting>.csv``, with what a file
    name should not hold (a path separator, a space, a control character) as ``_``."""
    what = "-".join(keys) if keys else "values"
    name = f"hlotop-{module}-step{step}-{what}-{accounting}.csv"
    return "".join(c if c.isalnum() or c in "-_.,+" else "_" for c in name)


def export_csv(
    groupings: Groupings,
    step: int,
    keys: tuple[str, ...],
    accounting: str,
    grouped: bool,
    dump_path: str,
) -> tuple[Path, str]:
    """Write the live set at ``step`` as CSV into
    :func:`~hlotop.report.export.export_directory` of ``dump_path`` (never the dump's
    folder), atomically: one row a group of ``keys`` if ``grouped``, else one row a
    value. Returns the file and what it holds (``"15 groups"``). Slow the first time
    (see :class:`Groupings`). Raises OSError (not written) or ValueError (no live set)."""
    grouping = groupings.get(step, keys, accounting)
    if grouped:
        text, rows = to_text(write_groups, grouping), f"{with_commas(len(grouping.rows))} groups"
    else:
        text = to_text(write_values, grouping, groupings.labeller())
        rows = f"{with_commas(len(grouping.bytes_of))} values"
    name = export_name(groupings.dump.name, step, keys if grouped else None, accounting)
    return write_atomically(export_directory(dump_path) / name, text), rows
