"""The modules view's header: the directory, how many modules and rows, the sort and
the filter; then the figures across modules as ``hlotop --summary DIR`` words them
(of each platform: the largest single program, the largest module known by its
memory-usage report alone, the largest resident arguments and outputs) and, with a
capacity, how many modules need more than it."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.widget import Widget

from hlotop.loading.directory import ModuleFigures
from hlotop.report.modules_report import _across as across_modules
from hlotop.safe_text import printable
from hlotop.ui.widgets.modules_list import SORT_TITLES
from hlotop.units import human_bytes


class ModulesHeader(Widget):
    """No clock and no absolute path: the directory is shown by its name."""

    DEFAULT_CSS = """
    ModulesHeader { height: auto; }
    """

    def __init__(self, name: str, count: int, capacity: tuple[int, str] | None = None):
        super().__init__(id="modules-header")
        self.dir_name = name
        self.count = count  # modules in the directory (known before they are read)
        self.capacity = capacity
        self.progress: tuple[int, int] | None = None  # (modules read, modules) while ranking
        self.figures: list[ModuleFigures] | None = None
        self.rows = 0
        self.sort = "peak"
        self.filter = ""
        self.shown = 0
        self.over: int | None = None  # rows whose need is above the capacity
        self.pending: int | None = None  # rows whose need is known once loaded (TPU)

    def show(self, **changes) -> None:
        """Set any of the attributes above and repaint (the height may change)."""
        for name, value in changes.items():
            setattr(self, name, value)
        self.refresh(layout=True)

    def title_line(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.size.width >= 100:
            text.append(" hlotop ", style="bold reverse")
        text.append(f" {printable(self.dir_name)}", style="bold")
        if self.figures is None:
            if self.progress:
                done, count = self.progress
                text.append(f" │ reading {count} modules… {done}/{count}", style="italic")
            else:
                modules = f"{self.count} modules" if self.count else "the modules"
                text.append(f" │ reading {modules}…", style="italic")
            return text
        text.append(f" │ {len(self.figures)} modules")
        if self.rows != len(self.figures):
            text.append(f" in {self.rows} rows (×: compiled alike)")
        text.append(f" │ by {SORT_TITLES[self.sort]}")
        if self.filter:
            text.append(f" │ filter {printable(self.filter)!r}: {self.shown} shown", style="bold")
        return text

    def render(self) -> Group:
        lines = [self.title_line()]
        if self.figures is not None:
            lines += [Text(" ") + t for t in across_modules(self.figures)]
        if self.capacity is not None:
            lines.append(self.capacity_line(*self.capacity))
        return Group(*lines)

    def capacity_line(self, size: int, label: str) -> Text:
        line = Text(f" Capacity {human_bytes(size)}")
        # The label's name of a device preset ("tpu-v5e: 16.00GiB HBM ..."), not a size
        # said again ("64MiB = 67,108,864 bytes ...").
        short = label.split(":")[0].split(" = ")[0].strip()
        if short and not short[0].isdigit():
            line.append(f" ({printable(short)})")
        line.append(
            " against each module's need, argument + output − alias + temp "
            "(memory_analysis(), device; on TPU HBM's alone; a lower bound)"
        )
        if self.over is not None:
            line.append(": ")
            fits = "every module fits" if not self.pending else "none over"
            line.append(f"{self.over} over" if self.over else fits, style="bold")
            if self.pending:
                line.append(f" so far ({self.pending} still loading)", style="italic")
        line.append(".")
        return line
