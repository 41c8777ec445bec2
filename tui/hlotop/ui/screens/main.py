"""The main screen: four panes that share one selection and one step.

Large terminals show the panes side by side in a 2×2 grid; below 120 columns or 34
rows one pane shows at a time, with tabs above it (Tab / 1-4 switch). The widgets are
the same in both layouts, so nothing is lost on resize.

The screen owns the selection (:class:`hlotop.ui.base.selection.SelectionOwner`): a pane
tells it what the user chose, by calling it, and it shows that in every other pane, all
within the handler of the key (one frame per key). The other panes update without
telling it again.

A big dump is first shown from its preview (:func:`hlotop.loading.preview.preview`);
when the whole dump has loaded, :meth:`MainScreen.take_dump` swaps it in, in place:
whatever is open over the screen (a search, the help) stays open, and the pane, the
sort order and the selection are kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.containers import Container
from textual.reactive import Reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget

from hlotop.analysis.report_listing import ReportListing
from hlotop.analysis.why_index import WhyIndex
from hlotop.model import Advice, ModuleDump
from hlotop.model.memory_space import space_names
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.host import host
from hlotop.ui.base.messages import MainScreenPainted, PaneActivated
from hlotop.ui.base.textual_compat import forget_queried_widgets
from hlotop.ui.screens.diagnostics import DiagnosticsScreen
from hlotop.ui.screens.goto_step import GotoStepScreen
from hlotop.ui.screens.group_keys import GroupKeysScreen
from hlotop.ui.screens.icicle import IcicleScreen
from hlotop.ui.screens.list_filters import TITLES, ListFilters
from hlotop.ui.screens.overview import OverviewScreen
from hlotop.ui.screens.search import SearchScreen
from hlotop.ui.screens.value_keys import ValueKeys
from hlotop.ui.view_models.steps import LiveIndex, StepIndex, step_summary
from hlotop.ui.view_models.tree_layout import TreeLayout
from hlotop.ui.widgets.allocation_tree import AllocationTree
from hlotop.ui.widgets.filter_bar import FilterBar
from hlotop.ui.widgets.grouped_view import GroupedView
from hlotop.ui.widgets.key_bar import KeyBar
from hlotop.ui.widgets.legend import Legend
from hlotop.ui.widgets.live_set import LiveSet
from hlotop.ui.widgets.pane_tabs import PANES, PaneTabs, pane_of, set_pane_3
from hlotop.ui.widgets.report_tree import ReportTree
from hlotop.ui.widgets.status_bar import StatusBar
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
    live: LiveIndex
    tree: TreeLayout
    why: WhyIndex | None = None  # the detail card's (None: made when first needed)

    @classmethod
    def of(cls, dump: ModuleDump) -> PaneIndexes:
        a = dump.analysis
        a.settle()  # the timeline's curves, worked out here too
        steps = StepIndex(a.values, a.max_time)
        return cls(steps, LiveIndex(steps), TreeLayout.of(dump), WhyIndex(dump).warm())


def _breakpoint(breakpoints: list[tuple[int, str]], size: int) -> str:
    """The class of the last breakpoint at or below ``size`` (as Textual picks it)."""
    return [name for at, name in breakpoints if size >= at][-1]


class MainScreen(Screen):
    BINDINGS = bindings("main")
    # Textual repaints the whole screen when the focus moves (~30 ms at 120x40 on the
    # development machine); the panes whose look depends on the focus repaint
    # themselves (their :focus border is restyled, their cursor on focus and blur).
    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (34, "-tall")]

    def __init__(self, dump: ModuleDump, indexes: PaneIndexes | None = None):
        """``indexes``: ``PaneIndexes.of(dump)``, if made beforehand."""
        super().__init__(id="main")
        self.dump = dump
        self._indexes = indexes
        self._first_value: int | None = None  # selected on mount (the tree's first row)
        self.selected_value: int | None = None
        self.step: int = dump.analysis.peak_step or 0
        self.active = PANE_IDS[0]
        self._came_from: str | None = None
        self._search: SearchScreen | None = None  # open over this screen
        self._advice: tuple[ModuleDump, list[Advice]] | None = None  # `a`, made once a dump
        self.filter_bar = FilterBar(TITLES)
        self.lists = ListFilters(self)  # f and s
        self.value_keys = ValueKeys(self)  # the last search, the selected value's keys
        self._loading_timer: Timer | None = None  # ticks the status bar during a preview
        self.grouped = False  # pane 3 shows the grouped view (v), not the flat live set
        self.started = False  # its panes are set going (on_mount): keys reach them

    # -- layout -----------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # Textual sets the breakpoint classes on the screen's first resize, which comes
        # after the first paint (late while a big dump's load holds the interpreter): a
        # first look at 80x24 was drawn as the four-pane grid for up to a second.
        width, height = self.app.size
        self.add_class(
            _breakpoint(self.HORIZONTAL_BREAKPOINTS, width),
            _breakpoint(self.VERTICAL_BREAKPOINTS, height),
        )
        yield SummaryBar(self.dump)
        yield Legend(self.dump, id="legend")
        yield PaneTabs()
        with Container(id="panes"):
            yield from self._make_panes()
        yield self.filter_bar
        yield StatusBar()
        yield KeyBar()

    def _make_panes(self) -> list[Widget]:
        indexes = self._indexes or PaneIndexes.of(self.dump)
        self._indexes = None  # the panes keep what they need
        self.value_orders = indexes.steps.orders  # `s`'s orders, ranked by a worker
        live = LiveSet(self.dump, indexes.steps, index=indexes.live, owner=self)
        grouped = GroupedView(self.dump, owner=self)
        set_pane_3(live, grouped, self.grouped)
        # A memory-usage report alone: pane 1 lists the report's allocations.
        tree: AllocationTree | ReportTree = (
            ReportTree(self.dump, on_cursor=self._report_allocation)
            if self.dump.report_only
            else AllocationTree(self.dump, layout=indexes.tree, owner=self)
        )
        return [
            tree,
            Timeline(self.dump, indexes.steps, owner=self),
            live,
            grouped,
            ValueDetail(self.dump, why=indexes.why),
        ]

    @property
    def compact(self) -> bool:
        """One pane at a time (small terminal)."""
        return self.has_class("-narrow") or self.has_class("-short")

    @property
    def allocation_tree(self) -> AllocationTree:
        """Pane 1 of a dump with a buffer assignment (a first look has one)."""
        return self.query_one(AllocationTree)

    @property
    def allocations_pane(self) -> AllocationTree | ReportTree:
        """Pane 1: the allocation tree, or a memory-usage report's allocations."""
        pane = self.query_one("#allocations")
        assert isinstance(pane, AllocationTree | ReportTree)
        return pane

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def live(self) -> LiveSet:
        return self.query_one(LiveSet)

    @property
    def grouped_view(self) -> GroupedView:
        return self.query_one(GroupedView)

    @property
    def detail(self) -> ValueDetail:
        return self.query_one(ValueDetail)

    def _pane_widget(self, pane: str) -> Widget:
        """The widget that is pane ``pane`` now (pane 3: the flat or grouped live set)."""
        if pane == "live" and self.grouped:
            return self.grouped_view
        return self.query_one(f"#{pane}")

    def on_mount(self) -> None:
        if host(self).exiting:
            return  # q while this screen was being built: its panes may be gone
        self._start(None)
        self.started = True
        self._warn_of_capacity()
        host(self).main_screen_started()  # the keys typed while the dump loaded
        self.call_after_refresh(self._painted)

    def _warn_of_capacity(self) -> None:
        """``--capacity`` names a device of another kind than the dump's platform (v5e
        on a CPU dump): the header's headroom is against it all the same, so say so."""
        capacity = host(self).capacity
        if capacity is None:
            return
        from hlotop.report.capacity_text import device_mismatch

        mismatch = device_mismatch(capacity[1], self.dump.analysis.platform)
        if mismatch:
            self.notify(mismatch, title="--capacity", severity="warning", timeout=12)

    def _painted(self) -> None:
        self.app.post_message(MainScreenPainted(self.dump))

    def _start(self, carry: dict | None) -> None:
        """Set the panes of :attr:`dump` going: the step, the first selection (the
        tree's first row), or what ``carry`` (see :meth:`carry`) kept."""
        self._apply_step(self.step)
        self.grouped_view.set_active(self.grouped)
        self.activate(PANE_IDS[0] if carry is None else carry["active"])
        tree = self.allocations_pane
        self._first_value = None
        here = tree.current()
        if here is not None:
            alloc, _ = here
            if len(alloc.values) == 1:
                self._first_value = alloc.values[0].value.id
                self.select_value(self._first_value, origin=tree.id)
            else:
                self.highlight_allocation(alloc.index, tree.id)
        elif isinstance(tree, ReportTree):
            tree.cursor_moved(tree.cursor)  # its first allocation in the detail pane
        elif self.dump.analysis.values:
            self.select_value(self.dump.analysis.values[0].value.id)
        if carry is not None:
            self._take_over(carry)
        self._show_loading()

    # -- a preview, then the whole dump -----------------------------------------------
    async def take_dump(self, dump: ModuleDump, indexes: PaneIndexes | None = None) -> None:
        """Show ``dump`` (the whole of the dump this screen shows a preview of) in
        place of the preview, keeping the pane, the sort order and the selection. What
        is open over this screen stays open (a search goes on in the whole dump)."""
        carry = self.carry()
        first_look, old_tree = self.dump, self.allocation_tree
        self.dump, self._indexes = dump, indexes
        self.step = dump.analysis.peak_step or 0
        panes = self.query_one("#panes")
        with self.app.batch_update():  # no frame without panes
            await panes.remove_children()
            # The first look's panes are garbage the collector never looks at (frozen
            # with the whole dump, see hlotop.process): what they hold of the first
            # look is let go here (its allocations, their lines and rows: 11 MB at
            # 46 MB), and query_one forgets them.
            forget_queried_widgets(self)
            old_tree.let_go()
            first_look.sections, first_look.analysis = dump.sections, dump.analysis
            await panes.mount_all(self._make_panes())
            for bar in (self.query_one(SummaryBar), self.query_one(Legend)):
                bar.dump = dump
                bar.refresh()
            self._start(carry)
        if self._search is not None:
            self._search.set_values(dump.analysis.values)
        for screen in self.app.screen_stack:  # figures open over the first look
            if isinstance(screen, OverviewScreen):
                screen.show(dump)
        self.call_after_refresh(self._painted)

    def complete_first_look(self, whole: ModuleDump, layout: TreeLayout) -> None:
        """Take in the first look completed (:func:`hlotop.loading.preview.completed`
        of the one shown: the same allocations, every one read, with their kinds and
        JAX's figures): in place, so every pane holding the first look sees it; the
        tree keeps its rows and cursor and takes ``layout``'s widths."""
        self.dump.sections, self.dump.analysis = whole.sections, whole.analysis
        self.allocation_tree.relayout(layout)
        for bar in (self.query_one(SummaryBar), self.query_one(Legend)):
            bar.refresh()

    def _show_loading(self) -> None:
        """While a preview is shown, say in the status bar what is still loading."""
        if self._loading_timer is not None:
            self._loading_timer.stop()
            self._loading_timer = None
        if self.dump.preview is None:
            self.show_loading_stage(None)
            return
        started = time.monotonic()
        total = human_bytes(self.dump.preview[1])

        def tick() -> None:
            stage = host(self).load_stage
            self.show_loading_stage(
                f"reading all {total}{': ' + stage if stage else ''}… "
                f"{time.monotonic() - started:.0f} s"
            )

        tick()
        self._loading_timer = self.set_interval(0.5, tick)

    def show_loading_stage(self, text: str | None) -> None:
        """Say what is still loading in the status bar (None: nothing is)."""
        self.query_one(StatusBar).set_note(text)

    def carry(self) -> dict:
        """What the whole dump keeps of its preview: the active pane, the sort order,
        and the selected value or highlighted allocation (if the user moved away from
        the first row)."""
        tree = self.allocation_tree
        here = tree.current()
        moved = tree.cursor != 0 or self.selected_value != self._first_value
        return {
            "active": self.active,
            "by_size": tree.by_size,
            "value": self.selected_value if moved else None,
            "allocation": here[0].index if moved and here and here[1] is None else None,
        }

    def _take_over(self, carry: dict) -> None:
        tree = self.allocation_tree
        if tree.by_size != carry["by_size"]:
            tree.toggle_sort()
        if carry["value"] is not None and carry["value"] in self.dump.analysis.by_id:
            self.select_value(carry["value"])
        elif carry["allocation"] is not None:
            self.highlight_allocation(carry["allocation"])
        self.activate(carry["active"])

    # -- the background pass over the value records ----------------------------------
    # Its reports come from a worker thread as messages, and may be handled after the
    # screen's widgets are gone (the app closing while the pass runs): then they are
    # about nothing on screen.
    def show_records_progress(self, done: int, total: int, rate: float | None) -> None:
        for bar in self.query(StatusBar):
            bar.set_progress(done, total, rate)

    def records_read(self) -> None:
        """The background pass is over: the diagnostics count is final."""
        for bar in self.query(StatusBar):
            bar.set_progress(None)
        for summary in self.query(SummaryBar):
            summary.refresh()

    # -- panes ------------------------------------------------------------------------
    def activate(self, pane: str, *, focus: bool = True) -> None:
        """Make ``pane`` the active one (shown on small terminals) and focus it."""
        self.active = pane
        for widget in self.query(".pane"):
            widget.set_class(pane_of(widget) == pane, "-active")
        self.query_one(PaneTabs).set_active(pane)
        if focus:
            # Now, not as Widget.focus does (after the messages already queued): the
            # keys typed in the same burst as the switch (2 → → →) go to the new pane.
            self.set_focus(self._pane_widget(pane))

    def on_descendant_focus(self, event) -> None:
        widget = event.widget
        while widget is not None and not widget.has_class("pane"):
            widget = widget.parent
        if widget is not None and pane_of(widget) != self.active:
            self.activate(pane_of(widget) or self.active, focus=False)

    def on_pane_activated(self, message: PaneActivated) -> None:
        self.activate(message.pane)

    # -- the selection (hlotop.ui.base.selection.SelectionOwner): what the panes call -------
    def select_value(
        self, value_id: int, origin: str | None = None, *, open_detail: bool = False
    ) -> None:
        """Select value ``value_id`` in every pane but ``origin``."""
        info = self.dump.analysis.by_id.get(value_id)
        if info is None:
            return
        self.selected_value = value_id
        for pane in (self.allocations_pane, self.timeline, self.live, self.grouped_view):
            if pane.id != origin:
                pane.show_value(value_id)
        self.detail.show_value(value_id)
        self.query_one(StatusBar).set_value(info)
        if open_detail:
            self._open_detail()

    def highlight_allocation(
        self, index: int, origin: str | None = None, *, open_detail: bool = False
    ) -> None:
        """Show allocation ``index`` (which holds several values, or none): the tree's
        cursor on it, its card in the detail, no value selected in the other panes."""
        alloc = self.dump.analysis.allocation_of.get(index)
        if alloc is None:
            return
        self.selected_value = None
        tree = self.allocation_tree
        if tree.id != origin:
            tree.show_allocation(index)
        self.timeline.show_value(None)
        self.live.show_value(None)
        self.grouped_view.show_value(None)
        self.detail.show_allocation(index)
        self.query_one(StatusBar).set_allocation(alloc, self.dump.preview is not None)
        if open_detail:
            self._open_detail()

    def _report_allocation(self, listing: ReportListing) -> None:
        """Pane 1 of a memory-usage report alone moved to ``listing``: its card."""
        self.detail.show_report_allocation(listing)

    def show_report_listing(self, i: int) -> None:
        """Of a memory-usage report alone: pane 1's cursor on the report's ``i``-th
        allocation (in its order), its card in the detail, pane 1 shown."""
        tree = self.allocations_pane
        if isinstance(tree, ReportTree) and tree.show_listing(i):
            self.activate("allocations")

    def step_changed(self, step: int) -> None:
        """The timeline's cursor moved to ``step``: the live set and the status bar follow."""
        self._apply_step(step)

    def _open_detail(self) -> None:
        if self.compact and self.active != "detail":
            self._came_from = self.active
            self.activate("detail")

    def _apply_step(self, step: int) -> None:
        self.step = step
        self.detail.set_step(step)
        self.live.set_step(step, self.selected_value)
        self.grouped_view.set_step(step)
        timeline = self.timeline
        summary = step_summary(self.dump, step, timeline.counts, self.app.no_color, timeline.space)
        self.query_one(StatusBar).set_step_text(summary)

    # -- actions ----------------------------------------------------------------------
    def action_next_pane(self) -> None:
        self.activate(PANE_IDS[(PANE_IDS.index(self.active) + 1) % len(PANE_IDS)])

    def action_previous_pane(self) -> None:
        self.activate(PANE_IDS[(PANE_IDS.index(self.active) - 1) % len(PANE_IDS)])

    def action_focus_pane(self, pane: str) -> None:
        self.activate(pane)

    def action_back(self) -> None:
        if self.lists.clear_active():
            return
        if self._came_from is not None:
            pane, self._came_from = self._came_from, None
            self.activate(pane)

    def action_jump_peak(self) -> None:
        peak = self.dump.analysis.peak_step
        if self.dump.preview is not None:
            where = f" (XLA's peak is at step {peak})" if peak is not None else ""
            self.notify(f"The live ranges are still loading{where}.")
            return
        if peak is None:
            self.notify("This dump has no live ranges, so no peak step.", severity="warning")
            return
        self.timeline.set_step(peak)

    def _live_ranges_ready(self) -> bool:
        """Whether the timeline has steps to move to; says why not when it has none."""
        if self.dump.preview is not None:
            self.notify("The live ranges are still loading.")
            return False
        if not self.timeline.counts:
            self.notify("This dump has no live ranges, so no steps.", severity="warning")
            return False
        return True

    def action_jump_curve_peak(self) -> None:
        if self._live_ranges_ready():
            self.timeline.set_step(self.timeline.curve_peak_step)

    def action_next_space(self) -> None:
        if not self._live_ranges_ready():
            return
        timeline = self.timeline
        if len(self.dump.analysis.occupied_bytes) < 2:
            self.notify(
                f"The curve shows {timeline.space_name()}, this dump's only memory space.",
                timeout=4,
            )
            return
        timeline.next_space()  # its curve's labels name the space
        self._apply_step(self.step)

    def action_goto_step(self) -> None:
        if not self._live_ranges_ready():
            return

        def chosen(step: int | None) -> None:
            if step is not None:
                self.timeline.set_step(step)

        self.app.push_screen(GotoStepScreen(self.dump.analysis.max_time, self.step), chosen)

    def action_overview(self) -> None:
        if self.dump.reading_allocations:
            self.notify("The figures are still being worked out: they come in a moment.")
            return
        self.app.push_screen(OverviewScreen(self.dump))

    def action_advice(self) -> None:
        if self.dump.preview is not None:
            self.notify("The values are still loading: the advice comes once they are read.")
            return
        from hlotop.analysis.advice import advise
        from hlotop.ui.screens.advice import AdviceScreen

        dump = self.dump
        if self._advice is None or self._advice[0] is not dump:
            self._advice = (dump, advise(dump))
        self.app.push_screen(AdviceScreen(dump, self._advice[1]))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # "/" is a priority key (the search box opens before the next key is handled):
        # in the filter bar it is text (an op_name's jit(step)/attn).
        if action == "search" and self.filter_bar.has_focus_within:
            return False
        return True

    def action_sort(self) -> None:
        self.lists.sort()

    def action_filter(self) -> None:
        self.lists.open()

    def on_filter_bar_changed(self, message: FilterBar.Changed) -> None:
        self.lists.changed(message.pane, message.text)

    def on_filter_bar_closed(self, message: FilterBar.Closed) -> None:
        self.lists.closed(message.pane, message.cleared)

    def action_search(self) -> None:
        def chosen(value_id: int | None) -> None:
            search, self._search = self._search, None
            if search is not None:
                self.value_keys.remember(search, value_id)
            if value_id is not None:
                self.value_keys.go_to(value_id, open_detail=self.compact)

        names = space_names(self.dump)
        last = self.value_keys.last
        before = last.matches[last.at] if 0 <= last.at < len(last.matches) else None
        self._search = SearchScreen(self.dump.analysis.values, names, last.query, before)
        self.app.push_screen(self._search, chosen)

    def action_next_match(self, direction: int) -> None:
        self.value_keys.next_match(direction)

    def action_value_step(self, end: str) -> None:
        self.value_keys.value_step(end)

    def action_copy(self) -> None:
        self.value_keys.copy()

    def action_edit_source(self) -> None:
        self.value_keys.edit_source()

    def action_toggle_grouped(self) -> None:
        """Pane 3 flat or grouped, shown and focused."""
        self.grouped = not self.grouped
        live, grouped = self.live, self.grouped_view
        with self.app.batch_update():
            set_pane_3(live, grouped, self.grouped)
            grouped.set_active(self.grouped)
            if self.grouped:
                grouped.show_value(self.selected_value)
            elif self.selected_value is not None:
                live.show_value(self.selected_value)
            self.query_one(PaneTabs).set_title("live", "Grouped" if self.grouped else "Live set")
            self.activate("live")

    def on_grouped_view_icicle_wanted(self, message: GroupedView.IcicleWanted) -> None:
        self.app.push_screen(IcicleScreen(message.grouping))

    def on_grouped_view_keys_wanted(self, message: GroupedView.KeysWanted) -> None:
        view = self.grouped_view

        def chosen(keys: tuple[str, ...] | None) -> None:
            if keys:
                view.set_keys(keys)

        self.app.push_screen(GroupKeysScreen(message.current), chosen)

    def action_export(self) -> None:
        """Write the live set at the step as CSV: pane 3's rows, its groups or values."""
        if self._live_ranges_ready():
            files = self.dump.files  # the dump's folder, opened by a file or by itself
            where = files[0].path if files else host(self).source
            self.grouped_view.export(self.step, self.grouped, where)

    def action_diagnostics(self) -> None:
        pending = None if self.dump.records_read else (self.query_one(StatusBar).progress or True)
        self.app.push_screen(DiagnosticsScreen(self.dump.diagnostics, pending))
