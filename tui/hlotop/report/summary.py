"""``hlotop --summary``: the module's memory on one screen of text, rendered by Rich.

Dump text goes into ``rich.text.Text`` objects (never markup strings) after
:func:`hlotop.safe_text.printable`, so nothing in a dump can style or control the
terminal.
"""

from __future__ import annotations

import os
from collections import Counter

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from hlotop.model import ModuleDump
from hlotop.model.memory_space import space_name, space_names, space_style
from hlotop.safe_text import printable
from hlotop.units import human_bytes

TOP_VALUES = 15
MAX_DIAGNOSTICS = 10


def _bytes(n: int) -> Text:
    return Text(f"{human_bytes(n)}  ({n:,} B)")


def _space(color: int, names: dict[int, str]) -> Text:
    return Text(f"{space_name(color, names)} (color {color})", style=space_style(color))


def render_summary(module: ModuleDump) -> Group:
    """The ``--summary`` report of ``module`` as a Rich renderable. Raises nothing."""
    a = module.analysis
    names = space_names(module.memory_usage_report)
    parts: list = [Text(printable(module.name), style="bold")]
    for f in module.files:
        parts.append(Text(f"  {f.kind}: {printable(f.path)}", style="dim"))

    overview = Table.grid(padding=(0, 2))
    overview.add_column(style="bold")
    overview.add_column()
    total = module.total_bytes_used
    allocated = sum(x.size for x in module.allocations)
    overview.add_row("Total bytes used", _bytes(total if total is not None else allocated))
    overview.add_row("Allocations", Text(f"{len(module.allocations):,}"))
    overview.add_row("Values", Text(f"{len(a.values):,}"))
    live = module.live_range
    if live is not None:
        overview.add_row(
            "Schedule", Text(f"{len(live.instruction_sequence):,} steps (max {live.max_time})")
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
        overview.add_row(
            "Live at peak",
            Text.assemble(
                _bytes(a.peak_bytes),
                ("  logical: XLA's peak figure, each value counted, tiling padding ignored", "dim"),
            ),
        )
        overview.add_row(
            "Occupied at peak",
            Text.assemble(
                _bytes(a.peak_occupied_bytes),
                (
                    "  allocation space in use: padding included, "
                    "slices shared by values counted once",
                    "dim",
                ),
            ),
        )
    parts += [Text(""), overview]

    kinds = Table(title="By allocation kind", title_justify="left", box=None, pad_edge=False)
    kinds.add_column("kind")
    kinds.add_column("bytes", justify="right")
    kinds.add_column("allocations", justify="right")
    color_counts = Counter(x.color for x in module.allocations)
    for kind, size in a.totals_by_kind.items():
        count = a.allocations_by_kind[kind]
        if count:
            kinds.add_row(kind, human_bytes(size), f"{count:,}")
    spaces = Table(title="By memory space", title_justify="left", box=None, pad_edge=False)
    spaces.add_column("memory space")
    spaces.add_column("bytes", justify="right")
    spaces.add_column("allocations", justify="right")
    for color, size in a.totals_by_color.items():
        count = color_counts[color]
        spaces.add_row(_space(color, names), human_bytes(size), f"{count:,}")
    parts += [Text(""), kinds, Text(""), spaces]

    if a.peak_step is not None:
        top = Table(
            title=f"Largest values live at the peak (step {a.peak_step})",
            title_justify="left",
            box=None,
            pad_edge=False,
        )
        for col, justify in (
            ("#", "right"),
            ("value", "left"),
            ("bytes", "right"),
            ("allocated", "right"),
            ("shape", "left"),
            ("alloc", "right"),
            ("space", "left"),
            ("op_name", "left"),
        ):
            top.add_column(col, justify=justify, overflow="fold")
        for rank, v in enumerate(a.peak_values[:TOP_VALUES], 1):
            top.add_row(
                str(rank),
                Text(printable(v.value.label)),
                human_bytes(v.logical_bytes),
                human_bytes(v.allocated_bytes),
                Text(printable(v.shape or "?")),
                str(v.slot.allocation) if v.slot else "-",
                Text(space_name(v.color, names), style=space_style(v.color)),
                Text(printable(v.op_name or "")),
            )
        if len(a.peak_values) > TOP_VALUES:
            top.caption = f"... and {len(a.peak_values) - TOP_VALUES:,} smaller values"
        parts += [Text(""), top]

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


PIPE_WIDTH = 160  # piped into a file or less: room for shapes and op_names on one line


def print_summary(module: ModuleDump, console: Console | None = None) -> None:
    """Print the ``--summary`` report to ``console`` (default: stdout, at the terminal's
    width, or :data:`PIPE_WIDTH` columns when stdout is not a terminal)."""
    if console is None:
        console = Console(highlight=False)
        if not console.is_terminal and "COLUMNS" not in os.environ:
            console = Console(highlight=False, width=PIPE_WIDTH)
    console.print(render_summary(module))
