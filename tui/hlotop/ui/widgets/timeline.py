"""The live-range timeline: x is the schedule step, one row per value with a live range
(a bar from its start to its end step, drawn in its memory space's colour and fill),
along the top one memory space's occupied bytes (``m`` picks the space) with XLA's
peak step (◆) and the curve's maximum (▲) marked and both stated in one line, and a
step cursor.

A Line API ``ScrollView``: the header lines and the label column stay put while the bars
scroll; only visible rows are rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.strip import Strip

from hlotop.analysis.value_filter import Matches
from hlotop.analysis.value_order import ORDER_TEXT, ORDERS
from hlotop.model import ModuleDump, ValueInfo
from hlotop.model.memory_space import space_name, space_names
from hlotop.model.value_table import keeping, value_ids
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.host import host
from hlotop.ui.base.selection import SelectionOwner
from hlotop.ui.base.textual_compat import SteadyScrollView
from hlotop.ui.view_models.columns import longest
from hlotop.ui.view_models.steps import (
    IdIndex,
    StepIndex,
    live_range_of,
    no_live_ranges,
    step_summary,
)
from hlotop.ui.widgets.filter_bar import filter_note
from hlotop.ui.widgets.fit import fitted
from hlotop.ui.widgets.legend import plain, space_fill, space_style
from hlotop.ui.widgets.row_list import NULL_STYLE as _NULL
from hlotop.ui.widgets.row_list import raw_segments, text_strip, top_to_show
from hlotop.units import human_bytes, with_commas

_EIGHTHS = " ▁▂▃▄▅▆▇█"
_NAME_MAX = 32  # the label column is never wider
SIZE_W = 9
# Zoom levels as (steps per column, columns per step), most zoomed-out first.
ZOOMS: tuple[tuple[int, int], ...] = tuple((1 << k, 1) for k in range(16, 0, -1)) + tuple(
    (1, c) for c in (1, 2, 3, 4, 6, 8)
)
_NICE = (
    1,
    2,
    5,
    10,
    20,
    25,
    50,
    100,
    200,
    250,
    500,
    1000,
    2000,
    2500,
    5000,
    10000,
    20000,
    50000,
    100000,
    200000,
    500000,
)


@dataclass(frozen=True, slots=True)
class _Geometry:
    curve_h: int
    header_h: int
    name_w: int
    label_w: int
    bar_w: int
    level: int  # index into ZOOMS
    sps: int  # steps per column
    cps: int  # columns per step
    n_cols: int


class Timeline(SteadyScrollView, can_focus=True):
    """Bars of live ranges, rows ordered by start step then value id."""

    BINDINGS = bindings("timeline")
    COMPONENT_CLASSES = {
        "timeline--cursor-column",
        "timeline--selected",
        "timeline--curve",
        "timeline--peak",
        "timeline--dim",
    }
    DEFAULT_CSS = """
    Timeline > .timeline--cursor-column { background: $block-cursor-background 35%; }
    Timeline > .timeline--selected { background: $block-cursor-blurred-background; text-style: bold; }
    Timeline > .timeline--curve { color: $text-muted; }
    Timeline > .timeline--peak { color: $error; text-style: bold; }
    Timeline > .timeline--dim { color: $text-muted; }
    """

    def __init__(
        self,
        dump: ModuleDump,
        steps: StepIndex | None = None,
        *,
        id: str | None = "timeline",
        owner: SelectionOwner | None = None,
    ):
        """``owner``: who is told of the user's choices of step and value (None: nobody)."""
        super().__init__(id=id, classes="pane")
        self.dump = dump
        self.owner = owner
        a = dump.analysis
        steps = steps if steps is not None else StepIndex(a.values, a.max_time)
        self._steps = steps
        self.rows: Sequence[ValueInfo] = steps.rows
        self.row_of = steps.row_of
        # The rows' order (s) and filter (f): see _relist.
        self.order = "start"
        self.matches: Matches | None = None
        self._ordered: dict[str, Sequence[ValueInfo]] = {"start": steps.rows}
        self.max_time = a.max_time
        self.counts = steps.counts if a.live_bytes else []
        self.step = a.peak_step or 0
        self.row = 0
        self.row_selected = True  # False: the selection has no row here
        self._reveal_pending = False  # a row chosen to be centred while the pane had no size
        self.zoom_level: int | None = None  # None: fit to the width
        self._zoom_pending = 0  # zoom steps asked for while the pane had no size
        self._col_max: list[int] = []
        self._labels: LRUCache[tuple, list[Segment]] = LRUCache(256)  # rows' label columns
        self._paint_style: Style | None = None  # while painting: self.rich_style
        self._cursor_bg: Style | None = None  # and the step cursor's background
        self._layout_key: tuple | None = None
        self._geo_key: tuple | None = None
        self._geo = _Geometry(1, 4, 6, 20, 1, len(ZOOMS) - 1, 1, 1, 1)
        # The curve: one memory space's occupied bytes (default: colour 0, HBM).
        self.space = 0 if 0 in a.occupied_bytes else min(a.occupied_bytes, default=0)
        self._set_curve()
        ids = self.row_of.keys()
        self._id_w = max(len(str(min(ids, default=0))), len(str(max(ids, default=0))))
        self._name_max = longest((len(v.value.label) for v in self.rows), _NAME_MAX, 4)
        self._update_title()
        self._update_subtitle()

    def _update_title(self) -> None:
        if self.dump.preview is not None:
            self.border_title = "2 Timeline · live ranges: loading…"
            return
        total = with_commas(len(self._steps.rows))
        count = f"{with_commas(len(self.rows))} of {total}" if self.matches is not None else total
        order = f" · by {ORDER_TEXT[self.order]}" if self.order != "start" else ""
        self.border_title = f"2 Timeline ({count} live ranges){order}{filter_note(self.matches)}"

    # -- order and filter (s, f) ----------------------------------------------------
    def cycle_sort(self) -> str:
        """Order the rows by the next of :data:`ORDERS` (start first); returns it."""
        at = ORDERS.index(self.order)
        self.order = ORDERS[(at + 1) % len(ORDERS)]
        self._relist()
        return self.order

    def set_filter(self, matches: Matches | None) -> None:
        """Show only the rows of the values ``matches`` keeps (None: every row)."""
        self.matches = matches
        self._relist()

    def _relist(self) -> None:
        """The rows in :attr:`order`, those :attr:`matches` keeps: each order sorted
        once, then a pass over the rows; the selected value stays selected if kept."""
        selected = self.rows[self.row].value_id if self.row_selected and self.rows else None
        ordered = self._ordered.get(self.order)
        if self.matches is not None:  # the kept rows sorted, not all of them
            rows = keeping(ordered if ordered is not None else self._steps.rows, self.matches.ids)
            if ordered is None:
                rows = self._steps.orders.get(self.order).sort(rows)
        elif ordered is None:
            rows = self._ordered[self.order] = self._steps.orders.get(self.order).sort(
                self._steps.rows
            )
        else:
            rows = ordered
        self.rows = rows
        if rows is self._steps.rows:
            self.row_of = self._steps.row_of
        else:
            self.row_of = IdIndex(value_ids(rows))
        self._labels.clear()  # keyed by row
        self.row = min(self.row, max(len(rows) - 1, 0))
        self._update_title()
        self._relayout()
        if selected is not None and selected in self.row_of:
            self._select_row(self.row_of[selected], center=True)
        else:
            self.row_selected = False
            self._keep_visible()

    def _set_curve(self) -> None:
        a = self.dump.analysis
        self.curve: Sequence[int] = a.occupied_bytes.get(self.space) or []
        self._top = max(self.curve, default=0) or 1
        # The curve's highest step (▲); XLA's peak step (◆) can differ: XLA's sweep
        # sums every value live there at its logical size, in every memory space.
        self.curve_peak_step = self.curve.index(self._top) if self._top in self.curve else 0

    def space_name(self) -> str:
        return space_name(self.space, space_names(self.dump))

    def set_space(self, color: int) -> None:
        """Draw memory space ``color``'s occupied bytes along the top."""
        self.space = color
        self._set_curve()
        self._compute_columns()
        self.refresh()

    def next_space(self) -> int:
        """Switch the curve to the next memory space (in colour order); returns it."""
        colors = sorted(self.dump.analysis.occupied_bytes)
        if colors:
            at = colors.index(self.space) if self.space in colors else -1
            self.set_space(colors[(at + 1) % len(colors)])
        return self.space

    # -- geometry -------------------------------------------------------------------
    # Computed once per size and zoom (``self.size`` is too slow to ask per cell).
    def _update_geometry(self) -> _Geometry:
        # Less the scrollbars, which are drawn over the last line and columns.
        width, height = self.scrollable_content_region.size
        key = (width, height, self.zoom_level)
        if self._geo_key == key:
            return self._geo
        curve_h = 1 if height < 14 else 2 if height < 30 else 3
        name_w = max(6, min(self._name_max, max(14, min(_NAME_MAX, width // 4))))
        label_w = 1 + self._id_w + 1 + name_w + 1 + SIZE_W + 1
        bar_w = max(1, width - label_w)
        steps = self.max_time + 1
        level = self.zoom_level
        if level is None:
            level = self.fit_level(bar_w)
        sps, cps = ZOOMS[level]
        self._geo = _Geometry(
            curve_h, curve_h + 4, name_w, label_w, bar_w, level, sps, cps, -(-steps * cps // sps)
        )
        self._geo_key = key
        return self._geo

    def fit_level(self, bar_w: int) -> int:
        """The most zoomed-in level at which every step fits in ``bar_w`` columns (0,
        the most zoomed-out, if none does)."""
        steps = self.max_time + 1
        level = 0
        for i, (sps, cps) in enumerate(ZOOMS):
            if -(-steps * cps // sps) <= bar_w:
                level = i
        return level

    @property
    def curve_height(self) -> int:
        return self._geo.curve_h

    @property
    def header_height(self) -> int:
        return self._geo.header_h  # status, peaks, curve, axis, markers

    @property
    def name_w(self) -> int:
        return self._geo.name_w

    @property
    def label_w(self) -> int:
        return self._geo.label_w

    @property
    def bar_w(self) -> int:
        return self._geo.bar_w

    @property
    def zoom(self) -> tuple[int, int]:
        return self._geo.sps, self._geo.cps

    def _effective_level(self) -> int:
        return self._update_geometry().level

    @property
    def n_cols(self) -> int:
        return self._geo.n_cols

    def col_of(self, step: int) -> tuple[int, int]:
        """First and last column of ``step``."""
        g = self._geo
        return (step * g.cps) // g.sps, ((step + 1) * g.cps - 1) // g.sps

    def step_of(self, col: int) -> int:
        g = self._geo
        return min(self.max_time, (col * g.sps) // g.cps)

    def _relayout(self) -> None:
        self._update_geometry()
        self._compute_columns()
        self.virtual_size = Size(self.label_w + self.n_cols, self.header_height + len(self.rows))
        self._update_subtitle()
        self.refresh()

    def _compute_columns(self) -> None:
        sps, cps = self.zoom
        curve = self.curve
        # Zoomed out, a column holds several steps: it shows their maximum.
        self._col_max = (
            [max(curve[c * sps : (c + 1) * sps], default=0) for c in range(self.n_cols)]
            if sps > 1
            else []
        )
        self._layout_key = (sps, cps, self.n_cols)

    def _update_subtitle(self) -> None:
        if not self.dump.analysis.live_bytes:
            self.border_subtitle = ""
            return
        sps, cps = ZOOMS[self.zoom_level] if self.zoom_level is not None else (0, 0)
        zoom = (
            "fit"
            if self.zoom_level is None
            else (f"{cps} col/step" if sps == 1 else f"{sps} steps/col")
        )
        self.border_subtitle = f"zoom {zoom} · +/- zoom · ←→ step · p/P peaks · m space · : step"

    # Focus changes how the selected row is drawn: repainted with the whole pane when
    # its :focus border is restyled (see RowList).

    def on_resize(self, event: events.Resize) -> None:
        self._relayout()
        if self._zoom_pending and self.scrollable_content_region.width:
            # Zoom keys typed with the key that showed the pane (2 + +): from the
            # level that fits the pane, not from one worked out for no width.
            delta, self._zoom_pending = self._zoom_pending, 0
            self.action_zoom(delta)
        if self._reveal_pending and self.row_selected and self.rows:
            # Shown for the first time (on a small terminal, one pane at a time): the
            # value chosen while it had no size is put on screen now, as show_value does.
            self._scroll_to_row(center=True)
        else:
            self._keep_visible()
        self._reveal_pending = False

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        # The bars are narrower or wider by its width: the fitting zoom may change,
        # and the step cursor's column may leave the screen.
        def relayout() -> None:
            self._relayout()
            self._keep_visible()

        self.call_after_refresh(relayout)

    # -- state changes ------------------------------------------------------------
    def set_step(self, step: int, *, notify: bool = True) -> None:
        if not self.counts:
            return
        self.step = max(0, min(step, self.max_time))
        self._keep_visible()
        self.refresh()
        if notify and self.owner is not None:
            self.owner.step_changed(self.step)

    def set_row(self, row: int, *, notify: bool = True) -> None:
        if not self.rows:
            return
        self._select_row(max(0, min(row, len(self.rows) - 1)))
        if notify and self.owner is not None:
            self.owner.select_value(self.rows[self.row].value_id, self.id)

    def show_value(self, value_id: int | None) -> bool:
        """Highlight the row of ``value_id`` and scroll to it (no message); None: no
        row is the selection."""
        self._update_geometry()
        row = self.row_of.get(value_id) if value_id is not None else None
        if row is None:  # no live range (thread-local): no row to highlight
            if self.row_selected:
                self.row_selected = False
                self._refresh_row(self.row)
            return False
        self._select_row(row, center=True)
        return True

    def _select_row(self, row: int, *, center: bool = False) -> None:
        """Make ``row`` the selected one and scroll it (and, when centring, its bar)
        into view; only the two rows that change are repainted, unless it scrolls."""
        old, selected = self.row, self.row_selected
        self.row = row
        self.row_selected = True
        offset = self.scroll_offset
        self._reveal_pending = center and not self.size.height  # see on_resize
        self._scroll_to_row(center)
        if self.scroll_offset != offset:
            return  # scrolled: every line is repainted anyway
        if old != row or not selected:
            self._refresh_row(old)
            self._refresh_row(row)

    def _scroll_to_row(self, center: bool) -> None:
        """Scroll ``self.row`` into view (and, when centring, its bar too)."""
        self._keep_visible(center_row=center)
        if center:
            live = live_range_of(self.rows[self.row])
            first, _ = self.col_of(live.start)
            _, last = self.col_of(live.end)
            sx = self.scroll_offset.x
            if self.size.width and (last < sx or first >= sx + self.bar_w):
                self.scroll_to(x=max(0, first - 2), animate=False, force=True)

    def _refresh_row(self, row: int) -> None:
        y = self.header_height + row - self.scroll_offset.y
        if self.header_height <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def set_zoom(self, level: int | None) -> None:
        self.zoom_level = None if level is None else max(0, min(level, len(ZOOMS) - 1))
        self._relayout()
        self._keep_visible(center_col=True)

    def _keep_visible(self, center_row: bool = False, center_col: bool = False) -> None:
        # Each scroll is forced: a pane just shown has no scrollbars yet (Textual works
        # them out as it lays the pane out), and Textual ignores a scroll without them.
        self._update_geometry()
        height = self.scrollable_content_region.height
        if height == 0:
            return
        visible = max(1, height - self.header_height)
        y = top_to_show(self.row, self.scroll_offset.y, visible, center_row)
        if y is not None:
            self.scroll_to(y=y, animate=False, force=True)
        first, last = self.col_of(self.step)
        sx = self.scroll_offset.x
        if center_col and not sx <= first < sx + self.bar_w:
            self.scroll_to(x=max(0, first - self.bar_w // 2), animate=False, force=True)
        elif first < sx:
            self.scroll_to(x=first, animate=False, force=True)
        elif last >= sx + self.bar_w:
            self.scroll_to(x=last - self.bar_w + 1, animate=False, force=True)

    # -- actions --------------------------------------------------------------------
    def action_step(self, delta: int) -> None:
        self.set_step(self.step + delta)

    def action_step_page(self, direction: int) -> None:
        self._update_geometry()
        sps, cps = self.zoom
        self.set_step(self.step + direction * max(1, self.bar_w * sps // cps - 1))

    def action_first_step(self) -> None:
        self.set_step(0)

    def action_last_step(self) -> None:
        self.set_step(self.max_time)

    def action_row(self, delta: int) -> None:
        self.set_row(self.row + delta)

    def action_row_page(self, direction: int) -> None:
        self._update_geometry()
        height = self.scrollable_content_region.height
        self.set_row(self.row + direction * max(1, height - self.header_height))

    def action_zoom(self, delta: int) -> None:
        """Zoom in (``delta`` > 0) or out, never further out than the level that fits
        the whole schedule (further out, it took a few columns of the pane)."""
        width = self.scrollable_content_region.width
        if not width:  # just shown, not laid out yet: zoomed once it is (on_resize)
            self._zoom_pending += delta
            return
        level = self._effective_level() + delta
        fit = self.fit_level(self._update_geometry().bar_w)
        if delta < 0 and level <= fit:
            if self.zoom_level is None:
                self.notify("The whole schedule is shown (zoom fit): + zooms in.", timeout=3)
            self.set_zoom(None)
            return
        self.set_zoom(level)

    def action_zoom_fit(self) -> None:
        self._zoom_pending = 0
        self.set_zoom(None)

    def on_click(self, event: events.Click) -> None:
        """A click on the bars moves the step cursor there; on a row, selects it."""
        at = event.get_content_offset(self)  # event.x/y count the border too
        if at is None:
            return
        self._update_geometry()
        if at.x >= self.label_w and self.counts:
            self.set_step(self.step_of(self.scroll_offset.x + at.x - self.label_w))
        row = self.scroll_offset.y + at.y - self.header_height
        if at.y >= self.header_height and 0 <= row < len(self.rows):
            self.set_row(row)

    # -- rendering ------------------------------------------------------------------
    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(name)

    def render_lines(self, crop: Region) -> list[Strip]:
        # The widget's style and the cursor's, asked once a paint rather than once a
        # line (each walks the DOM).
        self._paint_style = self.rich_style
        self._cursor_bg = Style(bgcolor=self._style("timeline--cursor-column").bgcolor)
        try:
            return super().render_lines(crop)
        finally:
            self._paint_style = self._cursor_bg = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._paint_style if self._paint_style is not None else self.rich_style
        if not self.counts:
            if y == 0:
                if self.dump.preview is not None:  # the first look at a big dump
                    note = Text(no_live_ranges(self.dump), style="italic")
                else:
                    note = Text(no_live_ranges(self.dump) + " (no HloLiveRange section)", "dim")
                return self._strip(note, base, width)
            return Strip.blank(width, base)
        self._update_geometry()
        if self._layout_key != (*self.zoom, self.n_cols):
            self._compute_columns()
        h = self.curve_height
        if y == 0:
            summary = step_summary(self.dump, self.step, self.counts, plain(self), self.space)
            return self._strip(summary, base, width)
        if y == 1:
            return self._strip(self.peaks_text(), base, width)
        if y <= h + 1:
            return self._curve_line(y - 2, h, base, width)
        if y == h + 2:
            return self._axis_line(base, width)
        if y == h + 3:
            return self._marker_line(base, width)
        row = self.scroll_offset.y + y - self.header_height
        if row >= len(self.rows):
            if row == 0 and self.matches is not None:
                note = Text(" No live range of a value the filter matches (esc clears it).")
                return self._strip(note, base, width)
            return Strip.blank(width, base)
        return self._value_line(row, base, width)

    def _strip(self, text: Text, style: Style, width: int) -> Strip:
        """A line of the header (or the note of a dump without live ranges), cut with
        an ellipsis left of the scrollbar."""
        line = Text(style=style, no_wrap=True, end="")
        line.append_text(fitted(text, self.scrollable_content_region.width or width))
        return text_strip(self.app.console, line).crop_extend(0, width, style)

    def _visible_cols(self) -> range:
        """The columns on screen, including blank ones past the last step."""
        sx = self.scroll_offset.x
        return range(sx, sx + self.bar_w)

    def _label(self, text: str, style: str | Style = "") -> Text:
        return Text(
            f"{text:>{self.label_w - 1}} "[: self.label_w], style=style, no_wrap=True, end=""
        )

    def _bars(self, text: Text, cols: range, cell) -> None:
        """Append one cell per visible column: ``cell(col) -> (char, style)``; the step
        cursor's columns get the cursor background."""
        c0, c1 = self.col_of(self.step)
        # Only the background: a bar keeps its memory space's colour under the cursor.
        cursor = self._cursor_style()
        # Runs of cells in one style are appended at once (a row is mostly three runs).
        run: list[str] = []
        run_style = None
        for col in cols:
            char, style = cell(col)
            if c0 <= col <= c1:
                style = (
                    style if isinstance(style, Style) else Style.parse(style or "none")
                ) + cursor
            if style != run_style:
                if run:
                    text.append("".join(run), style=run_style)
                run, run_style = [], style
            run.append(char)
        if run:
            text.append("".join(run), style=run_style)

    def _bar_runs(self, cols: range, first: int, last: int, fill: str, space) -> list:
        """The visible cells of a bar over columns ``first..last`` (``fill`` in style
        ``space``, blank elsewhere), with the step cursor's background, as runs of
        (text, style or ""): what :meth:`_bars` makes, a run at a time instead of a cell
        at a time (a row is at most five runs; this is every row, every step)."""
        c0, c1 = self.col_of(self.step)
        cursor = self._cursor_style()
        space_style = space if isinstance(space, Style) else Style.parse(space or "none")
        blank_cursor, fill_cursor = Style.parse("none") + cursor, space_style + cursor
        stop = cols.stop
        cuts = sorted({cols.start, stop, first, last + 1, c0, c1 + 1})
        runs: list = []
        run, run_style = "", None
        for a, b in zip(cuts, cuts[1:], strict=False):
            a, b = max(a, cols.start), min(b, stop)
            if a >= b:
                continue
            in_bar, in_cursor = first <= a <= last, c0 <= a <= c1
            if in_bar:
                char, style = fill, fill_cursor if in_cursor else space
            else:
                char, style = " ", blank_cursor if in_cursor else ""
            if style != run_style:
                if run:
                    runs.append((run, run_style))
                run, run_style = "", style
            run += char * (b - a)
        if run:
            runs.append((run, run_style))
        return runs

    def _cursor_style(self) -> Style:
        """The step cursor's background (a bar keeps its memory space's colour under it)."""
        if self._cursor_bg is not None:
            return self._cursor_bg
        return Style(bgcolor=self._style("timeline--cursor-column").bgcolor)

    def _col_value(self, col: int) -> int:
        sps, cps = self.zoom
        if col >= self.n_cols:
            return 0
        if sps > 1:
            return self._col_max[col]
        return self.curve[min(col // cps, self.max_time)] if self.curve else 0

    def _curve_line(self, index: int, height: int, base: Style, width: int) -> Strip:
        top = self._top
        peak_cols = self.col_of(self.dump.analysis.peak_step or 0)
        level_below = (height - 1 - index) * 8
        curve, peak = self._style("timeline--curve"), self._style("timeline--peak")
        if index == 0:
            text = self._label(
                f"max {human_bytes(top)} @{self.curve_peak_step}", self._style("timeline--dim")
            )
        elif index == height - 1:
            text = self._label(f"{self.space_name()} occupied", self._style("timeline--dim"))
        else:
            text = self._label("")

        capacity = self._capacity()

        def cell(col: int):
            value = self._col_value(col)
            eighths = round(value * height * 8 / top)
            if value and eighths == 0:
                eighths = 1
            n = max(0, min(8, eighths - level_below))
            over = capacity is not None and value > capacity  # drawn as the peak is
            return _EIGHTHS[n], peak if over or peak_cols[0] <= col <= peak_cols[1] else curve

        self._bars(text, self._visible_cols(), cell)
        return self._strip(text, base, width)

    def peaks_text(self) -> Text:
        """One line with both peaks: XLA's (◆, its step and figure) and the curve's
        maximum (▲, the shown memory space's occupied bytes), so where they differ the
        screen says both."""
        a = self.dump.analysis
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        peak = self._style("timeline--peak")
        if a.peak_step is not None:
            text.append("◆ XLA's peak ", style=peak)
            text.append(human_bytes(a.peak_bytes), style="bold")
            text.append(f" at {a.peak_step}")
            text.append(" · ", style="dim")
        if self.curve:
            text.append("▲ ", style="bold")
            text.append(f"{self.space_name()} occupied ")
            text.append(human_bytes(self._top), style="bold")
            text.append(f" at {self.curve_peak_step}")
        capacity = self._capacity()
        if capacity is not None:
            text.append(" · ", style="dim")
            over = sum(1 for v in self.curve if v > capacity)
            text.append(
                f"capacity {human_bytes(capacity)}" + (f": {over} steps over" if over else ""),
                style=peak if over else "",
            )
        return text

    def _capacity(self) -> int | None:
        """``--capacity`` in bytes when the curve is the device's main memory (colour
        0), else None."""
        capacity = host(self).capacity
        return capacity[0] if capacity is not None and self.space == 0 else None

    def _axis_line(self, base: Style, width: int) -> Strip:
        text = self._label("step", self._style("timeline--dim"))
        sps, cps = self.zoom
        label_w = len(str(self.max_time)) + 1
        every = next((n for n in _NICE if n * cps / sps >= label_w + 1), _NICE[-1])
        cols = self._visible_cols()
        cells: dict[int, str] = {}
        first_step = (self.step_of(cols.start) // every) * every if cols else 0
        for step in range(first_step, self.max_time + 1, every):
            first, _ = self.col_of(step)
            label = str(step)
            if first + len(label) > cols.stop:
                break
            if first < cols.start:
                continue  # scrolled partly off the left: "50" would stand for 1050
            for i, ch in enumerate(label):
                cells[first + i] = ch
        dim = self._style("timeline--dim")
        self._bars(text, cols, lambda col: (cells.get(col, " "), dim))
        return self._strip(text, base, width)

    def _marker_line(self, base: Style, width: int) -> Strip:
        text = self._label(f"▼ step {self.step}", "bold")
        peak_step = self.dump.analysis.peak_step
        p0, p1 = self.col_of(peak_step) if peak_step is not None else (-1, -1)
        m0, _ = self.col_of(self.curve_peak_step) if self.curve else (-1, -1)
        c0, _ = self.col_of(self.step)
        peak = self._style("timeline--peak")

        def cell(col: int):
            if col == c0:
                return "▼", Style(bold=True)
            if col == p0:
                return "◆", peak
            if col == m0:
                return "▲", Style(bold=True)
            return " ", ""

        self._bars(text, self._visible_cols(), cell)
        return self._strip(text, base, width)

    def _value_line(self, row: int, base: Style, width: int) -> Strip:
        """A value's row: its label columns (rendered once per row and look), then its
        bar. The Strip is what a Text of the whole row in the row's style renders to,
        made from segments: every row is drawn again at every step."""
        info = self.rows[row]
        selected = row == self.row and (self.row_selected or self.has_focus)
        style = base + self._style("timeline--selected") if selected else base
        space = space_style(info.color, plain(self))
        gutter = ("▶" if self.has_focus else "›") if selected else " "
        key = (row, gutter, self.name_w, style)
        label = self._labels.get(key)
        if label is None:  # the same for every step: made once
            name = printable(info.value.label)
            if len(name) > self.name_w:
                name = name[: self.name_w - 1] + "…"
            text = Text(style=style, no_wrap=True, end="")
            text.append(gutter)
            text.append(f"{info.value_id:>{self._id_w}} ", style="dim")
            text.append(f"{name:<{self.name_w}} ", style=space)
            text.append(f"{human_bytes(info.logical_bytes):>{SIZE_W}} ")  # no span
            label = self._labels[key] = raw_segments(self.app.console, text)
        segments = list(label)
        live = live_range_of(info)
        start, _ = self.col_of(live.start)
        _, end = self.col_of(min(live.end, self.max_time))
        # A run with no style has no span: Rich renders it in one segment with the
        # text before it when that has no span either (the size column).
        spanless = True
        line_style = style or _NULL
        get_style = self.app.console.get_style
        runs = self._bar_runs(self._visible_cols(), start, end, space_fill(info.color), space)
        for run, run_style in runs:
            if not run_style:
                if spanless:
                    last = segments[-1]
                    segments[-1] = Segment(last.text + run, last.style)
                else:
                    segments.append(Segment(run, line_style))
                spanless = True
            else:
                added = run_style if isinstance(run_style, Style) else get_style(run_style)
                segments.append(Segment(run, style + added or _NULL))
                spanless = False
        return Strip(segments).crop_extend(0, width, style)
