"""The allocation tree: every BufferAllocation (largest first, or by index), each one
expandable to the values packed into it.

Rows are (allocation, value slot or None): a view of the order, with the value rows
of the few expanded allocations after each, that reads no allocation before its row
is shown (a first look's are read from their lines, a dump's made from its columns),
rebuilt on expand/collapse; only the visible ones are rendered, so 10^6 allocations
open as fast as 10. Its column widths and order come
from :mod:`hlotop.ui.view_models.tree_layout`.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import overload

from rich.text import Text

from hlotop.analysis.value_filter import Matches
from hlotop.model import (
    AllocationsInOrder,
    AllocationTable,
    BufferAllocation,
    ModuleDump,
    ValueSlot,
)
from hlotop.model.memory_space import space_names
from hlotop.safe_text import drawn
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.selection import SelectionOwner
from hlotop.ui.view_models.spaces import space_label
from hlotop.ui.view_models.tree_layout import SIZE_W, TreeLayout, kinds_text, sorted_allocations
from hlotop.ui.widgets.filter_bar import filter_note
from hlotop.ui.widgets.legend import plain, space_style
from hlotop.ui.widgets.row_list import RowList
from hlotop.units import human_bytes, with_commas

_index = attrgetter("index")
_shape = attrgetter("shape")


class _AllocationRows(Sequence[tuple[BufferAllocation, None]]):
    """The rows of allocations in ``order`` with none expanded, each allocation read
    when its row is (a first look's are read from their lines on first use)."""

    def __init__(self, order: Sequence[BufferAllocation]):
        self.order = order

    def __len__(self) -> int:
        return len(self.order)

    @overload
    def __getitem__(self, k: int) -> tuple[BufferAllocation, None]: ...
    @overload
    def __getitem__(self, k: slice) -> list[tuple[BufferAllocation, None]]: ...
    def __getitem__(self, k: int | slice):
        if isinstance(k, slice):
            return [(a, None) for a in self.order[k]]
        return (self.order[k], None)


class _ExpandedRows(Sequence[tuple[BufferAllocation, ValueSlot | None]]):
    """The rows of allocations in ``order``, each expanded one's value rows after it
    (``expanded``: its place in the order, the allocation and its value rows shown),
    each allocation read when its row is."""

    def __init__(
        self,
        order: Sequence[BufferAllocation],
        expanded: list[tuple[int, BufferAllocation, Sequence[ValueSlot]]],
    ):
        self.order = order
        self.expanded = sorted(expanded, key=lambda e: e[0])
        self.starts: list[int] = []  # the row of each expanded allocation
        self.before: list[int] = []  # value rows above the row after its own
        inserted = 0
        for place, _, slots in self.expanded:
            self.starts.append(place + inserted)
            inserted += len(slots)
            self.before.append(inserted)
        self.inserted = inserted

    def __len__(self) -> int:
        return len(self.order) + self.inserted

    @overload
    def __getitem__(self, k: int) -> tuple[BufferAllocation, ValueSlot | None]: ...
    @overload
    def __getitem__(self, k: slice) -> list[tuple[BufferAllocation, ValueSlot | None]]: ...
    def __getitem__(self, k: int | slice):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError("row out of range")
        i = bisect_right(self.starts, k) - 1  # the last expanded allocation from here up
        if i < 0:
            return (self.order[k], None)
        _, alloc, slots = self.expanded[i]
        offset = k - self.starts[i]
        if offset == 0:
            return (alloc, None)
        if offset <= len(slots):
            return (alloc, slots[offset - 1])
        return (self.order[k - self.before[i]], None)


class AllocationTree(RowList):
    """Allocations with their values. Tells its owner (:mod:`hlotop.ui.base.selection`) of the
    value the cursor is on (or the one value of an allocation holding exactly one), else
    of the allocation."""

    BINDINGS = bindings("allocations")

    def __init__(
        self,
        dump: ModuleDump,
        *,
        id: str | None = "allocations",
        layout: TreeLayout | None = None,
        owner: SelectionOwner | None = None,
    ):
        """``layout``: :meth:`TreeLayout.of` ``dump``, if it was made beforehand (off
        the UI thread: at 100 MB it takes a fifth of a second). ``owner``: who is told
        of the user's choices (None: nobody)."""
        super().__init__(id=id, classes="pane")
        self.dump = dump
        self.owner = owner
        self.names = space_names(dump)
        self.by_size = True
        self.matches: Matches | None = None  # the filter (f): the allocations it keeps
        self._kept_rows: tuple[Matches, set[int]] | None = None  # its rows of the table
        self.expanded: set[int] = set()
        self._auto: int | None = None  # expanded to show a selection, not by the user
        self._order: Sequence[BufferAllocation] = []
        # allocation index -> its place in the order (made on first use: 58 000 rows'
        # map, 9 ms, is not needed for the first screen)
        self._positions: Mapping[int, int] | None = {}
        # A list, or (none expanded) a view of the order that reads no allocation
        # before its row is asked for
        self._rows: Sequence[tuple[BufferAllocation, ValueSlot | None]] = []
        self._values_w: dict[int, int] = {}  # widest value row of an allocation, when asked
        self._widest = 0  # the widest rows shown so far (content_width never shrinks)
        layout = layout if layout is not None else TreeLayout.of(dump)
        self._set_widths(layout)
        self._sort(layout.by_size)

    def _set_widths(self, layout: TreeLayout) -> None:
        self._idx_w, self._space_w, self._alloc_w = layout.idx_w, layout.space_w, layout.alloc_w
        self._id_w, self._label_w, self._off_w = layout.id_w, layout.label_w, layout.off_w
        # The canvas widens when an allocation whose value rows are wider is expanded.
        self._fixed_w = 4 + self._id_w + 1 + self._label_w + 3 + self._off_w + 2 + SIZE_W + 2
        self._values_w.clear()

    def relayout(self, layout: TreeLayout) -> None:
        """Take the column widths of ``layout`` (:meth:`TreeLayout.of` the dump, read
        whole: a first look, completed), keeping the rows and the cursor."""
        self._set_widths(layout)
        self.rows_changed()

    def let_go(self) -> None:
        """Drop the rows (a removed tree: its allocations can then be freed)."""
        self._order, self._rows = [], []
        self._positions = {}
        self._kept_rows = None
        self._values_w.clear()

    # -- rows ---------------------------------------------------------------------
    def _sort(self, by_size: Sequence[BufferAllocation] | None = None) -> None:
        """Order the rows (``by_size``: that order, already sorted)."""
        allocs: Sequence[BufferAllocation]
        if self.by_size and by_size is not None:
            allocs = by_size
        else:
            allocs = sorted_allocations(self.dump.allocations, self.by_size)
        matches = self.matches
        if matches is not None:
            if isinstance(allocs, AllocationsInOrder) and isinstance(allocs.lines, AllocationTable):
                if self._kept_rows is None or self._kept_rows[0] is not matches:
                    self._kept_rows = (matches, matches.kept_rows(allocs.lines))
                rows = self._kept_rows[1]
                allocs = AllocationsInOrder(
                    allocs.lines, array("q", filter(rows.__contains__, allocs.order))
                )
            else:
                keeps = matches.keeps_allocation
                allocs = [a for a in allocs if keeps(a)]
        self._order = allocs
        self._positions = None
        self._rebuild()

    def _slots(self, alloc: BufferAllocation) -> Sequence[ValueSlot]:
        """The value rows of ``alloc`` when expanded: those the filter keeps."""
        if self.matches is None or not alloc.values:
            return alloc.values
        ids = self.matches.ids
        kept = [s for s in alloc.values if s.value.id in ids]
        return kept or alloc.values  # kept by its own fields: all its values

    def set_filter(self, matches: Matches | None) -> None:
        """Show only the allocations holding a value ``matches`` keeps, expanded to
        those values (None: every allocation); the cursor stays on its row if kept."""
        here = self.current()
        self.matches = matches
        self.expanded = {i for i in self.expanded if self._kept(i)}
        if self._auto not in self.expanded:
            self._auto = None
        self._sort()
        if here is not None and here[0].index in self._position:
            alloc, slot = here
            ids = [s.value.id for s in self._slots(alloc)]
            self._move_to(alloc.index, slot.value.id if slot and slot.value.id in ids else None)
        else:
            self.set_cursor(0)
            self.hide_selection()

    def _kept(self, alloc_index: int) -> bool:
        alloc = self.dump.analysis.allocation_of.get(alloc_index)
        return alloc is not None and (self.matches is None or self.matches.keeps_allocation(alloc))

    @property
    def _position(self) -> Mapping[int, int]:
        """Allocation index -> its place in the row order (made on first use: over the
        order's columns where it has them)."""
        if self._positions is None:
            allocs = self._order
            if isinstance(allocs, AllocationsInOrder):
                self._positions = allocs.places()
            else:
                self._positions = {index: i for i, index in enumerate(map(_index, allocs))}
        return self._positions

    def _rebuild(self) -> None:
        self._lay_out_rows()
        self._update_title()
        self.rows_changed()

    def _lay_out_rows(self) -> None:
        """The rows of the order, the (few) expanded allocations' value rows with them."""
        if not self.expanded:
            self._rows = _AllocationRows(self._order)
            return
        expanded = []
        for index in self.expanded:
            at = self._position[index]
            alloc = self._order[at]
            expanded.append((at, alloc, self._slots(alloc)))
        self._rows = _ExpandedRows(self._order, expanded)

    def row_of(self, alloc_index: int) -> int:
        """Row of allocation ``alloc_index``: its place in the order, plus the value
        rows of the expanded allocations above it (few, so this is quick)."""
        pos = self._position[alloc_index]
        by_index = self.dump.analysis.allocation_of
        return pos + sum(
            len(self._slots(by_index[i])) for i in self.expanded if self._position[i] < pos
        )

    def _set_expanded(self, alloc_index: int, expanded: bool) -> None:
        """Show or hide one allocation's value rows (the rows laid out again: a view
        of the order, no allocation read)."""
        if (alloc_index in self.expanded) == expanded:
            return
        if expanded:
            self.expanded.add(alloc_index)
        else:
            self.expanded.discard(alloc_index)
        self._lay_out_rows()
        if self._auto == alloc_index:
            self._auto = None
        self.rows_changed()

    def _update_title(self) -> None:
        order = "by size" if self.by_size else "by index"
        # The first look at a big dump has every allocation, not yet their values.
        loading = " · values: loading…" if self.dump.preview is not None else ""
        count = with_commas(len(self._order))
        shown = (
            f"{count} of {with_commas(len(self.dump.allocations))}"
            if self.matches is not None
            else count
        )
        self.border_title = f"1 Allocations ({shown}, {order}){loading}{filter_note(self.matches)}"
        self.border_subtitle = "s: sort by " + ("index" if self.by_size else "size")

    def row_count(self) -> int:
        return len(self._rows)

    def row(self, index: int) -> tuple[BufferAllocation, ValueSlot | None]:
        """Row ``index`` (0 to :meth:`row_count` less one) as shown: its allocation, and
        the value slot of a value row (None on the allocation's own row)."""
        return self._rows[index]

    def content_width(self) -> int:
        # Never narrower than the widest rows shown so far: were it to shrink when the
        # cursor's allocation folds, the horizontal scrollbar would come and go on each
        # move, and each time Textual lays the whole screen out again (30-60 ms on a
        # big dump).
        width = max([self._alloc_w, self._widest] + [self._value_rows_w(i) for i in self.expanded])
        self._widest = width
        return width

    def _value_rows_w(self, alloc_index: int) -> int:
        width = self._values_w.get(alloc_index)
        if width is None:
            values = self.dump.analysis.allocation_of[alloc_index].values
            width = self._values_w[alloc_index] = self._fixed_w + max(
                map(len, map(_shape, values)), default=0
            )
        return width

    def pinned_lines(self) -> list[Text]:
        if self.matches is not None and not self._order:
            return [Text("No allocation holds a value the filter matches (esc clears it).")]
        return []

    def header_lines(self) -> list[Text]:
        text = Text(no_wrap=True)
        text.append(
            f"  {'#':>{self._idx_w}}  {'size':>{SIZE_W}}  {'space':<{self._space_w}}  kinds"
        )
        return [text]

    def render_row(self, index: int) -> Text:
        alloc, slot = self.row(index)
        return self._alloc_text(alloc) if slot is None else self._slot_text(slot)

    def _alloc_text(self, alloc: BufferAllocation) -> Text:
        text = Text(no_wrap=True, end="")
        if alloc.values:
            text.append("▾ " if alloc.index in self.expanded else "▸ ", style="dim")
        else:
            text.append("  ")
        text.append(f"{alloc.index:>{self._idx_w}}  ")
        text.append(f"{human_bytes(alloc.size):>{SIZE_W}}", style="bold")
        text.append("  ")
        style = space_style(alloc.color, plain(self))
        text.append(f"{space_label(alloc.color, self.names):<{self._space_w}}", style=style)
        text.append("  " + kinds_text(alloc))
        n = len(alloc.values)
        if self.matches is not None and n:
            kept = len(self._slots(alloc))
            if kept != n:
                text.append(f"  ({kept} of {n} values)", style="dim")
                return text
        if n != 1 and self.dump.preview is None:  # a first look has no values yet
            text.append(f"  ({with_commas(n)} values)", style="dim")
        return text

    def _slot_text(self, slot: ValueSlot) -> Text:
        text = Text(no_wrap=True, end="")
        text.append("    ")
        text.append(f"{slot.value.id:>{self._id_w}} ", style="dim")
        label = drawn(slot.value.label)
        if len(label) > self._label_w:
            label = label[: self._label_w - 1] + "…"
        text.append(
            f"{label:<{self._label_w}}",
            style=space_style(self.dump.analysis.by_id[slot.value.id].color, plain(self))
            if slot.value.id in self.dump.analysis.by_id
            else "",
        )
        text.append(f"  @{slot.offset:<{self._off_w}}", style="dim")
        text.append(f"  {human_bytes(slot.size):>{SIZE_W}}  ")
        text.append(drawn(slot.shape), style="italic")
        return text

    # -- selection ----------------------------------------------------------------
    def cursor_moved(self, index: int) -> None:
        self._tell_owner(index, open_detail=False)

    def _tell_owner(self, index: int, open_detail: bool) -> None:
        if not self._rows or self.owner is None:
            return
        alloc, slot = self._rows[index]
        if slot is None and len(alloc.values) == 1:
            slot = alloc.values[0]
        if slot is not None:
            self.owner.select_value(slot.value.id, self.id, open_detail=open_detail)
        else:
            self.owner.highlight_allocation(alloc.index, self.id, open_detail=open_detail)

    def current(self) -> tuple[BufferAllocation, ValueSlot | None] | None:
        return self._rows[self.cursor] if self._rows else None

    def show_value(self, value_id: int) -> bool:
        """Expand to value ``value_id`` and put the cursor on it (no message).
        Returns False when no allocation holds it."""
        info = self.dump.analysis.by_id.get(value_id)
        if info is None or info.slot is None or info.slot.allocation not in self._position:
            self.hide_selection()  # in no allocation, or in one the filter leaves out
            return False
        if self.matches is not None and value_id not in self.matches:
            self.hide_selection()  # its allocation is kept for another value
            return False
        alloc_index = info.slot.allocation
        if alloc_index not in self.expanded:
            # Expanded for the selection, not by the user: folded again by the next one.
            previous = self._auto
            if previous is not None and previous != alloc_index:
                self._set_expanded(previous, False)
            self._set_expanded(alloc_index, True)
            self._auto = alloc_index
        self._move_to(alloc_index, value_id)
        return True

    def show_allocation(self, alloc_index: int) -> bool:
        """Put the cursor on allocation ``alloc_index`` (no telling the owner), folding
        the allocation unfolded for the previous selection. Returns False when there
        is no such allocation."""
        if alloc_index not in self._position:
            self.hide_selection()
            return False
        if self._auto is not None and self._auto != alloc_index:
            self._set_expanded(self._auto, False)
        self._move_to(alloc_index, None)
        return True

    def _move_to(self, alloc_index: int, value_id: int | None) -> None:
        row = self.row_of(alloc_index)
        if value_id is not None and alloc_index in self.expanded:
            values = self._slots(self.dump.analysis.allocation_of[alloc_index])
            row += 1 + next((i for i, s in enumerate(values) if s.value.id == value_id), -1)
        self.place_cursor(max(0, min(row, len(self._rows) - 1)), center=True)

    def cycle_sort(self) -> str:
        """Sort by size or by index, the other one (``s``); returns it."""
        self.toggle_sort()
        return "size" if self.by_size else "index"

    def toggle_sort(self) -> None:
        here = self.current()
        self.by_size = not self.by_size
        self._sort()
        if here is not None:
            alloc, slot = here
            self._move_to(alloc.index, slot.value.id if slot else None)

    # -- actions ------------------------------------------------------------------
    def action_activate(self) -> None:
        here = self.current()
        if here is None:
            return
        alloc, slot = here
        if slot is not None:
            self._tell_owner(self.cursor, open_detail=True)
        elif alloc.index in self.expanded:
            self.action_collapse()
        else:
            self.action_expand()

    def action_expand(self) -> None:
        here = self.current()
        if here is None:
            return
        alloc, slot = here
        if self.dump.preview is not None:
            self.notify("The values are still loading: they come with the whole dump.")
            return
        if slot is not None or not alloc.values:
            return
        if alloc.index in self.expanded:
            self._auto = None if self._auto == alloc.index else self._auto
            self.set_cursor(self.cursor + 1, notify=True)
            return
        self._set_expanded(alloc.index, True)
        self._move_to(alloc.index, None)

    def action_collapse(self) -> None:
        here = self.current()
        if here is None:
            return
        alloc, slot = here
        if alloc.index not in self.expanded:
            return
        self._set_expanded(alloc.index, False)
        self._move_to(alloc.index, None)
        if slot is not None:
            self.cursor_moved(self.cursor)
