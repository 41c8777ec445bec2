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
from hlotop.units import spaced_bytes


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

    def __init__(self, diagnostics: list[Diagnostic],
                 reading: tuple[int, int, float | None] | bool | None = None):
        """``reading``: the background pass over the value records is still running
        (its progress, or True before its first report); their diagnostics come when
        it ends."""
        super().__init__()
        self.diagnostics = list(diagnostics)
        self.reading = reading

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="diagnostics-body", classes="modal-body") as body:
            body.border_title = f"Diagnostics ({len(self.diagnostics)}) · esc closes"
            if self.reading:
                where = ""
                if isinstance(self.reading, tuple):
                    done, total, _ = self.reading
                    where = f" ({spaced_bytes(done)} of {spaced_bytes(total)} read)"
                yield Static(Text(f"Still reading the value records{where}: what they "
                                  "hold is listed once they are all read.", style="yellow"),
                             id="diagnostics-pending")
            yield Static(diagnostics_renderable(self.diagnostics))

    def action_close(self) -> None:
        self.dismiss(None)
