"""The messages hlotop's panes send each other (through the main screen).

A pane that changes the selection announces one of these; the main screen hands it to
every other pane, so selecting a value anywhere selects it everywhere.
"""

from __future__ import annotations

from textual.message import Message
from textual.widget import Widget


def announce(pane: Widget, message: Message) -> None:
    """Hand ``message`` to the pane's screen at once, if it takes messages that way
    (``deliver``), else post it. Posted, it would reach the screen through two message
    queues, and a frame with only this pane updated would be drawn in between: every
    key would draw the screen twice."""
    deliver = getattr(pane.screen, "deliver", None)
    if deliver is None:
        pane.post_message(message)
    else:
        deliver(message)


class ValueSelected(Message):
    """A value (by id; negative ids are live ranges with no allocation line) was
    selected in the pane ``origin``. ``open_detail``: the user asked to see its detail."""

    def __init__(self, value_id: int, origin: str | None = None, open_detail: bool = False):
        super().__init__()
        self.value_id = value_id
        self.origin = origin
        self.open_detail = open_detail


class AllocationHighlighted(Message):
    """The cursor of the allocation tree is on allocation ``index`` (which holds several
    values, or none), not on one value."""

    def __init__(self, index: int, origin: str | None = None, open_detail: bool = False):
        super().__init__()
        self.index = index
        self.origin = origin
        self.open_detail = open_detail


class StepChanged(Message):
    """The timeline's cursor moved to schedule step ``step`` (0..max_time)."""

    def __init__(self, step: int):
        super().__init__()
        self.step = step


class PaneActivated(Message):
    """A pane asks to be shown and focused (e.g. a tab was clicked)."""

    def __init__(self, pane: str):
        super().__init__()
        self.pane = pane


class RecordsProgress(Message):
    """The background pass over the ``Used values`` records has read ``done`` of
    ``total``, at ``rate`` records per second (None until it can be measured)."""

    def __init__(self, done: int, total: int, rate: float | None):
        super().__init__()
        self.done = done
        self.total = total
        self.rate = rate


class RecordsRead(Message):
    """The background pass is over: every record has been read (``complete``), or it
    failed (``error``: what went wrong, one line)."""

    def __init__(self, complete: bool, error: str | None = None):
        super().__init__()
        self.complete = complete
        self.error = error


class MainScreenPainted(Message):
    """The main screen has been painted once (the app then starts the background pass)."""
