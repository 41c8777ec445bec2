"""The messages hlotop's panes send each other (through the main screen).

A pane that changes the selection posts one of these; the main screen hands it to
every other pane, so selecting a value anywhere selects it everywhere.
"""

from __future__ import annotations

from textual.message import Message


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
