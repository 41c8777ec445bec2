"""The out-of-memory screen (``hlotop LOG``): one message of the text at a time, its
figures above (:func:`hlotop.report.oom_report.report_head`, its tables' other lines
left to the whole text, ``o``), the buffers it lists as a list
(:class:`~hlotop.ui.widgets.oom_list.OomList`: ``s`` sort, ``b`` group, ``/`` filter),
and below the highlighted buffer in full. ``m`` shows the next message; Enter on a
buffer linked to ``--dump``'s module opens that module with the value selected (the
app does: :meth:`hlotop.ui.apps.oom_app.OomApp.open_value`). A message that lists no buffer
shows its figures whole in the list's place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, Static

from hlotop.analysis.oom_entries import GROUPS, SORTS
from hlotop.analysis.oom_link import OomLink
from hlotop.model.oom import OomEntry, OomReport
from hlotop.report.oom_report import instruction_text, render_ooms, report_head, size_text
from hlotop.report.text_fit import OP_NAME_BREAKS, wrap
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings, keys
from hlotop.ui.base.host import host
from hlotop.ui.widgets.key_bar import KeyBar
from hlotop.ui.widgets.oom_list import SCREEN_ACTIONS, OomList, OomRow
from hlotop.ui.widgets.rendered_text import RenderedText, WholeText
from hlotop.units import human_bytes

_KEYS_NOTE = "⏎ open · s sort · b group · / filter · m message · o text"


class OomScreen(Screen):
    """``reports`` (one text's), ``links[i]``: report i's entries' values in
    ``module_name`` (empty without ``--dump``); ``first``: the report shown first
    (the most telling)."""

    BINDINGS = [k.binding() for k in keys("oom") if k.action in SCREEN_ACTIONS]
    DEFAULT_CSS = """
    #oom-head { height: auto; max-height: 40%; padding: 0 1; }
    #oom-head.-whole { height: 1fr; max-height: 100%; }
    #oom-filter { display: none; }
    #oom-list { height: 1fr; border: round $accent; }
    #oom-list:focus { border: round $accent-lighten-2; }
    #oom-detail { height: 7; padding: 0 1; border-top: solid $panel-lighten-2; }
    """

    def __init__(
        self,
        label: str,
        reports: Sequence[OomReport],
        links: Sequence[Sequence[OomLink | None]] = (),
        module_name: str = "",
        first: int = 0,
    ):
        super().__init__(id="oom-view")
        self.label = label
        self.reports = list(reports)
        self.links = list(links)
        self.module_name = module_name
        self.index = self.first = first
        self.list = OomList()
        most = self.reports[first]
        self.whole_text = WholeText(render_ooms(self.reports, self.links, module_name, most))

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="oom-head"):
            yield Static(id="oom-figures")
        yield Input(
            placeholder="filter: words, or field:word (op_name shape label source type value)",
            id="oom-filter",
            compact=True,
        )
        yield self.list
        yield Static(id="oom-detail")
        yield KeyBar()

    def on_mount(self) -> None:
        self.show_report(self.index)
        width = self.app.size.width - WHOLE_TEXT_MARGIN
        console = self.app.console
        self.run_worker(lambda: self.whole_text.lines(console, width), thread=True)

    # -- the message shown ----------------------------------------------------------------
    @property
    def report(self) -> OomReport:
        return self.reports[self.index]

    def report_links(self, index: int | None = None) -> Sequence[OomLink | None]:
        i = self.index if index is None else index
        return self.links[i] if i < len(self.links) else ()

    def show_report(self, index: int) -> None:
        """Show message ``index`` of the text: its figures, its buffers (the sort,
        grouping and filter kept)."""
        self.index = index
        report = self.report
        several = len(self.reports) > 1
        title = f"Message {index + 1} of {len(self.reports)}" if several else "Out of memory"
        listing = bool(report.entries)
        head = self.query_one("#oom-head", VerticalScroll)
        head.set_class(not listing, "-whole")
        figures: RenderableType = report_head(report, title, stats=not listing)
        if not listing:
            more = "; m shows the next message" if several else ""
            figures = Group(figures, Text(""), Text(f"It lists no buffers{more}.", style="dim"))
        self.query_one("#oom-figures", Static).update(figures)
        for widget in (self.list, self.query_one("#oom-detail")):
            widget.display = listing
        which = f" · message {index + 1} of {len(self.reports)}" if several else ""
        self.app.sub_title = f"out of memory · {printable(self.label)}{which}"
        self.list.show_report(report, self.report_links())
        self._titles()
        self.set_focus(self.list if listing else head)

    def _titles(self) -> None:
        report, lst = self.report, self.list
        entries = report.entries
        total = sum(e.size_bytes for e in entries)
        exact = all(e.size.exact for e in entries)
        title = f"Buffers · {len(entries)} listed, {'' if exact else '≈'}{human_bytes(total)}"
        if lst.filter:
            title += f" · {lst.shown} match {printable(lst.filter)!r}"
        title += f" · by {lst.sort}"
        if lst.group:
            title += f" · grouped by {lst.group}"
        links = self.report_links()
        if self.module_name:
            linked = sum(1 for link in links if link is not None)
            title += f" · {linked} linked to {printable(self.module_name)}"
        lst.border_title = title
        lst.border_subtitle = _KEYS_NOTE

    # -- the highlighted buffer -------------------------------------------------------------
    def on_oom_list_highlighted(self, message: OomList.Highlighted) -> None:
        message.stop()
        # a fixed height: no layout of the screen (the figures above took 24 ms a key)
        self.query_one("#oom-detail", Static).update(self.detail(message.row), layout=False)

    def detail(self, row: OomRow | None) -> RenderableType:
        """The row's buffer in full (or its group's figures)."""
        if row is None:
            what = "no buffer matches the filter (esc clears it)" if self.list.filter else ""
            return Text(what, style="dim")
        if row.group is not None:
            g = row.group
            total = sum(e.size_bytes for e in self.report.entries) or 1
            return Text.assemble(
                (printable(g.label), "bold"),
                f"  {len(g.members)} buffers, {'' if g.exact else '≈'}{human_bytes(g.bytes)}, "
                f"{100 * g.bytes / total:.1f}% of the listed bytes",
                ("  ⏎ closes or opens it", "dim"),
            )
        assert row.entry is not None
        return EntryDetail(
            self.report.entries[row.entry], self.list.link(row.entry), self.module_name
        )

    def on_oom_list_chosen(self, message: OomList.Chosen) -> None:
        message.stop()
        link = self.list.link(message.entry)
        if not self.module_name:
            self.notify(
                "No dump to open: give the module these buffers belong to, --dump DUMP.",
                severity="warning",
            )
        elif link is None:
            self.notify(
                f"This buffer names no value of {printable(self.module_name)} (by its label "
                "and shape, nor its op_name and shape).",
                severity="warning",
            )
        else:
            host(self).open_value(link.value.value.id)

    # -- actions (bound in bindings.py) ---------------------------------------------------
    def action_cycle_sort(self) -> None:
        self.list.set_sort(SORTS[(SORTS.index(self.list.sort) + 1) % len(SORTS)])
        self._titles()

    def action_cycle_group(self) -> None:
        order: list[str | None] = [None, *GROUPS]
        self.list.set_group(order[(order.index(self.list.group) + 1) % len(order)])
        self._titles()

    def action_next_message(self) -> None:
        if len(self.reports) < 2:
            self.notify("The text holds one out-of-memory message.")
            return
        self.show_report((self.index + 1) % len(self.reports))

    def action_whole_text(self) -> None:
        title = f"out of memory · {printable(self.label)}"
        self.app.push_screen(OomTextScreen(title, self.whole_text))

    def action_filter(self) -> None:
        if not self.report.entries:
            return
        box = self.query_one("#oom-filter", Input)
        box.display = True
        self.set_focus(box)  # now: the keys typed straight after "/" land in it

    def action_clear_or_quit(self) -> None:
        box = self.query_one("#oom-filter", Input)
        if not box.display and not self.list.filter:
            self.app.exit()
            return
        box.value = ""
        box.display = False
        self.list.set_filter("")
        self._titles()
        self.set_focus(self.list)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.list.set_filter(event.value)
        self._titles()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not event.value:
            event.input.display = False
        self.set_focus(self.list)


@dataclass(frozen=True, slots=True)
class EntryDetail:
    """:func:`entry_detail` at the console's width (a Rich renderable)."""

    entry: OomEntry
    link: OomLink | None
    module_name: str

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield entry_detail(self.entry, self.link, self.module_name, options.max_width)


def entry_detail(entry: OomEntry, link: OomLink | None, module_name: str, width: int = 80) -> Text:
    """A buffer in full, ``width`` cells wide: its size as printed (and exact bytes),
    the text's line, its shape, unpadded size, expansion and padding, instruction and
    type, the value it was linked to (and how) or why there is none, its source and,
    last (the longest), its op_name, broken after a ``/`` or ``_``, never inside a
    word."""
    text = Text(no_wrap=False)
    text.append(f"Buffer {entry.rank}  " if entry.rank else "Buffer  ", style="bold")
    text.append_text(size_text(entry.size))
    if entry.line:
        text.append(f"  line {entry.line}", style="dim")
    text.append("\nshape ", style="dim")
    text.append(printable(entry.shape or "?"))
    if entry.unpadded is not None:
        text.append("  unpadded ", style="dim")
        text.append(printable(entry.unpadded.text))
    if entry.expansion:
        text.append(f"  ×{entry.expansion:.2f}", style="dim")
    if entry.padding is not None:
        text.append("  padding ", style="dim")
        text.append(printable(entry.padding.text))
    what = instruction_text(entry)
    if what:
        text.append("\ninstruction ", style="dim")
        text.append(what)
    if entry.allocation_type:
        text.append("  type ", style="dim")
        text.append(printable(entry.allocation_type))
    if module_name:
        text.append("\nvalue ", style="dim")
        if link is None:
            text.append(
                f"none of {printable(module_name)} (by label and shape, or op_name and shape)"
            )
        else:
            text.append(printable(link.value.value.label), style="bold")
            how = f"by {link.rule}" + (
                f", the best of {link.candidates}" if link.candidates > 1 else ""
            )
            text.append(f" ({how})  ⏎ opens it", style="dim")
    if entry.source:
        text.append("\nsource ", style="dim")
        text.append(printable(entry.source))
    if entry.op_name:
        text.append("\nop_name ", style="dim")
        text.append(wrap(printable(entry.op_name), max(width - 8, 20), *OP_NAME_BREAKS))
    return text


# The whole text's width on a terminal ``width`` columns wide: its border, padding and
# scrollbar gutter (OomTextScreen's CSS) take 6.
WHOLE_TEXT_MARGIN = 6


class OomTextScreen(Screen[None]):
    """The whole text report, scrollable (↑↓, pgup/pgdn, home/end); esc, q or ?
    closes it."""

    BINDINGS = bindings("modal")
    DEFAULT_CSS = """
    #oom-text { width: 100%; height: 100%; border: round $accent; padding: 0 1;
        scrollbar-gutter: stable; }
    """

    def __init__(self, title: str, text: WholeText):
        super().__init__()
        self.title_text, self.text = title, text

    def compose(self) -> ComposeResult:
        text = RenderedText(self.text, id="oom-text")
        text.border_title = self.title_text
        text.border_subtitle = "esc close"
        yield text

    def on_mount(self) -> None:
        self.query_one("#oom-text").focus()

    def action_close(self) -> None:
        self.dismiss(None)
