"""A Line API list of rows with a cursor: the base of the allocation tree and the live set.

Only the rows on screen are rendered (``render_line``), so a list of 100k rows costs no
more to paint than a list of 10. Subclasses say how many rows there are and render one
row as Rich ``Text``; this class does the cursor, scrolling, clicks and caching.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.strip import Strip

from hlotop.safe_text import DRAWN_CHARS, drawn
from hlotop.ui.base.textual_compat import SteadyScrollView, set_virtual_size
from hlotop.ui.widgets.fit import fitted

GUTTER_FOCUSED = "▶"
GUTTER_BLURRED = "›"


def top_to_show(row: int, top: int, visible: int, center: bool = False) -> int | None:
    """The first row to scroll to so that ``row`` is among the ``visible`` rows shown
    from ``top`` (in the middle if ``center`` and it is not shown yet), or None if it
    is shown already."""
    if center and not top <= row < top + visible:
        return max(0, row - visible // 2)
    if row < top:
        return row
    if row >= top + visible:
        return row - visible + 1
    return None


class RowList(SteadyScrollView, can_focus=True):
    """Rows ``0..row_count()-1`` under a few fixed header lines, one of them the cursor."""

    COMPONENT_CLASSES = {
        "rowlist--cursor",
        "rowlist--cursor-blurred",
        "rowlist--header",
    }

    DEFAULT_CSS = """
    RowList > .rowlist--cursor {
        background: $block-cursor-background 60%;
        text-style: bold;
    }
    RowList > .rowlist--cursor-blurred {
        background: $block-cursor-blurred-background;
    }
    RowList > .rowlist--header {
        text-style: bold;
        color: $text-muted;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.cursor = 0
        # False when the selection made elsewhere is not among these rows: the cursor
        # is then not highlighted while another pane has the focus.
        self.shows_selection = True
        # Rows rendered (see row_segments).
        self._cache: LRUCache[int, Row] = LRUCache(512)
        # Rows as painted (gutter, cursor style, scrolled, cropped): a list that
        # scrolls by one row repaints every line, all but one of them already drawn.
        self._strips: LRUCache[tuple, Strip] = LRUCache(256)
        self._paint_style: Style | None = None  # self.rich_style while painting

    # -- what subclasses provide -------------------------------------------------
    def row_count(self) -> int:
        raise NotImplementedError

    def render_row(self, index: int) -> Text:
        """Row ``index`` as one line of Text, uncropped, without the cursor style."""
        raise NotImplementedError

    def pinned_lines(self) -> list[Text]:
        """Lines kept at the top that never scroll (a summary)."""
        return []

    def header_lines(self) -> list[Text]:
        """Lines under the pinned ones that scroll sideways with the rows but not
        down (column headings)."""
        return []

    @property
    def fixed_height(self) -> int:
        return len(self.pinned_lines()) + len(self.header_lines())

    def content_width(self) -> int:
        """Width of the widest row, for horizontal scrolling."""
        return 0

    def cursor_moved(self, index: int) -> None:
        """Called when the user moves the cursor to row ``index``."""

    def selectable(self, index: int) -> bool:
        """Whether the cursor may rest on row ``index`` (not on blank or note rows)."""
        return True

    # -- state ------------------------------------------------------------------
    def rows_changed(self) -> None:
        """Call after the rows change: resizes the virtual canvas and repaints."""
        self._cache.clear()
        self._strips.clear()
        count = self.row_count()
        self.cursor = min(self.cursor, max(count - 1, 0))
        if count:
            self.cursor = self._selectable_near(self.cursor, 1)
        set_virtual_size(self, Size(self.content_width() + 1, self.fixed_height + count))
        self.refresh()

    def set_cursor(self, index: int, *, notify: bool = False, direction: int = 1) -> None:
        """Move the cursor to row ``index`` (clamped; the nearest selectable row in
        ``direction``) and scroll it into view. ``notify``: tell the subclass (which
        may post a message)."""
        count = self.row_count()
        if count == 0:
            return
        index = self._selectable_near(max(0, min(index, count - 1)), direction)
        self.place_cursor(index)
        if notify:
            self.cursor_moved(index)

    def place_cursor(self, index: int, *, center: bool = False) -> None:
        """Put the cursor on row ``index`` (shown as the selection) and scroll it into
        view. Only the two rows that change are repainted, unless the list scrolls."""
        old, shown = self.cursor, self.shows_selection
        self.cursor = index
        self.shows_selection = True
        top = self.scroll_offset.y
        self.scroll_cursor_into_view(center=center)
        if self.scroll_offset.y != top:
            return  # scrolled: every line is repainted anyway
        if old != index or not shown:
            self.refresh_row(old)
            self.refresh_row(index)

    def hide_selection(self) -> None:
        """The selection is not among these rows: the cursor row is drawn plain while
        another pane has the focus."""
        if self.shows_selection:
            self.shows_selection = False
            self.refresh_row(self.cursor)

    def refresh_row(self, index: int) -> None:
        """Repaint row ``index`` if it is on screen."""
        y = self.fixed_height + index - self.scroll_offset.y
        if self.fixed_height <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def _selectable_near(self, index: int, direction: int) -> int:
        count = self.row_count()
        for step in (direction, -direction):
            i = index
            while 0 <= i < count:
                if self.selectable(i):
                    return i
                i += step
        return index

    @property
    def view_height(self) -> int:
        """Lines on screen: the pane's height less a horizontal scrollbar, which is
        drawn over the last line (``size`` counts it)."""
        return self.scrollable_content_region.height

    @property
    def visible_rows(self) -> int:
        return max(1, self.view_height - self.fixed_height)

    def scroll_cursor_into_view(self, center: bool = False) -> None:
        if self.view_height == 0:
            return
        y = top_to_show(self.cursor, self.scroll_offset.y, self.visible_rows, center)
        if y is not None:
            self.scroll_to(y=y, animate=False)

    def on_resize(self, event: events.Resize) -> None:
        self.scroll_cursor_into_view()

    # Focus changes how the cursor row is drawn (its gutter mark and colour); there is
    # no on_focus/on_blur repaint: the panes' :focus border restyles, and so repaints,
    # the whole widget once the focus has moved (another repaint was another frame).

    # -- actions (bound in bindings.py) ------------------------------------------
    def action_cursor_up(self) -> None:
        self.set_cursor(self.cursor - 1, notify=True, direction=-1)

    def action_cursor_down(self) -> None:
        self.set_cursor(self.cursor + 1, notify=True)

    def action_page_up(self) -> None:
        self.set_cursor(self.cursor - self.visible_rows, notify=True, direction=-1)

    def action_page_down(self) -> None:
        self.set_cursor(self.cursor + self.visible_rows, notify=True)

    def action_first_row(self) -> None:
        self.set_cursor(0, notify=True)

    def action_last_row(self) -> None:
        self.set_cursor(self.row_count() - 1, notify=True, direction=-1)

    def action_scroll_columns(self, delta: int) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x + delta), animate=False)

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)  # event.x/y count the border too
        if at is None:
            return
        index = self.scroll_offset.y + at.y - self.fixed_height
        if at.y >= self.fixed_height and 0 <= index < self.row_count():
            self.set_cursor(index, notify=True)

    # -- rendering ----------------------------------------------------------------
    def row_segments(self, index: int) -> Row:
        """Row ``index`` as segments, each in its own style (the line's style goes
        under them when drawn): :meth:`render_row` rendered once and kept. A subclass
        may make them more cheaply, with the same segments."""
        row = self._cache.get(index)
        if row is None:
            row = self._cache[index] = Row.of(self.app.console, self.render_row(index))
        return row

    def render_lines(self, crop: Region) -> list[Strip]:
        # The widget's style, asked once a paint rather than once a line (it walks the
        # DOM: a quarter of a line's cost).
        self._paint_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._paint_style = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._paint_style if self._paint_style is not None else self.rich_style
        pinned = self.pinned_lines()
        headers = self.header_lines()
        scroll_x, scroll_y = self.scroll_offset
        gutter = " "
        console = self.app.console
        if y < len(pinned):  # cut with an ellipsis (left of a scrollbar): it never scrolls
            shown = fitted(pinned[y], self.scrollable_content_region.width - 1)
            return compose_line(" ", Row.of(console, shown), base, 0, width)
        y -= len(pinned)
        if y < len(headers):
            text = headers[y]
            style = base + self.get_component_rich_style("rowlist--header")
        else:
            index = scroll_y + y - len(headers)
            if index >= self.row_count():
                return Strip.blank(width, base)
            style = base
            if index == self.cursor:
                if self.has_focus:
                    style = base + self.get_component_rich_style("rowlist--cursor")
                    gutter = GUTTER_FOCUSED
                elif self.shows_selection:
                    style = base + self.get_component_rich_style("rowlist--cursor-blurred")
                    gutter = GUTTER_BLURRED
            key = (index, gutter, style, scroll_x, width)
            strip = self._strips.get(key)
            if strip is None:
                strip = self._strips[key] = compose_line(
                    gutter, self.row_segments(index), style, scroll_x, width
                )
            return strip
        return compose_line(gutter, Row.of(console, text), style, scroll_x, width)


NULL_STYLE = _NULL = Style()


def shown_len(text: str) -> int:
    """``len(drawn(text))`` (what a row draws of it), without building it for the
    usual short printable text."""
    return len(text) if len(text) <= DRAWN_CHARS and text.isprintable() else len(drawn(text))


def text_strip(console, text: Text) -> Strip:
    """``text`` as one Strip. Every segment gets a Style (never None): Textual's
    monochrome filter, used under NO_COLOR, reads the colour of each segment."""
    return Strip(raw_segments(console, text), text.cell_len)


def raw_segments(console, text: Text) -> list[Segment]:
    """``text`` rendered, every segment with a Style (never None)."""
    return [Segment(seg.text, seg.style or _NULL, seg.control) for seg in text.render(console)]


@dataclass(frozen=True, slots=True)
class Row:
    """A row rendered: its segments in their own styles, and whether it has any (a Text
    without spans renders unstyled: the line's style is then not put under it)."""

    segments: list[Segment]
    styled: bool

    @classmethod
    def of(cls, console, text: Text) -> Row:
        if text.style:  # in a line, a Text's own style is a span of it
            line = Text(no_wrap=True, end="")
            line.append_text(text)
            text = line
        return cls(raw_segments(console, text), bool(text.spans))


def compose_line(gutter: str, row: Row, style: Style, scroll_x: int, width: int) -> Strip:
    """A fixed one-cell gutter, then ``row`` scrolled by ``scroll_x`` and padded to
    ``width`` in ``style``: the Strip a Text in ``style`` holding the row renders to
    (``style`` under each of its segments, if it has styles), without making one."""
    segments = Segment.apply_style(row.segments, style) if row.styled else row.segments
    body = Strip(segments).crop_extend(scroll_x, scroll_x + width - 1, style)
    return Strip.join([Strip([Segment(gutter, _NULL)], 1), body])
