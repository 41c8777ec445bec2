"""Pane 1 of a memory-usage report on its own (``ModuleDump.layout == "report-only"``):
the allocations the report lists (:mod:`hlotop.analysis.report_listing`), largest
first, each expandable to its table's rows: an offset, the largest size placed there,
how many values, and their shapes. No values: the report lists shapes, not values, so
the other panes have nothing to follow; the detail pane shows the allocation under the
cursor.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.text import Text

from hlotop.analysis.report_listing import ReportListing, report_listings
from hlotop.model import ModuleDump, ReportRow
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings
from hlotop.ui.widgets.legend import plain, space_style
from hlotop.ui.widgets.row_list import RowList
from hlotop.units import human_bytes

SIZE_W = 9  # "999.99MiB"


class ReportTree(RowList):
    """The report's allocations (era A: index, size, memory space and kinds from its
    allocation lines; era B: each memory space's tables, numbered, with the sizes at
    their offsets added up), each with its rows. ``s`` orders them by the report's
    order (largest first) or by index (era A)."""

    BINDINGS = bindings("allocations")

    def __init__(
        self,
        dump: ModuleDump,
        *,
        id: str | None = "allocations",
        on_cursor: Callable[[ReportListing], object] | None = None,
    ):
        """``on_cursor(listing)``, if given, is told of the allocation the cursor is on
        (or whose row it is on)."""
        super().__init__(id=id, classes="pane")
        self.dump = dump
        self.on_cursor = on_cursor
        report = dump.memory_usage_report
        self.listings = report_listings(report, dump.analysis.platform) if report else []
        self.era_a = report is not None and report.era != "B"
        self.by_size = True
        self.expanded: set[int] = set()  # positions in self.listings
        self._order: list[int] = []
        self._rows: list[tuple[int, ReportRow | None]] = []
        self._space_w = max((len(printable(x.space)) for x in self.listings), default=5)
        self._idx_w = max(
            (len(str(x.index)) for x in self.listings if x.index is not None), default=1
        )
        self._listings_w: int | None = None  # the widest allocation row, when asked
        self._rows_w: dict[int, int] = {}  # the widest row of an expanded allocation
        self._sort()

    # -- rows ---------------------------------------------------------------------
    def _sort(self) -> None:
        order = list(range(len(self.listings)))
        if not self.by_size and self.era_a:
            order.sort(key=lambda i: (self.listings[i].index is None, self.listings[i].index))
        self._order = order
        self._rebuild()

    def _rebuild(self) -> None:
        rows: list[tuple[int, ReportRow | None]] = []
        for i in self._order:
            rows.append((i, None))
            if i in self.expanded:
                rows += [(i, row) for row in self.listings[i].rows]
        self._rows = rows
        self._update_title()
        self.rows_changed()

    def _update_title(self) -> None:
        order = "by size" if self.by_size or not self.era_a else "by index"
        self.border_title = (
            f"1 Allocations in the memory-usage report ({len(self.listings)}, {order})"
        )
        self.border_subtitle = (
            ("s: sort by " + ("index" if self.by_size else "size")) if self.era_a else "no values"
        )

    def row_count(self) -> int:
        return len(self._rows)

    def pinned_lines(self) -> list[Text]:
        if self.listings:
            return []
        return [Text("the memory-usage report lists no allocation", style="italic")]

    def header_lines(self) -> list[Text]:
        if not self.listings:
            return []
        if self.era_a:
            head = f"  {'#':>{self._idx_w}}  {'size':>{SIZE_W}}  {'space':<{self._space_w}}  kinds"
        else:
            head = f"  {'space':<{self._space_w}}  {'table':>5}  {'cumulative':>10}  offsets"
        return [Text(head, no_wrap=True)]

    def content_width(self) -> int:
        if self._listings_w is None:  # once: a report lists up to a few thousand
            self._listings_w = max(
                (self._listing_text(i, x).cell_len for i, x in enumerate(self.listings)),
                default=0,
            )
        widest = self._listings_w
        for i in self.expanded:
            if i not in self._rows_w:
                x = self.listings[i]
                self._rows_w[i] = max((self._row_text(x, r).cell_len for r in x.rows), default=0)
            widest = max(widest, self._rows_w[i])
        return widest

    def render_row(self, index: int) -> Text:
        i, row = self._rows[index]
        return self.render_row_text(i, row)

    def render_row_text(self, i: int, row: ReportRow | None) -> Text:
        x = self.listings[i]
        return self._listing_text(i, x) if row is None else self._row_text(x, row)

    def _listing_text(self, i: int, x: ReportListing) -> Text:
        text = Text(no_wrap=True, end="")
        if x.rows:
            text.append("▾ " if i in self.expanded else "▸ ", style="dim")
        else:
            text.append("  ")
        style = space_style(x.color, plain(self))
        if self.era_a:
            index = str(x.index) if x.index is not None else "?"
            size = human_bytes(x.size) if x.size is not None else "?"
            text.append(f"{index:>{self._idx_w}}  ")
            text.append(f"{size:>{SIZE_W}}", style="bold")
            text.append(f"  {printable(x.space):<{self._space_w}}", style=style)
            text.append("  " + printable(x.kinds))
        else:
            text.append(f"{printable(x.space):<{self._space_w}}", style=style)
            text.append(f"  {x.number:>5}  ")
            text.append(f"{x.cumulative:>10}", style="bold")
        n = len(x.rows)
        hidden = x.table.hidden_rows
        if n or hidden:
            more = f", {hidden} more" if hidden else ""
            text.append(f"  ({n} offset{'' if n == 1 else 's'}{more})", style="dim")
        elif x.head is not None:  # one value: XLA prints its line and no table
            shape = x.head.parameter_shape or x.head.output_shape
            if shape:
                text.append(f"  {printable(shape)}", style="italic")
        return text

    def _row_text(self, x: ReportListing, row: ReportRow) -> Text:
        text = Text(no_wrap=True, end="")
        text.append("    ")
        text.append(f"@{row.offset:<10}", style="dim")
        text.append(f" {row.size:>{SIZE_W}}  ", style="bold")
        n = row.used_by_n_values
        text.append(f"{n} value{'' if n == 1 else 's'}: ", style="dim")
        text.append(printable(x.shapes_text(row)), style="italic")
        return text

    def cursor_moved(self, index: int) -> None:
        if self.on_cursor is not None and self._rows:
            self.on_cursor(self.listings[self._rows[index][0]])

    # -- what the main screen asks of pane 1 -----------------------------------------
    def current(self) -> None:
        """No allocation of a buffer assignment is under the cursor (the report's are
        not read as such): the main screen selects nothing."""
        return None

    def show_value(self, value_id: int) -> bool:
        """No value is listed here (a report lists shapes): False."""
        return False

    def cycle_sort(self) -> None:
        """``s``: :meth:`toggle_sort`."""
        self.toggle_sort()

    def show_listing(self, i: int) -> bool:
        """Put the cursor on ``self.listings[i]``'s row and tell ``on_cursor``; False
        if there is no such allocation."""
        if not 0 <= i < len(self.listings):
            return False
        self.place_cursor(self._rows.index((i, None)), center=True)
        self.cursor_moved(self.cursor)
        return True

    def toggle_sort(self) -> None:
        """The report's order (largest first) or by index (era A; era B names none)."""
        if not self.era_a:
            self.notify("This report (era B) names no allocation index: its order is XLA's.")
            return
        here = self._rows[self.cursor][0] if self._rows else None
        self.by_size = not self.by_size
        self._sort()
        if here is not None:
            self.place_cursor(self._rows.index((here, None)), center=True)

    # -- actions ------------------------------------------------------------------
    def action_activate(self) -> None:
        if not self._rows:
            return
        i, _ = self._rows[self.cursor]
        if i in self.expanded:
            self.action_collapse()
        else:
            self.action_expand()

    def action_expand(self) -> None:
        if not self._rows:
            return
        i, row = self._rows[self.cursor]
        if row is not None or not self.listings[i].rows:
            return
        if i in self.expanded:
            self.set_cursor(self.cursor + 1)
            return
        self.expanded.add(i)
        self._rebuild()

    def action_collapse(self) -> None:
        if not self._rows:
            return
        i, _ = self._rows[self.cursor]
        if i not in self.expanded:
            return
        self.expanded.discard(i)
        self._rebuild()
        self.place_cursor(self._rows.index((i, None)))
