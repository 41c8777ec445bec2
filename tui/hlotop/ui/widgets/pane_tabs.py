"""The pane switcher shown on small terminals, where one pane is visible at a time, and
which widget is which pane (pane 3 is the flat live set or the grouped one)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widget import Widget

from hlotop.ui.base.messages import PaneActivated

PANES: tuple[tuple[str, str], ...] = (
    ("allocations", "Allocations"),
    ("timeline", "Timeline"),
    ("live", "Live set"),
    ("detail", "Detail"),
)


def pane_of(widget: Widget) -> str | None:
    """The pane (of :data:`PANES`) ``widget`` is: its id, ``live`` for the grouped view."""
    return "live" if widget.id == "grouped" else widget.id


def set_pane_3(live: Widget, grouped: Widget, show_grouped: bool) -> None:
    """Make ``grouped`` pane 3 (``show_grouped``), or ``live``: the other is no
    ``.pane`` then, and takes no room (nor a cell of the grid: see hlotop.tcss)."""
    for widget, on in ((live, not show_grouped), (grouped, show_grouped)):
        widget.set_class(on, "pane")
        widget.set_class(not on, "-off")


class PaneTabs(Widget):
    """``[1 Allocations]  2 Timeline  3 Live set  4 Detail``: the active pane bracketed
    (readable without colour); a click switches pane."""

    DEFAULT_CSS = """
    PaneTabs { height: 1; }
    """

    def __init__(self, *, id: str | None = "tabs"):
        super().__init__(id=id)
        self.active = PANES[0][0]
        self.titles = dict(PANES)
        self._spans: list[tuple[int, int, str]] = []

    def set_active(self, pane: str) -> None:
        self.active = pane
        self.refresh()

    def set_title(self, pane: str, title: str) -> None:
        """Call ``pane``'s tab ``title`` (pane 3: "Live set" or "Grouped")."""
        self.titles[pane] = title
        self.refresh()

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        self._spans = []
        for n, (pane, _) in enumerate(PANES, 1):
            start = len(text)
            label = f"{n} {self.titles[pane]}"
            if pane == self.active:
                text.append(f"[{label}]", style="bold reverse")
            else:
                text.append(f" {label} ", style="dim")
            self._spans.append((start, len(text), pane))
            text.append(" ")
        text.append(" tab: next pane", style="dim italic")
        return text

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)  # event.x counts the padding too
        if at is None:
            return
        for start, end, pane in self._spans:
            if start <= at.x < end:
                self.post_message(PaneActivated(pane))
