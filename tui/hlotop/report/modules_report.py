"""``hlotop --summary DIR`` and ``hlotop --json DIR``: every module of a dump directory,
ranked by XLA's peak, with its total, ``memory_analysis()`` sizes and platform, and the
figures across modules (what each means is said beside it).

JSON: ``{directory, modules: [{name, files, platform, total_bytes_used, peak_step,
peak_bytes, allocations, memory_stats, identical}], largest_peak: {module, bytes},
largest_resident: {module, bytes}}``; ``identical`` counts the modules of the same
program compiled alike that the row stands for.
"""

from __future__ import annotations

import json
from typing import IO, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.loading.directory import ModuleFigures, collapse_identical
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


def _short(name: str) -> str:
    for tail in (".cpu_after_optimizations", "_after_optimizations", ".after_optimizations"):
        if name.endswith(tail):
            return name[: -len(tail)]
    return name


def render_modules(directory: str, figures: list[ModuleFigures], max_rows: int = MAX_ROWS) -> Group:
    """The ranking as text: one row per program compiled alike (with a count), the
    largest XLA peak first, then the cross-module figures."""
    rows = collapse_identical(figures)
    table = Table(box=None, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("module", overflow="fold")
    table.add_column("platform")
    for name in ("XLA peak", "total", "argument", "output", "temp", "allocs", "×"):
        table.add_column(name, justify="right", no_wrap=True)
    for rank, (f, count) in enumerate(rows[:max_rows], 1):
        s = f.memory_stats
        table.add_row(
            str(rank),
            printable(_short(f.entry.name)) + (f"  ({f.error})" if f.error else ""),
            f.entry.platform,
            human_bytes(f.peak_bytes) if f.peak_bytes is not None else "-",
            human_bytes(f.total_bytes_used) if f.total_bytes_used is not None else "-",
            human_bytes(s.argument_size_in_bytes) if s else "-",
            human_bytes(s.output_size_in_bytes) if s else "-",
            human_bytes(s.temp_size_in_bytes) if s else "-",
            f"{f.allocations:,}",
            str(count) if count > 1 else "",
        )
    parts: list = [
        Text.assemble(("Modules", "bold"), f"  {printable(directory)}: {len(figures)} modules"),
        Text(
            "ranked by XLA's peak (the sum of its printed peak list); argument, output and "
            "temp are memory_analysis() device sizes; ×: modules of the same program "
            "compiled alike",
            style="dim",
        ),
        table,
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
                f"{printable(_short(top.entry.name))}. Programs run one at a time: this, "
                "not a sum, is what must fit."
            )
        )
    resident = [(f, r) for f in figures if (r := _resident(f)) is not None]
    if resident:
        top_f, top_r = max(resident, key=lambda t: t[1])
        out.append(
            Text(
                f"Largest resident arguments and outputs: {human_bytes(top_r)} "
                f"(argument + output - alias), {printable(_short(top_f.entry.name))}: "
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
