"""Pane 3 of the diff browser: both sides' occupied bytes of memory space 0 over the
program, each resampled to the pane's width over its own schedule (a column is the
maximum of the steps it covers), on one axis (the larger maximum), drawn with eighth
blocks; under them the difference (``▲`` where NEW holds more, ``▼`` less, ``·`` within
1% of the axis); and a cursor (←/→) whose line says, for each side, the steps under it
and their bytes, and the change.
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import events
from textual.widget import Widget

from hlotop.model.memory_space import space_name, space_names
from hlotop.report.diff_report import change_style, signed
from hlotop.ui.base.diff_keys import diff_bindings
from hlotop.ui.view_models.diff_data import CURVE_SPACE, DiffData, column_steps
from hlotop.ui.widgets.legend import peak_style, plain
from hlotop.units import human_bytes

_EIGHTHS = " ▁▂▃▄▅▆▇█"
LABEL_W = 4  # "OLD ", "NEW "


def diff_marks(old: list[int], new: list[int]) -> str:
    """``▲`` where NEW is above OLD by more than 1% of the axis, ``▼`` below, ``·``."""
    top = max(max(old, default=0), max(new, default=0)) or 1
    return "".join(
        "▲" if b - a > top / 100 else "▼" if a - b > top / 100 else "·"
        for a, b in zip(old, new, strict=True)
    )


class DiffTimeline(Widget, can_focus=True):
    """The two curves, their difference and a cursor column (:attr:`col`)."""

    BINDINGS = diff_bindings("right", "left", "first_row", "last_row")

    DEFAULT_CSS = """
    DiffTimeline { text-wrap: nowrap; text-overflow: clip; }
    """

    def __init__(self, data: DiffData, *, id: str | None = "timeline"):
        super().__init__(id=id, classes="pane")
        self.data = data
        self.columns = 0  # columns of the curves (the pane's width less the labels)
        self.old: list[int] = []
        self.new: list[int] = []
        self.col = 0
        self._fraction: float | None = None  # the cursor's place, kept across resizes
        d = data.diff
        self.steps = (
            len(d.old.module.analysis.occupied_bytes.get(CURVE_SPACE, [])),
            len(d.new.module.analysis.occupied_bytes.get(CURVE_SPACE, [])),
        )
        name = space_name(CURVE_SPACE, space_names(d.old.module))
        self.border_title = f"3 Timeline · {name} occupied over the program"
        self.border_subtitle = "←→ cursor · each side over its schedule"

    @property
    def has_curves(self) -> bool:
        return all(self.steps)

    def on_resize(self, event: events.Resize) -> None:
        self._layout(self.content_region.width - LABEL_W)

    def _layout(self, width: int) -> None:
        width = max(1, width)
        if width == self.columns or not self.has_curves:
            return
        self.columns = width
        self.old, self.new = self.data.curves(width)
        top = max(max(self.old, default=0), max(self.new, default=0))
        self.border_subtitle = f"axis {human_bytes(top)} · ←→ cursor · each side over its schedule"
        if self._fraction is None:  # first: where the curves differ most
            gaps = [abs(b - a) for a, b in zip(self.old, self.new, strict=True)]
            self.col = gaps.index(max(gaps)) if gaps else 0
        else:
            self.col = round(self._fraction * (width - 1))
        self._fraction = self.col / (width - 1) if width > 1 else 0.0
        self.refresh()

    def set_col(self, col: int) -> None:
        if not self.columns:
            return
        self.col = max(0, min(col, self.columns - 1))
        self._fraction = self.col / (self.columns - 1) if self.columns > 1 else 0.0
        self.refresh()

    def at_cursor(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """For OLD and NEW: (first step, last step, bytes) under the cursor column."""
        out = []
        for steps, curve in ((self.steps[0], self.old), (self.steps[1], self.new)):
            first, last = column_steps(steps, self.columns, self.col)
            out.append((first, last, curve[self.col]))
        return out[0], out[1]

    # -- drawing ------------------------------------------------------------------------
    def render(self) -> Text:
        if not self.has_curves or not self.old:
            return Text("A side has no live ranges: no curve to draw.", style="dim")
        height = self.content_region.height
        flat = plain(self)
        h = max(1, min(4, (height - 3) // 2))
        top = max(max(self.old), max(self.new)) or 1
        lines = [self._readout(flat), self._marker_line()]
        for label, curve, style in (("OLD", self.old, "blue"), ("NEW", self.new, "yellow")):
            for row in range(h):
                lines.append(self._curve_line(curve, top, h, row, label, "" if flat else style))
        marks = diff_marks(self.old, self.new)
        line = Text(f"{'Δ':<{LABEL_W}}", style="bold", no_wrap=True, end="")
        for i, mark in enumerate(marks):
            style = "" if mark == "·" or flat else "red" if mark == "▲" else "green"
            line.append(mark, style=self._cursor(i, style))
        lines.append(line)
        if len(lines) < height:
            lines.append(Text("    ▲ more in NEW, ▼ less (by over 1% of the axis)", style="dim"))
        for side, name in ((self.data.diff.old, "OLD"), (self.data.diff.new, "NEW")):
            if len(lines) < height:
                lines.append(
                    Text(
                        f"    {name}: {self.steps[name == 'NEW'] - 1} steps, XLA's peak "
                        f"{human_bytes(side.peak_bytes)} at step {side.peak_step}",
                        style="dim",
                    )
                )
        out = Text("\n").join(lines)
        out.no_wrap = True
        return out

    def _cursor(self, col: int, style: str) -> Style | str:
        if col != self.col:
            return style
        return Style.parse(style or "none") + Style(reverse=True)

    def _readout(self, flat: bool) -> Text:
        (o0, o1, ob), (n0, n1, nb) = self.at_cursor()
        d = self.data.diff
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        where = 100 * self.col / (self.columns - 1) if self.columns > 1 else 0
        text.append(f"▼ {where:.0f}% ", style="bold")
        for name, first, last, size, peak in (
            ("OLD", o0, o1, ob, d.old.peak_step),
            ("NEW", n0, n1, nb, d.new.peak_step),
        ):
            steps = f"step {first}" if first == last else f"steps {first}-{last}"
            text.append(f"{name} {steps} ")
            text.append(human_bytes(size), style="bold")
            if peak is not None and first <= peak <= last:
                text.append(" ◆", style=peak_style(flat))
            text.append(" · ", style="dim")
        text.append(signed(nb - ob), style=change_style(nb - ob, flat))
        return text

    def _marker_line(self) -> Text:
        return Text(" " * (LABEL_W + self.col) + "▼", style="bold", no_wrap=True, end="")

    def _curve_line(
        self, curve: list[int], top: int, height: int, row: int, label: str, style: str
    ) -> Text:
        name = label if row == height - 1 else ""
        text = Text(f"{name:<{LABEL_W}}", style="bold", no_wrap=True, end="")
        below = (height - 1 - row) * 8
        for col, value in enumerate(curve):
            eighths = round(value * height * 8 / top)
            if value and eighths == 0:
                eighths = 1
            text.append(_EIGHTHS[max(0, min(8, eighths - below))], style=self._cursor(col, style))
        return text

    # -- actions (bindings: the "diff" scope) ------------------------------------------
    def action_left(self) -> None:
        self.set_col(self.col - 1)

    def action_right(self) -> None:
        self.set_col(self.col + 1)

    def action_first_row(self) -> None:
        self.set_col(0)

    def action_last_row(self) -> None:
        self.set_col(self.columns - 1)

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)
        if at is not None and at.x >= LABEL_W:
            self.set_col(at.x - LABEL_W)
