"""``hlotop LOG``: the out-of-memory messages of an error text read back
(:mod:`hlotop.parse.oom`), each shown as a peak breakdown: where it is in the file,
its figures as the text prints them (a rounded size stays rounded; exact bytes where
the text gives them or the buffer's shape fixes them; a figure hlotop worked out says
its formula), its tables' lines, each buffer it lists (size, the shape's bytes,
unpadded size and expansion, shape, op_name, instruction, allocation type; its line in
the file is in the JSON) fitted to the terminal's width; the buffers grouped by scope
and by shape; and (with ``--dump``) each buffer's value in the module. The JSON is
:mod:`hlotop.report.oom_table`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from rich.console import Group
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from hlotop.analysis.oom_entries import group_entries
from hlotop.analysis.oom_link import OomLink
from hlotop.model import OomEntry, OomReport
from hlotop.model.oom import BLOCK_NAMES, Size
from hlotop.report.fitted_table import Column, FittedTable
from hlotop.report.text_fit import NAME_BREAKS, OP_NAME_BREAKS, SHAPE_ALL_BREAKS
from hlotop.safe_text import printable
from hlotop.units import human_bytes

MAX_ENTRIES = 30
# What each figure is called, where a format's text calls it otherwise.
_LABELS: dict[str, dict[str, str]] = {
    "remat": {"target": "Target (below)", "used": "Reduced to", "over": "Over target by"},
    "gpu-schedule": {"target": "Base limit", "used": "Input/output"},
    "bfc-allocator": {"capacity": "Limit", "used": "InUse"},
}
_FIGURES = ("capacity", "target", "used", "over", "requested")
_NAMES = {"capacity": "Capacity", "target": "Target", "used": "Used", "over": "Over by"}
_NAMES["requested"] = "Requested"


def size_text(size: Size) -> Text:
    """A size as the text printed it; beside it, dim, its exact bytes in human units
    where the text printed only bytes, the bytes its shape fixes, or a worked-out
    figure's formula (``≈`` before one worked out from rounded figures)."""
    if size.origin == "derived":
        approx = "" if size.exact else "≈"
        exact = f"  ({size.bytes:,} B)" if size.exact else ""
        return Text.assemble(approx + human_bytes(size.bytes) + exact, (f"  = {size.text}", "dim"))
    out = Text(printable(size.text))
    if size.origin == "shape":
        out.append(f"  = {size.bytes:,} B by its shape", style="dim")
    elif size.exact and not any(u in size.text for u in "KMGTPE") and size.bytes >= 1024:
        out.append(f"  ({human_bytes(size.bytes)})", style="dim")
    return out


def _bytes(size: Size | None) -> str:
    return printable(size.text) if size is not None else "-"


def _shape(entry: OomEntry) -> str:
    return entry.shape or "?"


def _where(report: OomReport) -> str:
    where = f"line {report.line}" + (f" of {report.path}" if report.path else "")
    extra = [
        f"the runtime's error at line {b.line}" for b in report.blocks if b.kind == "runtime-error"
    ]
    if report.repeats:
        extra.append("printed again at line " + ", ".join(map(str, report.repeats)))
    return printable("; ".join([where, *extra]))


def report_head(report: OomReport, title: str, *, stats: bool = True) -> Table:
    """A report's head: its format and memory space, where it is, its message, device
    and program, its figures (:func:`size_text`), its tables' other lines (unless not
    ``stats``: the browser shows them in the whole text) and the lines that did not
    read."""
    return _head(report, title, stats)


def _head(report: OomReport, title: str, stats: bool = True) -> Table:
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    space = f": {printable(report.memory_space)}" if report.memory_space else ""
    head.add_row(title, Text(report.format + space))
    head.add_row("Where", Text(_where(report)))
    if report.message:
        head.add_row("Message", Text(printable(report.message)))
    else:
        block = BLOCK_NAMES.get(report.blocks[0].kind, "") if report.blocks else ""
        head.add_row("Message", Text(f"no headline: read from its {block}", style="dim"))
    if report.device:
        head.add_row("Device", Text(printable(report.device)))
    if report.program:
        head.add_row("Program", Text(printable(report.program)))
    labels = _LABELS.get(report.format, {})
    shown = []
    for name in _FIGURES:
        size = getattr(report, name)
        if size is not None:
            head.add_row(labels.get(name, _NAMES[name]), size_text(size))
            shown.append(size)
    for figure in report.stats if stats else ():
        if any(figure.size is size for size in shown):
            continue  # shown above, by the name of what it is
        if figure.size is not None:
            value = size_text(figure.size)
        else:
            value = Text(str(figure.count) if figure.count is not None else "unknown")
        if figure.note and figure.note != "unknown size":
            value.append(f"  ({printable(figure.note)})")
        value.stylize("dim")
        head.add_row(Text(printable(figure.name), style="dim"), value)
    if not report.has_figures():
        head.add_row("", Text("the text gives no figure", style="dim"))
    for diagnostic in report.diagnostics:  # lines of the report that did not read
        where = f"line {diagnostic.line}"
        head.add_row(
            Text("Not read", style="yellow"), Text(printable(f"{where}: {diagnostic.message}"))
        )
    return head


def render_ooms(
    reports: Sequence[OomReport],
    links: Sequence[Sequence[OomLink | None]] = (),
    module_name: str = "",
    most_telling: OomReport | None = None,
) -> Group:
    """Every report of a text (see the module's docstring), in the text's order;
    ``links[i]`` are report i's entries' values in ``module_name`` (``--dump``),
    ``most_telling`` the one marked as the error."""
    parts: list[Any] = []
    if len(reports) > 1:
        note = (
            f"{len(reports)} out-of-memory messages in {printable(reports[0].path or 'the text')}"
        )
        if most_telling is not None:
            note += f"; the error: {reports.index(most_telling) + 1} ({most_telling.format})"
        parts.append(Text(note, style="bold"))
    for i, report in enumerate(reports):
        title = f"{i + 1}. Out of memory" if len(reports) > 1 else "Out of memory"
        if len(reports) > 1:
            parts.append(Rule(style="dim"))
        parts.append(render_oom(report, links[i] if i < len(links) else (), module_name, title))
    return Group(*parts)


def render_oom(
    report: OomReport,
    links: Sequence[OomLink | None] = (),
    module_name: str = "",
    title: str = "Out of memory",
) -> Group:
    """One OOM report as a peak breakdown (see the module's docstring)."""
    parts: list[Any] = [_head(report, title)]
    if report.entries:
        parts += [Text(""), _entries_table(report, links, module_name)]
        parts += [
            Text(""),
            _grouped(report.entries, "scope"),
            Text(""),
            _grouped(report.entries, "shape"),
        ]
    return Group(*parts)


def instruction_text(entry: OomEntry) -> str:
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


def _shape_bytes(entry: OomEntry) -> str:
    return f"{entry.shape_bytes:,}" if entry.shape_bytes is not None else ""


# The buffer table's columns after "#": each with its cell of an entry and the cell of
# an entry that does not fill it (None: always shown). A column no entry of the text
# fills is left out (a GPU text prints no unpadded size): the room goes to shapes and
# op_names; so is the allocation type when every entry has the same one (the heading
# says it once). When even wrapped they do not fit, the expansion (size over unpadded;
# and the shape's bytes where they are the unpadded sizes), the type, the instruction,
# then the shape's bytes are left out (Column.optional). Each buffer's line in the
# file is in --json.
_COLUMNS: tuple[tuple[Column, Callable[[OomEntry], str], str | None], ...] = (
    (Column("size", right=True), lambda e: _bytes(e.size), None),
    (Column("shape bytes", right=True, optional=1), _shape_bytes, ""),
    (Column("unpadded", right=True), lambda e: _bytes(e.unpadded), "-"),
    (
        Column("x", right=True, optional=4),
        lambda e: f"{e.expansion:.2f}" if e.expansion else "",
        "",
    ),
    (Column("shape", SHAPE_ALL_BREAKS), lambda e: printable(_shape(e)), "?"),
    (Column("op_name", OP_NAME_BREAKS), lambda e: printable(e.op_name or ""), ""),
    (Column("instruction", optional=2), instruction_text, ""),
    (Column("type", optional=3), lambda e: printable(e.allocation_type or ""), ""),
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
    sized = [e for e in entries if e.shape_bytes is not None]
    if sized and all(e.unpadded is not None and e.unpadded.bytes == e.shape_bytes for e in sized):
        # the shape's bytes are the unpadded sizes' (TPU): left out early when tight
        used = [(replace(c, optional=4) if c.name == "shape bytes" else c, f) for c, f in used]
    columns = [Column("#", right=True), *(column for column, _ in used)]
    if module_name:
        columns.append(Column("value in the dump", (NAME_BREAKS,)))
    rows = []
    for i, entry in enumerate(entries):
        row = [str(entry.rank or i + 1), *(cell(entry) for _, cell in used)]
        if module_name:
            link = links[i] if i < len(links) else None
            row.append(f"{printable(link.value.value.label)} ({link.rule})" if link else "-")
        rows.append(row)
    total = sum(e.size_bytes for e in report.entries)
    exact = all(e.size.exact for e in report.entries)
    note = (
        f"{len(report.entries)} buffers listed, {'' if exact else '≈'}{human_bytes(total)} in all"
    )
    one_type = _one_type(entries)
    if one_type:
        note += f", all {printable(one_type)}"
    if module_name:
        linked = sum(1 for link in links if link is not None)
        note += f"; {linked} of {len(report.entries)} linked to {printable(module_name)}"
    heading = Text.assemble(("Buffers the text lists", "bold"), (f"  {note}", "dim"))
    return Group(heading, FittedTable(columns, rows))


def _grouped(entries: Sequence[OomEntry], key: str) -> Group:
    """The buffers by scope (the grouped view's rule, from the op_name) or by shape
    (:func:`~hlotop.analysis.oom_entries.group_entries`)."""
    groups = group_entries(entries, key, range(len(entries)))
    total = sum(e.size_bytes for e in entries) or 1
    columns = [
        Column(key, SHAPE_ALL_BREAKS if key == "shape" else OP_NAME_BREAKS),
        *(Column(name, right=True) for name in ("bytes", "share", "buffers")),
    ]
    rows = []
    for g in groups[:15]:
        rows.append(
            [
                printable(g.label),
                ("" if g.exact else "≈") + human_bytes(g.bytes),
                f"{100 * g.bytes / total:.1f}%",
                str(len(g.members)),
            ]
        )
    return Group(Text(f"By {key}", style="bold"), FittedTable(columns, rows))
