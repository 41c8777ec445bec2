"""The header line: module name, total bytes (a memory-usage report alone: the report's),
XLA's peak figure (the sum of its printed peak list, or its sweep's) and the
diagnostics count."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from hlotop.analysis.capacity import required_bytes
from hlotop.loading.directory import COMPILER_BUILD, MODULE_NUMBER
from hlotop.model import ModuleDump
from hlotop.report.modules_report import short_module_name
from hlotop.safe_text import printable
from hlotop.ui.base.host import host
from hlotop.ui.widgets.fit import fitted
from hlotop.units import human_bytes, with_commas


def short_name(name: str, width: int) -> str:
    """The module name in ``width`` cells: the pass and backend XLA appends
    (``.cpu_after_optimizations``, a TPU's ``.cl_NNN``) go first, then the ``module_NNNN.``
    before the program's name (``jit_train_step`` says the most), then the end of the
    name, after an ellipsis (as ls and htop cut: ``jit_gpt_tra…``; a cut in the middle,
    ``jit_g…n_step``, read as one name)."""
    if len(name) > width:
        name = short_module_name(name)
    if len(name) > width:
        name = COMPILER_BUILD.sub("", name)
    if len(name) > width and (m := MODULE_NUMBER.match(name)) and m.end() < len(name):
        name = name[m.end() :]
    return end_ellipsis(name, width)


def end_ellipsis(text: str, width: int) -> str:
    """``text`` in ``width`` characters: whole, or its start and an ellipsis
    (``003_a30855315…``)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    return text[: width - 1] + "…"


def middle_ellipsis(text: str, width: int) -> str:
    """``text`` in ``width`` characters, keeping both ends (``run_a…run_b``): for a
    part whose two ends tell it apart, such as the run's folder before a module."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


class SummaryBar(Widget):
    """One line, with no clock and no absolute path (screens stay reproducible).
    The figures always show; the module name gives way on narrow terminals."""

    DEFAULT_CSS = """
    SummaryBar { height: 1; }
    """

    def __init__(self, dump: ModuleDump, *, id: str | None = "summary"):
        super().__init__(id=id)
        self.dump = dump

    def figures(self) -> Text:
        d, a = self.dump, self.dump.analysis
        wide = self.size.width >= 110
        text = Text(no_wrap=True, end="")
        total = d.total_bytes_used
        report = d.memory_usage_report
        if d.report_only and report is not None and report.total is not None:
            text.append(" │ memory-usage report's total ")
            text.append(human_bytes(report.total), style="bold")
            if wide:
                text.append(f" in {with_commas(report.listed())} allocations")
        elif total is None and not d.allocations and d.preview is None:
            text.append(" │ total ")
            text.append("unknown: no buffer assignment", style="bold yellow")
        else:
            if total is None:  # the allocations' sizes (a first look reads no allocation)
                total = sum(a.totals_by_color.values())
            text.append(" │ total ")
            text.append(human_bytes(total), style="bold")
            if wide:
                text.append(f" in {with_commas(len(d.allocations))} allocations")
        loading = d.preview is not None  # the first look at a big dump: no values yet
        if a.peak_step is not None and loading and a.peak_bytes_source != "list":
            text.append(f" │ peak at step {a.peak_step}")  # its bytes come with the load
            if self.size.width >= 140:
                text.append(" · bytes: loading…", style="italic")
        elif a.peak_step is not None:  # the first look reads XLA's list too
            text.append(" │ XLA peak ")
            text.append(human_bytes(a.peak_bytes), style="bold")
            text.append(f" at step {a.peak_step}")
        elif loading:
            text.append(" │ peak: loading…", style="italic")
        else:
            text.append(" │ no live ranges", style="dim")
        capacity = host(self).capacity
        if capacity is not None:
            need = required_bytes(d)
            if need is None and d.reading_allocations:  # a first look: JAX's figures next
                text.append(" │ headroom: loading…", style="italic")
            elif need is not None:
                room = capacity[0] - need
                text.append(" │ ")
                if room >= 0:
                    text.append(f"headroom {human_bytes(room)}", style="bold green")
                else:
                    text.append(f"over by {human_bytes(-room)}", style="bold red")
                if self.size.width >= 120:
                    text.append(f" of {human_bytes(capacity[0])}")
        text.append(" │ ")
        if loading:
            text.append("diagnostics: loading…", style="italic")
            return text
        n = len(d.diagnostics)
        errors = sum(1 for x in d.diagnostics if x.severity == "error")
        text.append(
            f"{with_commas(n)} diagnostic{'s' if n != 1 else ''}"
            + (f", {errors} error{'s' if errors != 1 else ''}" if errors else ""),
            style="bold yellow" if n else "dim",
        )
        if not d.records_read:  # the background pass over the records is still on
            text.append(" so far", style="italic")
        if n:
            text.append(" (d)", style="dim")
        return text

    def render(self) -> Text:
        figures = self.figures()
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        badge = self.size.width >= 100
        if badge:
            text.append(" hlotop ", style="bold reverse")
        room = max(8, self.size.width - (9 if badge else 1) - figures.cell_len)
        text.append(" " + short_name(printable(self.dump.name), room), style="bold")
        text.append_text(figures)
        return fitted(text, self.size.width)
