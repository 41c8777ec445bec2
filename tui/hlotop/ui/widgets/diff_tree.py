"""Pane 2 of the diff browser: the change by group as a tree, one level per grouping
key (``phase,scope`` first; ``b`` the next keys, ``B`` typed ones), each level sorted
by the absolute change, each row with OLD's and NEW's bytes live at their own XLA
peak, the change and a bar of it; the last level opens to its values (matched pairs
with their change class and the key that matched them, values added, removed).

The bar grows right of its axis for growth and left of it for shrinking, so the two
are told apart without colour. A group only in NEW of at least 1% of NEW's peak says
``new, large``.
"""

from __future__ import annotations

from rich.text import Text
from textual import events

from hlotop.report.diff_report import change_style, matched_text, signed
from hlotop.safe_text import printable
from hlotop.ui.base.diff_keys import LIST_ACTIONS, diff_bindings
from hlotop.ui.view_models.diff_data import DiffData, DiffGroups, DiffNode, DiffTree, Key
from hlotop.ui.widgets.legend import plain
from hlotop.ui.widgets.row_list import RowList
from hlotop.ui.widgets.tree_keys import TreeKeys
from hlotop.units import human_bytes

SIZE_W = 9
CHANGE_W = 10


def change_bar(delta: int, scale: int, half: int) -> tuple[str, str]:
    """``delta`` of ``scale`` as (left, right) halves of ``half`` cells each: a shrink
    fills the left half from the axis outwards, growth the right one."""
    cells = round(half * abs(delta) / scale) if scale else 0
    cells = min(half, max(cells, 1 if delta else 0))
    if delta < 0:
        return " " * (half - cells) + "█" * cells, " " * half
    return " " * half, "█" * cells + " " * (half - cells)


class DiffGroupTree(RowList, TreeKeys):
    """One row per open node (:class:`hlotop.ui.view_models.diff_data.DiffNode`)."""

    BINDINGS = diff_bindings(*LIST_ACTIONS, "scroll_columns", "activate", "right", "left")

    def __init__(self, data: DiffData, *, id: str | None = "groups", owner=None):
        super().__init__(id=id, classes="pane")
        self.data = data
        self.owner = owner  # told of a value chosen here: owner.select_change(index, origin)
        self.group_tree: DiffTree | None = None
        self.rows: list[DiffNode] = []
        self.expanded: set[Key] = set()
        self.pending: tuple[str, ...] | None = None  # keys being grouped by, if any
        self.error: str | None = None
        self._half = 5
        self.border_title = "2 Groups"
        self.border_subtitle = "b group by · B type keys · ⏎ open"

    # -- the grouping -------------------------------------------------------------------
    @property
    def keys(self) -> tuple[str, ...]:
        return self.group_tree.groups.keys if self.group_tree is not None else self.data.diff.keys

    def show_groups(self, groups: DiffGroups) -> None:
        """Draw ``groups``, the largest change open."""
        self.pending, self.error = None, None
        self.group_tree = DiffTree(self.data, groups)
        self.expanded = {self.group_tree.roots[0].key} if self.group_tree.roots else set()
        self.rows = self.group_tree.visible(self.expanded)
        self.cursor = 0
        self.scroll_to(0, 0, animate=False)
        self._changed()

    def grouping(self, keys: tuple[str, ...]) -> None:
        """Say that ``keys`` are being grouped by (the current tree stays meanwhile)."""
        self.pending = keys
        self._changed()

    def failed(self, error: str) -> None:
        self.pending, self.error = None, error
        self._changed()

    def _changed(self) -> None:
        self.rows_changed()
        keys = ",".join(self.keys)
        self.border_title = f"2 Groups by {keys} · {self.data.diff.accounting} at each peak"

    # -- RowList ------------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.rows)

    def pinned_lines(self) -> list[Text]:
        d = self.data.diff
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.error is not None:
            return [Text(printable(self.error), style="bold")]
        if d.old.peak_step is None or d.new.peak_step is None:
            return [Text("A side has no live ranges: no live set at a peak to group.", "dim")]
        if self.pending is not None:
            text.append(f"grouping by {','.join(self.pending)}…", style="italic")
            return [text]
        deltas = self.group_tree.groups.deltas if self.group_tree is not None else ()
        changed = sum(1 for g in deltas if g.delta_bytes)
        text.append(f"{len(deltas)} groups, {changed} changed · ")
        text.append(f"OLD @{d.old.peak_step} NEW @{d.new.peak_step}", style="dim")
        return [text]

    def header_lines(self) -> list[Text]:
        if self.group_tree is None:
            return []
        levels = " › ".join(self.keys)
        bar = f"{'-':>{self._half}}│{'+':<{self._half}}"
        return [
            Text(
                f"{'OLD':>{SIZE_W}} {'NEW':>{SIZE_W}} {'change':>{CHANGE_W}} {bar} "
                f"{levels} › value",
                no_wrap=True,
                end="",
            )
        ]

    def content_width(self) -> int:
        fixed = 2 * SIZE_W + CHANGE_W + 2 * self._half + 5
        return fixed + max((self._label_w(n) for n in self.rows), default=0)

    def _label_w(self, node: DiffNode) -> int:
        """The cells of ``node``'s indented label and what follows it."""
        width = 2 * node.depth + 2 + len(node.label)
        if node.change is None:
            return width + (12 if node.large_new else 0)
        c = self.data.changes[node.change]
        return width + len(c.change) + 1 + (4 + len(matched_text(c)) if c.matched_by else 0)

    def render_row(self, index: int) -> Text:
        node = self.rows[index]
        flat = plain(self)
        style = change_style(node.delta, flat)
        text = Text(no_wrap=True, end="")
        text.append(f"{human_bytes(node.old):>{SIZE_W}} ")
        text.append(f"{human_bytes(node.new):>{SIZE_W}} ", style="bold")
        text.append(f"{signed(node.delta):>{CHANGE_W}} ", style=style)
        left, right = change_bar(node.delta, node.scale, self._half)
        text.append(left, style=style)
        text.append("│", style="dim")
        text.append(right, style=style)
        text.append(" " + "  " * node.depth)
        if node.change is not None:
            c = self.data.changes[node.change]
            text.append("· ", style="dim")
            text.append(f"{c.change} ", style="italic")
            text.append(printable(node.label))
            if c.matched_by:
                text.append(f"  by {matched_text(c)}", style="dim")
            return text
        text.append("▾ " if node.key in self.expanded else "▸ ", style="dim")
        text.append(printable(node.label))
        if node.large_new:
            text.append("  new, large", style="bold" if flat else "bold red")
        return text

    def on_resize(self, event: events.Resize) -> None:
        half = 3 if self.size.width < 90 else 5 if self.size.width < 110 else 8
        if half != self._half:
            self._half = half
            self.rows_changed()
        super().on_resize(event)

    # -- selection ----------------------------------------------------------------------
    def current(self) -> DiffNode | None:
        return self.rows[self.cursor] if self.rows else None

    def cursor_moved(self, index: int) -> None:
        node = self.current()
        if node is not None and node.change is not None and self.owner is not None:
            self.owner.select_change(node.change, self.id)

    # -- actions (bindings: the "diff" scope) ------------------------------------------
    def action_activate(self) -> None:
        node = self.current()
        if node is None:
            return
        if node.opens:
            self.toggle_node(node, node.key not in self.expanded)
        elif node.change is not None and self.owner is not None:
            self.owner.select_change(node.change, self.id, open_detail=True)

    def action_right(self) -> None:
        self.expand_here()

    def action_left(self) -> None:
        self.collapse_here()

    def toggle_node(self, node: DiffNode, open_: bool) -> None:
        if self.group_tree is None:
            return
        (self.expanded.add if open_ else self.expanded.discard)(node.key)
        self.rows = self.group_tree.visible(self.expanded)
        self.rows_changed()
        self.place_cursor(self.rows.index(node))
