"""``hlotop LOG``: an out-of-memory error text read back (:mod:`hlotop.parse.oom`) and
shown as a peak breakdown: its figures (capacity, used, over by), each buffer it lists
with size, unpadded size and expansion, shape, op_name, instruction (the XLA label's
name) and allocation type, fitted to the terminal's width; the buffers grouped by scope
and by shape; and (with ``--dump``) each buffer's value in the module.

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
from hlotop.report.fitted_table import Column, FittedTable
from hlotop.report.text_fit import NAME_BREAKS, OP_NAME_BREAKS, SHAPE_ALL_BREAKS
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


def _instruction(entry: OomEntry) -> str:
    """The instruction of an entry's XLA label, shortly: its name (``fusion.1668``),
    with the opcode after it when the name does not start with it
    (``broadcast_add_fusion (fusion)``); on GPU, whose label is the opcode, the opcode.
    The whole label is in ``--json``."""
    name, opcode = entry.instruction, entry.opcode
    if name is None:
        return printable(opcode or (entry.label or "").strip())
    name = name.lstrip("%")
    if opcode is None or name.startswith(opcode):
        return printable(name)
    return printable(f"{name} ({opcode})")


_NAME = (NAME_BREAKS,)
_OP_NAME = OP_NAME_BREAKS
# The buffer table's columns after "#": each with its cell of an entry and the cell of
# an entry that does not fill it (None: always shown). A column no entry of the text
# fills is left out (a GPU text prints no unpadded size): the room goes to shapes and
# op_names; so is the allocation type when every entry has the same one (the heading
# says it once). When even wrapped they do not fit, the expansion (size over unpadded),
# then the type, then the instruction are left out (Column.optional).
_COLUMNS: tuple[tuple[Column, Callable[[OomEntry], str], str | None], ...] = (
    (Column("size", right=True), lambda e: human_bytes(e.size_bytes), None),
    (Column("unpadded", right=True), lambda e: _bytes(e.unpadded_bytes), "-"),
    (
        Column("x", right=True, optional=3),
        lambda e: f"{e.expansion:.2f}" if e.expansion else "",
        "",
    ),
    (Column("shape", SHAPE_ALL_BREAKS), lambda e: printable(_shape(e)), "?"),
    (Column("op_name", OP_NAME_BREAKS), lambda e: printable(e.op_name or ""), ""),
    (Column("instruction", optional=1), _instruction, ""),
    (Column("type", optional=2), lambda e: printable(e.allocation_type or ""), ""),
)


def _one_type(entries: Sequence[OomEntry]) -> str | None:
    """The allocation type every entry has, if they all have the same one."""
    types = {e.allocation_type for e in entries}
    return types.pop() if len(types) == 1 else None


def entry_columns(entries: Sequence[OomEntry]) -> list[str]:
    """The buffer table's columns after "#" for ``entries``: those some entry fills,
    but the allocation type if all have the same one."""
    return [
        column.name
        for column, cell, empty in _COLUMNS
        if (empty is None or any(cell(e) != empty for e in entries))
        and not (column.name == "type" and _one_type(entries))
    ]


def _entries_table(report: OomReport, links: Sequence[OomLink | None], module_name: str) -> Group:
    entries = report.entries[:MAX_ENTRIES]
    shown = entry_columns(entries)
    used = [(column, cell) for column, cell, _ in _COLUMNS if column.name in shown]
    columns = [Column("#", right=True), *(column for column, _ in used)]
    if links:
        columns.append(Column("value in the dump", (NAME_BREAKS,)))
    rows = []
    for i, entry in enumerate(entries):
        row = [str(entry.rank or i + 1), *(cell(entry) for _, cell in used)]
        if links:
            link = links[i] if i < len(links) else None
            row.append(f"{printable(link.value.value.label)} ({link.rule})" if link else "-")
        rows.append(row)
    total = sum(e.size_bytes for e in report.entries)
    note = f"{len(report.entries)} buffers listed, {human_bytes(total)} in all"
    one_type = _one_type(entries)
    if one_type:
        note += f", all {printable(one_type)}"
    if module_name:
        note += f"; linked to {printable(module_name)}"
    heading = Text.assemble(("Buffers the text lists", "bold"), (f"  {note}", "dim"))
    return Group(heading, FittedTable(columns, rows))


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
    ordered = sorted(groups.items(), key=lambda kv: (-sum(e.size_bytes for e in kv[1]), kv[0]))
    total = sum(e.size_bytes for e in entries) or 1
    columns = [
        Column(key, SHAPE_ALL_BREAKS if key == "shape" else OP_NAME_BREAKS),
        *(Column(name, right=True) for name in ("bytes", "share", "buffers")),
    ]
    rows = []
    for label, members in ordered[:15]:
        size = sum(e.size_bytes for e in members)
        rows.append(
            [printable(label), human_bytes(size), f"{100 * size / total:.1f}%", str(len(members))]
        )
    return Group(Text(f"By {key}", style="bold"), FittedTable(columns, rows))


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
