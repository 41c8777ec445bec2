"""The live set at the timeline's step, which at XLA's peak step is the peak breakdown:
each live value with its logical bytes (its shape's size, tiling padding ignored: what
XLA's peak lists print since 2025-04),
its allocated (padded) bytes, the cumulative share, shape, memory space and op_name;
then, at the peak, XLA's own stack-trace breakdown as a collapsible tree.

``s`` orders the values by size (XLA's order), start, end, name or memory space, and
``f`` keeps those a filter matches; the cumulative share stays a share of the whole
live set at the step, and the summary says how many values and bytes are shown of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Size

from hlotop.analysis.value_filter import Matches
from hlotop.analysis.value_order import ORDER_TEXT, ORDERS
from hlotop.model import ModuleDump, StackTraceNode, UsedValues, ValueInfo, format_shape_index
from hlotop.model.memory_space import space_names
from hlotop.safe_text import drawn
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.selection import SelectionOwner
from hlotop.ui.base.textual_compat import set_virtual_size
from hlotop.ui.view_models.columns import longest
from hlotop.ui.view_models.spaces import space_label
from hlotop.ui.view_models.steps import LiveIndex, LiveRows, StepIndex
from hlotop.ui.widgets.filter_bar import filter_note
from hlotop.ui.widgets.legend import peak_style, plain, space_style
from hlotop.ui.widgets.row_list import NULL_STYLE as _NULL
from hlotop.ui.widgets.row_list import Row, RowList, raw_segments, shown_len
from hlotop.units import human_bytes, with_commas

SIZE_W = 9
_VALUE_MAX = 32
_SHAPE_MAX = 44
_OP_MIN = 40
_SCAN_ABOVE = 256  # live values: above, a leaf's value is found through the records' text
_SHAPE_INDEX = re.compile(r"\{[0-9,]*\}$")


@dataclass(slots=True)
class _Row:
    kind: str  # "value", "node", "text"
    info: ValueInfo | None = None
    cumulative: int = 0
    node: StackTraceNode | None = None
    parent: int = -1  # the parent node's index in the tail (-1: none)
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
        index: LiveIndex | None = None,
    ):
        """``steps``, ``index``: the dump's :class:`StepIndex` and :class:`LiveIndex`,
        if made beforehand (off the UI thread). ``owner``: who is told of the value the
        user chooses (None: nobody)."""
        super().__init__(id=id, classes="pane")
        self.dump = dump
        self.owner = owner
        self.names = space_names(dump)
        a = dump.analysis
        self.step = a.peak_step or 0
        steps = steps if steps is not None else StepIndex(a.values, a.max_time)
        self.index = index if index is not None else LiveIndex(steps)
        # The rows: the values live at the step (never a list of them: tens of
        # thousands at a step of a big training step), then the notes and XLA's
        # stack-trace tree (self._tail).
        self.live: LiveRows = LiveRows.of([])
        # The live set whole, before the order (s) and filter (f) make self.live: the
        # shares and the summary's totals are of it.
        self._whole: LiveRows = self.live
        self.order = "size"  # XLA's peak-list order
        self.matches: Matches | None = None
        self._orders = steps.orders  # every value ranked, per order (shared)
        self._peak_rows: LiveRows | None = None  # XLA's peak list, made on first need
        self._tail: list[_Row] = []
        self._pinned: list[Text] = []
        self._node_values: dict[int, ValueInfo | None] = {}  # see _value_of_node
        # Per value, the columns of its row that never change (see row_segments).
        self._static: LRUCache[int, tuple[list[Segment], int]] = LRUCache(1024)
        self._styles: dict[str, Style] = {}
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
            (len(str(v.value_id)) + 1 + shown_len(v.value.label) for v in values), _VALUE_MAX, 5
        )
        self._shape_w = longest((len(v.shape or "") for v in values), _SHAPE_MAX, 5)
        self._rank_w = len(str(len(values)))
        # The op_name column reaches the longest op_name of the rows drawn so far at
        # this step: reading an op_name parses the value's record, so only the rows
        # on screen are asked (see _fill and _live_text).
        self._op_w = _OP_MIN
        self._header = self._make_header()
        self.border_title = "3 Live set"
        self.border_subtitle = "logical = the value's shape, no padding · allocated = padded"
        self._fill()

    def _collapse_deep(self, nodes, depth: int) -> None:
        for node in nodes:
            self._node_w = min(60, max(self._node_w, 2 * node.depth + 2 + len(node.label)))
            if depth >= 2 and node.children:
                self.collapsed.add(id(node))
            self._collapse_deep(node.children, depth + 1)

    @staticmethod
    def _value_text(info: ValueInfo) -> str:
        return f"{info.value_id} {drawn(info.value.label)}"

    # -- rows -------------------------------------------------------------------------
    def set_step(self, step: int, selected: int | None = None) -> None:
        """Show the live set at ``step``. ``selected``: the value the user chose (the
        screen's selection); the cursor stays on it if it is live at ``step``. Else the
        list opens at its top, the largest value, not drawn as the selection: the value
        that happened to be under the cursor was never chosen, and following it
        scrolled a peak breakdown down to wherever that value ranks."""
        same = step == self.step
        self.step = step
        self._fill(keep_tail=same)
        if selected is not None and self.show_value(selected):
            return
        if not same:
            self.cursor = self._selectable_near(0, 1) if self.row_count() else 0
            self.scroll_to(y=0, animate=False)
            self.refresh()
        self.hide_selection()

    def _fill(self, *, keep_tail: bool = False) -> None:
        """Lay out the rows at :attr:`step`. ``keep_tail``: the step is the one the
        rows were laid out for, so the notes and XLA's stack-trace tree after the values
        are kept as they are (20 000 nodes at 108 MB: 50 ms of the UI thread)."""
        a = self.dump.analysis
        at_peak = self.step == a.peak_step
        if not a.live_bytes:
            self.live = LiveRows.of([])
        elif at_peak:
            if self._peak_rows is None:
                self._peak_rows = LiveRows.of(a.peak_values)
            self.live = self._peak_rows
        else:
            self.live = self.index.at(self.step)
        self._whole = self.live
        if self.order != "size" or self.matches is not None:
            self.live = self._narrowed(self.live)
        tail: list[_Row] = []
        trace = self.dump.live_range.stack_trace if self.dump.live_range else None
        if keep_tail and self._tail:
            tail = self._tail
        elif a.live_bytes:
            tail.append(_Row("text", text=Text("")))
            if trace is None:
                tail.append(
                    _Row(
                        "text",
                        text=Text(
                            "No stack-trace breakdown in this dump (XLA prints one since 2025-07).",
                            style="dim",
                        ),
                    )
                )
            elif not at_peak:
                tail.append(
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
                heading.append(f"{with_commas(trace.total)} bytes ({human_bytes(trace.total)})")
                tail.append(_Row("text", text=heading))
                self._add_nodes(tail, trace.roots, -1)
        # The canvas reaches the end of the longest op_name of the rows on screen;
        # rows drawn later widen it (_live_text).
        self._op_w = self._op_names_shown()
        self._tail = tail
        self._pinned = self._summary()
        self.rows_changed()
        self._update_title()

    def _op_names_shown(self) -> int:
        """The op_name column's width for the value rows on screen now (at least
        :data:`_OP_MIN`)."""
        top = max(0, self.scroll_offset.y)
        shown = self.live[top : top + max(self.view_height, 1)]
        return max([len(i.op_name or "") for i in shown] + [_OP_MIN])

    def _narrowed(self, whole: LiveRows) -> LiveRows:
        """``whole``'s values that :attr:`matches` keeps, in :attr:`order`: a pass
        over the live set, and a sort of integers (each order ranks every value once)."""
        values: Iterable[ValueInfo] = whole
        if self.matches is not None:
            keep = self.matches.ids
            values = [v for v in whole if v.value_id in keep]
        if self.order != "size":
            values = self._orders.get(self.order).sort(values)
        return LiveRows.of(list(values))

    # -- order and filter (s, f) ------------------------------------------------------
    def cycle_sort(self) -> str:
        """Order the values by the next of :data:`ORDERS` (size first: XLA's order);
        returns it."""
        self.order = ORDERS[(ORDERS.index(self.order) + 1) % len(ORDERS)]
        self._refill()
        return self.order

    def set_filter(self, matches: Matches | None) -> None:
        """Show only the values ``matches`` keeps (None: every value)."""
        self.matches = matches
        self._refill()

    def _refill(self) -> None:
        """The rows again at the same step, the cursor on the same value if shown
        (the tail kept: its rows do not depend on the order or the filter)."""
        here, shown = self.current_value(), self.shows_selection
        self._fill(keep_tail=True)
        if here is None or not self.show_value(here.value_id):
            self.set_cursor(0)
            self.hide_selection()
        elif not shown:
            self.hide_selection()  # the selection is elsewhere, as before
        # The cursor's value may have scrolled other rows into view: their op_names
        # widen the column now, not once drawn (a second frame, 20-30 ms later).
        widest = self._op_names_shown()
        if widest > self._op_w:
            self._op_w = widest
            self._widen()

    def _add_nodes(self, tail: list[_Row], nodes, parent: int) -> None:
        """Append the rows of ``nodes`` (and of their children, unless collapsed) to
        ``tail``; ``parent``: their parent's index in ``tail`` (the rows before the tail
        are the values, whose number the order and the filter change)."""
        for node in nodes:
            tail.append(_Row("node", node=node, parent=parent))
            if id(node) not in self.collapsed:
                self._add_nodes(tail, node.children, len(tail) - 1)

    @property
    def tail(self) -> Sequence[_Row]:
        """The rows after the live values: notes, then at the peak XLA's stack-trace
        tree, its nodes under a collapsed one left out. Laid out again on a change (the
        step, the order, the filter, a node folded or unfolded), but not when the same
        step is shown again: the same list then."""
        return self._tail

    def row(self, index: int) -> _Row:
        """Row ``index``: a live value (with the logical bytes of the rows up to it),
        a note, or a node of XLA's stack-trace tree."""
        live = self.live
        if index < len(live):
            return _Row("value", live[index], live.cumulative(index))
        return self._tail[index - len(live)]

    def _update_title(self) -> None:
        a = self.dump.analysis
        if not a.live_bytes:
            self.border_title = (
                "3 Live set · loading…" if self.dump.preview else "3 Live set (no live ranges)"
            )
            return
        what = "peak breakdown" if self.step == a.peak_step else "live set"
        order = f" · by {ORDER_TEXT[self.order]}" if self.order != "size" else ""
        self.border_title = (
            f"3 {what.capitalize()} · step {self.step}{order}{filter_note(self.matches)}"
        )

    def row_count(self) -> int:
        return len(self.live) + len(self._tail)

    def selectable(self, index: int) -> bool:
        return index < len(self.live) or self._tail[index - len(self.live)].kind != "text"

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
        logical, allocated = self.live.logical_bytes, self.live.allocated_bytes
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        text.append(f"step {self.step}/{a.max_time}", style="bold")
        if self.step == a.peak_step:
            text.append(" ◆ XLA peak", style=peak_style(plain(self)))
        if self.matches is not None:  # the filter's values: their bytes, of the step's
            whole = self._whole
            text.append(f" · {with_commas(len(self.live))} of {with_commas(len(whole))} values · ")
            text.append(f"{human_bytes(logical)} logical", style="bold")
            text.append(f" of {human_bytes(whole.logical_bytes)}")
            text.append(f" · {human_bytes(allocated)} allocated")
            return [text]
        text.append(f" · {with_commas(len(self.live))} values · ")
        text.append(f"{human_bytes(logical)} logical", style="bold")
        if self.step == a.peak_step and a.peak_bytes != logical:
            text.append(f" (XLA's list {human_bytes(a.peak_bytes)})")
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
        row = self.row(index)
        if row.node is not None:
            return self._node_text(row.node)
        if row.info is not None:
            return self._live_text(index, row.info, row.cumulative)
        return row.text or Text("")

    def _live_text(self, index: int, info: ValueInfo, cumulative: int) -> Text:
        """Row ``index``: ``info``, with the logical bytes of the rows up to it."""
        total = self._whole.logical_bytes  # shares of the whole live set
        text = Text(no_wrap=True, end="")
        text.append(f"{index + 1:>{self._rank_w}}  ", style="dim")
        text.append(f"{human_bytes(info.logical_bytes):>{SIZE_W}}", style="bold")
        text.append(
            f"  {human_bytes(info.allocated_bytes):>{SIZE_W}}",
            style="yellow" if info.padding_bytes else "",
        )
        share = 100.0 * cumulative / total if total else 0.0
        text.append(f"  {share:5.1f}%  ")
        op_name = self._append_static(text, info)
        if len(op_name) > self._op_w:  # wider than the rows drawn before
            self._op_w = len(op_name)
            self.call_later(self._widen)
        return text

    def _append_static(self, text: Text, info: ValueInfo) -> str:
        """Append the columns of ``info``'s row that do not change with the step: the
        value, its space, shape and op_name (returned)."""
        value = self._value_text(info)
        if len(value) > self._value_w:
            value = value[: self._value_w - 1] + "…"
        space = space_style(info.color, plain(self))
        text.append(f"{value:<{self._value_w}}  ", style=space)
        text.append(f"{space_label(info.color, self.names):<{self._space_w}}  ", style=space)
        shape = drawn(info.shape or "?")
        if len(shape) > self._shape_w:
            shape = shape[: self._shape_w - 1] + "…"
        text.append(f"{shape:<{self._shape_w}}  ", style="italic")
        op_name = info.op_name or ""
        text.append(drawn(op_name), style="dim")
        return op_name

    def row_segments(self, index: int) -> Row:
        """A live value's row as :meth:`_live_text` renders it, made from the parts
        that do not change with the step (kept per value) and those that do (its rank
        and share): every row is drawn again at every step."""
        live = self.live
        if index >= len(live):
            return super().row_segments(index)
        info = live[index]
        style = self._console_style
        total = self._whole.logical_bytes  # shares of the whole live set
        share = f"  {100.0 * live.cumulative(index) / total if total else 0.0:5.1f}%  "
        allocated = f"  {human_bytes(info.allocated_bytes):>{SIZE_W}}"
        segments = [
            Segment(f"{index + 1:>{self._rank_w}}  ", style("dim")),
            Segment(f"{human_bytes(info.logical_bytes):>{SIZE_W}}", style("bold")),
        ]
        if info.padding_bytes:
            segments += [Segment(allocated, style("yellow")), Segment(share, _NULL)]
        else:
            segments.append(Segment(allocated + share, _NULL))  # one run, no span
        static = self._static.get(info.value_id)
        if static is None:
            static = self._static[info.value_id] = self._static_segments(info)
        segments += static[0]
        if static[1] > self._op_w:  # an op_name wider than the rows drawn before
            self._op_w = static[1]
            self.call_later(self._widen)
        return Row(segments, True)

    def _static_segments(self, info: ValueInfo) -> tuple[list[Segment], int]:
        """The value, space, shape and op_name columns of ``info``'s row (as
        :meth:`_live_text` renders them), and the op_name's length."""
        text = Text(no_wrap=True, end="")
        self._append_static(text, info)
        return raw_segments(self.app.console, text), len(info.op_name or "")

    def _console_style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.app.console.get_style(name)
        return style

    def _widen(self) -> None:
        set_virtual_size(self, Size(self.content_width() + 1, self.fixed_height + self.row_count()))

    def _node_text(self, node: StackTraceNode) -> Text:
        text = Text(no_wrap=True, end="")
        text.append("  " * node.depth)
        if node.children:
            text.append("▸ " if id(node) in self.collapsed else "▾ ", style="dim")
        else:
            text.append("· ", style="dim")
        text.append(drawn(node.label))
        text.append(" " * max(0, self._node_w - 2 * node.depth - 2 - len(node.label)))
        text.append(f"  {node.percent:5.1f}%  ", style="dim")
        text.append(f"{human_bytes(node.total):>{SIZE_W}}", style="bold")
        if node.current and node.children:
            text.append(f"  (here {human_bytes(node.current)})", style="dim")
        return text

    # -- selection ----------------------------------------------------------------------
    def current_value(self) -> ValueInfo | None:
        if not self.row_count():
            return None
        if self.cursor < len(self.live):
            return self.live[self.cursor]
        return self._value_of_node(self.row(self.cursor).node)

    def _value_of_node(self, node: StackTraceNode | None) -> ValueInfo | None:
        """The live value a stack-trace leaf stands for, if exactly one matches its label
        (its op_name, or its name, and its shape index); remembered per node."""
        if node is None or node.children:
            return None
        if id(node) not in self._node_values:
            self._node_values[id(node)] = self._match_node(node.label)
        return self._node_values[id(node)]

    def _match_node(self, label: str) -> ValueInfo | None:
        candidates: Iterable[ValueInfo] = self.live
        records = self.live[0].records if len(self.live) > _SCAN_ABOVE else None
        if isinstance(records, UsedValues):
            # An op_name is read from the value's record: only the records whose text
            # holds the label (without its shape index) are read, not every one.
            ids = set(records.find_text(_SHAPE_INDEX.sub("", label)))
            candidates = [i for i in self.live if i.value_id in ids or i.value.label == label]
        matches = [
            i
            for i in candidates
            if (i.op_name or i.value.name)
            + (format_shape_index(i.value.shape_index) if i.value.shape_index else "")
            == label
            or i.value.label == label
        ]
        return matches[0] if len(matches) == 1 else None

    def cursor_moved(self, index: int) -> None:
        info = self.current_value()
        if info is not None and self.owner is not None:
            self.owner.select_value(info.value_id, self.id)

    def show_value(self, value_id: int | None) -> bool:
        """Put the cursor on ``value_id`` if it is live here (no message); None: no
        row is the selection."""
        at = self.live.index_of(value_id)
        if at is not None:
            self.place_cursor(at, center=True)
            return True
        self.hide_selection()
        return False

    # -- actions --------------------------------------------------------------------------
    def action_activate(self) -> None:
        if not self.row_count():
            return
        node = self.row(self.cursor).node
        if node is not None and node.children:
            if id(node) in self.collapsed:
                self.action_expand()
            else:
                self.action_collapse()
            return
        info = self.current_value()
        if info is not None and self.owner is not None:
            self.owner.select_value(info.value_id, self.id, open_detail=True)

    def action_expand(self) -> None:
        if not self.row_count():
            return
        row = self.row(self.cursor)
        if row.node is not None and id(row.node) in self.collapsed:
            self.collapsed.discard(id(row.node))
            self._refill_keeping(row.node)
        elif row.kind == "value":
            self.action_scroll_columns(8)

    def action_collapse(self) -> None:
        if not self.row_count():
            return
        row = self.row(self.cursor)
        if row.kind == "value":
            self.action_scroll_columns(-8)
        node = row.node
        if node is None:
            return
        if node.children and id(node) not in self.collapsed:
            self.collapsed.add(id(node))
            self._refill_keeping(node)
        elif row.parent >= 0:
            self.set_cursor(len(self.live) + row.parent, notify=True)

    def _refill_keeping(self, node: StackTraceNode) -> None:
        self._fill()
        for i, row in enumerate(self._tail):
            if row.node is node:
                self.set_cursor(len(self.live) + i)
                break
