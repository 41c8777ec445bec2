"""The icicle of the grouped live set (``i`` on the grouped view): one row a node of
its tree of frames (:func:`hlotop.report.top_text.icicle_lines`), its bar where it
lies among the step's bytes, scaled to the pane's width. A Line API
:class:`~hlotop.ui.widgets.row_list.RowList`: the cursor's node is named in full, with
its flat and cum bytes, above the rows."""

from __future__ import annotations

from rich.text import Text

from hlotop.analysis.group_stacks import StackNode, stack_tree
from hlotop.analysis.grouping import Grouping
from hlotop.report.grouped_text import ACCOUNTING_NOTES
from hlotop.report.top_text import IcicleLine, icicle_lines, left_out_note
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import keys
from hlotop.ui.widgets.legend import plain
from hlotop.ui.widgets.row_list import RowList
from hlotop.units import human_bytes


def _percent(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"


class IcicleView(RowList):
    """``grouping``'s icicle, drawn again at each width."""

    BINDINGS = [k.binding() for k in keys("icicle") if k.action != "close"]

    def __init__(self, grouping: Grouping, *, id: str | None = "icicle"):
        super().__init__(id=id)
        self.grouping = grouping
        self.root = stack_tree(grouping)
        self.lines: list[IcicleLine] = []
        self.note: Text | None = None
        self._width = -1

    def _layout(self) -> None:
        """The lines at this width (once a width)."""
        width = max(self.size.width - 1, 20)  # the gutter
        if width == self._width:
            return
        self._width = width
        self.lines, left_out = icicle_lines(self.root, width, plain=plain(self))
        self.note = left_out_note(left_out)

    def on_resize(self, event) -> None:
        self._layout()
        self.rows_changed()
        super().on_resize(event)

    @property
    def node(self) -> StackNode | None:
        """The node on the cursor's row."""
        return self.lines[self.cursor].node if 0 <= self.cursor < len(self.lines) else None

    # -- RowList ------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.lines) + (1 if self.note is not None else 0)

    def selectable(self, index: int) -> bool:
        return index < len(self.lines)

    def render_row(self, index: int) -> Text:
        if index < len(self.lines):
            return self.lines[index].text
        return self.note or Text("")

    def content_width(self) -> int:
        return max((line.text.cell_len for line in self.lines), default=0)

    def pinned_lines(self) -> list[Text]:
        g = self.grouping
        head = Text.assemble(
            (f"step {g.step} by {', '.join(g.keys)}: {human_bytes(self.root.cum)}", "bold"),
            (f"  {ACCOUNTING_NOTES[g.accounting].split(':')[0]}", "dim"),
        )
        node = self.node
        if node is None:
            return [head, Text("")]
        total = self.root.cum
        about = Text(no_wrap=True, end="")
        about.append(printable(node.name()), style="bold")
        about.append(
            f"  flat {human_bytes(node.flat)} {_percent(node.flat, total)} · cum "
            f"{human_bytes(node.cum)} {_percent(node.cum, total)} · {node.values} values",
            style="dim",
        )
        return [head, about]

    def cursor_moved(self, index: int) -> None:
        self.refresh()  # the pinned line names the node
