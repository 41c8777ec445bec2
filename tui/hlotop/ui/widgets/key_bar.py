"""The bottom line of key hints: the keys that work where the focus is.

It looks like Textual's ``Footer`` but is one line of text, redrawn when the focus
moves. ``Footer`` rebuilds one widget per key on every focus change, which costs about
100 ms on the development machine: every pane switch paid it.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget


class KeyBar(Widget):
    """`` ⏎ Open  / Search  p Peak ... ▏ctrl+p Commands ``; a click on a key presses it."""

    COMPONENT_CLASSES = {"keybar--key", "keybar--description", "keybar--separator"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
    }
    KeyBar > .keybar--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    KeyBar > .keybar--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    KeyBar > .keybar--separator {
        color: $foreground 20%;
    }
    """

    def __init__(self, *, id: str | None = "keys"):
        super().__init__(id=id)
        self._spans: list[tuple[int, int, str]] = []  # (first cell, end, key)
        self._shown: tuple | None = None  # _signature() when last drawn

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        # Textual announces a change twice per focus move (the second after a frame):
        # repaint only when the keys shown differ, or the second is a frame of its own.
        if screen is self.screen and self._signature() != self._shown:
            self.refresh()

    def _signature(self) -> tuple:
        return tuple(
            (key, binding.description, enabled)
            for key, (_, binding, enabled, _) in self.screen.active_bindings.items()
            if binding.show
        )

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        blank = Style(bgcolor=self.rich_style.bgcolor)
        if y:
            return Strip.blank(width, blank)
        key_style = self.get_component_rich_style("keybar--key")
        text_style = self.get_component_rich_style("keybar--description")
        dim = Style(dim=True)
        bindings = self.screen.active_bindings
        self._shown = self._signature()
        left = Text(no_wrap=True, overflow="ellipsis", end="")
        spans = []
        actions = set()
        palette = self.app.COMMAND_PALETTE_BINDING
        for key, (_, binding, enabled, _) in bindings.items():
            if not binding.show or binding.action in actions or key == palette:
                continue
            actions.add(binding.action)
            start = left.cell_len
            left.append(
                f" {self.app.get_key_display(binding)} ", key_style if enabled else key_style + dim
            )
            left.append(f"{binding.description} ", text_style if enabled else text_style + dim)
            spans.append((start, left.cell_len, binding.key))
        right = Text(no_wrap=True, end="")
        active = bindings.get(palette) if self.app.ENABLE_COMMAND_PALETTE else None
        if active is not None:
            binding = active.binding
            right.append("▏", self.get_component_rich_style("keybar--separator"))
            right.append(self.app.get_key_display(binding), key_style)
            right.append(f" {binding.description}", text_style)
            right.append(" ", blank)
        room = max(0, width - right.cell_len)
        left.truncate(room, overflow="ellipsis")
        if right and active is not None:
            spans.append((room + 1, width, active.binding.key))
        self._spans = spans
        console = self.app.console
        head = Strip(list(left.render(console))).extend_cell_length(room, blank)
        return Strip.join([head, Strip(list(right.render(console)))]).crop_extend(0, width, blank)

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)
        if at is None:
            return
        for start, end, key in self._spans:
            if start <= at.x < end:
                self.app.simulate_key(key)
                return
