"""``hlotop --summary DIR`` and ``hlotop --json DIR``: every module of a dump directory,
ranked within its platform by XLA's peak, with its total, ``memory_analysis()`` sizes
and platform, and the figures across each platform's modules (what each means is said
beside it). A module with only its memory-usage report is listed with the report's
total, marked as such.

Its JSON (``--json DIR``) is :mod:`hlotop.report.modules_table`'s; with ``--group-by``
(or ``--top N``), each module there has ``groups`` (:func:`grouping_json`: its live set
at its peak grouped, the ``--top`` largest rows, 10 by default, and the ``rest``) and
``groups_error`` (why it has none: no live ranges, a report alone; else null).
"""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from hlotop.analysis.grouping import Grouping
from hlotop.loading.directory import (
    ModuleFigures,
    collapse_identical,
    platform_order,
    platform_ranks,
)
from hlotop.report.capacity_text import FIT, fit_cell, modules_fit_line
from hlotop.report.text_fit import NAME_BREAKS, wrap
from hlotop.safe_text import printable
from hlotop.units import human_bytes, with_commas

MAX_ROWS = 40
REPORT_ONLY = "report only"  # said after a report-only module's name


def _resident(f: ModuleFigures) -> int | None:
    """Argument + output - alias device bytes (``memory_analysis()``): what stays on
    the device between calls of the program (its inputs and results)."""
    s = f.memory_stats
    if s is None:
        return None
    return s.argument_size_in_bytes + s.output_size_in_bytes - s.alias_size_in_bytes


def short_module_name(name: str) -> str:
    """A module's name without the pass suffix every module of a run shares."""
    for tail in (".cpu_after_optimizations", "_after_optimizations", ".after_optimizations"):
        if name.endswith(tail):
            return name[: -len(tail)]
    return name


# Left out first when the width is short, in this order (the browser's list as well):
# the platform gives way to the whole module name, the others only to keep NAME_LEAST
# columns of it.
DROP_ORDER = ("platform", "output", "argument", "allocs", "temp", "total")
NAME_LEAST = 26
_FIGURES = ("XLA peak", "total", "argument", "output", "temp", "allocs", "×")
_GAP = 2  # between two columns


class ModulesTable:
    """The ranking's rows fitted to the console's width (80 columns over SSH): the
    columns of :data:`DROP_ORDER` left out as the width asks, then the module names
    wrapped after a dot, a dash or an underscore; a line under the table says which
    columns were left out."""

    def __init__(self, rows: list[tuple[ModuleFigures, int]], capacity: int | None = None):
        self.capacity = capacity  # --capacity's bytes: a column of each module's room
        self.cells: list[dict[str, str]] = []
        ranks = platform_ranks([f for f, _ in rows])
        for rank, (f, count) in zip(ranks, rows, strict=True):
            s = f.memory_stats
            name = printable(short_module_name(f.entry.name))
            if f.error:
                name += f"  ({printable(f.error)})"
            elif f.entry.report_only:
                name += f"  ({REPORT_ONLY})"
            self.cells.append(
                {
                    "#": str(rank),
                    "module": name,
                    "platform": f.entry.platform,
                    "XLA peak": _size(f.peak_bytes),
                    "total": _size(f.total_bytes_used),
                    "argument": _size(s.argument_size_in_bytes if s else None),
                    "output": _size(s.output_size_in_bytes if s else None),
                    "temp": _size(s.temp_size_in_bytes if s else None),
                    "allocs": f"{with_commas(f.allocations)}",
                    "×": str(count) if count > 1 else "",
                    FIT: fit_cell(f.required_bytes, capacity),
                }
            )

    def layout(self, width: int) -> tuple[list[str], list[str], int]:
        """The columns shown at ``width``, those left out, and the module column's
        width."""
        columns = ["#", "module", "platform", *_FIGURES]
        if not any(c["×"] for c in self.cells):
            columns.remove("×")
        if self.capacity is not None:
            columns.append(FIT)
        widths = {k: max([cell_len(k)] + [cell_len(c[k]) for c in self.cells]) for k in columns}
        name = widths["module"]
        dropped: list[str] = []
        for key in DROP_ORDER:
            rest = sum(widths[k] + _GAP for k in columns if k != "module")
            if rest + (name if key == "platform" else min(name, NAME_LEAST)) <= width:
                break
            columns.remove(key)
            dropped.append(key)
        rest = sum(widths[k] + _GAP for k in columns if k != "module")
        return columns, dropped, max(cell_len("module"), min(name, width - rest))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        columns, dropped, name_w = self.layout(options.max_width)
        table = Table(box=None, pad_edge=False)
        for key in columns:
            if key in ("module", "platform"):
                table.add_column(key, overflow="fold")
            else:
                table.add_column(key, justify="right", no_wrap=True)
        for cells in self.cells:
            shown = dict(cells, module=wrap(cells["module"], name_w, NAME_BREAKS))
            table.add_row(*(Text(shown[k]) for k in columns))  # dump text, never markup
        yield table
        if dropped:
            yield Text(
                f"left out at {options.max_width} columns: {', '.join(dropped)} (--json has them)",
                style="dim",
            )


def _size(n: int | None) -> str:
    return human_bytes(n) if n is not None else "-"


def render_modules(
    directory: str,
    figures: list[ModuleFigures],
    max_rows: int = MAX_ROWS,
    capacity: tuple[int, str] | None = None,
) -> Group:
    """The ranking as text: one row per program compiled alike (with a count), each
    platform's modules apart (a table each when there are several, of at most
    ``max_rows`` rows), the largest XLA peak first, then the cross-module figures; with
    ``capacity`` (bytes, label: ``--capacity``) a column of each module's room or excess
    and a line of how many need more."""
    rows = collapse_identical(figures)
    how = "ranked by XLA's peak (the sum of its printed peak list)"
    if any(f.peak_bytes is None for f, _ in rows):
        how += ", a module without one by its total"
    if len({f.entry.platform for f, _ in rows}) > 1:
        how = how.replace("ranked", "ranked within each platform", 1)
    if any(f.entry.report_only for f, _ in rows):
        how += (
            f"; {REPORT_ONLY}: a module with only its -memory-usage-report.txt, its total and "
            "allocations the report's (no peak, no memory_analysis())"
        )
    parts: list = [
        Text.assemble(("Modules", "bold"), f"  {printable(directory)}: {len(figures)} modules"),
        Text(
            f"{how}; argument, output and temp are memory_analysis() device sizes; ×: "
            "modules of the same program compiled alike",
            style="dim",
        ),
    ]
    by_platform = _by_platform(rows)
    for platform, platform_rows in by_platform.items():
        if len(by_platform) > 1:
            parts += [Text(""), Text(platform, style="bold")]
        parts.append(ModulesTable(platform_rows[:max_rows], capacity[0] if capacity else None))
        if len(platform_rows) > max_rows:
            more = len(platform_rows) - max_rows
            parts.append(Text(f"… {more} more (see --json)", style="dim"))
    across = _across(figures)
    if capacity is not None:
        across.append(modules_fit_line(figures, *capacity))
    if across:
        parts += [Text("")] + across
    return Group(*parts)


def _by_platform(rows: list[tuple[ModuleFigures, int]]) -> dict[str, list]:
    """``rows`` of each platform, the platforms in :func:`platform_order`."""
    out: dict[str, list] = {}
    for row in sorted(rows, key=lambda r: platform_order(r[0].entry.platform)):
        out.setdefault(row[0].entry.platform, []).append(row)
    return out


def largest_by_platform(
    figures: list[ModuleFigures],
) -> dict[str, dict[str, tuple[ModuleFigures, int]]]:
    """For each platform (in :func:`platform_order`), its largest figures, each as the
    module and its bytes: ``"peak"`` XLA's peak, ``"report"`` a report-only module's
    total, ``"resident"`` argument + output - alias (:func:`_resident`)."""
    out: dict[str, dict[str, tuple[ModuleFigures, int]]] = {}
    for f in sorted(figures, key=lambda f: platform_order(f.entry.platform)):
        top = out.setdefault(f.entry.platform, {})
        for what, n in (
            ("peak", f.peak_bytes),
            ("report", f.total_bytes_used if f.entry.report_only else None),
            ("resident", _resident(f)),
        ):
            if n is not None and (what not in top or n > top[what][1]):
                top[what] = (f, n)
    return out


def _across(figures: list[ModuleFigures]) -> list[Text]:
    """The largest single program and the largest resident arguments and outputs of
    each platform (programs of one platform share its device; another's never), and
    its largest module known by its memory-usage report alone."""
    out = []
    largest = largest_by_platform(figures)
    several = len(largest) > 1
    for platform, top in largest.items():
        on = f" on {platform}" if several else ""
        if "peak" in top:
            f, n = top["peak"]
            out.append(
                Text(
                    f"Largest single program{on}: {human_bytes(n)} XLA peak, "
                    f"{printable(short_module_name(f.entry.name))}. Programs run one at a "
                    "time: this, not a sum, is what must fit."
                )
            )
        if "report" in top:
            f, n = top["report"]
            out.append(
                Text(
                    f"Largest module{on} known by its memory-usage report alone: {human_bytes(n)} "
                    f"total (the report's; no peak), {printable(short_module_name(f.entry.name))}."
                )
            )
        if "resident" in top:
            f, n = top["resident"]
            out.append(
                Text(
                    f"Largest resident arguments and outputs{on}: {human_bytes(n)} "
                    f"(argument + output - alias), {printable(short_module_name(f.entry.name))}: "
                    "what stays on the device between its calls."
                )
            )
    return out


def grouping_json(grouping: Grouping, limit: int) -> dict[str, Any]:
    """A module's grouped live set for ``--json DIR --group-by``: the one-module
    ``groups`` (``{step, keys, accounting, total_bytes, rows: [{key, bytes,
    values}]}``), its ``limit`` largest rows, and ``rest``: ``{groups, bytes, values}``
    of the rows left out (zeros when none were), so the rows and the rest add up to
    ``total_bytes``."""
    rows, rest = grouping.rows[:limit], grouping.rows[limit:]
    return {
        "step": grouping.step,
        "keys": list(grouping.keys),
        "accounting": grouping.accounting,
        "total_bytes": grouping.total_bytes,
        "rows": [{"key": list(r.key), "bytes": r.bytes, "values": len(r.values)} for r in rows],
        "rest": {
            "groups": len(rest),
            "bytes": sum(r.bytes for r in rest),
            "values": sum(len(r.values) for r in rest),
        },
    }
