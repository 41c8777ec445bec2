"""``hlotop diff OLD_DIR NEW_DIR``: two whole ``--xla_dump_to`` runs compared program by
program (:func:`hlotop.loading.directory.pair_modules`), each module by its first look:
XLA's peak (the sum of its printed peak list) and its total bytes on both sides, the
change, that of JAX's ``memory_analysis()`` temp size, and the programs only one run
compiled. ``--fail-over`` gates every program
both runs compiled (:func:`gate_modules`).

Its JSON (``--json``) is :mod:`hlotop.report.modules_table`'s.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from hlotop.loading.directory import ModuleFigures, ModulePair
from hlotop.report.diff_report import Threshold, change_text, growth
from hlotop.report.fitted_table import Cell, Column, FittedTable
from hlotop.report.modules_report import short_module_name
from hlotop.report.text_fit import NAME_BREAKS
from hlotop.safe_text import printable
from hlotop.units import human_bytes

MAX_ROWS = 40


def _peak(f: ModuleFigures | None) -> int | None:
    return None if f is None else f.peak_bytes


def _total(f: ModuleFigures | None) -> int | None:
    return None if f is None else f.total_bytes_used


def _temp_change(old: ModuleFigures | None, new: ModuleFigures | None) -> Cell:
    """The change of JAX's ``memory_analysis()`` ``temp_size_in_bytes``, or -."""
    if old is None or new is None or old.memory_stats is None or new.memory_stats is None:
        return "-"
    return change_text(old.memory_stats.temp_size_in_bytes, new.memory_stats.temp_size_in_bytes)


def _number(f: ModuleFigures | None) -> str:
    """The module's number in its run (``0034`` of ``module_0034.jit_...``), or -."""
    if f is None:
        return "-"
    head = f.entry.name.split(".", 1)[0]
    return head.removeprefix("module_") if head.startswith("module_") else head


def _size(n: int | None) -> str:
    return "-" if n is None else human_bytes(n)


def gate_modules(pairs: list[ModulePair], threshold: Threshold) -> list[str]:
    """One line for each program both runs compiled whose XLA peak (or, where a side
    prints no peak list, total bytes) grew by more than ``threshold``; [] if none."""
    out = []
    for pair in pairs:
        for label, get in (("XLA's peak", _peak), ("total bytes used", _total)):
            old, new = get(pair.old), get(pair.new)
            if old is None or new is None:
                continue
            if threshold.exceeded(old, new):
                out.append(
                    f"hlotop diff: {printable(short_module_name(pair.program))}: {label} grew by "
                    f"{growth(old, new)}, from {human_bytes(old)} "
                    f"to {human_bytes(new)}: over the {threshold} allowed"
                )
            break  # the peak when both sides print one, else the total
    return out


def render_modules_diff(
    old_dir: str, new_dir: str, pairs: list[ModulePair], max_rows: int = MAX_ROWS
) -> Group:
    """The programs of both runs, the largest first: XLA's peak on each side and its
    change, the total's change; then how many programs only one run compiled."""
    both = [p for p in pairs if p.old is not None and p.new is not None]
    columns = [
        Column("program", (NAME_BREAKS,), whole=True),
        Column("OLD peak", right=True),
        Column("NEW peak", right=True),
        Column("change", right=True),
        Column("total change", right=True, optional=1),
        Column("temp change", right=True, optional=2),
        Column("modules", optional=3),
    ]
    rows: list[list[Cell]] = []
    for p in pairs[:max_rows]:
        peak_old, peak_new = _peak(p.old), _peak(p.new)
        total_old, total_new = _total(p.old), _total(p.new)
        if p.old is None:
            change: Cell = Text("only in NEW", style="bold")
        elif p.new is None:
            change = Text("only in OLD", style="dim")
        elif p.old.error or p.new.error:
            change = Text("not read", style="bold")
        elif peak_old is not None and peak_new is not None:
            change = change_text(peak_old, peak_new)
        else:
            change = "-"
        total: Cell = (
            change_text(total_old, total_new)
            if total_old is not None and total_new is not None
            else "-"
        )
        rows.append(
            [
                printable(short_module_name(p.program)),
                _size(peak_old),
                _size(peak_new),
                change,
                total,
                _temp_change(p.old, p.new),
                f"{_number(p.old)} → {_number(p.new)}",
            ]
        )
    added = sum(p.old is None for p in pairs)
    removed = sum(p.new is None for p in pairs)
    grew = sum(
        1
        for p in both
        if (a := _peak(p.old)) is not None and (b := _peak(p.new)) is not None and b > a
    )
    parts: list = [
        Text("hlotop diff", style="bold"),
        Text(f" OLD {printable(old_dir)}"),
        Text(f" NEW {printable(new_dir)}"),
        Text(""),
        Text.assemble(
            ("Programs", "bold"),
            f"  {len(both)} in both runs ({grew} with a larger XLA peak), "
            f"{added} only in NEW, {removed} only in OLD",
        ),
        Text(
            "each module by its first look: XLA's peak is the sum of its printed peak "
            "list; a program compiled several times in a run pairs in module order; "
            "hlotop diff OLD/<module> NEW/<module> compares one program's values",
            style="dim",
        ),
        FittedTable(columns, rows),
    ]
    if len(pairs) > max_rows:
        parts.append(Text(f"… {len(pairs) - max_rows} more (see --json)", style="dim"))
    unread = [
        (side, f)
        for p in pairs
        for side, f in (("OLD", p.old), ("NEW", p.new))
        if f is not None and f.error
    ]
    if unread:
        parts.append(Text(""))
        parts.append(
            Text.assemble(
                ("Not read", "bold"), f"  {len(unread)} module(s), without figures above:"
            )
        )
        parts += [
            Text(f"  {side} {printable(f.entry.name)}: {printable(f.error or '')}")
            for side, f in unread
        ]
    return Group(*parts)
