"""The diagnostics screen: lines hlotop could not use and other warnings, each a row
that leads to the allocation or value printed nearest its line.

The list (:class:`~hlotop.ui.widgets.diagnostic_list.DiagnosticList`) takes the keys; below
it, the highlighted diagnostic in full and where Enter goes. Enter closes the screen
and selects that allocation or value in the browser, through the path a pane takes when
the user selects one there (:class:`~hlotop.ui.base.selection.SelectionOwner`).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from hlotop.analysis.nearest import ALLOCATION, LISTING, VALUE, Place, Places
from hlotop.analysis.report_listing import report_listings
from hlotop.model import Diagnostic
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.host import host
from hlotop.ui.base.selection import SelectionOwner
from hlotop.ui.widgets.diagnostic_list import DiagnosticList
from hlotop.units import human_bytes, with_commas

NO_DIAGNOSTICS = "No diagnostics: every line of the dump was read."


class DiagnosticsScreen(ModalScreen[None]):
    """Lists ``diagnostics``; Enter on one selects the allocation or value nearest its
    line in the screen below (the browser) and closes this one."""

    BINDINGS = bindings("modal")
    AUTO_FOCUS = "#diagnostics-list"

    def __init__(
        self,
        diagnostics: list[Diagnostic],
        reading: tuple[int, int, float | None] | bool | None = None,
        dump=None,
    ):
        """``reading``: the background pass over the value records is still running
        (its progress, or True before its first report); their diagnostics come when
        it ends. ``dump``: the :class:`~hlotop.model.ModuleDump` the diagnostics are
        about (default: the app's ``module``)."""
        super().__init__()
        self.diagnostics = list(diagnostics)
        self.reading = reading
        self._dump = dump
        self._places: Places | None = None

    @property
    def dump(self):
        return self._dump if self._dump is not None else host(self).module

    def in_dump_order(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        """``diagnostics`` by file (the dump's files in order, then any other, such as
        a missing sibling) and by line, whole-file ones first: the background pass
        over the value records adds its diagnostics after the others'."""
        rank: dict[str, int] = {}
        dump = self.dump
        for f in dump.files if dump is not None else ():
            rank.setdefault(f.path, len(rank))
        for d in diagnostics:
            rank.setdefault(d.path, len(rank))
        return sorted(diagnostics, key=lambda d: (rank[d.path], d.line))

    def compose(self) -> ComposeResult:
        self.diagnostics = self.in_dump_order(self.diagnostics)
        with Vertical(id="diagnostics-body", classes="modal-body") as body:
            body.border_title = (
                f"Diagnostics ({with_commas(len(self.diagnostics))}) · ⏎ go to · esc close"
            )
            if self.reading:
                where = ""
                if isinstance(self.reading, tuple):
                    done, total, _ = self.reading
                    where = f" ({with_commas(done)} of {with_commas(total)} read)"
                yield Static(
                    Text(
                        f"Still reading the value records{where}: what they "
                        "hold is listed once they are all read.",
                        style="yellow",
                    ),
                    id="diagnostics-pending",
                )
            if not self.diagnostics:
                yield Static(Text(NO_DIAGNOSTICS, style="dim"), id="diagnostics-none")
                return
            yield DiagnosticList(self.diagnostics)
            yield Static(id="diagnostics-detail")

    def on_mount(self) -> None:
        if self.diagnostics:
            self._show_detail(0)

    # -- where a diagnostic leads ---------------------------------------------------
    def place_of(self, index: int) -> Place | None:
        """The allocation or value nearest diagnostic ``index``'s line, or None."""
        dump = self.dump
        if dump is None:
            return None
        if self._places is None:
            self._places = Places(dump)  # one pass over the dump, on first need
        d = self.diagnostics[index]
        return self._places.nearest(d.path, d.line)

    def target(self, place: Place) -> tuple[str, int] | None:
        """What Enter selects for ``place``: ``("value", id)``, or ``("allocation",
        index)`` for an allocation that holds several values or none (one holding a
        single value selects that value, as the allocation tree does), or ``("listing",
        i)`` for the ``i``-th allocation of a memory-usage report read alone; None if
        the dump has no such allocation or value."""
        analysis = self.dump.analysis
        if place.kind == LISTING:  # a memory-usage report alone: pane 1 lists its allocations
            return (LISTING, place.id)
        if place.kind == ALLOCATION:
            alloc = analysis.allocation_of.get(place.id)
            if alloc is None:
                return None
            if len(alloc.values) != 1:
                return (ALLOCATION, alloc.index)
            return (VALUE, alloc.values[0].value.id)
        return (VALUE, place.id) if place.id in analysis.by_id else None

    def _nowhere(self, index: int) -> str:
        """Why Enter on diagnostic ``index`` goes nowhere: the whole file, or a line
        of a file that prints no allocation or value (the HLO text beside the dump,
        read for its stack frames), or one whose allocation or value was not read."""
        d = self.diagnostics[index]
        if d.line <= 0:
            return "It concerns the whole file: there is no line to go to."
        name = printable(Path(d.path).name)
        return (
            f"Line {d.line} of {name} is near no allocation or value that was read: "
            "there is nothing to go to."
        )

    def _describe(self, index: int, place: Place | None) -> Text:
        target = None if place is None else self.target(place)
        if place is None or target is None:
            return Text(self._nowhere(index), style="dim")
        analysis = self.dump.analysis
        kind, ident = target
        text = Text("⏎ goes to ", style="dim")
        if kind == LISTING:
            report = self.dump.memory_usage_report
            x = report_listings(report, analysis.platform)[ident]
            named = (
                f"allocation {x.index}" if x.index is not None else f"{x.space} table {x.number}"
            )
            text.append(printable(named), style="bold")
            text.append(f" of the memory-usage report, printed at line {place.line}", style="dim")
            return text
        text.append(f"{kind} {ident}", style="bold")
        if kind == ALLOCATION:
            text.append(f" ({human_bytes(analysis.allocation_of[ident].size)})")
        else:
            text.append(" ")
            text.append(printable(analysis.by_id[ident].value.label), style="bold")
        if place.kind == ALLOCATION and kind == VALUE:
            text.append(
                f", the only value of allocation {place.id} (line {place.line})", style="dim"
            )
        else:
            text.append(f", printed at line {place.line}", style="dim")
        return text

    def _show_detail(self, index: int) -> None:
        d = self.diagnostics[index]
        where = printable(f"{d.path}:{d.line}" if d.line else d.path)
        text = Text(no_wrap=False)
        text.append(where, style="bold")
        error = "bold" if self.app.no_color else "red"  # red is near-invisible as a grey
        text.append(f" {d.severity}: ", style=error if d.severity == "error" else "yellow")
        text.append(printable(d.message))
        text.append("\n")
        text.append_text(self._describe(index, self.place_of(index)))
        self.query_one("#diagnostics-detail", Static).update(text)

    def on_diagnostic_list_highlighted(self, message: DiagnosticList.Highlighted) -> None:
        message.stop()
        self._show_detail(message.index)

    # -- going there ----------------------------------------------------------------
    def on_diagnostic_list_chosen(self, message: DiagnosticList.Chosen) -> None:
        message.stop()
        place = self.place_of(message.index)
        target = None if place is None else self.target(place)
        if target is None:
            self.notify(self._nowhere(message.index), severity="warning")
            return
        stack = self.app.screen_stack
        browser = stack[-2] if len(stack) >= 2 and stack[-1] is self else None
        self.dismiss(None)
        if browser is not None:
            self._go_to(browser, *target)

    def _go_to(self, browser: Screen, kind: str, ident: int) -> None:
        """Select value or allocation ``ident`` in ``browser`` as a pane would: a value
        in every pane; an allocation with the allocation tree's cursor on it."""
        if kind == LISTING:
            show = getattr(browser, "show_report_listing", None)
            if show is not None:
                show(ident)
            return
        if not isinstance(browser, SelectionOwner):
            return
        if kind == VALUE:
            browser.select_value(ident, None, open_detail=True)
        else:
            browser.highlight_allocation(ident, None, open_detail=True)

    def action_close(self) -> None:
        self.dismiss(None)
