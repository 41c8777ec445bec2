"""The allocation tree's layout: its column widths and its rows by size, worked out in
one pass over a dump's allocations and values (off the UI thread, before the widget
is made: :class:`hlotop.ui.screens.main.PaneIndexes`); a row's kinds text is
:func:`hlotop.model.allocation.kinds_text`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import add, attrgetter

from hlotop.model import (
    AllocationLines,
    AllocationTable,
    BufferAllocation,
    ModuleDump,
    ValueSlots,
    format_shape_index,
)
from hlotop.model.allocation import kinds_text
from hlotop.model.memory_space import space_names
from hlotop.ui.view_models.columns import longest
from hlotop.ui.view_models.spaces import space_label

SIZE_W = 9  # "999.99MiB"
_index = attrgetter("index")
_size = attrgetter("size")
_value_id = attrgetter("value.id")
_offset = attrgetter("offset")
# What the length of kinds_text depends on, but for the parameter number's digits (a
# parameter has a ShapeIndex and nothing else has: see allocation_parts).
_kinds_key = attrgetter(
    "parameter_shape_index",
    "output_shape",
    "is_constant",
    "is_thread_local",
    "maybe_live_out",
    "is_preallocated_temp",
)
__all__ = ["SIZE_W", "TreeLayout", "kinds_text", "sorted_allocations"]
_LABEL_MAX = 40
_FIRST_ROWS = 200  # a first look's rows its layout reads (see TreeLayout.of)


def _digits(parameter: int | None) -> int:
    return 0 if parameter is None else len(str(parameter))


def sorted_allocations(
    allocs: Sequence[BufferAllocation], by_size: bool
) -> Sequence[BufferAllocation]:
    """``allocs`` by index, or largest first (equal sizes by index); a first look's
    :class:`~hlotop.model.AllocationLines` or a dump's
    :class:`~hlotop.model.AllocationTable` sorted by their columns, none read."""
    if isinstance(allocs, (AllocationLines, AllocationTable)):
        return allocs.in_order(by_size)
    out = sorted(allocs, key=_index)
    if by_size:
        out.sort(key=_size, reverse=True)  # stable: equal sizes stay by index
    return out


@dataclass(frozen=True, slots=True)
class TreeLayout:
    """The allocation tree's column widths (characters) and its rows by size: one pass
    over every allocation and value of a dump, which a thread can make ahead of the
    widget."""

    idx_w: int
    space_w: int
    alloc_w: int
    id_w: int
    label_w: int
    off_w: int
    by_size: Sequence[BufferAllocation]

    @classmethod
    def of(cls, dump: ModuleDump) -> TreeLayout:
        """One pass over ``dump``'s allocations and values (100k of them at 100 MB); of
        a first look's :class:`~hlotop.model.AllocationLines`, over their columns and
        the :data:`_FIRST_ROWS` largest allocations only (the rest are not read yet: the
        look, completed, is laid out again)."""
        names = space_names(dump)
        allocs = dump.allocations
        by_size = sorted_allocations(allocs, True)
        indexes: Iterable[int]
        colors: Iterable[int]
        if isinstance(allocs, AllocationLines):
            indexes, colors = allocs.indexes, allocs.colors
            widest = _widest_kinds(by_size[:_FIRST_ROWS])
        elif isinstance(allocs, AllocationTable):  # over its columns, none made
            indexes, colors = allocs.indexes, allocs.colors
            widest = _widest_kinds_of(allocs)
        else:
            indexes, colors = map(_index, allocs), {a.color for a in allocs}
            widest = _widest_kinds(allocs)
        idx_w = len(str(max(indexes, default=0)))
        space_w = max((len(space_label(c, names)) for c in set(colors)), default=7)
        alloc_w = 2 + idx_w + 2 + SIZE_W + 2 + space_w + 2 + widest if allocs else 0
        if isinstance(allocs, AllocationTable):
            columns = allocs.slots if not dump.preview else ValueSlots()
            ids: Sequence[int] = columns.ids
            labels: Iterable[int] = map(
                add, map(len, columns.names), map(_index_len, columns.shape_indexes)
            )
            offsets: Iterable[int] = columns.offsets
            any_slot = len(columns) > 0
        else:
            slots = [s for a in allocs for s in a.values] if not dump.preview else []
            ids = list(map(_value_id, slots))
            labels = (len(s.value.label) for s in slots)
            offsets = map(_offset, slots)
            any_slot = bool(slots)
        id_w = max(len(str(max(ids, default=0))), len(str(min(ids, default=0))))
        label_w = longest(labels, _LABEL_MAX, 0) if any_slot else 4
        off_w = len(str(max(offsets, default=0)))
        return cls(idx_w, space_w, alloc_w, id_w, label_w, off_w, by_size)


def _index_len(index: tuple[int, ...] | None) -> int:
    """``len(format_shape_index(index))``."""
    return 0 if index is None else len(format_shape_index(index))


def _widest_kinds_of(table: AllocationTable) -> int:
    """:func:`_widest_kinds` of every allocation of ``table``, from its columns: an
    allocation is made for the first row of each kind of row only."""
    kinds_w: dict[tuple, int] = {}
    widest = 0
    extras, firsts = table.extras, table.firsts
    for k, flags in enumerate(table.flags):
        extra = extras.get(k)
        key = (flags, None, None) if extra is None else (flags, extra[2], extra[3])
        w = kinds_w.get(key)
        if w is None:
            a = table[k]
            w = kinds_w[key] = len(kinds_text(a)) - _digits(a.parameter)
        if extra is not None and extra[0] is not None:
            w += len(str(extra[0]))
        n = firsts[k + 1] - firsts[k]
        if w + 12 + len(str(n)) > widest:  # the widest this row can be
            widest = max(widest, w + (0 if n == 1 else 12 + len(str(n))))
    return widest


def _widest_kinds(allocs: Iterable[BufferAllocation]) -> int:
    """The widest kinds text of ``allocs``' rows, with their values count."""
    # _kinds_key -> length of kinds_text without the parameter number, worked out
    # once (a dump has a few of them over 10^5 allocations)
    kinds_w: dict[tuple, int] = {}
    widest = 0
    for a in allocs:
        key = _kinds_key(a)
        k = kinds_w.get(key)
        if k is None:
            k = kinds_w[key] = len(kinds_text(a)) - _digits(a.parameter)
        if a.parameter is not None:
            k += len(str(a.parameter))
        n = len(a.values)
        if k + 12 + len(str(n)) > widest:  # the widest this row can be
            widest = max(widest, k + (0 if n == 1 else 12 + len(str(n))))
    return widest
