"""What the diff browser (``hlotop diff OLD NEW``) shows, made off the UI thread and
kept: the :class:`~hlotop.analysis.diff.ModuleDiff`, the change by group for any
grouping keys (each side's live set at its own XLA peak), the values of each group,
the groups as a tree, and both sides' occupied curves resampled to a width.

No Textual here: the widgets (``hlotop.ui.widgets.diff_*``) draw it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hlotop.analysis.diff import (
    CLASSES,
    GroupDelta,
    ModuleDiff,
    ValueChange,
    diff_modules,
    group_deltas,
)
from hlotop.analysis.grouping import Grouping, group_live_set
from hlotop.analysis.labels import Labeller
from hlotop.loading.loader import load
from hlotop.model import ModuleDump
from hlotop.report.diff_report import NEW_LARGE_SHARE, resample
from hlotop.ui.view_models.group_tree import visible_rows

# The values list's filters (``c`` steps through those with values).
FILTERS = ("all", *CLASSES)
CURVE_SPACE = 0  # the occupied curve drawn: memory space 0 (HBM, default)


@dataclass(frozen=True, slots=True)
class GroupValue:
    """A value change under a group: its index in ``ModuleDiff.changes`` and the bytes
    each side counts in this group at its peak (0 where that side's value is not live
    there, or is in another group)."""

    change: int
    old_bytes: int
    new_bytes: int

    @property
    def delta_bytes(self) -> int:
        return self.new_bytes - self.old_bytes


@dataclass(frozen=True, slots=True)
class DiffGroups:
    """The change by group for ``keys``: ``deltas`` as ``ModuleDiff.groups`` (sorted by
    the absolute change), ``values`` each group's value changes, largest change first."""

    keys: tuple[str, ...]
    deltas: tuple[GroupDelta, ...]
    values: dict[tuple[str, ...], tuple[GroupValue, ...]]


class DiffData:
    """``diff`` and what the browser derives from it. ``groups`` is safe to call from a
    worker thread and the UI thread at once."""

    def __init__(self, diff: ModuleDiff, old_path: str = "", new_path: str = "", *, labellers=None):
        self.diff = diff
        self.old_path, self.new_path = old_path, new_path
        old, new = diff.old.module, diff.new.module
        self._labellers: tuple[Labeller, Labeller] = labellers or (Labeller(old), Labeller(new))
        self._lock = threading.Lock()
        self._groups: dict[tuple[str, ...], DiffGroups] = {}
        changes = diff.changes
        self.old_index = {c.old.value.id: i for i, c in enumerate(changes) if c.old is not None}
        self.new_index = {c.new.value.id: i for i, c in enumerate(changes) if c.new is not None}
        order = {name: n for n, name in enumerate(CLASSES)}
        # Every change, the largest absolute change in allocated bytes first.
        self.by_delta: tuple[int, ...] = tuple(
            sorted(
                range(len(changes)),
                key=lambda i: (-abs(changes[i].delta_bytes), order[changes[i].change], i),
            )
        )
        self.counts = Counter(c.change for c in changes)

    @property
    def changes(self) -> tuple[ValueChange, ...]:
        return self.diff.changes

    @property
    def unchanged(self) -> bool:
        """Nothing differs: the figures, every value (matched, unchanged) and group."""
        d = self.diff
        figures = (
            d.old.total_bytes == d.new.total_bytes
            and d.old.peak_bytes == d.new.peak_bytes
            and d.old.peak_step == d.new.peak_step
            and d.old.memory_stats == d.new.memory_stats
            and d.old.space_peaks == d.new.space_peaks
        )
        values = all(c.change == "unchanged" for c in d.changes)
        return figures and values and not any(g.delta_bytes for g in d.groups)

    def filtered(self, name: str) -> tuple[int, ...]:
        """The changes of class ``name`` (``all``: every one), largest first."""
        if name == "all":
            return self.by_delta
        return tuple(i for i in self.by_delta if self.changes[i].change == name)

    def next_filter(self, name: str) -> str:
        """The filter after ``name`` in :data:`FILTERS` that has values."""
        at = FILTERS.index(name)
        for step in range(1, len(FILTERS) + 1):
            candidate = FILTERS[(at + step) % len(FILTERS)]
            if candidate == "all" or self.counts.get(candidate):
                return candidate
        return "all"

    def cached_groups(self, keys: Sequence[str]) -> DiffGroups | None:
        with self._lock:
            return self._groups.get(tuple(keys))

    def groups(self, keys: Sequence[str]) -> DiffGroups:
        """The change by group for ``keys`` (kept). The first call for any keys reads
        every value's op_name on both sides (see ``Labeller``). Raises ValueError for an
        unknown key."""
        keys = tuple(keys)
        found = self.cached_groups(keys)
        if found is not None:
            return found
        made = self._make_groups(keys)
        with self._lock:
            self._groups[keys] = made
        return made

    def _make_groups(self, keys: tuple[str, ...]) -> DiffGroups:
        d = self.diff
        old, new = d.old.module, d.new.module
        if old.analysis.peak_step is None or new.analysis.peak_step is None:
            return DiffGroups(keys, (), {})
        lo, ln = self._labellers
        before = group_live_set(old, keys, accounting=d.accounting, labeller=lo)
        after = group_live_set(new, keys, accounting=d.accounting, labeller=ln)
        deltas = d.groups if keys == d.keys else tuple(group_deltas(before, after))
        return DiffGroups(keys, deltas, self._group_values(before, after))

    def _group_values(
        self, before: Grouping, after: Grouping
    ) -> dict[tuple[str, ...], tuple[GroupValue, ...]]:
        counted: dict[tuple[str, ...], dict[int, list[int]]] = {}
        for grouping, index, side in ((before, self.old_index, 0), (after, self.new_index, 1)):
            for row in grouping.rows:
                here = counted.setdefault(row.key, {})
                for info in row.values:
                    i = index.get(info.value.id)
                    if i is not None:
                        here.setdefault(i, [0, 0])[side] += grouping.bytes_of[info.value.id]
        out = {}
        for key, found in counted.items():
            values = [GroupValue(i, old, new) for i, (old, new) in found.items()]
            values.sort(
                key=lambda v: (-abs(v.delta_bytes), -max(v.old_bytes, v.new_bytes), v.change)
            )
            out[key] = tuple(values)
        return out

    # -- the curves ------------------------------------------------------------------
    def curves(self, width: int) -> tuple[list[int], list[int]]:
        """Both sides' occupied bytes of memory space 0, each resampled to ``width``
        columns over its own schedule (``resample``: a column's maximum); empty lists
        when a side has no live ranges."""
        old = self.diff.old.module.analysis.occupied_bytes.get(CURVE_SPACE, [])
        new = self.diff.new.module.analysis.occupied_bytes.get(CURVE_SPACE, [])
        if not old or not new or width <= 0:
            return [], []
        return resample(old, width), resample(new, width)


def column_steps(steps: int, width: int, col: int) -> tuple[int, int]:
    """The first and last schedule step column ``col`` of ``width`` covers in a curve of
    ``steps`` steps (as :func:`~hlotop.report.diff_report.resample` cuts it)."""
    first = col * steps // width
    return first, max(first + 1, (col + 1) * steps // width) - 1


def load_diff(
    old_path: str,
    new_path: str,
    keys: Sequence[str] = ("phase", "scope"),
    accounting: str = "logical",
    stage: Callable[[str], object] | None = None,
) -> DiffData:
    """Load both compiles (lazily), compare them and group the change by ``keys``;
    ``stage(text)`` is told what is being done. Raises ``LoadError`` for a side that is
    not a dump, ValueError for unknown keys or accounting."""

    def say(text: str) -> None:
        if stage is not None:
            stage(text)

    say(f"reading OLD: {old_path}")
    old = load(old_path, lazy=True)
    say(f"reading NEW: {new_path}")
    new = load(new_path, lazy=True)
    return compare(old, new, keys, accounting, old_path, new_path, stage=say)


def compare(
    old: ModuleDump,
    new: ModuleDump,
    keys: Sequence[str] = ("phase", "scope"),
    accounting: str = "logical",
    old_path: str = "",
    new_path: str = "",
    stage: Callable[[str], object] | None = None,
) -> DiffData:
    """:func:`load_diff` for two modules already loaded."""
    if stage is not None:
        stage("matching the values of both compiles")
    diff = diff_modules(old, new, tuple(keys), accounting)
    data = DiffData(diff, old_path or old.name, new_path or new.name)
    if stage is not None:
        stage("grouping both live sets")
    data.groups(diff.keys)
    return data


# -- the groups as a tree ---------------------------------------------------------------
Key = tuple  # a node's identity: ("g", *prefix) for a group, ("v", *group, index) a value


@dataclass(eq=False, slots=True)
class DiffNode:
    """One row of the tree: a group (a prefix of the keys) or a value change in one."""

    key: Key
    kind: str  # "group" or "value"
    label: str
    old: int
    new: int
    depth: int
    level: int = 0  # a group: its key's index in the grouping keys
    scale: int = 0  # the largest absolute change among its siblings: a full bar
    rows: tuple[GroupDelta, ...] = ()  # a group: the groups of the last level under it
    change: int | None = None  # a value: its index in ModuleDiff.changes
    large_new: bool = False  # a group only in NEW, at least NEW_LARGE_SHARE of its peak

    @property
    def delta(self) -> int:
        return self.new - self.old

    @property
    def opens(self) -> bool:
        return self.kind == "group"


def _by_change(node: DiffNode) -> tuple:
    return (-abs(node.delta), node.label)


class DiffTree:
    """``groups`` nested, one level per key, each level sorted by the absolute change;
    the last level opens to its values. Levels are made when first opened."""

    def __init__(self, data: DiffData, groups: DiffGroups):
        self.data = data
        self.groups = groups
        self.large = data.diff.new.peak_bytes * NEW_LARGE_SHARE
        self._children: dict[Key, list[DiffNode]] = {}
        self.roots = self._level(groups.deltas, 0, ())

    def children(self, node: DiffNode) -> list[DiffNode]:
        if not node.opens:
            return []
        found = self._children.get(node.key)
        if found is None:
            prefix = tuple(node.key[1:])
            if node.level + 1 < len(self.groups.keys):
                found = self._level(node.rows, node.level + 1, prefix)
            else:
                found = self._values(prefix, node.depth + 1)
            self._children[node.key] = found
        return found

    def visible(self, expanded: set[Key]) -> list[DiffNode]:
        """The rows shown when the nodes whose keys are in ``expanded`` are open."""
        return visible_rows(self.roots, self.children, expanded)

    def _level(
        self, rows: Sequence[GroupDelta], level: int, prefix: tuple[str, ...]
    ) -> list[DiffNode]:
        members: dict[str, list[GroupDelta]] = {}
        for row in rows:
            members.setdefault(row.key[level], []).append(row)
        nodes = []
        for label, under in members.items():
            old, new = sum(r.old_bytes for r in under), sum(r.new_bytes for r in under)
            nodes.append(
                DiffNode(
                    ("g", *prefix, label),
                    "group",
                    label,
                    old,
                    new,
                    level,
                    level,
                    rows=tuple(under),
                    large_new=not any(r.in_old for r in under) and new >= self.large and new > 0,
                )
            )
        nodes.sort(key=_by_change)
        return _scaled(nodes)

    def _values(self, key: tuple[str, ...], depth: int) -> list[DiffNode]:
        changes = self.data.changes
        nodes = []
        for v in self.groups.values.get(key, ()):
            c = changes[v.change]
            names = [info.value.label for info in (c.old, c.new) if info is not None]
            label = names[0] if len(set(names)) == 1 else " → ".join(names)
            nodes.append(
                DiffNode(
                    ("v", *key, v.change),
                    "value",
                    label,
                    v.old_bytes,
                    v.new_bytes,
                    depth,
                    change=v.change,
                )
            )
        return _scaled(nodes)


def _scaled(nodes: list[DiffNode]) -> list[DiffNode]:
    largest = max((abs(n.delta) for n in nodes), default=0)
    for n in nodes:
        n.scale = largest
    return nodes
