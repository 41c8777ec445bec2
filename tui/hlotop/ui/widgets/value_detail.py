"""The detail card of the selected value (or of a highlighted allocation).

Every piece of dump text goes in as ``rich.text.Text``, never as markup: op_names hold
``[`` (``args[0]``, ``conv_general_dilated[window_strides=(1,) ...]``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Size
from textual.strip import Strip

from hlotop.analysis.report_listing import ReportListing
from hlotop.analysis.why import ValueFacts, defined_by, reasons_at, value_facts
from hlotop.analysis.why_index import WhyIndex
from hlotop.model import BufferAllocation, ModuleDump, UsedValues, ValueInfo
from hlotop.model.memory_space import space_names
from hlotop.report.figures import advise_quietly
from hlotop.report.text_fit import NAME_BREAKS, SCOPE_BREAKS, WORD_BREAKS, wrap
from hlotop.report.why_report import last_use_text, reason_text
from hlotop.safe_text import drawn, printable
from hlotop.shapes import ArrayShape, BufferShape, try_parse_shape
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.textual_compat import SteadyScrollView, set_virtual_size
from hlotop.ui.view_models.spaces import space_label
from hlotop.ui.view_models.steps import instruction_at
from hlotop.ui.view_models.tree_layout import kinds_text
from hlotop.ui.widgets.legend import plain, space_style
from hlotop.ui.widgets.source_block import source_block
from hlotop.units import human_bytes, with_commas

_MAX_LISTED = 200  # lines of a list (uses, positions, stack)
_MAX_VALUES = 24  # values listed in an allocation's card (each a line or two to render;
# at 50, a big allocation's card took 20 ms a key to draw)
_NEWLINE = Segment.line()
# A card: one renderable, or the parts above and below a value's "why live" block
Card = RenderableType | tuple[RenderableType, RenderableType | None]


def exact(n: int) -> Text:
    """``14,680,064 bytes (14.00MiB)``."""
    text = Text(f"{with_commas(n)} bytes")
    if n >= 1024:
        text.append(f" ({human_bytes(n)})", style="bold")
    return text


def split_shape(shape_text: str | None) -> tuple[str, str, str]:
    """(shape without layout, layout, tiling) of an array shape; a tuple stays whole."""
    if not shape_text:
        return "?", "", ""
    shape = try_parse_shape(shape_text)
    if isinstance(shape, BufferShape):
        shape = shape.inner
    if isinstance(shape, ArrayShape):
        layout = shape.layout
        return (
            str(replace(shape, layout=None)),
            str(layout) if layout else "",
            layout.tiling if layout else "",
        )
    return shape_text, "", ""


# An op_name is broken after a / of its name scope, then at a space of its [params],
# then after a . _ or - of a name; never inside a word.
_OP_NAME_BREAKS = (SCOPE_BREAKS, WORD_BREAKS, NAME_BREAKS)


class _Grid:
    """Two columns, dim labels and folded values: what ``Table.grid(padding=(0, 1))``
    draws, at a fraction of the cost (a Rich table measures every cell before drawing
    it; a card of 200 values took tens of ms)."""

    def __init__(self) -> None:
        self.rows: list[tuple[Text, Text, tuple[re.Pattern[str], ...]]] = []
        self.label_width = 0  # at least: grids above and below a block line up

    def add_row(
        self, label: str | Text, value: Text, breaks: tuple[re.Pattern[str], ...] = ()
    ) -> None:
        """``breaks``: where a value too long for a line may be broken, coarsest first
        (:mod:`hlotop.report.text_fit`); none: at spaces, else anywhere."""
        self.rows.append((Text(label) if isinstance(label, str) else label, value, breaks))

    def __rich_console__(self, console, options):
        if not self.rows:
            return
        label_w = max(self.label_width, *(label.cell_len for label, _, _ in self.rows))
        # As a table does: the value column is as wide as its longest line, at most
        # what is left; every cell is padded to its column's width in its own style.
        value_w = min(
            max(1, options.max_width - label_w - 1),
            max(cell_len(line) for _, value, _ in self.rows for line in value.plain.split("\n")),
        )
        blank = Text(" " * (label_w + 1), style="dim")
        for label, value, breaks in self.rows:
            head = label.copy()
            head.pad_right(label_w + 1 - head.cell_len)
            head.stylize("dim")
            lines = _broken(console, value, value_w, breaks) if breaks else None
            for i, line in enumerate(lines or _wrapped(console, value, value_w)):
                line.pad_right(value_w - line.cell_len)
                row = Text(no_wrap=True, end="")
                row.append_text(head if i == 0 else blank)
                row.append_text(line)
                # Segments, not the Text: a Text yielded would be wrapped once more.
                yield from row.render(console)
                yield _NEWLINE


def _broken(console, value: Text, width: int, breaks) -> list[Text] | None:
    """``value`` (one line) on lines of ``width`` cells broken only where ``breaks``
    allow (an op_name after a ``/``, not inside ``bkhd``); a piece longer than a line
    folded. None where :func:`_wrapped` does as well (it fits, or has lines)."""
    plain = value.plain
    if "\n" in plain or value.cell_len <= width:
        return None
    out: list[Text] = []
    at = 0
    for piece in wrap(plain, width, *breaks).split("\n"):
        start = plain.index(piece, at)
        at = start + len(piece)
        line = value[start:at]
        out.extend([line] if line.cell_len <= width else line.wrap(console, width, overflow="fold"))
    return out


def _wrapped(console, value: Text, width: int) -> list[Text]:
    """``value.wrap(console, width, overflow="fold")``, with Rich's wrapping only for
    the lines that need it (a list of 100 uses is mostly short lines)."""
    if "\n" not in value.plain:
        if value.cell_len <= width:
            return [value.copy()]
        return list(value.wrap(console, width, overflow="fold"))
    out: list[Text] = []
    for line in value.split("\n", allow_blank=True):
        if line.cell_len <= width:
            out.append(line)
        else:
            out.extend(line.wrap(console, width, overflow="fold"))
    return out


def _grid() -> _Grid:
    return _Grid()


def _lines(items) -> Text:
    """One line per item (dump text made printable), the first :data:`_MAX_LISTED`
    of them, or a dim "(none)"."""
    items = list(items)
    if not items:
        return Text("(none)", style="dim")
    text = Text("\n".join(drawn(str(i)) for i in items[:_MAX_LISTED]))
    if len(items) > _MAX_LISTED:
        text.append(f"\n… {len(items) - _MAX_LISTED} more", style="dim")
    return text


class ValueDetail(SteadyScrollView, can_focus=True):
    """A scrollable card: :meth:`show_value` or :meth:`show_allocation`.

    A Line API widget: a card is rendered to lines once (when it is chosen, or when the
    pane is next shown if it is hidden), and a new card changes no layout. A ``Static``
    in a scrolling container would have the whole screen laid out again, and the card
    rendered twice, on every cursor move in another pane."""

    BINDINGS = bindings("detail")

    def __init__(self, dump: ModuleDump, *, id: str | None = "detail", why: WhyIndex | None = None):
        """``why``: the module's :class:`~hlotop.analysis.why_index.WhyIndex`, if made
        beforehand (by the load thread); else made when first needed."""
        super().__init__(id=id, classes="pane")
        self.dump = dump
        self.names = space_names(dump)
        self.value_id: int | None = None
        self.allocation: int | None = None
        self.step: int | None = None  # the timeline's cursor: why the value is live there
        self.border_title = "4 Detail"
        # The card: its part above the "why live" block and the part below it (None)
        self._card: tuple[RenderableType, RenderableType | None] = (
            Text("Select a value in any pane.", style="dim"),
            None,
        )
        self._card_key: tuple | None = None  # ("value", id) or ("allocation", index)
        # Makes the card: its two parts, or one renderable (no "why live" block under it)
        self._make_card: Callable[[], Card] | None = None
        # The "why live at step N" block between them, made again at each step (a value's)
        self._make_why: Callable[[], RenderableType] | None = None
        # The two parts drawn, by (card key, part, width, style): the cursor going back
        # and forth over the same rows draws each card once, and a move of the step
        # draws only the few lines of the block.
        self._drawn: LRUCache[tuple, list[Strip]] = LRUCache(16)
        self._lines: list[Strip] | None = None  # the card rendered; None: not yet
        self._lines_width = 0
        self._why = why
        self._facts: ValueFacts | None = None  # the shown value's (analysis.why)

    def show_value(self, value_id: int) -> None:
        info = self.dump.analysis.by_id.get(value_id)
        if info is None:
            return
        self.value_id, self.allocation = value_id, None
        self.border_title = f"4 Value {info.value.id}"
        self._set_card(
            ("value", value_id),
            lambda: self.value_parts(info),
            lambda: self.why_block(info),
        )

    def show_allocation(self, index: int) -> None:
        alloc = self.dump.analysis.allocation_of.get(index)
        if alloc is None:
            return
        self.value_id, self.allocation = None, index
        self.border_title = f"4 Allocation {index}"
        self._set_card(("allocation", index), lambda: self.allocation_card(alloc))

    def show_report_allocation(self, listing: ReportListing) -> None:
        """Show an allocation of a memory-usage report read alone (no buffer assignment:
        :mod:`hlotop.analysis.report_listing`): what the report prints of it."""
        self.value_id, self.allocation = None, None
        where = (
            f"allocation {listing.index}"
            if listing.index is not None
            else f"{printable(listing.space)} table {listing.number}"
        )
        self.border_title = f"4 {where} (memory-usage report)"
        key = ("report", listing.color, listing.number)
        self._set_card(key, lambda: self.report_card(listing))

    def set_step(self, step: int) -> None:
        """The timeline's cursor is at ``step``: a value's card says why it is live
        there (only that block is drawn again)."""
        if step == self.step:
            return
        self.step = step
        if self._make_why is None:
            return
        self._lines = None
        if self.display and self.size.width:
            self._render_card()
        self.refresh()

    # -- lines ------------------------------------------------------------------------
    def _set_card(
        self,
        key: tuple,
        make: Callable[[], Card],
        make_why: Callable[[], RenderableType] | None = None,
    ) -> None:
        """Show the card ``make()`` builds (``key`` names it): one renderable, or two
        parts with the ``make_why()`` block between them; drawn now if shown."""
        self._card_key, self._make_card, self._make_why = key, make, make_why
        self._lines = None
        self.scroll_to(0, 0, animate=False)
        if self.display and self.size.width:
            self._render_card()
        self.refresh()

    def _render_card(self) -> None:
        """Render the card at the width there is (after a scrollbar, if one shows)."""
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        # As Textual renders a Static: the widget's style under every segment, lines
        # padded with its background only.
        style = self.rich_style
        key = self._card_key
        top = self._drawn.get((key, "top", width, style))
        bottom = self._drawn.get((key, "bottom", width, style))
        if top is None or bottom is None:
            if self._make_card is not None:
                made, self._make_card = self._make_card(), None
                self._card = made if isinstance(made, tuple) else (made, None)
            head, tail = self._card
            top = self._strips(head, width, style)
            bottom = self._strips(tail, width, style) if tail is not None else []
            if key is not None:
                self._drawn[(key, "top", width, style)] = top
                self._drawn[(key, "bottom", width, style)] = bottom
        why = self._strips(self._make_why(), width, style) if self._make_why is not None else []
        self._lines = top + why + bottom if why else top + bottom
        self._lines_width = width
        set_virtual_size(self, Size(width, len(self._lines)))

    def _strips(self, card: RenderableType, width: int, style: Style) -> list[Strip]:
        console = self.app.console
        segments = console.render(
            card, self.app.console_options.update(highlight=False, width=width)
        )
        segments = (Segment(text, style + seg_style, None) for text, seg_style, _ in segments)
        pad = Style(bgcolor=style.bgcolor)
        return [
            Strip(line or [Segment("", style)]).extend_cell_length(width, pad)
            for line in Segment.split_and_crop_lines(
                segments, width, include_new_lines=False, pad=False
            )
        ]

    def _rerender(self) -> None:
        if self.size.width and (
            self._lines is None or self._lines_width != self.scrollable_content_region.width
        ):
            self._render_card()
            self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._rerender()

    def on_show(self, event: events.Show) -> None:
        self._rerender()

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        self.call_after_refresh(self._rerender)  # narrower or wider: wrap again

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        blank = Style(bgcolor=self.rich_style.bgcolor)
        scroll_x, scroll_y = self.scroll_offset
        y += scroll_y
        if self._lines is None or y >= len(self._lines):
            return Strip.blank(width, blank)
        return self._lines[y].crop_extend(scroll_x, scroll_x + width, blank)

    # -- cards ------------------------------------------------------------------------
    def value_card(self, info: ValueInfo) -> Group:
        """The whole card of ``info``: :meth:`value_parts` and, between them,
        :meth:`why_block`."""
        top, bottom = self.value_parts(info)
        return Group(top, self.why_block(info), bottom)

    def _index(self) -> WhyIndex:
        """The module's :class:`~hlotop.analysis.why_index.WhyIndex`, made again if
        the dump's live ranges were replaced under this pane (a first look completed)."""
        why = self._why
        live = self.dump.live_range
        sequence = live.instruction_sequence if live is not None else ()
        if why is None or why.module is not self.dump or why.sequence is not sequence:
            why = self._why = WhyIndex(self.dump)
            self._facts = None
        return why

    def facts(self, info: ValueInfo) -> ValueFacts | None:
        """:func:`hlotop.analysis.why.value_facts` of ``info``, kept for the value shown
        (a move of the step reads none of its records again); None in a first look."""
        if self.dump.preview is not None or self.dump.live_range is None:
            return None
        index = self._index()
        facts = self._facts
        if facts is None or facts.info is not info:
            facts = self._facts = value_facts(info, index)
        return facts

    def why_block(self, info: ValueInfo) -> RenderableType:
        """Why ``info`` is live at :attr:`step` (the timeline's cursor), a line a
        reason (:func:`hlotop.analysis.why.reasons_at`, worded as ``hlotop why`` words
        it)."""
        step = self.step
        if self.dump.preview is not None:
            return Text("why live: loading…", style="italic")
        if self.dump.live_range is None:
            return Text("why live: the dump has no live ranges", style="dim")
        facts = self.facts(info)
        if facts is None or step is None:
            return Text("")
        peak = " (XLA's peak)" if step == self.dump.analysis.peak_step else ""
        live = (info.live.start, info.live.end) if info.live is not None else None
        text = Text(f"why live at step {step}{peak}:", style="bold")
        for reason in reasons_at(facts, step):
            kind = "dim" if reason.kind == "not-live" else ""
            text.append("\n  · ")
            text.append(printable(reason_text(reason, step, live)), style=kind)
        return text

    def value_parts(self, info: ValueInfo) -> tuple[Group, Group]:
        """The card of ``info`` above the "why live" block (its title and facts) and
        below it (its from-instruction text)."""
        v = info.value
        style = space_style(info.color, plain(self))
        title = Text(drawn(str(v)), style=f"bold {style}")
        t = _grid()
        instr = info.used.instruction if info.used else None
        shape, layout, tiling = (drawn(x) for x in split_shape(info.shape))
        t.add_row("shape", Text(shape, style="bold"))
        t.add_row("layout", Text(layout or "(none printed)"))
        t.add_row("tiling", Text(tiling or "none"))
        t.add_row(
            "memory space",
            Text(f"{space_label(info.color, self.names)} (color {info.color})", style=style),
        )
        slot = info.slot
        if slot is not None:
            alloc = self.dump.analysis.allocation_of.get(slot.allocation)
            where = Text(f"{slot.allocation}")
            if alloc is not None:
                where.append(f" · {kinds_text(alloc)} · {human_bytes(alloc.size)}")
            t.add_row("allocation", where)
            t.add_row("offset", exact(slot.offset))
        else:
            t.add_row("allocation", Text("none (no allocation line names this value)", style="dim"))
        t.add_row("allocated", exact(info.allocated_bytes))
        t.add_row("logical", exact(info.logical_bytes))  # its shape, XLA's V2+ peak lists
        if info.sweep_bytes != info.logical_bytes and info.live is not None:
            sweep = exact(info.sweep_bytes)
            sweep.append("  its instruction's whole shape: XLA's peak sweep, V1 lists", "dim")
            t.add_row("XLA's size", sweep)
        if info.padding_bytes:
            pad = exact(info.padding_bytes)
            if info.logical_bytes:
                pad.append(
                    f"  ×{info.allocated_bytes / info.logical_bytes:.2f} expansion", style="yellow"
                )
            t.add_row("padding", pad)
            advice = advise_quietly(info)
            for cause in advice.causes if advice is not None else ():
                t.add_row("", Text(cause.reason, style="dim"))
        else:
            t.add_row("padding", Text("none"))
        if info.live is not None:
            start, end = info.live.start, info.live.end
            t.add_row(
                "live range",
                Text(
                    drawn(
                        f"steps {start}-{end}: {instruction_at(self.dump, start)} → "
                        f"{instruction_at(self.dump, end)}"
                    )
                ),
            )
        elif self.dump.preview is not None:
            t.add_row("live range", Text("loading…", style="italic"))
        else:
            t.add_row(
                "live range",
                Text("none (not in the HloLiveRange section, e.g. thread-local)", style="dim"),
            )
        if instr is not None:
            t.add_row("defined by", Text(drawn(f"{instr.name or v.name} ({instr.opcode or '?'})")))
        if instr is not None:
            if instr.op_type:
                t.add_row("op_type", Text(drawn(instr.op_type)))
            t.add_row(
                "op_name",
                Text(drawn(instr.op_name)) if instr.op_name else Text("(no metadata)", style="dim"),
                _OP_NAME_BREAKS,
            )
        facts = self.facts(info)
        if facts is not None:
            t.add_row("phase", Text(defined_by(info, self._index()).phase))
            t.add_row("last use", Text(printable(last_use_text(facts.last_use))))
        rest = _grid()  # below the "why live" block
        problem = info.records.problem if isinstance(info.records, UsedValues) else None
        if info.used is None and problem is not None:  # its file changed or went
            rest.add_row("record", Text(drawn(f"not read: {problem}"), style="italic"))
        if info.used is not None:
            rest.add_row("positions", _lines(info.used.positions))  # printable in _lines
            uses = info.used.uses
            rest.add_row(
                "uses", _lines(uses) if uses is not None else Text("not initialized", style="dim")
            )
        rest.add_row(
            "source", Text(drawn(info.source)) if info.source else Text("(none)", style="dim")
        )
        stack = info.stack
        if stack:
            rest.add_row("python stack", _lines(stack))
        lines = [str(x.line) for x in (slot, info.used, info.live) if x is not None and x.line]
        if lines:
            rest.add_row("dump lines", Text(", ".join(lines)))
        t.label_width = rest.label_width = max(
            label.cell_len for label, *_ in (*t.rows, *rest.rows)
        )
        below: list[RenderableType] = [rest]
        below += source_block(info, [f.path for f in self.dump.files])
        if instr is not None:
            below += [
                Text(""),
                Text("from instruction:", style="dim"),
                Text(drawn(instr.text), style="italic", overflow="fold"),
            ]
        return Group(title, t), Group(*below)

    def report_card(self, x: ReportListing) -> Group:
        """A memory-usage report's allocation: its line as printed (era A), memory
        space, kinds, and its table's rows: offset, the largest size there, how many
        values, their shapes."""
        style = space_style(x.color, plain(self))
        head = x.head
        title = Text(
            f"allocation {x.index}"
            if x.index is not None
            else f"table {x.number} of {printable(x.space)}",
            style=f"bold {style}",
        )
        t = _grid()
        if head is not None:
            t.add_row("as printed", Text(printable(x.table.summary), style="italic"))
            t.add_row("size", Text(f"{human_bytes(head.size)} (XLA's rounded text)"))
            t.add_row("kinds", Text(printable(x.kinds) or "-"))
            if head.parameter_shape or head.output_shape:
                t.add_row("shape", Text(printable(head.parameter_shape or head.output_shape or "")))
        t.add_row("memory space", Text(f"{printable(x.space)} (color {x.color})", style=style))
        if x.rows:
            hidden = f" (+ {x.table.hidden_rows} XLA leaves out)" if x.table.hidden_rows else ""
            t.add_row("offsets", Text(f"{len(x.rows)}{hidden}"))
            t.add_row("cumulative", Text(f"{x.cumulative} (the sizes at its offsets added up)"))
        t.add_row("values", Text("none read: the report gives their shapes", style="dim"))
        if x.table.line:
            t.add_row("report line", Text(str(x.table.line)))
        parts: list[RenderableType] = [title, t]
        if x.rows:
            rows = _grid()
            for row in x.rows[:_MAX_VALUES]:
                rows.add_row(
                    Text(f"@{row.offset}"),
                    Text(
                        printable(f"{row.size:>9}  {row.used_by_n_values}×: {x.shapes_text(row)}")
                    ),
                )
            parts += [
                Text(""),
                Text("offsets (offset, largest size there, values: shapes):", style="dim"),
                rows,
            ]
            if len(x.rows) > _MAX_VALUES:
                parts.append(
                    Text(
                        f"… {len(x.rows) - _MAX_VALUES} more (pane 1 lists them all: → expands it)",
                        style="dim",
                    )
                )
        return Group(*parts)

    def allocation_card(self, alloc: BufferAllocation) -> Group:
        style = space_style(alloc.color, plain(self))
        title = Text(f"allocation {alloc.index}", style=f"bold {style}")
        t = _grid()
        t.add_row("size", exact(alloc.size))
        if alloc.page is not None:  # printed since jax 0.11's XLA
            t.add_row("page", Text(str(alloc.page)))
        t.add_row(
            "memory space",
            Text(f"{space_label(alloc.color, self.names)} (color {alloc.color})", style=style),
        )
        t.add_row("kinds", Text(kinds_text(alloc)))
        if alloc.parameter is not None:
            t.add_row("parameter shape", Text(drawn(alloc.parameter_shape or "?")))
        if alloc.output_shape is not None:
            t.add_row("output shape", Text(drawn(alloc.output_shape)))
        loading = self.dump.preview is not None  # a first look: no values yet
        t.add_row(
            "values",
            Text("loading…", style="italic") if loading else Text(with_commas(len(alloc.values))),
        )
        if alloc.line:
            t.add_row("dump line", Text(str(alloc.line)))
        if loading:
            return Group(title, t)
        values = _grid()
        for slot in alloc.values[:_MAX_VALUES]:
            values.add_row(
                Text(f"@{slot.offset}"),
                Text(drawn(f"{human_bytes(slot.size):>9}  {slot.value}  {slot.shape}")),
            )
        parts: list[RenderableType] = [
            title,
            t,
            Text(""),
            Text("values (offset, size, value, shape):", style="dim"),
            values,
        ]
        if len(alloc.values) > _MAX_VALUES:
            parts.append(
                Text(
                    f"… {len(alloc.values) - _MAX_VALUES} more (the allocation "
                    "tree lists them all: → expands it)",
                    style="dim",
                )
            )
        if alloc.reused_by:
            parts.append(Text("reused by buffers of a different color:", style="dim"))
            parts.append(_lines(f"{v} (color={c})" for v, c in alloc.reused_by))
        return Group(*parts)
