"""Pane 4 of the diff browser: every value change, the largest absolute change in
allocated bytes first, shown all or one change class at a time (``c``: added, removed,
grown, shrunk, entered peak, left peak, unchanged). A row: class, the key that matched
the pair, OLD's and NEW's allocated bytes, the change, OLD's and NEW's names, the
shape (``OLD → NEW`` when they differ: one instruction at two shapes).
The figures come first so that they show at 80 columns; shift+→ scrolls to the rest.
"""

from __future__ import annotations

from rich.text import Text

from hlotop.analysis.diff import MATCH_KEYS, ValueChange
from hlotop.report.diff_report import change_style, shape_change, signed
from hlotop.safe_text import printable
from hlotop.ui.base.diff_keys import LIST_ACTIONS, diff_bindings
from hlotop.ui.view_models.columns import longest
from hlotop.ui.view_models.diff_data import FILTERS, DiffData
from hlotop.ui.widgets.legend import plain
from hlotop.ui.widgets.row_list import RowList
from hlotop.units import human_bytes

CLASS_W = 12  # "entered peak"
BY_W = max(len(k) for k in MATCH_KEYS)
SIZE_W = 9
CHANGE_W = 10
NAME_MAX = 28


def _name(change: ValueChange, side: str) -> str:
    info = change.old if side == "old" else change.new
    return printable(info.value.label) if info is not None else "-"


def _shape(change: ValueChange) -> str:
    """The shape once, or ``OLD → NEW`` when the two sides' differ (report's rule)."""
    return shape_change(change)


class DiffValueList(RowList):
    """The value changes of :attr:`filter` (one of :data:`FILTERS`), one per row."""

    BINDINGS = diff_bindings(*LIST_ACTIONS, "scroll_columns", "activate", "right", "left")

    def __init__(self, data: DiffData, *, id: str | None = "values", owner=None):
        super().__init__(id=id, classes="pane")
        self.data = data
        self.owner = owner  # told of the value chosen: owner.select_change(index, origin)
        self.filter = "all"
        self.shown: tuple[int, ...] = data.filtered(self.filter)
        changes = data.changes
        self._name_w = longest(
            (len(_name(c, side)) for c in changes for side in ("old", "new")), NAME_MAX, 5
        )
        self._update_title()
        self.border_subtitle = "c class · ⏎ detail · shift+→ names"

    def _update_title(self) -> None:
        self.border_title = f"4 Values · {self.filter} ({len(self.shown)})"

    def set_filter(self, name: str) -> None:
        """Show the changes of class ``name`` (``all``: every one), the cursor on the
        first; the owner is told of it."""
        self.filter = name
        self.shown = self.data.filtered(name)
        self.cursor = 0
        self.scroll_to(0, 0, animate=False)
        self.rows_changed()
        self._update_title()
        if self.shown:
            self.cursor_moved(0)

    def next_filter(self) -> str:
        self.set_filter(self.data.next_filter(self.filter))
        return self.filter

    def current(self) -> int | None:
        """The index (in ``ModuleDiff.changes``) of the change under the cursor."""
        return self.shown[self.cursor] if self.shown else None

    def show_change(self, index: int) -> bool:
        """Put the cursor on change ``index`` if it is listed (no message)."""
        try:
            row = self.shown.index(index)
        except ValueError:
            self.hide_selection()
            return False
        self.place_cursor(row, center=True)
        return True

    # -- RowList ------------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.shown)

    def pinned_lines(self) -> list[Text]:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        counts = self.data.counts
        for name in FILTERS:
            n = len(self.data.changes) if name == "all" else counts.get(name, 0)
            if name != "all" and not n:
                continue
            label = f"{name} {n}"
            if name == self.filter:
                text.append(f"[{label}]", style="bold reverse")
            else:
                text.append(f" {label} ", style="dim")
        return [text]

    def header_lines(self) -> list[Text]:
        w = self._name_w
        return [
            Text(
                f"{'change':<{CLASS_W}} {'by':<{BY_W}} {'OLD':>{SIZE_W}} {'NEW':>{SIZE_W}} "
                f"{'delta':>{CHANGE_W}}  {'OLD value':<{w}} {'NEW value':<{w}} shape",
                no_wrap=True,
                end="",
            )
        ]

    def content_width(self) -> int:
        fixed = CLASS_W + BY_W + 2 * SIZE_W + CHANGE_W + 2 * self._name_w + 8
        return fixed + longest((len(_shape(self.data.changes[i])) for i in self.shown), 120)

    def render_row(self, index: int) -> Text:
        c = self.data.changes[self.shown[index]]
        old = c.old.allocated_bytes if c.old is not None else 0
        new = c.new.allocated_bytes if c.new is not None else 0
        style = change_style(new - old, plain(self))
        w = self._name_w
        text = Text(no_wrap=True, end="")
        text.append(f"{c.change:<{CLASS_W}} ", style="bold" if c.change != "unchanged" else "dim")
        text.append(f"{c.matched_by or '':<{BY_W}} ", style="dim")
        text.append(f"{human_bytes(old) if c.old else '-':>{SIZE_W}} ")
        text.append(f"{human_bytes(new) if c.new else '-':>{SIZE_W}} ", style="bold")
        text.append(f"{signed(new - old):>{CHANGE_W}}  ", style=style)
        for side in ("old", "new"):
            name = _name(c, side)
            if len(name) > w:
                name = name[: w - 1] + "…"
            text.append(f"{name:<{w}} ")
        text.append(_shape(c), style="dim italic")
        return text

    # -- selection ----------------------------------------------------------------------
    def cursor_moved(self, index: int) -> None:
        if self.owner is not None and self.shown:
            self.owner.select_change(self.shown[index], self.id)

    def action_activate(self) -> None:
        if self.owner is not None and self.shown:
            self.owner.select_change(self.shown[self.cursor], self.id, open_detail=True)

    def action_right(self) -> None:
        self.action_scroll_columns(8)

    def action_left(self) -> None:
        self.action_scroll_columns(-8)
