"""A long text drawn from lines rendered once a width (:class:`WholeText`), only the
lines on screen drawn each frame (:class:`RenderedText`): the out-of-memory report, the
help. A Static laid out and drew a long text's Rich tables whole, twice a frame (the
help: 100-300 ms a key on its screen)."""

from __future__ import annotations

import threading

from rich.console import Console, RenderableType
from textual.geometry import Size
from textual.strip import Strip

from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.textual_compat import SteadyScrollView, set_virtual_size


class WholeText:
    """A renderable (the whole text report of an out-of-memory screen, the help) made
    into lines (Strips) once a width and kept: rendering its tables takes 20 to 300 ms,
    which a screen can do ahead in a thread worker (:meth:`OomScreen.on_mount`) so that
    opening it only draws them."""

    def __init__(self, body: RenderableType):
        self.body = body
        self._lines: dict[int, list[Strip]] = {}
        self._lock = threading.Lock()

    def lines(self, console: Console, width: int) -> list[Strip]:
        """``body`` at ``width`` cells, one Strip a line. Safe from any thread."""
        with self._lock:
            found = self._lines.get(width)
            if found is None:
                options = console.options.update_width(width)
                found = [Strip(line) for line in console.render_lines(self.body, options)]
                self._lines[width] = found
            return found


class RenderedText(SteadyScrollView, can_focus=True):
    """``text``'s lines at this width, of which only those on screen are drawn, with a
    pager's keys (the ``scroll`` scope: ``j``/``k``, ``g``/``G``, the arrows, pgup/pgdn,
    home/end)."""

    BINDINGS = bindings("scroll")
    # The lines are made for the width left of the scrollbar, which has its room from
    # the start: one that came with the lines would narrow the text below them.
    DEFAULT_CSS = """
    RenderedText { scrollbar-gutter: stable; overflow-x: hidden; overflow-y: auto; }
    """

    def __init__(self, text: WholeText, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.text = text
        self._lines: list[Strip] = []
        self._width = -1

    @property
    def line_width(self) -> int:
        """The cells a line has (-1 before the first layout)."""
        return self._width

    def show(self, text: WholeText) -> None:
        """Show ``text`` instead, at the same width."""
        self.text, self._width = text, -1
        self.on_resize()

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width != self._width and width > 0:
            self._width = width
            self._lines = self.text.lines(self.app.console, width)
            set_virtual_size(self, Size(width, len(self._lines)))
            self.refresh()

    def render_line(self, y: int) -> Strip:
        index = self.scroll_offset.y + y
        if 0 <= index < len(self._lines):
            # The widget's colours under the text's own styles, as a Static draws it
            # (and a dim style then becomes a dimmer colour over that background).
            style = self.rich_style
            return self._lines[index].apply_style(style).crop_extend(0, self.size.width, style)
        return Strip.blank(self.size.width, self.rich_style)
