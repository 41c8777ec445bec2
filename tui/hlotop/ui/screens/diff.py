"""The diff browser's screen (``hlotop diff OLD NEW``): the headline, and five panes
that share one selected value change.

Large terminals (120×40 and up) show every pane: the figures beside the detail, the
change by group beside the values list, the timeline across the bottom. Smaller ones
show one pane at a time under tabs (Tab, 1-5). The two-line headline is always shown.

Choosing a value in the groups tree or the values list shows it in the detail (and
in the values list, if its class is shown): the panes call :meth:`select_change`.
"""

from __future__ import annotations

from functools import partial

from textual.app import ComposeResult
from textual.containers import Container
from textual.screen import Screen
from textual.widget import Widget
from textual.worker import get_current_worker

from hlotop.ui.base.diff_keys import diff_bindings
from hlotop.ui.base.messages import PaneActivated
from hlotop.ui.screens.group_keys import GroupKeysScreen
from hlotop.ui.view_models.diff_data import DiffData, DiffGroups
from hlotop.ui.view_models.group_tree import PRESETS
from hlotop.ui.widgets.diff_detail import DiffDetail
from hlotop.ui.widgets.diff_headline import DiffFigures, DiffSummary
from hlotop.ui.widgets.diff_tabs import DIFF_PANES, DiffTabs
from hlotop.ui.widgets.diff_timeline import DiffTimeline
from hlotop.ui.widgets.diff_tree import DiffGroupTree
from hlotop.ui.widgets.diff_values import DiffValueList
from hlotop.ui.widgets.key_bar import KeyBar

PANE_IDS = tuple(p for p, _ in DIFF_PANES)
_SCREEN = (
    "next_keys",
    "type_keys",
    "next_class",
    "next_pane",
    "previous_pane",
    "focus_pane",
    "back",
)
_AT_ONCE = 5000  # values on both sides up to which a regrouping runs in the key's frame


class DiffScreen(Screen):
    BINDINGS = diff_bindings(*_SCREEN)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]

    def __init__(self, data: DiffData):
        super().__init__(id="diff")
        self.data = data
        self.active = PANE_IDS[0]
        self.selected: int | None = None  # index in ModuleDiff.changes
        self._came_from: str | None = None

    def compose(self) -> ComposeResult:
        width, height = self.app.size  # the breakpoints' classes before the first paint
        self.add_class("-narrow" if width < 120 else "-wide", "-short" if height < 40 else "-tall")
        yield DiffSummary(self.data)
        yield DiffTabs()
        with Container(id="diff-panes"):
            yield DiffFigures(self.data)
            yield DiffDetail(self.data)
            yield DiffGroupTree(self.data, owner=self)
            yield DiffValueList(self.data, owner=self)
            yield DiffTimeline(self.data)
        yield KeyBar()

    @property
    def compact(self) -> bool:
        return self.has_class("-narrow") or self.has_class("-short")

    @property
    def groups_pane(self) -> DiffGroupTree:
        return self.query_one(DiffGroupTree)

    @property
    def values(self) -> DiffValueList:
        return self.query_one(DiffValueList)

    @property
    def timeline(self) -> DiffTimeline:
        return self.query_one(DiffTimeline)

    @property
    def detail(self) -> DiffDetail:
        return self.query_one(DiffDetail)

    def on_mount(self) -> None:
        groups = self.data.cached_groups(self.data.diff.keys)
        if groups is not None:
            self.groups_pane.show_groups(groups)
        else:
            self._regroup(self.data.diff.keys)
        first = self.values.current()
        if first is not None:
            self.select_change(first)
        self.activate("figures" if self.compact else "groups")

    # -- panes --------------------------------------------------------------------------
    def activate(self, pane: str, *, focus: bool = True) -> None:
        self.active = pane
        for widget in self.query(".pane"):
            widget.set_class(widget.id == pane, "-active")
        self.query_one(DiffTabs).set_active(pane)
        if focus:
            self.set_focus(self.query_one(f"#{pane}"))

    def on_descendant_focus(self, event) -> None:
        widget: Widget | None = event.widget
        while widget is not None and not widget.has_class("pane"):
            widget = widget.parent  # type: ignore[assignment]
        if widget is not None and widget.id != self.active and widget.id in PANE_IDS:
            self.activate(widget.id, focus=False)

    def on_pane_activated(self, message: PaneActivated) -> None:
        self.activate(message.pane)

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

    # -- the selection ------------------------------------------------------------------
    def select_change(self, index: int, origin: str | None = None, *, open_detail=False) -> None:
        """Value change ``index`` (of ``ModuleDiff.changes``) was chosen in the pane
        ``origin``: the detail shows it, and the values list if it lists it."""
        self.selected = index
        self.detail.show_change(index)
        if origin != self.values.id:
            self.values.show_change(index)
        if open_detail and self.compact and self.active != "detail":
            self._came_from = self.active
            self.activate("detail")

    # -- grouping -----------------------------------------------------------------------
    def action_next_keys(self) -> None:
        keys = self.groups_pane.keys
        at = PRESETS.index(keys) + 1 if keys in PRESETS else 0
        self._regroup(PRESETS[at % len(PRESETS)])

    def action_type_keys(self) -> None:
        def chosen(keys: tuple[str, ...] | None) -> None:
            if keys:
                self._regroup(keys)

        self.app.push_screen(GroupKeysScreen(self.groups_pane.keys), chosen)

    def _regroup(self, keys: tuple[str, ...]) -> None:
        """Show the change by ``keys``: at once if it was made before (or the modules
        are small), else from a thread worker (the last tree stays meanwhile)."""
        found = self.data.cached_groups(keys)
        d = self.data.diff
        small = len(d.old.module.analysis.values) + len(d.new.module.analysis.values)
        if found is None and small <= _AT_ONCE:
            try:
                found = self.data.groups(keys)
            except ValueError as err:
                self.groups_pane.failed(str(err))
                return
        if found is not None:
            self.groups_pane.show_groups(found)
            return
        self.groups_pane.grouping(keys)
        self.run_worker(partial(self._make_groups, keys), group="diff-group", thread=True)

    def _make_groups(self, keys: tuple[str, ...]) -> None:
        worker = get_current_worker()
        try:
            groups = self.data.groups(keys)
        except ValueError as err:
            if not worker.is_cancelled:
                self.app.call_from_thread(self.groups_pane.failed, str(err))
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._grouped, groups)

    def _grouped(self, groups: DiffGroups) -> None:
        if self.groups_pane.pending == groups.keys:
            self.groups_pane.show_groups(groups)

    # -- the values list ----------------------------------------------------------------
    def action_next_class(self) -> None:
        self.values.next_filter()
