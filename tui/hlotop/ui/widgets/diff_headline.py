"""The diff browser's headline: a two-line bar that is always shown (which compiles,
and the change of total bytes and XLA's peak), and the figures pane (pane 1): both
sides' total, XLA's peak step and bytes, JAX's ``memory_analysis()`` sizes and each
memory space's occupied peak, with the change in bytes and percent.

Growth is red and shrinking green, and each change carries its sign (``+``/``-``), so
``NO_COLOR`` loses nothing.
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widget import Widget

from hlotop.analysis.diff import CLASSES, MATCH_KEYS, Side
from hlotop.report.diff_report import change_text
from hlotop.safe_text import printable
from hlotop.ui.view_models.diff_data import DiffData
from hlotop.ui.widgets.legend import plain
from hlotop.units import human_bytes


def figures(side: Side) -> dict[str, int]:
    """The headline figures of one side, by label, in bytes."""
    out = {"Total bytes used": side.total_bytes, "XLA's peak": side.peak_bytes}
    out.update(side.memory_stats)
    out.update({f"{name} occupied peak": size for name, size in side.space_peaks.items()})
    return out


class DiffSummary(Widget):
    """Two lines: ``hlotop diff OLD <path> NEW <path>``, then the change of the total
    and of XLA's peak (or ``no change``)."""

    DEFAULT_CSS = """
    DiffSummary { height: 2; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def __init__(self, data: DiffData, *, id: str | None = "diff-summary"):
        super().__init__(id=id)
        self.data = data

    def render(self) -> Text:
        d, flat = self.data.diff, plain(self)
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(" hlotop diff ", style="bold reverse")
        text.append(" OLD ", style="bold")
        text.append(printable(self.data.old_path))
        text.append("  NEW ", style="bold")
        text.append(printable(self.data.new_path))
        text.append("\n")
        if self.data.unchanged:
            text.append(" no change", style="bold")
            text.append(": the same figures, every value matched unchanged", style="dim")
            return text
        line = Text(" ", no_wrap=True, overflow="ellipsis", end="")
        short = Text(" ", no_wrap=True, overflow="ellipsis", end="")
        for label, old, new, step in (
            ("total", d.old.total_bytes, d.new.total_bytes, None),
            ("XLA peak", d.old.peak_bytes, d.new.peak_bytes, (d.old.peak_step, d.new.peak_step)),
        ):
            for out, full in ((line, True), (short, False)):
                if len(out) > 1:
                    out.append(" │ ", style="dim")
                out.append(f"{label} ", style="bold")
                if full:
                    out.append(f"{human_bytes(old)} → ")
                out.append(human_bytes(new), style="bold")
                if full and step is not None:
                    out.append(f" @{step[0]}→{step[1]}", style="dim")
                out.append(" ")
                out.append_text(change_text(old, new, flat))
        text.append_text(line if line.cell_len <= self.size.width else short)
        return text


class DiffFigures(Widget, can_focus=True):
    """Pane 1: the figures of both sides and the change, then how the values matched."""

    def __init__(self, data: DiffData, *, id: str | None = "figures"):
        super().__init__(id=id, classes="pane")
        self.data = data
        self.border_title = "1 Figures"
        self.border_subtitle = "OLD, NEW, NEW−OLD"

    def render(self) -> Group:
        d, flat = self.data.diff, plain(self)
        old, new = figures(d.old), figures(d.new)
        hidden_host = [
            label
            for label in dict.fromkeys([*old, *new])
            if label.startswith("host_") and not old.get(label, 0) and not new.get(label, 0)
        ]
        shown = [label for label in dict.fromkeys([*old, *new]) if label not in hidden_host]
        steps = (d.old.peak_step, d.new.peak_step)
        rows: list[tuple[Text, Text, Text, Text]] = []
        for with_percent in (True, False):  # the percent goes first when the pane is narrow
            rows = []
            for label in shown:
                a, b = old.get(label, 0), new.get(label, 0)
                change = change_text(a, b, flat, with_percent)
                rows.append((Text(label), Text(human_bytes(a)), Text(human_bytes(b)), change))
                if label == "XLA's peak":
                    shift = "same step" if steps[0] == steps[1] else "moved"
                    step, was, now, moved = (
                        Text(x, style="dim")
                        for x in ("XLA's peak step", str(steps[0]), str(steps[1]), shift)
                    )
                    rows.append((step, was, now, moved))
            widths = [max(cell.cell_len for cell in column) for column in zip(*rows, strict=True)]
            if sum(widths) + 2 * 3 <= self.size.width:
                break
        # The numbers are never cut: only the figures' names give way (an ellipsis).
        table = Table(box=None, pad_edge=False, expand=False, show_edge=False)
        table.add_column("figure", no_wrap=True, overflow="ellipsis")
        for k, name in enumerate(("OLD", "NEW", "change"), 1):
            least = max([len(name)] + [row[k].cell_len for row in rows])
            table.add_column(name, justify="right", no_wrap=True, min_width=least)
        for row in rows:
            table.add_row(*row)
        parts: list = [table]
        if hidden_host:
            parts.append(Text("host_*_size_in_bytes: 0B on both sides", style="dim"))
        if self.data.unchanged:
            parts.append(Text("no change", style="bold"))
        parts.append(self._values_line())
        return Group(*parts)

    def _values_line(self) -> Text:
        changes = self.data.changes
        matched = [c for c in changes if c.matched_by is not None]
        text = Text(no_wrap=False)
        text.append("values ", style="bold")
        by = ", ".join(
            f"{n} by {k}" for k in MATCH_KEYS if (n := sum(c.matched_by == k for c in matched))
        )
        text.append(f"{len(matched)} matched ({by or 'none'}); ")
        counts = self.data.counts
        text.append(", ".join(f"{counts[k]} {k}" for k in CLASSES if counts.get(k)) or "none")
        return text
