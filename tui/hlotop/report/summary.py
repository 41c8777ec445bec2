"""``hlotop --summary``: the module's memory on one screen of text, rendered by Rich.

Dump text goes into ``rich.text.Text`` objects (never markup strings) after
:func:`hlotop.safe_text.printable`, so nothing in a dump can style or control the
terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Literal, NamedTuple, TextIO, cast

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from hlotop.model import Advice, ModuleDump
from hlotop.model.memory_space import space_name, space_names, space_style
from hlotop.report.figures import (
    kinds_table,
    memory_stats_table,
    padding_table,
    peak_rows,
    spaces_table,
)
from hlotop.report.fitted_table import Wrapped
from hlotop.report.report_text import overview_rows, report_parts
from hlotop.report.text_fit import (
    NAME_BREAKS,
    PATH_BREAKS,
    SHAPE_ALL_BREAKS,
    WHOLE_SHAPE,
    tail,
    wrap,
)
from hlotop.report.trailing_spaces import TrailingSpacesDropped
from hlotop.safe_text import printable
from hlotop.units import human_bytes, with_commas

if TYPE_CHECKING:  # imported where used: a plain --summary needs neither (10 ms)
    from hlotop.analysis.capacity import Fit
    from hlotop.analysis.grouping import Grouping

TOP_VALUES = 15
MAX_DIAGNOSTICS = 10


def _bytes(n: int) -> Text:
    return Text(f"{human_bytes(n)}  ({with_commas(n)} B)")


def _space(color: int, names: dict[int, str]) -> Text:
    return Text(f"{space_name(color, names)} (color {color})", style=space_style(color))


class _PeakRow(NamedTuple):
    rank: str
    value: str
    bytes: str
    allocated: str
    shape: str
    alloc: str
    color: int
    op_name: str


_JUSTIFY: dict[str, Literal["left", "right"]] = {
    "#": "right",
    "value": "left",
    "bytes": "right",
    "allocated": "right",
    "shape": "left",
    "alloc": "right",
    "space": "left",
    "op_name": "left",
}
_GAP = 2  # between two columns: a table without box or edge padding
MIN_OP_NAME = 12  # narrower than this, op_name is left out
WRAPPED_SHAPE = 30  # columns a shape too long for any layout (a big tuple) may take


class PeakTable:
    """The largest values live at the peak, made to fit the console's width (80 columns
    over SSH) without cutting a name, a size or a shape. When the table is too wide,
    the columns that say nothing here are left out (one memory space for all, no
    padding, no op_name), then op_name is shortened (its end kept, after an ellipsis)
    or left out, then the allocation number; then the columns are one space apart
    instead of two, and the memory space is left out. Only if it is still too wide are
    names and shapes wrapped, at a comma or a brace (a name after a dot, a dash or an
    underscore), never inside a number or a word."""

    def __init__(self, step: int, rows: list[_PeakRow], names: dict[int, str], more: int):
        self.step, self.rows, self.names, self.more = step, rows, names, more

    def _cells(self, row: _PeakRow) -> dict[str, str]:
        return {
            "#": row.rank,
            "value": row.value,
            "bytes": row.bytes,
            "allocated": row.allocated,
            "shape": row.shape,
            "alloc": row.alloc,
            "space": space_name(row.color, self.names),
            "op_name": row.op_name,
        }

    def layout(self, width: int) -> tuple[list[str], dict[str, int], int]:
        """The columns shown at ``width``, the widths of those that must be made
        narrower than their longest cell (op_name cut, shape and value wrapped), and
        the gap between two columns."""
        cells = [self._cells(r) for r in self.rows]
        widths = {c: max([cell_len(c)] + [cell_len(x[c]) for x in cells]) for c in _JUSTIFY}
        gap = _GAP
        # A shape too long for any layout (a big tuple) is wrapped whatever is left
        # out, so it does not count: the other columns stay.
        # (the names may be wrapped to a third of the room, as the last resort below)
        narrowest = min(widths["value"], max((width - widths["#"] - widths["bytes"]) // 3, 5))
        most = max(width - widths["#"] - narrowest - widths["bytes"] - 3, WHOLE_SHAPE)
        wrapped = [x["shape"] for x in cells if cell_len(x["shape"]) > most]
        if wrapped:  # given up to WRAPPED_SHAPE columns, or what the others need
            widths["shape"] = max(
                [min(cell_len(x["shape"]), WRAPPED_SHAPE) for x in cells if x["shape"] in wrapped]
                + [cell_len(x["shape"]) for x in cells if x["shape"] not in wrapped]
            )

        def total(columns: list[str]) -> int:
            return sum(widths[c] for c in columns) + gap * (len(columns) - 1)

        def done(narrow: dict[str, int]) -> tuple[list[str], dict[str, int], int]:
            if wrapped:  # the room the other columns leave
                others = [narrow.get(c, widths[c]) for c in shown if c != "shape"]
                room = width - sum(others) - gap * (len(shown) - 1)
                narrow["shape"] = max(widths["shape"], room)
            return shown, narrow, gap

        shown = list(_JUSTIFY)
        if total(shown) <= width:
            return done({})
        # Columns that say nothing here: one memory space, no padding, no op_name.
        for column, idle in (
            ("space", len({x["space"] for x in cells}) <= 1),
            ("allocated", all(x["allocated"] == x["bytes"] for x in cells)),
            ("op_name", not any(x["op_name"] for x in cells)),
        ):
            if idle:
                shown.remove(column)
        if total(shown) <= width:
            return done({})
        if "op_name" in shown:
            room = width - total([c for c in shown if c != "op_name"]) - gap
            if room >= MIN_OP_NAME:
                return done({"op_name": room})
            shown.remove("op_name")
        for step in ("alloc", "gap", "space"):
            if total(shown) <= width:
                return done({})
            if step == "gap":
                gap = 1
            elif step in shown:
                shown.remove(step)
        if total(shown) <= width:
            return done({})
        # Still too wide (long names): shapes of up to WHOLE_SHAPE columns stay whole,
        # the names take what is left, wrapped after a dot, a dash or an underscore.
        room = width - total([c for c in shown if c not in ("value", "shape")]) - 2 * gap
        value = min(widths["value"], max(room - min(widths["shape"], WHOLE_SHAPE), room // 3))
        value = max(value, cell_len("value"))
        return shown, {"value": value, "shape": max(room - value, cell_len("shape"))}, gap

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown, narrow, gap = self.layout(options.max_width)
        table = Table(
            title=f"Largest values live at the peak (step {self.step})",
            title_justify="left",
            box=None,
            pad_edge=False,
            collapse_padding=gap < _GAP,  # one space between two columns, not two
        )
        for column in shown:
            table.add_column(column, justify=_JUSTIFY[column], overflow="fold")
        for row in self.rows:
            cells = self._cells(row)
            if "op_name" in narrow:
                cells["op_name"] = tail(cells["op_name"], narrow["op_name"])
            if "value" in narrow:
                cells["value"] = wrap(cells["value"], narrow["value"], NAME_BREAKS)
            if "shape" in narrow:
                cells["shape"] = wrap(cells["shape"], narrow["shape"], *SHAPE_ALL_BREAKS)
            styled = {c: Text(cells[c]) for c in shown}
            if "space" in styled:
                styled["space"].stylize(space_style(row.color))
            table.add_row(*(styled[c] for c in shown))
        if self.more > 0:
            table.caption = f"... and {with_commas(self.more)} smaller values"
        yield table


def files_read(module: ModuleDump) -> list[Wrapped]:
    """The files the module was read from, under its name: one path; or, when they
    are one folder's files of one name with several endings (a split module, a
    combined dump and its report, the HLO text beside them), that name once with the
    endings in braces, as a shell would expand them
    (``dir/module_0004...optimizations{-buffer-assignment.txt,-live-range.txt}``).
    Wrapped at the console's width after ``/`` ``.`` ``_`` ``-`` ``,``."""
    paths = [printable(f.path) for f in module.files]
    one_folder = len(paths) > 1 and len({os.path.dirname(p) for p in paths}) == 1
    stem = os.path.commonprefix(paths) if one_folder else ""
    if stem.endswith(("-", ".")):  # the endings keep their first character
        stem = stem[:-1]
    if not os.path.basename(stem):  # not one name: each file on its own
        return [
            Wrapped(f"{f.kind}: {p}", PATH_BREAKS, 2, "dim")
            for f, p in zip(module.files, paths, strict=True)
        ]
    endings = ",".join(p[len(stem) :] for p in paths)
    return [Wrapped(f"{stem}{{{endings}}}", PATH_BREAKS, 2, "dim")]


def render_summary(
    module: ModuleDump,
    groups: Grouping | None = None,
    fit: Fit | None = None,
    advice: Sequence[Advice] | None = None,
    top: int | None = None,
    icicle: bool = False,
) -> Group:
    """The ``--summary`` report of ``module`` as a Rich renderable; with ``groups``
    (``--group-by``), the grouped live set in place of its largest values: as a table,
    or as pprof's top of its ``top`` nodes and/or an ``icicle``
    (:mod:`hlotop.report.top_text`); with
    ``fit`` (``--capacity``), the fit against the device; with ``advice``
    (``--advise``), the advice ranked by bytes saved. Raises nothing."""
    a = module.analysis
    names = space_names(module)
    parts: list = [Text(printable(module.name), style="bold")]
    parts += files_read(module)

    overview = Table.grid(padding=(0, 2))
    overview.add_column(style="bold")
    overview.add_column()
    total = module.total_bytes_used
    if module.report_only:  # its total and allocations, said to be the report's
        for label, text in overview_rows(module):
            overview.add_row(label, text)
    elif total is None and not module.allocations:  # nothing that says a total
        overview.add_row(
            "Total bytes used",
            Text.assemble(
                ("unknown", "bold"), ("  no buffer assignment was read (see below)", "dim")
            ),
        )
    else:
        if total is None:  # the allocations' own sum (30 000 at 46 MB: only when needed)
            total = sum(x.size for x in module.allocations)
        overview.add_row("Total bytes used", _bytes(total))
    if not module.report_only:
        overview.add_row("Allocations", Text(f"{with_commas(len(module.allocations))}"))
        overview.add_row("Values", Text(f"{with_commas(len(a.values))}"))
    live = module.live_range
    if live is not None:
        overview.add_row(
            "Schedule",
            Text(f"{with_commas(len(live.instruction_sequence))} steps (max {live.max_time})"),
        )
    if a.peak_step is not None:
        instr = (
            live.instruction_sequence[a.peak_step]
            if live and a.peak_step < len(live.instruction_sequence)
            else "end of schedule"
        )
        printed = live.peak.time if live and live.peak else None
        agree = (
            ""
            if printed is None
            else (" = XLA's" if printed == a.peak_step else f" (XLA printed {printed})")
        )
        overview.add_row("Peak step", Text(f"{a.peak_step}{agree}  at {printable(instr)}"))
        for label, text in peak_rows(module):
            overview.add_row(label, text)
    parts += [Text(""), overview]
    if fit is not None:
        from hlotop.report.capacity_text import capacity_block

        parts += [Text(""), capacity_block(fit, module.analysis.platform)]
    tables = (
        (memory_stats_table(module), kinds_table(module), spaces_table(module))
        if module.allocations
        else ()
    )
    for table in (*tables, padding_table(module)):
        if table is not None:
            parts += [Text(""), table]
    if module.report_only:
        parts += report_parts(module)

    if groups is not None:
        parts += grouped_parts(groups, top, icicle)
    elif a.peak_step is not None:
        rows = [
            _PeakRow(
                str(rank),
                printable(v.value.label),
                human_bytes(v.logical_bytes),
                human_bytes(v.allocated_bytes),
                printable(v.shape or "?"),
                str(v.slot.allocation) if v.slot else "-",
                v.color,
                printable(v.op_name or ""),
            )
            for rank, v in enumerate(a.peak_values[:TOP_VALUES], 1)
        ]
        more = len(a.peak_values) - TOP_VALUES
        parts += [Text(""), PeakTable(a.peak_step, rows, names, more)]
    if advice is not None:
        from hlotop.report.advice_text import advice_block

        parts += [Text(""), advice_block(advice)]

    if module.diagnostics:
        parts.append(Text(""))
        parts.append(Text(f"{len(module.diagnostics)} diagnostic(s):", style="bold yellow"))
        for d in module.diagnostics[:MAX_DIAGNOSTICS]:
            parts.append(Text("  " + printable(str(d))))
        if len(module.diagnostics) > MAX_DIAGNOSTICS:
            parts.append(
                Text(f"  ... {len(module.diagnostics) - MAX_DIAGNOSTICS} more (see --json)")
            )
    return Group(*parts)


def grouped_parts(groups: Grouping, top: int | None = None, icicle: bool = False) -> list:
    """The grouped live set's part of a report: pprof's top of ``top`` nodes and/or
    the icicle, else the grouped table; each after a blank line."""
    parts: list = []
    if top is not None:
        from hlotop.report.top_text import top_table

        parts += [Text(""), top_table(groups, top)]
    if icicle:
        from hlotop.report.top_text import Icicle

        parts += [Text(""), Icicle(groups)]
    if top is None and not icicle:
        from hlotop.report.grouped_text import grouped_table

        parts += [Text(""), grouped_table(groups)]
    return parts


PIPE_WIDTH = 160  # piped into a file or less: room for shapes and op_names on one line


def stdout_console(file: IO[str] | None = None) -> Console:
    """The console a text report is printed on: ``file`` (default stdout), at the
    terminal's width, or :data:`PIPE_WIDTH` columns when it is not a terminal (and
    ``COLUMNS`` is not set). With no highlighting and no emoji codes: hlotop's own
    labels use neither, dump text is never markup, and looking for codes imported
    Rich's table of them (8 ms of every report). Not on a terminal, the spaces Rich pads
    each line with are dropped (:mod:`hlotop.report.trailing_spaces`); on one, the
    output is Rich's."""
    console = Console(file=file, highlight=False, emoji=False)
    if not console.is_terminal:
        width = None if "COLUMNS" in os.environ else PIPE_WIDTH
        target = cast(TextIO, TrailingSpacesDropped(cast(TextIO, file or sys.stdout)))
        console = Console(highlight=False, emoji=False, width=width, file=target)
    return console


def print_summary(
    module: ModuleDump,
    console: Console | None = None,
    groups: Grouping | None = None,
    fit: Fit | None = None,
    advice: Sequence[Advice] | None = None,
    top: int | None = None,
    icicle: bool = False,
) -> None:
    """Print the ``--summary`` report to ``console`` (default: :func:`stdout_console`)."""
    if console is None:
        console = stdout_console()
    console.print(render_summary(module, groups, fit, advice, top, icicle))
