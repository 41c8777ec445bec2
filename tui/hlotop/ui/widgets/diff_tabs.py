"""The diff browser's pane switcher on small terminals (one pane shown at a time)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widget import Widget

from hlotop.ui.base.messages import PaneActivated

DIFF_PANES: tuple[tuple[str, str], ...] = (
    ("figures", "Figures"),
    ("groups", "Groups"),
    ("timeline", "Timeline"),
    ("values", "Values"),
    ("detail", "Detail"),
)


class DiffTabs(Widget):
    """``[1 Figures]  2 Groups  3 Timeline  4 Values  5 Detail``: the active pane
    bracketed (readable without colour); a click switches pane."""

    DEFAULT_CSS = """
    DiffTabs { height: 1; }
    """

    def __init__(self, *, id: str | None = "diff-tabs"):
        super().__init__(id=id)
        self.active = DIFF_PANES[0][0]
        self._spans: list[tuple[int, int, str]] = []

    def set_active(self, pane: str) -> None:
        self.active = pane
        self.refresh()

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        self._spans = []
        for n, (pane, title) in enumerate(DIFF_PANES, 1):
            start = len(text)
            if pane == self.active:
                text.append(f"[{n} {title}]", style="bold reverse")
            else:
                text.append(f" {n} {title} ", style="dim")
            self._spans.append((start, len(text), pane))
        text.append(" tab: next", style="dim italic")
        return text

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)
        if at is None:
            return
        for start, end, pane in self._spans:
            if start <= at.x < end:
                self.post_message(PaneActivated(pane))
