"""The main screen's filters (``f``) and orders (``s``): one :class:`FilterBar` for
every list pane, each pane with its own filter and order, said in its title.

The matches of a filter are worked out once per text (:class:`hlotop.analysis.
value_filter.FilterIndex`, one per dump): on a small dump in the key's handler, on a big
one in a thread worker (its op_names are read from the records' text), the newest text
only; the pane takes them when they come.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.timer import Timer
from textual.widget import Widget
from textual.worker import get_current_worker

from hlotop.analysis.value_filter import FilterIndex, Matches, ValueFilter
from hlotop.model import ModuleDump
from hlotop.model.memory_space import space_names
from hlotop.ui.widgets.filter_bar import Filterable, FilterBar
from hlotop.ui.widgets.pane_tabs import PANES
from hlotop.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from hlotop.ui.screens.main import MainScreen

# Up to this many values, a filter's matches are worked out in the key's handler: a
# few ms a key (a word typed on narrows the last matches), at most 35 ms at 3 500
# values when a first word has op_names read; above, in a thread worker.
AT_ONCE = 5000
# Above AT_ONCE, the worker starts once the typing pauses this long (seconds): a worker
# started at the key shares the interpreter lock with the frame that shows the letter
# typed (46 MB GPT dump: a typed key 45-60 ms, each letter's matches worked out for
# nothing while the next one is typed).
TYPING_PAUSE = 0.04
_TITLES = dict(PANES)
GROUPED_TITLE = "Grouped"
TITLES = (*_TITLES.values(), GROUPED_TITLE)  # every title the filter bar may name


class ListFilters:
    """The filter bar of ``screen`` and the filter index of its dump."""

    def __init__(self, screen: MainScreen):
        self.screen = screen
        self._index: tuple[ModuleDump, FilterIndex] | None = None
        self._pending: Timer | None = None  # the worker to start once typing pauses
        self.at_once = AT_ONCE  # up to this many values, matched in the key's handler
        self.typing_pause = TYPING_PAUSE  # above, matched once the typing pauses this long

    @property
    def bar(self) -> FilterBar:
        return self.screen.filter_bar

    def index(self) -> FilterIndex:
        """The filter index of the screen's dump (made on first use, again for a new
        dump)."""
        dump = self.screen.dump
        if self._index is None or self._index[0] is not dump:
            a = dump.analysis
            records = dump.sections.used_values
            self._index = (dump, FilterIndex(a.values, a.allocation_of, space_names(dump), records))
        return self._index[1]

    def pane(self, pane: str) -> Widget | None:
        """The widget that is pane ``pane`` now, if it can be filtered."""
        widget = self.screen._pane_widget(pane)
        return widget if isinstance(widget, Filterable) else None

    # -- f --------------------------------------------------------------------------
    def open(self) -> None:
        """Open the bar on the active pane, with its filter so far."""
        screen = self.screen
        if screen.dump.preview is not None:
            screen.notify("The values are still loading: filter once they are read.")
            return
        pane = screen.active
        widget = self.pane(pane)
        if widget is None:
            screen.notify("The detail is not a list: filter in panes 1 to 3.")
            return
        matches = getattr(widget, "matches", None)
        title = GROUPED_TITLE if widget.id == "grouped" else _TITLES.get(pane, pane)
        # The bar takes the status line's place: the panes keep their size, so only
        # that line is drawn again (a pane resized is a whole screen drawn: 100 ms).
        screen.query_one(StatusBar).display = False
        self.bar.open(pane, title, matches.filter.text if matches is not None else "")

    def changed(self, pane: str, text: str) -> None:
        """The bar's text for ``pane`` is now ``text``: filter the pane."""
        widget = self.pane(pane)
        if widget is None:
            return
        flt = ValueFilter.parse(text)
        if flt is None:
            self._apply(widget, None)
            return
        index = self.index()
        if len(index.values) <= self.at_once:
            self._apply(widget, index.matching(flt))
            return
        self._stop_pending()
        self._pending = self.screen.set_timer(
            self.typing_pause, partial(self._start_matching, widget, index, flt)
        )

    @property
    def matching(self) -> bool:
        """Whether a filter's matches are still to come: its worker waits for the
        typing to pause, or runs."""
        return self._pending is not None or any(
            w.group == "filter" and not w.is_finished for w in self.screen.workers
        )

    def _stop_pending(self) -> None:
        if self._pending is not None:
            self._pending.stop()
            self._pending = None

    def _start_matching(self, widget: Widget, index: FilterIndex, flt: ValueFilter) -> None:
        self._pending = None
        self.screen.run_worker(
            partial(self._match, widget, index, flt),
            name="filter",
            group="filter",
            thread=True,
            exclusive=True,
        )

    def _match(self, widget: Widget, index: FilterIndex, flt: ValueFilter) -> None:
        """In a thread worker: the matches of ``flt``, handed to the UI thread."""
        worker = get_current_worker()
        cancelled = lambda: worker.is_cancelled  # noqa: E731
        matches = index.matching(flt, cancelled)
        if matches is not None and not cancelled():
            self.screen.app.call_from_thread(self._arrived, widget, matches)

    def _arrived(self, widget: Widget, matches: Matches) -> None:
        bar = self.bar
        if bar.is_open and ValueFilter.parse(bar.text) != matches.filter:
            return  # typed on since: a newer one is coming
        self._apply(widget, matches)

    def _apply(self, widget: Widget, matches: Matches | None) -> None:
        if widget.is_attached and isinstance(widget, Filterable):
            widget.set_filter(matches)
            self.reshow(widget)

    def reshow(self, widget: Widget) -> None:
        """Put ``widget``'s cursor on the selection again, after its rows changed:
        the selected value, or the highlighted allocation in the tree; where the rows
        leave it out, the cursor is drawn plain."""
        screen = self.screen
        show_value = getattr(widget, "show_value", None)
        if screen.selected_value is not None and show_value is not None:
            show_value(screen.selected_value)
            return
        allocation = screen.detail.allocation
        show_allocation = getattr(widget, "show_allocation", None)
        if allocation is not None and show_allocation is not None:
            show_allocation(allocation)
        elif hasattr(widget, "hide_selection"):
            widget.hide_selection()

    def closed(self, pane: str, cleared: bool) -> None:
        """The bar closed on ``pane``: its filter kept, or cleared (Esc)."""
        self.bar.close()
        self.screen.query_one(StatusBar).display = True
        widget = self.pane(pane)
        if widget is None:
            return
        if cleared:
            self._stop_pending()
            self.screen.workers.cancel_group(self.screen, "filter")
            if getattr(widget, "matches", None) is not None:  # none: nothing to redo
                self._apply(widget, None)
        self.screen.set_focus(widget)

    def clear_active(self) -> bool:
        """Clear the active pane's filter (Esc in the pane); False if it has none."""
        widget = self.pane(self.screen.active)
        if widget is None or getattr(widget, "matches", None) is None:
            return False
        self._apply(widget, None)
        return True

    # -- s --------------------------------------------------------------------------
    def sort(self) -> None:
        """Sort the active pane by its next order (it names it in its title)."""
        widget = self.screen._pane_widget(self.screen.active)
        cycle = getattr(widget, "cycle_sort", None)
        if cycle is None:
            self.screen.notify("The detail is not a list: sort panes 1 to 3.")
            return
        cycle()
        self.reshow(widget)
