"""The live set at the timeline's step, which at XLA's peak step is the peak breakdown:
each live value with its logical bytes (XLA's peak measure, tiling padding ignored),
its allocated (padded) bytes, the cumulative share, shape, memory space and op_name;
then, at the peak, XLA's own stack-trace breakdown as a collapsible tree.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.geometry import Size

from hlotop.model import ModuleDump, StackTraceNode, ValueInfo, format_shape_index
from hlotop.model.memory_space import space_names, space_style
from hlotop.safe_text import printable
from hlotop.ui.bindings import bindings
from hlotop.ui.selection import SelectionOwner
from hlotop.ui.textual_compat import set_virtual_size
from hlotop.ui.widgets.legend import space_label
from hlotop.ui.widgets.row_list import RowList, longest, shown_len
from hlotop.ui.widgets.steps import LiveIndex, StepIndex
from hlotop.units import human_bytes, spaced_bytes

SIZE_W = 9
_VALUE_MAX = 32
_SHAPE_MAX = 44
_OP_MIN = 40


@dataclass(slots=True)
class _Row:
    kind: str  # "value", "node", "text"
    info: ValueInfo | None = None
    cumulative: int = 0
    node: StackTraceNode | None = None
    parent: int = -1  # row index of the parent node
    text: Text | None = None


class LiveSet(RowList):
    """Values live at a step, largest first (XLA's peak-list order)."""

    BINDINGS = bindings("live")

    def __init__(
        self,
        dump: ModuleDump,
        steps: StepIndex | None = None,
        *,
        id: str | None = "live",
        owner: SelectionOwner | None = None,
    ):
        """``owner``: who is told of the value the user chooses (None: nobody)."""
        super().__init__(id=id, classes="pane")
        self.dump = dump
        self.owner = owner
        self.names = space_names(dump.memory_usage_report)
        a = dump.analysis
        self.step = a.peak_step or 0
        self.live: list[ValueInfo] = []
        steps = steps if steps is not None else StepIndex(a.values, a.max_time)
        self.index = LiveIndex(a.values, steps)
        self._pinned: list[Text] = []
        self._live_total = 0
        self._rows: list[_Row] = []
        self.collapsed: set[int] = set()  # id() of collapsed stack-trace nodes
        trace = dump.live_range.stack_trace if dump.live_range else None
        self._node_w = 0
        if trace is not None:
            self._collapse_deep(trace.roots, 0)
        values = steps.rows
        self._space_w = max(
            [len(space_label(c, self.names)) for c in {v.color for v in values}] + [5]
        )
        self._value_w = longest(
            (len(str(v.value.id)) + 1 + shown_len(v.value.label) for v in values), _VALUE_MAX, 5
        )
        self._shape_w = longest((len(v.shape or "") for v in values), _SHAPE_MAX, 5)
        self._rank_w = len(str(len(values)))
        # The op_name column reaches the longest op_name of the rows drawn so far at
        # this step: reading an op_name parses the value's record, so only the rows
        # on screen are asked (see _fill and _live_text).
        self._op_w = _OP_MIN
        self._header = self._make_header()
        self.border_title = "3 Live set"
        self.border_subtitle = "logical = XLA's peak bytes (no padding) · allocated = padded"
        self._fill()

    def _collapse_deep(self, nodes, depth: int) -> None:
        for node in nodes:
            self._node_w = min(60, max(self._node_w, 2 * node.depth + 2 + len(node.label)))
            if depth >= 2 and node.children:
                self.collapsed.add(id(node))
            self._collapse_deep(node.children, depth + 1)

    @staticmethod
    def _value_text(info: ValueInfo) -> str:
        return f"{info.value.id} {printable(info.value.label)}"

    # -- rows -------------------------------------------------------------------------
    def set_step(self, step: int) -> None:
        """Show the live set at ``step``; the cursor stays on the same value if it is live."""
        here = self.current_value()
        self.step = step
        self._fill()
        if here is not None:
            self.show_value(here.value.id)

    def _fill(self) -> None:
        a = self.dump.analysis
        at_peak = self.step == a.peak_step
        self.live = a.peak_values if at_peak else (self.index.at(self.step) if a.live_bytes else [])
        rows = []
        running = 0
        for info in self.live:
            running += info.logical_bytes
            rows.append(_Row("value", info, running))
        trace = self.dump.live_range.stack_trace if self.dump.live_range else None
        if a.live_bytes:
            rows.append(_Row("text", text=Text("")))
            if trace is None:
                rows.append(
                    _Row(
                        "text",
                        text=Text(
                            "No stack-trace breakdown in this dump (XLA prints one since 2025-07).",
                            style="dim",
                        ),
                    )
                )
            elif not at_peak:
                rows.append(
                    _Row(
                        "text",
                        text=Text(
                            f"XLA's stack-trace breakdown is for the peak: step {a.peak_step} (press p).",
                            style="dim",
                        ),
                    )
                )
            else:
                heading = Text("Stack-trace breakdown for peak usage (XLA): ", style="bold")
                heading.append(f"{spaced_bytes(trace.total)} bytes ({human_bytes(trace.total)})")
                rows.append(_Row("text", text=heading))
                self._add_nodes(rows, trace.roots, -1)
        # The canvas reaches the end of the longest op_name of the rows on screen;
        # rows drawn later widen it (_live_text).
        top = max(0, self.scroll_offset.y)
        shown = self.live[top : top + max(self.size.height, 1)]
        self._op_w = max([len(i.op_name or "") for i in shown] + [_OP_MIN])
        self._rows = rows
        self._live_total = running
        self._pinned = self._summary()
        self.rows_changed()
        self._update_title()

    def _add_nodes(self, rows: list[_Row], nodes, parent: int) -> None:
        for node in nodes:
            rows.append(_Row("node", node=node, parent=parent))
            if id(node) not in self.collapsed:
                self._add_nodes(rows, node.children, len(rows) - 1)

    def _update_title(self) -> None:
        a = self.dump.analysis
        if not a.live_bytes:
            self.border_title = (
                "3 Live set · loading…" if self.dump.preview else "3 Live set (no live ranges)"
            )
            return
        what = "peak breakdown" if self.step == a.peak_step else "live set"
        self.border_title = f"3 {what.capitalize()} · step {self.step}"

    def row_count(self) -> int:
        return len(self._rows)

    def selectable(self, index: int) -> bool:
        return self._rows[index].kind != "text"

    def content_width(self) -> int:
        return (
            self._rank_w
            + 2 * (SIZE_W + 2)
            + 8
            + self._space_w
            + 2
            + self._value_w
            + 2
            + self._shape_w
            + 2
            + self._op_w
        )

    def pinned_lines(self) -> list[Text]:
        return self._pinned

    def _summary(self) -> list[Text]:
        a = self.dump.analysis
        if self.dump.preview is not None:  # the first look at a big dump
            return [Text("live set: loading… (it comes with the live ranges)", style="italic")]
        if not a.live_bytes:
            return [Text("No live ranges in this dump: nothing to show per step.", style="dim")]
        logical = sum(i.logical_bytes for i in self.live)
        allocated = sum(i.allocated_bytes for i in self.live)
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(f"step {self.step}/{a.max_time}", style="bold")
        if self.step == a.peak_step:
            text.append(" ◆ XLA peak", style="bold red")
        text.append(f" · {len(self.live)} values · ")
        text.append(f"{human_bytes(logical)} logical", style="bold")
        text.append(f" · {human_bytes(allocated)} allocated")
        if self.step == a.peak_step and a.peak_occupied_bytes:
            text.append(f" · {human_bytes(a.peak_occupied_bytes)} occupied", style="dim")
        return [text]

    def header_lines(self) -> list[Text]:
        return [] if self.dump.preview is not None else self._header

    def _make_header(self) -> list[Text]:
        return [
            Text(
                f"{'#':>{self._rank_w}}  {'logical':>{SIZE_W}}  {'allocated':>{SIZE_W}}  "
                f"{'cum%':>6}  {'value':<{self._value_w}}  {'space':<{self._space_w}}  "
                f"{'shape':<{self._shape_w}}  op_name",
                no_wrap=True,
                end="",
            )
        ]

    def render_row(self, index: int) -> Text:
        row = self._rows[index]
        if row.kind == "text":
            return row.text
        if row.kind == "node":
            return self._node_text(row.node)
        return self._live_text(index, row)

    def _live_text(self, index: int, row: _Row) -> Text:
        info = row.info
        total = self._live_total
        text = Text(no_wrap=True, end="")
        text.append(f"{index + 1:>{self._rank_w}}  ", style="dim")
        text.append(f"{human_bytes(info.logical_bytes):>{SIZE_W}}", style="bold")
        text.append(
            f"  {human_bytes(info.allocated_bytes):>{SIZE_W}}",
            style="yellow" if info.padding_bytes else "",
        )
        share = 100.0 * row.cumulative / total if total else 0.0
        text.append(f"  {share:5.1f}%  ")
        value = self._value_text(info)
        if len(value) > self._value_w:
            value = value[: self._value_w - 1] + "…"
        text.append(f"{value:<{self._value_w}}  ", style=space_style(info.color))
        text.append(
            f"{space_label(info.color, self.names):<{self._space_w}}  ",
            style=space_style(info.color),
        )
        shape = printable(info.shape or "?")
        if len(shape) > self._shape_w:
            shape = shape[: self._shape_w - 1] + "…"
        text.append(f"{shape:<{self._shape_w}}  ", style="italic")
        op_name = info.op_name or ""
        text.append(printable(op_name), style="dim")
        if len(op_name) > self._op_w:  # wider than the rows drawn before
            self._op_w = len(op_name)
            self.call_later(self._widen)
        return text

    def _widen(self) -> None:
        set_virtual_size(self, Size(self.content_width() + 1, self.fixed_height + self.row_count()))

    def _node_text(self, node: StackTraceNode) -> Text:
        text = Text(no_wrap=True, end="")
        text.append("  " * node.depth)
        if node.children:
            text.append("▸ " if id(node) in self.collapsed else "▾ ", style="dim")
        else:
            text.append("· ", style="dim")
        text.append(printable(node.label))
        text.append(" " * max(0, self._node_w - 2 * node.depth - 2 - len(node.label)))
        text.append(f"  {node.percent:5.1f}%  ", style="dim")
        text.append(f"{human_bytes(node.total):>{SIZE_W}}", style="bold")
        if node.current and node.children:
            text.append(f"  (here {human_bytes(node.current)})", style="dim")
        return text

    # -- selection ----------------------------------------------------------------------
    def current_value(self) -> ValueInfo | None:
        if not self._rows:
            return None
        row = self._rows[self.cursor]
        return row.info if row.kind == "value" else self._value_of_node(row.node)

    def _value_of_node(self, node: StackTraceNode | None) -> ValueInfo | None:
        """The live value a stack-trace leaf stands for, if exactly one matches its label."""
        if node is None or node.children:
            return None
        matches = [
            i
            for i in self.live
            if (i.op_name or i.value.name)
            + (format_shape_index(i.value.shape_index) if i.value.shape_index else "")
            == node.label
            or i.value.label == node.label
        ]
        return matches[0] if len(matches) == 1 else None

    def cursor_moved(self, index: int) -> None:
        info = self.current_value()
        if info is not None and self.owner is not None:
            self.owner.select_value(info.value.id, self.id)

    def show_value(self, value_id: int | None) -> bool:
        """Put the cursor on ``value_id`` if it is live here (no message); None: no
        row is the selection."""
        for i, row in enumerate(self._rows):
            if row.kind == "value" and row.info.value.id == value_id:
                self.place_cursor(i, center=True)
                return True
        self.hide_selection()
        return False

    # -- actions --------------------------------------------------------------------------
    def action_activate(self) -> None:
        if not self._rows:
            return
        row = self._rows[self.cursor]
        if row.kind == "node" and row.node.children:
            if id(row.node) in self.collapsed:
                self.action_expand()
            else:
                self.action_collapse()
            return
        info = self.current_value()
        if info is not None and self.owner is not None:
            self.owner.select_value(info.value.id, self.id, open_detail=True)

    def action_expand(self) -> None:
        if not self._rows:
            return
        row = self._rows[self.cursor]
        if row.kind == "node" and id(row.node) in self.collapsed:
            self.collapsed.discard(id(row.node))
            self._refill_keeping(row.node)
        elif row.kind == "value":
            self.action_scroll_columns(8)

    def action_collapse(self) -> None:
        if not self._rows:
            return
        row = self._rows[self.cursor]
        if row.kind == "value":
            self.action_scroll_columns(-8)
        if row.kind != "node":
            return
        if row.node.children and id(row.node) not in self.collapsed:
            self.collapsed.add(id(row.node))
            self._refill_keeping(row.node)
        elif row.parent >= 0:
            self.set_cursor(row.parent, notify=True)

    def _refill_keeping(self, node: StackTraceNode) -> None:
        self._fill()
        for i, row in enumerate(self._rows):
            if row.node is node:
                self.set_cursor(i)
                break
