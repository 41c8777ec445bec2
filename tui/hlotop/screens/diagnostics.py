"""The diagnostics screen: lines hlotop could not use and other warnings."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from hlotop.bindings import bindings
from hlotop.model import Diagnostic
from hlotop.safe_text import printable


def diagnostics_renderable(diagnostics: list[Diagnostic]) -> Table | Text:
    if not diagnostics:
        return Text("No diagnostics: every line of the dump was read.", style="dim")
    table = Table(box=None, padding=(0, 1), show_header=True, header_style="bold")
    table.add_column("where", no_wrap=True)
    table.add_column("severity", no_wrap=True)
    table.add_column("message", overflow="fold")
    for d in diagnostics:
        where = printable(f"{d.path}:{d.line}" if d.line else d.path)
        table.add_row(Text(where), Text(d.severity, style="red" if d.severity == "error"
                                        else "yellow"), Text(printable(d.message)))
    return table


class DiagnosticsScreen(ModalScreen[None]):
    BINDINGS = bindings("modal")

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__()
        self.diagnostics = diagnostics

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="diagnostics-body", classes="modal-body") as body:
            body.border_title = f"Diagnostics ({len(self.diagnostics)}) · esc closes"
            yield Static(diagnostics_renderable(self.diagnostics))

    def action_close(self) -> None:
        self.dismiss(None)
