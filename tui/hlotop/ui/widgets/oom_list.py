"""The buffers an out-of-memory report lists, as a list with a cursor: sorted by size,
op_name or shape, filtered as you type, grouped by scope or shape
(:mod:`hlotop.analysis.oom_entries`). A Line API
:class:`~hlotop.ui.widgets.row_list.RowList`.

A row is a buffer: its rank as printed, size as printed, shape, instruction (the XLA
label's name, or the GPU opcode), the value of the dump it was linked to (``--dump``)
and its op_name; or, grouped, a group: its label, bytes, share of the listed bytes and
how many buffers, its buffers under it (Enter closes and opens it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message

from hlotop.analysis.oom_entries import (
    SORTS,
    EntryGroup,
    entry_matches,
    group_entries,
    sorted_entries,
)
from hlotop.analysis.oom_link import OomLink, shape_without_layout
from hlotop.model.oom import OomReport
from hlotop.report.oom_report import instruction_text
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import keys
from hlotop.ui.view_models.columns import longest
from hlotop.ui.widgets.row_list import RowList
from hlotop.ui.widgets.summary_bar import middle_ellipsis
from hlotop.units import human_bytes

# The keys of the OOM view the screen handles (the others move the cursor).
SCREEN_ACTIONS = frozenset(
    ("cycle_sort", "cycle_group", "filter", "clear_or_quit", "next_message", "whole_text")
)
_SHAPE_MOST = 32
_NAME_MOST = 24  # the instruction and the linked value's columns
_GROUP_W = 40  # a group's label before its figures


@dataclass(frozen=True, slots=True)
class OomRow:
    """A row: a buffer (``entry``: its index in the report's entries) or a group
    (``group``) and how deep it is."""

    entry: int | None = None
    group: EntryGroup | None = None
    depth: int = 0


class OomList(RowList):
    """``report``'s buffers, linked to ``links`` (one per entry, or empty): sorted by
    :attr:`sort`, grouped by :attr:`group` (None: flat) and filtered by
    :attr:`filter`. Posts :class:`Highlighted` when the cursor moves and
    :class:`Chosen` on Enter on a buffer."""

    BINDINGS = [
        k.binding()
        for k in keys("oom")
        if k.action not in SCREEN_ACTIONS and k.action != "back_to_modules"
    ]

    class Highlighted(Message):
        """The cursor moved to ``row`` (None: the list is empty)."""

        def __init__(self, row: OomRow | None):
            super().__init__()
            self.row = row

    class Chosen(Message):
        """Enter on buffer ``entry`` (its index in the report's entries)."""

        def __init__(self, entry: int):
            super().__init__()
            self.entry = entry

    def __init__(self, *, id: str | None = "oom-list"):
        super().__init__(id=id)
        self.report: OomReport | None = None
        self.links: Sequence[OomLink | None] = ()
        self.sort = SORTS[0]
        self.group: str | None = None
        self.filter = ""
        self.closed: set[str] = set()  # the labels of the groups closed
        self.rows: list[OomRow] = []
        self.shown = 0  # buffers that pass the filter
        self._cells: list[tuple[str, str, str, str, str, str]] = []
        self._widths = (0, 0, 0, 0, 0)

    # -- state ----------------------------------------------------------------------
    def show_report(self, report: OomReport, links: Sequence[OomLink | None]) -> None:
        """List ``report``'s buffers (the sort, grouping and filter kept)."""
        self.report, self.links = report, links
        self.closed.clear()
        self._cells = [self._cells_of(i) for i in range(len(report.entries))]
        cells = self._cells
        self._widths = (
            longest((len(c[0]) for c in cells), 6, 1),
            longest((len(c[1]) for c in cells), 16, len("size")),
            longest((len(c[2]) for c in cells), _SHAPE_MOST, len("shape")),
            longest((len(c[3]) for c in cells), _NAME_MOST, len("instruction")),
            longest((len(c[4]) for c in cells), _NAME_MOST, len("value")) if links else 0,
        )
        self.cursor = 0
        self._rebuild()

    def set_sort(self, sort: str) -> None:
        self.sort = sort
        self._rebuild(keep=True)

    def set_group(self, group: str | None) -> None:
        self.group = group
        self.closed.clear()
        self._rebuild(keep=True)

    def set_filter(self, text: str) -> None:
        self.filter = text
        self._rebuild(keep=True)

    def current(self) -> OomRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def link(self, entry: int) -> OomLink | None:
        return self.links[entry] if entry < len(self.links) else None

    def _rebuild(self, keep: bool = False) -> None:
        """The rows again; ``keep``: the cursor on the same buffer or group if shown."""
        was = self.current() if keep else None
        report = self.report
        entries = report.entries if report is not None else ()
        passing = [
            i for i in range(len(entries)) if entry_matches(entries[i], self.link(i), self.filter)
        ]
        self.shown = len(passing)
        rows: list[OomRow] = []
        if self.group is None:
            rows = [OomRow(entry=i) for i in sorted_entries(entries, self.sort, passing)]
        else:
            for g in group_entries(entries, self.group, passing, self.sort):
                rows.append(OomRow(group=g))
                if g.label not in self.closed:
                    rows += [OomRow(entry=i, depth=1) for i in g.members]
        self.rows = rows
        cursor = 0
        if was is not None:
            for n, row in enumerate(rows):
                if (was.entry is not None and row.entry == was.entry) or (
                    was.group is not None and row.group and row.group.label == was.group.label
                ):
                    cursor = n
                    break
        self.cursor = cursor
        self.rows_changed()
        self.scroll_cursor_into_view()
        self.post_message(self.Highlighted(self.current()))

    # -- RowList ------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.rows)

    def _cells_of(self, i: int) -> tuple[str, str, str, str, str, str]:
        assert self.report is not None
        e = self.report.entries[i]
        link = self.link(i)
        return (
            str(e.rank or i + 1),
            printable(e.size.text),
            printable(shape_without_layout(e.shape) or "?"),  # in full in the detail
            instruction_text(e),
            printable(link.value.value.label) if link is not None else ("-" if self.links else ""),
            printable(e.op_name or ""),
        )

    def header_lines(self) -> list[Text]:
        rank_w, size_w, shape_w, instr_w, value_w = self._widths
        head = f"{'#':>{rank_w}} {'size':>{size_w}}  {'shape':<{shape_w}}  {'instruction':<{instr_w}}  "
        if value_w:
            head += f"{'value':<{value_w}}  "
        return [Text(head + "op_name")]

    def content_width(self) -> int:
        longest_op = longest((len(c[5]) for c in self._cells), 400, 0)
        return sum(self._widths) + 10 + longest_op

    def render_row(self, index: int) -> Text:
        row = self.rows[index]
        if row.group is not None:
            return self._group_row(row.group)
        assert row.entry is not None
        rank, size, shape, instr, value, op_name = self._cells[row.entry]
        rank_w, size_w, shape_w, instr_w, value_w = self._widths
        text = Text(no_wrap=True, end="")
        text.append(f"{rank:>{rank_w}} ", style="dim")
        text.append(f"{size:>{size_w}}  ", style="bold")
        text.append(f"{middle_ellipsis(shape, shape_w):<{shape_w}}  ")
        text.append(f"{middle_ellipsis(instr, instr_w):<{instr_w}}  ")
        if value_w:
            text.append(
                f"{middle_ellipsis(value, value_w):<{value_w}}  ",
                style="bold" if value != "-" else "dim",
            )
        text.append(("  " * row.depth) + op_name)
        return text

    def _group_row(self, g: EntryGroup) -> Text:
        total = sum(e.size_bytes for e in self.report.entries) if self.report else 0
        mark = "▸" if g.label in self.closed else "▾"
        share = f"{100 * g.bytes / total:5.1f}%" if total else "    -"
        approx = "" if g.exact else "≈"
        count = f"{len(g.members)} buffer{'' if len(g.members) == 1 else 's'}"
        text = Text(no_wrap=True, end="")
        text.append(f"{mark} ")
        text.append(f"{middle_ellipsis(printable(g.label), _GROUP_W):<{_GROUP_W}}", style="bold")
        text.append(f" {approx + human_bytes(g.bytes):>10} {share}  {count}", style="dim")
        return text

    def cursor_moved(self, index: int) -> None:
        self.post_message(self.Highlighted(self.current()))

    # -- actions (bound in bindings.py) ---------------------------------------------
    def action_open(self) -> None:
        row = self.current()
        if row is None:
            return
        if row.group is not None:
            label = row.group.label
            self.closed.symmetric_difference_update({label})
            self._rebuild(keep=True)
        elif row.entry is not None:
            self.post_message(self.Chosen(row.entry))
