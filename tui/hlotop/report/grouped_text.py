"""``hlotop --summary --group-by KEYS``: the grouped live set as a table, the largest
groups first, the rest in one row, so the rows always add up to the total."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from hlotop.analysis.grouping import Grouping
from hlotop.report.fitted_table import Cell, Column, FittedTable
from hlotop.report.text_fit import OP_NAME_BREAKS, SHAPE_ALL_BREAKS
from hlotop.safe_text import printable
from hlotop.units import human_bytes, with_commas

MAX_ROWS = 30  # groups listed before the rest are summed in one row

ACCOUNTING_NOTES = {
    "logical": "logical bytes: each value at its shape, padding ignored, values sharing "
    "a buffer each counted",
    "occupied": "occupied bytes: allocation space in use, padding included, shared bytes once",
}


def grouped_table(grouping: Grouping, max_rows: int = MAX_ROWS) -> Group:
    """The groups of ``grouping``, at most ``max_rows`` of them, then one row with the
    rest: how many groups and values, and their bytes."""
    total = grouping.total_bytes
    columns = [key_column(key) for key in grouping.keys]
    columns += [Column(name, right=True) for name in ("bytes", "share", "values")]
    rows: list[list[Cell]] = []
    shown = grouping.rows[:max_rows]
    for row in shown:
        rows.append(
            [
                *(printable(part) for part in row.key),
                human_bytes(row.bytes),
                _share(row.bytes, total),
                f"{with_commas(len(row.values))}",
            ]
        )
    rest = grouping.rows[max_rows:]
    if rest:
        rest_bytes = sum(r.bytes for r in rest)
        count = sum(len(r.values) for r in rest)
        label = Text(f"… {with_commas(len(rest))} smaller groups", style="dim")
        rows.append(
            [
                label,
                *([""] * (len(grouping.keys) - 1)),
                human_bytes(rest_bytes),
                _share(rest_bytes, total),
                f"{with_commas(count)}",
            ]
        )
    rows.append(
        [
            Text("total", style="bold"),
            *([""] * (len(grouping.keys) - 1)),
            Text(human_bytes(total), style="bold"),
            "100.0%" if total else "-",
            f"{with_commas(sum(len(r.values) for r in grouping.rows))}",
        ]
    )
    heading = Text.assemble(
        (f"Live set at step {grouping.step} by {', '.join(grouping.keys)}", "bold"),
        (f"  {ACCOUNTING_NOTES[grouping.accounting]}", "dim"),
    )
    return Group(heading, FittedTable(columns, rows))


def key_column(key: str) -> Column:
    """A grouping key's column, wrapped where its text allows (a shape at its commas
    and braces; a scope, source, parameter path or op_name after ``/`` ``.`` ``_``
    ``-`` or a space) when the table is wider than the console."""
    return Column(key, SHAPE_ALL_BREAKS if key == "shape" else OP_NAME_BREAKS)


def _share(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"
