"""The filter bar (``f``): one line under the panes where the focused list's filter is
typed, as htop's F4 and k9s's ``/`` do. Every list pane (allocation tree, timeline, live
set, grouped live set) takes the same filter (:mod:`hlotop.analysis.value_filter`) through
:meth:`Filterable.set_filter`, and says it in its title (:func:`filter_note`).

The bar only edits the text: it tells the screen, which works out the matches (in a
thread on a big dump) and hands them to the pane.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Label

from hlotop.analysis.value_filter import Matches
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings

PLACEHOLDER = "words, or field:word  (name op_name shape space kind)"


@runtime_checkable
class Filterable(Protocol):
    """A list pane that can be filtered."""

    matches: Matches | None  # the filter applied, None: none

    def set_filter(self, matches: Matches | None) -> None:
        """Show only the rows ``matches`` keeps (None: every row), the cursor on the
        same value if it is kept."""


def filter_note(matches: Matches | None) -> str:
    """`` · filter: attn`` for a pane's title (nothing without a filter)."""
    if matches is None:
        return ""
    return f" · filter: {printable(matches.filter.text)}"


def _prompt(title: str) -> str:
    return f"filter {title} (⏎ keep, esc clear):"


class FilterBar(Horizontal):
    """``filter 3 Live set: attn▏``: hidden until :meth:`open`."""

    BINDINGS = bindings("filter")
    DEFAULT_CSS = """
    FilterBar { height: 1; display: none; }
    FilterBar.-open { display: block; }
    FilterBar > Label { width: auto; padding: 0 1; text-style: bold; }
    FilterBar > Input { width: 1fr; }
    """

    class Changed(Message):
        """The filter text of pane ``pane`` is now ``text``."""

        def __init__(self, pane: str, text: str):
            super().__init__()
            self.pane, self.text = pane, text

    class Closed(Message):
        """The bar closed, the filter of ``pane`` kept (Enter) or cleared (Esc)."""

        def __init__(self, pane: str, cleared: bool):
            super().__init__()
            self.pane, self.cleared = pane, cleared

    def __init__(self, titles: Sequence[str], *, id: str | None = "filter-bar"):
        """``titles``: the panes' titles the bar may name (the prompt is as wide as
        the widest, so that naming another pane lays nothing out again)."""
        super().__init__(id=id)
        self.pane: str | None = None  # the pane whose filter is edited
        self._prompt_width = max(len(_prompt(t)) for t in titles)

    def compose(self) -> ComposeResult:
        label = Label(_prompt(""), id="filter-label", markup=False)
        label.styles.width = self._prompt_width + 2  # its padding
        yield label
        yield Input(placeholder=PLACEHOLDER, id="filter-input", compact=True)

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    @property
    def text(self) -> str:
        """The filter typed."""
        return self.query_one(Input).value

    def open(self, pane: str, title: str, text: str) -> None:
        """Edit the filter of pane ``pane`` (called ``title``), ``text`` so far; the
        input takes the focus now, so keys typed straight after ``f`` land in it."""
        self.pane = pane
        # The label keeps its width: no layout pass for the new text (the label's own
        # layout request would come after the frame, a second frame 20-30 ms later).
        self.query_one(Label).update(_prompt(title), layout=False)
        field = self.query_one(Input)
        with field.prevent(Input.Changed):
            field.value = text
        self.add_class("-open")
        self.screen.set_focus(field)

    def close(self) -> None:
        self.remove_class("-open")
        self.pane = None

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.pane is not None:
            self.post_message(self.Changed(self.pane, event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_keep()

    def action_keep(self) -> None:
        if self.pane is not None:
            self.post_message(self.Closed(self.pane, cleared=False))

    def action_clear(self) -> None:
        if self.pane is not None:
            field = self.query_one(Input)
            with field.prevent(Input.Changed):
                field.value = ""
            self.post_message(self.Closed(self.pane, cleared=True))
