"""The modules of a dump directory, one row per program compiled alike, with a cursor.

A :class:`~hlotop.ui.widgets.row_list.RowList`: rank (by XLA's peak, within the
platform), name (the program part in bold), platform, XLA's peak, total,
``memory_analysis()`` device argument / output / temp, allocation count, ``×N`` for
modules compiled alike, and a sparkline of the module's occupied main-memory bytes over
the schedule once it has been loaded in the background (a module known by its
memory-usage report alone says so there). With a capacity, a column says each module's headroom or excess.
Columns that do not fit the width are left out (the border says how many), the name
giving way first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from hlotop.loading.directory import (
    COMPILER_BUILD,
    MODULE_NUMBER,
    ModuleFigures,
    platform_order,
)
from hlotop.report.modules_report import DROP_ORDER, NAME_LEAST, short_module_name
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import keys
from hlotop.ui.widgets.legend import plain, space_style
from hlotop.ui.widgets.row_list import RowList
from hlotop.ui.widgets.summary_bar import end_ellipsis, middle_ellipsis
from hlotop.units import human_bytes, with_commas

# The keys of the modules view that the screen handles (the others move the cursor).
SCREEN_ACTIONS = frozenset(
    ("open_module", "cycle_sort", "filter", "clear_filter", "back_to_modules")
)
SPARK_W = 16  # columns of the live-bytes sparkline
_BLOCKS = "▁▂▃▄▅▆▇█"
_NAME_MOST = 48
SORTS = ("peak", "total", "name", "temp")
SORT_TITLES = {"peak": "XLA peak", "total": "total", "name": "name", "temp": "temp"}
# Left out first when the width is short, in this order: the text report's, then the
# occupied-bytes sparkline.
_DROP_ORDER = (*DROP_ORDER, "spark")


def sparkline(curve: Sequence[int], width: int = SPARK_W) -> str:
    """``curve`` (bytes at each schedule step) in ``width`` block characters, each the
    largest value of its steps (a step spread over several characters when there are
    fewer steps), scaled to the curve's maximum; no bytes is a blank. Raises nothing."""
    n = len(curve)
    if n == 0:
        return ""
    top = max(curve)
    out = []
    for c in range(width):
        lo = c * n // width
        v = max(curve[lo : max((c + 1) * n // width, lo + 1)])
        out.append(" " if v <= 0 else _BLOCKS[min(7, (v * 8 - 1) // top)])
    return "".join(out)


@dataclass(slots=True)
class ModuleRow:
    """A row: the first of the modules compiled alike (``figures``), by XLA's peak
    ``rank`` within its platform; ``spark`` once the module has been loaded, else why
    not (``note``)."""

    rank: int
    figures: ModuleFigures
    members: tuple[str, ...]  # the name of every module the row stands for
    need: int | None  # argument + output - alias + temp device bytes
    spark: str | None = None
    note: str | None = None  # "no live ranges", "unreadable", "report only"

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def filled(self) -> bool:
        """Whether its module has been loaded (or found unreadable)."""
        return self.spark is not None or self.note is not None


def need_of(f: ModuleFigures) -> int | None:
    """What the module needs on its device, from its first look
    (:func:`hlotop.analysis.capacity.required_bytes`: argument + output - alias + temp,
    on TPU of HBM alone); None without allocations."""
    return f.required_bytes


def _sort_key(sort: str):
    if sort == "name":
        return lambda r: (r.figures.entry.name, r.rank)
    if sort == "total":
        return lambda r: (-(r.figures.total_bytes_used or 0), r.rank)
    if sort == "temp":
        s = lambda r: r.figures.memory_stats  # noqa: E731
        return lambda r: (-(s(r).temp_size_in_bytes if s(r) else -1), r.rank)
    return lambda r: (platform_order(r.figures.entry.platform), r.rank)


def _size(n: int | None) -> str:
    return human_bytes(n) if n is not None else "-"


class ModulesList(RowList):
    """The rows (:meth:`set_rows`), sorted (:attr:`sort`) and filtered by name
    (:meth:`set_filter`); the screen opens :meth:`current` on Enter."""

    BINDINGS = [k.binding() for k in keys("modules") if k.action not in SCREEN_ACTIONS]

    def __init__(self, capacity: tuple[int, str] | None = None, *, id: str | None = "modules"):
        super().__init__(id=id, classes="pane")
        self.capacity = capacity
        self.rows: list[ModuleRow] = []
        self.shown: list[ModuleRow] = []
        self.sort = "peak"
        self.filter = ""
        self.waiting = "reading the modules…"  # the pinned line until the rows come
        self.hidden: list[str] = []  # columns left out at this width
        self._widths: dict[str, int] = {}
        self._columns: list[str] = []

    # -- state ----------------------------------------------------------------------
    def set_rows(self, rows: list[ModuleRow]) -> None:
        self.rows = rows
        self.waiting = ""
        self._reshow()

    def set_sort(self, sort: str) -> None:
        self.sort = sort
        self._reshow()

    def set_filter(self, text: str) -> None:
        self.filter = text
        self._reshow()

    def current(self) -> ModuleRow | None:
        return self.shown[self.cursor] if 0 <= self.cursor < len(self.shown) else None

    def row_changed(self, row: ModuleRow) -> None:
        """``row``'s sparkline or need came: repaint it."""
        self._layout()
        self.rows_changed()

    def _reshow(self) -> None:
        here = self.current()
        needle = self.filter.casefold()
        rows = [r for r in self.rows if any(needle in m.casefold() for m in r.members)]
        self.shown = sorted(rows, key=_sort_key(self.sort))
        self._layout()
        self.cursor = next((i for i, r in enumerate(self.shown) if r is here), 0)
        self.rows_changed()
        self.scroll_cursor_into_view(center=True)

    # -- columns --------------------------------------------------------------------
    def _cells(self, r: ModuleRow) -> dict[str, str]:
        f, s = r.figures, r.figures.memory_stats
        cells = {
            "rank": str(r.rank),
            "platform": f.entry.platform,
            "peak": _size(f.peak_bytes),
            "total": _size(f.total_bytes_used),
            "argument": _size(s.argument_size_in_bytes) if s else "-",
            "output": _size(s.output_size_in_bytes) if s else "-",
            "temp": _size(s.temp_size_in_bytes) if s else "-",
            "allocs": f"{with_commas(f.allocations)}",
            "count": f"×{r.count}" if r.count > 1 else "",
        }
        if self.capacity is not None:
            cells["fit"] = self._fit_text(r)
        return cells

    def _fit_text(self, r: ModuleRow) -> str:
        if r.need is None or self.capacity is None:
            return "-" if r.filled else "…"
        room = self.capacity[0] - r.need
        return f"room {human_bytes(room)}" if room >= 0 else f"over {human_bytes(-room)}"

    _TITLES = {
        "rank": "#",
        "name": "module",
        "platform": "platform",
        "peak": "XLA peak",
        "total": "total",
        "argument": "argument",
        "output": "output",
        "temp": "temp",
        "allocs": "allocs",
        "count": "×",
        "fit": "vs capacity",
        "spark": "occupied bytes",
    }

    def _layout(self) -> None:
        """Choose the columns and widths for the rows shown and the widget's width."""
        order = ["rank", "name", "platform", "peak", "total", "argument", "output", "temp"]
        order += ["allocs", "count"] + (["fit"] if self.capacity else []) + ["spark"]
        cells = [self._cells(r) for r in self.rows]
        widths = {
            k: max([len(self._TITLES[k])] + [len(c[k]) for c in cells])
            for k in order
            if k not in ("name", "spark")
        }
        widths["spark"] = SPARK_W
        if not any(r.count > 1 for r in self.rows):
            order.remove("count")
        natural = max(
            [len("module")] + [len(short_module_name(r.figures.entry.name)) for r in self.rows]
        )
        # Ranks start again on each platform: with several, the platform stays.
        keep = {"platform"} if len({r.figures.entry.platform for r in self.rows}) > 1 else set()
        keep.add(self.sort)  # the column the rows are sorted by is never the one left out
        whole, natural = natural, min(natural, _NAME_MOST)
        # The width less the gutter and, when the rows overflow, the vertical scrollbar.
        room = self.size.width - 1
        if len(self.rows) + 1 > self.size.height:  # all rows: the filter moves no column
            room -= self.styles.scrollbar_size_vertical
        room = max(room, 40)
        dropped: list[str] = []
        for key in (k for k in _DROP_ORDER if k not in keep):
            rest = sum(widths[k] + 1 for k in order if k != "name") + 2  # name + 2 spaces
            # The platform (the same in most runs) gives way to the whole name; the
            # others only to keep NAME_LEAST of it.
            if rest + (natural if key == "platform" else min(natural, NAME_LEAST)) <= room:
                break
            if key in order:
                order.remove(key)
                dropped.append(key)
        rest = sum(widths[k] + 1 for k in order if k != "name") + 2
        widths["name"] = max(12, min(whole, room - rest))  # the rest of the room, if any
        self._columns, self._widths, self.hidden = order, widths, dropped

    def on_resize(self, event) -> None:
        if self.rows:
            self._layout()
            self.rows_changed()

    # -- RowList --------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.shown)

    def pinned_lines(self) -> list[Text]:
        if self.waiting:
            return [Text(self.waiting, style="italic")]
        if self.rows and not self.shown:
            return [Text(f"no module name holds {printable(self.filter)!r}", style="italic")]
        return []

    def header_lines(self) -> list[Text]:
        if not self.shown:
            return []
        text = Text(no_wrap=True, end="")
        for key in self._columns:
            title, w = self._TITLES[key], self._widths[key]
            left = key in ("name", "platform", "spark")
            # The sort column's title underlined, as htop marks it.
            sorted_by = "underline" if key == self.sort else ""
            text.append(title.ljust(w) if left else title.rjust(w), sorted_by)
            text.append(" ")
            if key == "name":
                text.append(" ")
        return [text]

    def content_width(self) -> int:
        return sum(self._widths.get(k, 0) + 1 for k in self._columns) + 1

    def render_row(self, index: int) -> Text:
        r = self.shown[index]
        cells = self._cells(r)
        flat = plain(self)
        text = Text(no_wrap=True, end="")
        for key in self._columns:
            w = self._widths[key]
            if key == "name":
                self._append_name(text, r.figures.entry.name, w)
                text.append("  ")
                continue
            if key == "spark":
                if r.spark:
                    text.append(r.spark.ljust(w), style=space_style(0, flat))
                else:
                    text.append((r.note or "·").ljust(w)[:w], style="dim italic")
                text.append(" ")
                continue
            value = cells[key]
            style = ""
            if key == "peak":
                style = "bold"
            elif key == "fit" and value.startswith("over"):
                style = "bold" if flat else "bold red"
            elif key == "fit" and value.startswith("room"):
                style = "" if flat else "green"
            elif key in ("count", "rank"):
                style = "bold" if key == "count" else "dim"
            text.append(value.ljust(w) if key == "platform" else value.rjust(w), style=style)
            text.append(" ")
        return text

    @staticmethod
    def _append_name(text: Text, name: str, width: int) -> None:
        """``module_0034.`` dim, then the program (``jit_train_step``) in bold, cut at
        its end to ``width``. A module of a folder of runs has its run before it
        (``run_a/``, plain); where they do not fit, the compiler build (``.cl_NNN``)
        and the module number go first, then the run is cut in its middle (8 cells
        kept), then the program."""
        short = printable(short_module_name(name))
        run, slash, rest = short.rpartition("/")
        if slash:
            room = width - len(run) - 1
            if len(rest) > room:
                rest = COMPILER_BUILD.sub("", rest)
            if len(rest) > room and (m := MODULE_NUMBER.match(rest)) and m.end() < len(rest):
                rest = rest[m.end() :]
            if len(run) + 1 + len(rest) > width:
                run = middle_ellipsis(run, max(8, width - 1 - len(rest)))
            text.append(run + slash)
            width = max(width - len(run) - 1, 1)
        head, dot, program = rest.partition(".")
        if not dot or not head.startswith("module_"):
            head, program = "", rest
        else:
            head += "."
        if len(head) + len(program) > width:
            if len(head) + 6 > width:
                head, program = "", end_ellipsis(rest, width)
            else:
                program = end_ellipsis(program, width - len(head))
        text.append(head, style="dim")
        text.append(program.ljust(width - len(head)), style="bold")
