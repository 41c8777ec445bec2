"""``hlotop --summary DIR`` and ``hlotop --json DIR``: every module of a dump directory,
ranked by XLA's peak, with its total, ``memory_analysis()`` sizes and platform, and the
figures across modules (what each means is said beside it).

JSON: ``{directory, modules: [{name, files, platform, total_bytes_used, peak_step,
peak_bytes, allocations, memory_stats, identical, error}], largest_peak: {module,
bytes}, largest_resident: {module, bytes}}``; ``identical`` counts the modules of the
same program compiled alike that the row stands for; ``error`` says why a module could
not be read (null when it was).
"""

from __future__ import annotations

import json
from typing import IO, Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from hlotop.loading.directory import ModuleFigures, collapse_identical
from hlotop.report.text_fit import NAME_BREAKS, wrap
from hlotop.safe_text import printable
from hlotop.units import human_bytes

MAX_ROWS = 40


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

    def __init__(self, rows: list[tuple[ModuleFigures, int]]):
        self.cells: list[dict[str, str]] = []
        for rank, (f, count) in enumerate(rows, 1):
            s = f.memory_stats
            name = printable(short_module_name(f.entry.name))
            self.cells.append(
                {
                    "#": str(rank),
                    "module": name + (f"  ({printable(f.error)})" if f.error else ""),
                    "platform": f.entry.platform,
                    "XLA peak": _size(f.peak_bytes),
                    "total": _size(f.total_bytes_used),
                    "argument": _size(s.argument_size_in_bytes if s else None),
                    "output": _size(s.output_size_in_bytes if s else None),
                    "temp": _size(s.temp_size_in_bytes if s else None),
                    "allocs": f"{f.allocations:,}",
                    "×": str(count) if count > 1 else "",
                }
            )

    def layout(self, width: int) -> tuple[list[str], list[str], int]:
        """The columns shown at ``width``, those left out, and the module column's
        width."""
        columns = ["#", "module", "platform", *_FIGURES]
        if not any(c["×"] for c in self.cells):
            columns.remove("×")
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


def render_modules(directory: str, figures: list[ModuleFigures], max_rows: int = MAX_ROWS) -> Group:
    """The ranking as text: one row per program compiled alike (with a count), the
    largest XLA peak first, then the cross-module figures."""
    rows = collapse_identical(figures)
    parts: list = [
        Text.assemble(("Modules", "bold"), f"  {printable(directory)}: {len(figures)} modules"),
        Text(
            "ranked by XLA's peak (the sum of its printed peak list); argument, output and "
            "temp are memory_analysis() device sizes; ×: modules of the same program "
            "compiled alike",
            style="dim",
        ),
        ModulesTable(rows[:max_rows]),
    ]
    if len(rows) > max_rows:
        parts.append(Text(f"… {len(rows) - max_rows} more (see --json)", style="dim"))
    across = _across(figures)
    if across:
        parts += [Text("")] + across
    return Group(*parts)


def _across(figures: list[ModuleFigures]) -> list[Text]:
    out = []
    peaks = [f for f in figures if f.peak_bytes is not None]
    if peaks:
        top = max(peaks, key=lambda f: f.peak_bytes or 0)
        out.append(
            Text(
                f"Largest single program: {human_bytes(top.peak_bytes or 0)} XLA peak, "
                f"{printable(short_module_name(top.entry.name))}. Programs run one at a time: this, "
                "not a sum, is what must fit."
            )
        )
    resident = [(f, r) for f in figures if (r := _resident(f)) is not None]
    if resident:
        top_f, top_r = max(resident, key=lambda t: t[1])
        out.append(
            Text(
                f"Largest resident arguments and outputs: {human_bytes(top_r)} "
                f"(argument + output - alias), {printable(short_module_name(top_f.entry.name))}: "
                "what stays on the device between its calls."
            )
        )
    return out


def modules_json(directory: str, figures: list[ModuleFigures]) -> dict[str, Any]:
    """The ranking as a JSON-ready dict (shape in this module's docstring)."""
    rows = collapse_identical(figures)
    modules = []
    for f, count in rows:
        modules.append(
            {
                "name": f.entry.name,
                "files": [str(p) for p in f.entry.files],
                "platform": f.entry.platform,
                "total_bytes_used": f.total_bytes_used,
                "peak_step": f.peak_step,
                "peak_bytes": f.peak_bytes,
                "allocations": f.allocations,
                "memory_stats": f.memory_stats.as_dict() if f.memory_stats else None,
                "identical": count,
                "error": f.error,
            }
        )
    peaks = [f for f in figures if f.peak_bytes is not None]
    top = max(peaks, key=lambda f: f.peak_bytes or 0) if peaks else None
    resident = [(f, r) for f in figures if (r := _resident(f)) is not None]
    res = max(resident, key=lambda t: t[1]) if resident else None
    return {
        "directory": directory,
        "modules": modules,
        "largest_peak": {"module": top.entry.name, "bytes": top.peak_bytes} if top else None,
        "largest_resident": {"module": res[0].entry.name, "bytes": res[1]} if res else None,
    }


def write_modules_json(directory: str, figures: list[ModuleFigures], out: IO[str]) -> None:
    json.dump(modules_json(directory, figures), out)
    out.write("\n")
