"""The messages of hlotop's screens: a tab clicked, the background pass's progress, a
main screen painted.

A selection is no message: a pane calls the screen that owns it
(:mod:`hlotop.ui.base.selection`).
"""

from __future__ import annotations

from textual.message import Message

from hlotop.model import ModuleDump


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
    """The main screen has been painted showing ``dump`` (a preview, or the whole dump:
    the app then starts the background pass)."""

    def __init__(self, dump: ModuleDump):
        super().__init__()
        self.dump = dump
