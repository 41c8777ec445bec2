"""The list of the diagnostics screen: one row per diagnostic, with a cursor.

A Line API :class:`~hlotop.ui.widgets.row_list.RowList`, so a dump with tens of thousands
of unreadable lines lists them as fast as a handful. Each row is where (the line, or
``file:line`` when the diagnostics are in several files), the severity and the message;
the screen below the list shows the highlighted one in full.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from hlotop.model import Diagnostic
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings
from hlotop.ui.view_models.columns import longest
from hlotop.ui.widgets.legend import plain
from hlotop.ui.widgets.pick_list import PickList
from hlotop.units import with_commas

_WHERE_MAX = 48  # columns of file:line before the name is cut
_SEVERITY_STYLE = {"error": "red", "warning": "yellow"}
# NO_COLOR: red is near-invisible as a grey (1.6:1): an error is bold instead.
_SEVERITY_PLAIN = {"error": "bold"}


def _count(n: int, word: str) -> str:
    return f"{with_commas(n)} {word}{'' if n == 1 else 's'}"


class DiagnosticList(PickList):
    """``diagnostics`` in dump order; posts :class:`Highlighted` when the cursor moves
    and :class:`Chosen` on Enter."""

    BINDINGS = bindings("diagnostics")

    class Highlighted(PickList.Highlighted):
        """The cursor moved to diagnostic ``index``."""

    class Chosen(PickList.Chosen):
        """Enter on diagnostic ``index``: go to the allocation or value nearest it."""

    def __init__(self, diagnostics: list[Diagnostic], *, id: str | None = "diagnostics-list"):
        super().__init__(id=id)
        self.diagnostics = diagnostics
        paths = {d.path for d in diagnostics}
        self.one_file = len(paths) == 1
        self._where = [self._where_of(d) for d in diagnostics]
        self._where_w = longest(map(len, self._where), _WHERE_MAX, len("line"))
        errors = sum(d.severity == "error" for d in diagnostics)
        summary = f"{_count(errors, 'error')}, {_count(len(diagnostics) - errors, 'warning')}"
        if self.one_file:
            name = printable(Path(next(iter(paths))).name) if paths else ""
            summary += f" in {name}"
        else:
            summary += f" in {len(paths)} files"
        self._pinned = [Text(summary, style="dim")]
        self._header = Text(
            f"{'line' if self.one_file else 'file:line':>{self._where_w}}  {'severity':<8} message"
        )
        self.rows_changed()

    def _where_of(self, d: Diagnostic) -> str:
        line = str(d.line) if d.line else "file"
        if self.one_file:
            return line
        return printable(f"{Path(d.path).name}:{line}")

    # -- RowList ------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.diagnostics)

    def pinned_lines(self) -> list[Text]:
        return self._pinned

    def header_lines(self) -> list[Text]:
        return [self._header]

    def content_width(self) -> int:
        return self._where_w + 2 + 9 + longest((len(d.message) for d in self.diagnostics), 400, 0)

    def render_row(self, index: int) -> Text:
        d = self.diagnostics[index]
        where = self._where[index]
        if len(where) > self._where_w:
            where = "…" + where[len(where) - self._where_w + 1 :]
        text = Text(no_wrap=True, end="")
        text.append(f"{where:>{self._where_w}}  ", style="bold" if d.line else "dim")
        severity = _SEVERITY_PLAIN if plain(self) else _SEVERITY_STYLE
        text.append(f"{d.severity:<8} ", style=severity.get(d.severity, ""))
        text.append(printable(d.message))
        return text
