"""``hlotop --summary --group-by KEYS``: the grouped live set as a table, the largest
groups first, the rest in one row, so the rows always add up to the total."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.analysis.grouping import Grouping
from hlotop.safe_text import printable
from hlotop.units import human_bytes

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
    table = Table(box=None, pad_edge=False)
    for key in grouping.keys:
        table.add_column(key, overflow="fold")
    for name in ("bytes", "share", "values"):
        table.add_column(name, justify="right", no_wrap=True)
    shown = grouping.rows[:max_rows]
    for row in shown:
        table.add_row(
            *(printable(part) for part in row.key),
            human_bytes(row.bytes),
            _share(row.bytes, total),
            f"{len(row.values):,}",
        )
    rest = grouping.rows[max_rows:]
    if rest:
        rest_bytes = sum(r.bytes for r in rest)
        count = sum(len(r.values) for r in rest)
        label = Text(f"… {len(rest):,} smaller groups", style="dim")
        table.add_row(
            label,
            *([""] * (len(grouping.keys) - 1)),
            human_bytes(rest_bytes),
            _share(rest_bytes, total),
            f"{count:,}",
        )
    table.add_row(
        Text("total", style="bold"),
        *([""] * (len(grouping.keys) - 1)),
        Text(human_bytes(total), style="bold"),
        "100.0%" if total else "-",
        f"{sum(len(r.values) for r in grouping.rows):,}",
    )
    heading = Text.assemble(
        (f"Live set at step {grouping.step} by {', '.join(grouping.keys)}", "bold"),
        (f"  {ACCOUNTING_NOTES[grouping.accounting]}", "dim"),
    )
    return Group(heading, table)


def _share(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"
