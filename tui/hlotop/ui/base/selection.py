"""The one path a selection takes: a pane tells the owner of the selection (the main
screen) what the user chose, and the owner shows it in every other pane.

The panes are given their owner when they are made (``owner=``), and call it directly,
in the handler of the key or click: the whole screen changes within that handler, so
every key draws one frame. The owner never calls back into the pane the choice came
from (``origin``), and the panes' ``show_...`` methods, which the owner calls, never
call the owner: a choice cannot loop.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class SelectionOwner(Protocol):
    """What owns the selected value, the highlighted allocation and the schedule step."""

    def select_value(
        self, value_id: int, origin: str | None = None, *, open_detail: bool = False
    ) -> None:
        """Value ``value_id`` (negative ids: live ranges with no allocation line) was
        chosen in the pane whose id is ``origin`` (None: elsewhere, e.g. a search);
        ``open_detail``: the user asked to see its detail."""

    def highlight_allocation(
        self, index: int, origin: str | None = None, *, open_detail: bool = False
    ) -> None:
        """The allocation tree's cursor is on allocation ``index`` (which holds several
        values, or none), not on one value."""

    def step_changed(self, step: int) -> None:
        """The timeline's cursor moved to schedule step ``step`` (0..max_time)."""
