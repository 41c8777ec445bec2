"""The figures screen (``o``): the module's figures as ``--summary`` prints them, each
saying whose it is: XLA's peak, JAX's ``memory_analysis()`` sizes, the allocations by
kind, each memory space's total, occupied peak and padding, the most padded values;
of a memory-usage report alone, the report's total, memory spaces and allocations."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.screen import ModalScreen

from hlotop.model import ModuleDump
from hlotop.model.allocation_lines import allocated_bytes
from hlotop.report.figures import (
    kinds_table,
    memory_stats_table,
    padding_table,
    peak_rows,
    spaces_table,
)
from hlotop.report.report_text import overview_rows, report_parts
from hlotop.ui.base.bindings import bindings
from hlotop.ui.widgets.rendered_text import RenderedText, WholeText
from hlotop.units import human_bytes


def figures_renderable(dump: ModuleDump) -> Group:
    """The figures of ``dump`` as one Rich renderable (the tables of ``--summary``)."""
    overview = Table.grid(padding=(0, 2))
    overview.add_column(style="bold", no_wrap=True)
    overview.add_column()
    if dump.report_only:  # the report's total and allocations, said to be the report's
        for label, text in overview_rows(dump):
            overview.add_row(label, text)
        return Group(overview, *report_parts(dump))
    total = dump.total_bytes_used
    allocated = allocated_bytes(dump.allocations)
    overview.add_row(
        "Total bytes used",
        Text(f"{human_bytes(total if total is not None else allocated)}"),
    )
    a = dump.analysis
    if a.peak_step is not None:
        # a big dump's first look reads the step XLA printed; the whole dump sweeps
        how = "XLA's printed peak line" if dump.preview is not None else "XLA's sweep"
        overview.add_row("Peak step", Text(f"{a.peak_step}  ({how})"))
    for label, text in peak_rows(dump):
        overview.add_row(label, text)
    parts: list[RenderableType] = [overview]
    for table in (
        memory_stats_table(dump),
        kinds_table(dump),
        spaces_table(dump),
        padding_table(dump),
    ):
        if table is not None:
            parts += [Text(""), table]
    return Group(*parts)


class OverviewScreen(ModalScreen[None]):
    """Modal: the module's figures; Escape, q or ? closes it."""

    BINDINGS = bindings("modal")

    def __init__(self, dump: ModuleDump):
        super().__init__()
        self.dump = dump

    def compose(self) -> ComposeResult:
        body = RenderedText(
            WholeText(figures_renderable(self.dump)), id="overview-body", classes="modal-body"
        )
        body.border_title = "Figures · esc closes"
        yield body

    def on_mount(self) -> None:
        self.query_one(RenderedText).focus()  # its keys scroll it (j/k, g/G, pgdn ...)

    def show(self, dump: ModuleDump) -> None:
        """Show the figures of ``dump`` (the whole of the dump whose first look these
        were)."""
        self.dump = dump
        self.query_one(RenderedText).show(WholeText(figures_renderable(dump)))

    def action_close(self) -> None:
        self.dismiss(None)
