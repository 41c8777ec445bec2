"""The main screen: four panes that share one selection and one step.

Large terminals show the panes side by side in a 2×2 grid; below 120 columns or 34
rows one pane shows at a time, with tabs above it (Tab / 1-4 switch). The widgets are
the same in both layouts, so nothing is lost on resize.

Selection flows one way: a pane announces :class:`ValueSelected` (or
:class:`AllocationHighlighted` / :class:`StepChanged`) to this screen, which handles it
at once (:meth:`MainScreen.deliver`: one frame per key) and hands it to every other
pane, which updates without announcing again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Container
from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget

from hlotop.loading.loader import ModuleDump
from hlotop.model.memory_space import space_names
from hlotop.ui.bindings import bindings
from hlotop.ui.messages import (
    AllocationHighlighted,
    MainScreenPainted,
    PaneActivated,
    StepChanged,
    ValueSelected,
)
from hlotop.ui.screens.diagnostics import DiagnosticsScreen
from hlotop.ui.screens.search import SearchScreen
from hlotop.ui.widgets.allocation_tree import AllocationTree, TreeLayout
from hlotop.ui.widgets.key_bar import KeyBar
from hlotop.ui.widgets.legend import Legend
from hlotop.ui.widgets.live_set import LiveSet
from hlotop.ui.widgets.pane_tabs import PANES, PaneTabs
from hlotop.ui.widgets.status_bar import StatusBar
from hlotop.ui.widgets.steps import StepIndex, step_summary
from hlotop.ui.widgets.summary_bar import SummaryBar
from hlotop.ui.widgets.timeline import Timeline
from hlotop.ui.widgets.value_detail import ValueDetail
from hlotop.units import human_bytes

PANE_IDS = tuple(p for p, _ in PANES)


@dataclass(frozen=True, slots=True)
class PaneIndexes:
    """What the panes index a dump by, made in one go before the screen is built (a
    thread can: at 100 MB a third of a second the UI thread would otherwise wait)."""

    steps: StepIndex  # shared by the timeline and the live set
    tree: TreeLayout

    @classmethod
    def of(cls, dump: ModuleDump) -> PaneIndexes:
        a = dump.analysis
        return cls(StepIndex(a.values, a.max_time), TreeLayout.of(dump))


class MainScreen(Screen):
    BINDINGS = bindings("main")
    # Textual repaints the whole screen when the focus moves (~30 ms at 120x40 on the
    # development machine); the panes whose look depends on the focus repaint
    # themselves (their :focus border is restyled, their cursor on focus and blur).
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (34, "-tall")]

    def __init__(
        self, dump: ModuleDump, carry: dict | None = None, indexes: PaneIndexes | None = None
    ):
        """``carry``: what :meth:`carry` returned on the screen this one replaces (the
        preview of the same dump): its pane, sort order and selection are kept.
        ``indexes``: ``PaneIndexes.of(dump)``, if made beforehand."""
        # Two at once while the whole dump replaces its preview: ids must differ.
        super().__init__(id="main" if dump.preview is None else "main-preview")
        self.dump = dump
        self._carry = carry
        self._first_value: int | None = None  # selected on mount (the tree's first row)
        self._indexes = indexes
        self.selected_value: int | None = None
        self.step: int = dump.analysis.peak_step or 0
        self.active = PANE_IDS[0]
        self._came_from: str | None = None

    # -- layout -----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield SummaryBar(self.dump)
        yield Legend(self.dump, id="legend")
        yield PaneTabs()
        with Container(id="panes"):
            indexes = self._indexes or PaneIndexes.of(self.dump)
            self._indexes = None  # the panes keep what they need
            yield AllocationTree(self.dump, layout=indexes.tree)
            yield Timeline(self.dump, indexes.steps)
            yield LiveSet(self.dump, indexes.steps)
            yield ValueDetail(self.dump)
        yield StatusBar()
        yield KeyBar()

    @property
    def compact(self) -> bool:
        """One pane at a time (small terminal)."""
        return self.has_class("-narrow") or self.has_class("-short")

    @property
    def tree(self) -> AllocationTree:
        return self.query_one(AllocationTree)

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def live(self) -> LiveSet:
        return self.query_one(LiveSet)

    @property
    def detail(self) -> ValueDetail:
        return self.query_one(ValueDetail)

    def on_mount(self) -> None:
        if getattr(self.app, "exiting", False):
            return  # q while this screen was being built: its panes may be gone
        self._apply_step(self.step)
        self.activate(PANE_IDS[0])
        tree = self.tree
        if tree.row_count():
            alloc, _ = tree.current()
            if len(alloc.values) == 1:
                self._first_value = alloc.values[0].value.id
                self.select_value(alloc.values[0].value.id, origin=tree.id)
            else:
                # Handled now, not queued: a selection carried from a preview (below)
                # must come after it, not be overwritten by it.
                self.deliver(AllocationHighlighted(alloc.index, tree.id))
        elif self.dump.analysis.values:
            self.select_value(self.dump.analysis.values[0].value.id)
        if self._carry is not None:
            self._take_over(self._carry)
        if self.dump.preview is not None:
            started = time.monotonic()
            total = human_bytes(self.dump.preview[1])

            def tick() -> None:
                stage = getattr(self.app, "load_stage", "")
                self.show_loading_stage(
                    f"reading all {total}{': ' + stage if stage else ''}… "
                    f"{time.monotonic() - started:.0f} s"
                )

            tick()
            self.set_interval(0.5, tick)
        self.call_after_refresh(lambda: self.app.post_message(MainScreenPainted()))

    # -- a preview, then the whole dump -----------------------------------------------
    def show_loading_stage(self, text: str | None) -> None:
        """Say what is still loading in the status bar (None: nothing is)."""
        self.query_one(StatusBar).set_note(text)

    def carry(self) -> dict:
        """What a screen of the whole dump keeps of this (preview) one: the active pane,
        the sort order, and the selected value or highlighted allocation (if the user
        moved away from the first row)."""
        tree = self.tree
        here = tree.current()
        moved = tree.cursor != 0 or self.selected_value != self._first_value
        return {
            "active": self.active,
            "by_size": tree.by_size,
            "value": self.selected_value if moved else None,
            "allocation": here[0].index if moved and here and here[1] is None else None,
        }

    def _take_over(self, carry: dict) -> None:
        tree = self.tree
        if tree.by_size != carry["by_size"]:
            tree.toggle_sort()
        if carry["value"] is not None and carry["value"] in self.dump.analysis.by_id:
            self.select_value(carry["value"])
        elif carry["allocation"] is not None:
            tree.show_allocation(carry["allocation"])
        self.activate(carry["active"])

    # -- the background pass over the value records ----------------------------------
    def show_records_progress(self, done: int, total: int, rate: float | None) -> None:
        self.query_one(StatusBar).set_progress(done, total, rate)

    def records_read(self) -> None:
        """The background pass is over: the diagnostics count is final."""
        self.query_one(StatusBar).set_progress(None)
        self.query_one(SummaryBar).refresh()

    def activate(self, pane: str, *, focus: bool = True) -> None:
        """Make ``pane`` the active one (shown on small terminals) and focus it."""
        self.active = pane
        for widget in self.query(".pane"):
            widget.set_class(widget.id == pane, "-active")
        self.query_one(PaneTabs).set_active(pane)
        if focus:
            widget = self.query_one(f"#{pane}")
            widget.focus()

    def on_descendant_focus(self, event) -> None:
        widget = event.widget
        while widget is not None and not widget.has_class("pane"):
            widget = widget.parent
        if widget is not None and widget.id != self.active:
            self.activate(widget.id, focus=False)

    def on_pane_activated(self, message: PaneActivated) -> None:
        self.activate(message.pane)

    # -- selection --------------------------------------------------------------------
    def deliver(self, message) -> None:
        """Handle a pane's message now (see :func:`hlotop.ui.messages.announce`)."""
        handler = {
            ValueSelected: self.on_value_selected,
            AllocationHighlighted: self.on_allocation_highlighted,
            StepChanged: self.on_step_changed,
            PaneActivated: self.on_pane_activated,
        }.get(type(message))
        if handler is None:
            self.post_message(message)
        else:
            handler(message)

    def select_value(self, value_id: int, origin: str | None = None) -> None:
        """Select value ``value_id`` in every pane but ``origin``."""
        info = self.dump.analysis.by_id.get(value_id)
        if info is None:
            return
        self.selected_value = value_id
        for pane in (self.tree, self.timeline, self.live):
            if pane.id != origin:
                pane.show_value(value_id)
        self.detail.show_value(value_id)
        self.query_one(StatusBar).set_value(info)

    def on_value_selected(self, message: ValueSelected) -> None:
        message.stop()
        self.select_value(message.value_id, message.origin)
        if message.open_detail:
            self._open_detail()

    def on_allocation_highlighted(self, message: AllocationHighlighted) -> None:
        message.stop()
        self.selected_value = None
        # No single value is selected: the other panes show no selection.
        self.timeline.show_value(None)
        self.live.show_value(None)
        self.detail.show_allocation(message.index)
        alloc = self.dump.analysis.allocation_of.get(message.index)
        if alloc is not None:
            self.query_one(StatusBar).set_allocation(alloc)
        if message.open_detail:
            self._open_detail()

    def _open_detail(self) -> None:
        if self.compact and self.active != "detail":
            self._came_from = self.active
            self.activate("detail")

    def on_step_changed(self, message: StepChanged) -> None:
        message.stop()
        self._apply_step(message.step)

    def _apply_step(self, step: int) -> None:
        self.step = step
        self.live.set_step(step)
        timeline = self.timeline
        self.query_one(StatusBar).set_step_text(step_summary(self.dump, step, timeline.counts))

    # -- actions ----------------------------------------------------------------------
    def action_next_pane(self) -> None:
        self.activate(PANE_IDS[(PANE_IDS.index(self.active) + 1) % len(PANE_IDS)])

    def action_previous_pane(self) -> None:
        self.activate(PANE_IDS[(PANE_IDS.index(self.active) - 1) % len(PANE_IDS)])

    def action_focus_pane(self, pane: str) -> None:
        self.activate(pane)

    def action_back(self) -> None:
        if self._came_from is not None:
            pane, self._came_from = self._came_from, None
            self.activate(pane)

    def action_jump_peak(self) -> None:
        peak = self.dump.analysis.peak_step
        if peak is None:
            self.notify("This dump has no live ranges, so no peak step.", severity="warning")
            return
        self.timeline.set_step(peak)

    def action_toggle_sort(self) -> None:
        self.tree.toggle_sort()

    def action_search(self) -> None:
        def chosen(value_id: int | None) -> None:
            if value_id is not None:
                self.select_value(value_id)
                if self.compact:
                    self._open_detail()

        names = space_names(self.dump.memory_usage_report)
        self.app.push_screen(SearchScreen(self.dump.analysis.values, names), chosen)

    def action_diagnostics(self) -> None:
        pending = None if self.dump.records_read else (self.query_one(StatusBar).progress or True)
        self.app.push_screen(DiagnosticsScreen(self.dump.diagnostics, pending))
