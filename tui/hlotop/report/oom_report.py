"""``hlotop LOG``: an out-of-memory error text read back (:mod:`hlotop.parse.oom`) and
shown as a peak breakdown: its figures (capacity, used, over by), each buffer it lists
with size, unpadded size and expansion, shape, op_name, label and allocation type, the
buffers grouped by scope and by shape, and (with ``--dump``) each buffer's value in the
module.

JSON: ``{oom: {format, memory_space, capacity_bytes, used_bytes, over_bytes,
requested_bytes, stats, entries: [{size_bytes, shape, op_name, label,
allocation_type, unpadded_bytes, value}]}}``; ``value`` is ``{module, id, name, rule}``
when ``--dump`` links it, else null.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import IO, Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.analysis.oom_link import OomLink
from hlotop.analysis.scope import scope_of
from hlotop.model import OomEntry, OomReport
from hlotop.safe_text import printable
from hlotop.units import human_bytes

MAX_ENTRIES = 30


def _bytes(n: int | None) -> str:
    return human_bytes(n) if n is not None else "-"


def _shape(entry: OomEntry) -> str:
    return entry.shape or "?"


def render_oom(
    report: OomReport, links: Sequence[OomLink | None] = (), module_name: str = ""
) -> Group:
    """The OOM text as a peak breakdown (see the module's docstring)."""
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    head.add_row("Out of memory", Text(f"{report.format}: {printable(report.memory_space or '?')}"))
    for label, value in (
        ("Capacity", report.capacity_bytes),
        ("Used", report.used_bytes),
        ("Over by", report.over_bytes),
        ("Requested", report.requested_bytes),
    ):
        if value is not None:
            head.add_row(label, Text(f"{human_bytes(value)}  ({value:,} B)"))
    for name, value in report.stats.items():
        head.add_row(Text(printable(name), style="dim"), Text(human_bytes(value), style="dim"))
    parts: list = [head]
    if report.entries:
        parts += [Text(""), _entries_table(report, links, module_name)]
        parts += [
            Text(""),
            _grouped(report.entries, "scope"),
            Text(""),
            _grouped(report.entries, "shape"),
        ]
    return Group(*parts)


# The buffer table's columns after "#": each with its cell of an entry, whether it is a
# number (right-justified, never wrapped), and the cell of an entry that does not fill
# it (None: always shown). A column no entry of the text fills is left out (a GPU text
# prints no unpadded size): the room goes to shapes and op_names.
_COLUMNS: tuple[tuple[str, Callable[[OomEntry], str], bool, str | None], ...] = (
    ("size", lambda e: human_bytes(e.size_bytes), True, None),
    ("unpadded", lambda e: _bytes(e.unpadded_bytes), True, "-"),
    ("x", lambda e: f"{e.expansion:.2f}" if e.expansion else "", True, ""),
    ("shape", lambda e: printable(_shape(e)), False, "?"),
    ("op_name", lambda e: printable(e.op_name or ""), False, ""),
    ("label", lambda e: printable(e.label or ""), False, ""),
    ("type", lambda e: printable(e.allocation_type or ""), False, ""),
)


def entry_columns(entries: Sequence[OomEntry]) -> list[str]:
    """The buffer table's columns after "#" for ``entries``: those some entry fills."""
    return [
        name
        for name, cell, _, empty in _COLUMNS
        if empty is None or any(cell(e) != empty for e in entries)
    ]


def _entries_table(report: OomReport, links: Sequence[OomLink | None], module_name: str) -> Group:
    entries = report.entries[:MAX_ENTRIES]
    shown = entry_columns(entries)
    table = Table(box=None, pad_edge=False)
    table.add_column("#", justify="right")
    for name, _, number, _ in _COLUMNS:
        if name not in shown:
            continue
        if number:
            table.add_column(name, justify="right", no_wrap=True)
        else:
            table.add_column(name, overflow="fold")
    if links:
        table.add_column("value in the dump", overflow="fold")
    for i, entry in enumerate(entries):
        row = [str(entry.rank or i + 1)]
        row += [cell(entry) for name, cell, _, _ in _COLUMNS if name in shown]
        if links:
            link = links[i] if i < len(links) else None
            row.append(f"{printable(link.value.value.label)} ({link.rule})" if link else "-")
        table.add_row(*row)
    total = sum(e.size_bytes for e in report.entries)
    note = f"{len(report.entries)} buffers listed, {human_bytes(total)} in all"
    if module_name:
        note += f"; linked to {printable(module_name)}"
    return Group(Text.assemble(("Buffers the text lists", "bold"), (f"  {note}", "dim")), table)


def _grouped(entries: Sequence[OomEntry], key: str) -> Group:
    """The buffers by scope (the grouped view's rule, from the op_name) or by shape."""
    groups: dict[str, list[OomEntry]] = defaultdict(list)
    for e in entries:
        if key == "scope":
            scope = scope_of(e.op_name)
            label = "(no op_name)" if scope is None else scope or "(top level)"
        else:
            label = _shape(e)
        groups[label].append(e)
    rows = sorted(groups.items(), key=lambda kv: (-sum(e.size_bytes for e in kv[1]), kv[0]))
    total = sum(e.size_bytes for e in entries) or 1
    table = Table(box=None, pad_edge=False)
    table.add_column(key, overflow="fold")
    for name in ("bytes", "share", "buffers"):
        table.add_column(name, justify="right", no_wrap=True)
    for label, members in rows[:15]:
        size = sum(e.size_bytes for e in members)
        table.add_row(
            printable(label), human_bytes(size), f"{100 * size / total:.1f}%", str(len(members))
        )
    return Group(Text(f"By {key}", style="bold"), table)


def oom_json(
    report: OomReport, links: Sequence[OomLink | None] = (), module_name: str = ""
) -> dict[str, Any]:
    """The OOM report as a JSON-ready dict (shape in the module's docstring)."""
    entries = []
    for i, e in enumerate(report.entries):
        link = links[i] if i < len(links) else None
        entries.append(
            {
                "size_bytes": e.size_bytes,
                "shape": e.shape,
                "op_name": e.op_name,
                "label": e.label,
                "allocation_type": e.allocation_type,
                "unpadded_bytes": e.unpadded_bytes,
                "value": None
                if link is None
                else {
                    "module": module_name,
                    "id": link.value.value.id,
                    "name": link.value.value.label,
                    "rule": link.rule,
                },
            }
        )
    return {
        "oom": {
            "format": report.format,
            "memory_space": report.memory_space,
            "capacity_bytes": report.capacity_bytes,
            "used_bytes": report.used_bytes,
            "over_bytes": report.over_bytes,
            "requested_bytes": report.requested_bytes,
            "stats": dict(report.stats),
            "entries": entries,
        }
    }


def write_oom_json(doc: dict[str, Any], out: IO[str]) -> None:
    json.dump(doc, out)
    out.write("\n")
