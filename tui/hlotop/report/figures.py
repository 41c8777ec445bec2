"""The figure tables of ``--summary``: the peak figures, JAX's ``memory_analysis()``,
the allocations by kind, the memory spaces and their padding. Each row says whose
figure it is: XLA's, JAX's, or hlotop's own under a name of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from parsy import ParseError
from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.analysis.padding import most_padded
from hlotop.model import MemoryStats, ModuleDump, ValueInfo
from hlotop.model.memory_space import space_style
from hlotop.report.fitted_table import Cell, Column, FittedTable
from hlotop.report.text_fit import NAME_BREAKS, SHAPE_ALL_BREAKS, WORD_BREAKS
from hlotop.safe_text import printable
from hlotop.units import human_bytes, with_commas

if TYPE_CHECKING:  # imported where used: a dump with no padding needs none of it
    from hlotop.analysis.padding_advice import PaddingAdvice

PADDED_PER_SPACE = 3  # values listed per memory space under "Most padding"

ALIAS_NOTES = {
    "input_output_alias": "aliases from the HLO text's input_output_alias",
    "parameter and maybe-live-out": "aliases: parameters also maybe-live-out "
    "(no HLO text beside the dump)",
}
TPU_TEMP_NOTE = (
    "on TPU, temp is the dump's preallocated-temp allocations (VMEM included); "
    "libtpu's temp_size_in_bytes comes from its own metadata (compiler scratch) and differs"
)


def _heading(title: str, note: str) -> Text:
    return Text.assemble((title, "bold"), (f"  {note}", "dim"))


def _bytes(n: int) -> Text:
    return Text(f"{human_bytes(n)}  ({with_commas(n)} B)")


def peak_rows(module: ModuleDump) -> list[tuple[str, Text]]:
    """The overview's rows about the peak: XLA's figure, then hlotop's two measures,
    each with what it counts. Empty without live ranges."""
    a = module.analysis
    if a.peak_step is None:
        return []
    live = module.live_range
    if module.preview is not None:  # a big dump's first look: no values or live ranges yet
        return _first_look_peak_rows(module)
    if a.peak_bytes_source == "list" and live is not None and live.peak is not None:
        how = f"  the sum of XLA's list 'Live ranges at {live.peak.time} (peak)'"
    else:
        how = f"  XLA's sweep at step {a.peak_step} (the dump prints no peak list)"
    rows = [("XLA's peak", Text.assemble(_bytes(a.peak_bytes), (how, "dim")))]
    rows.append(
        (
            "Logical at peak",
            Text.assemble(
                _bytes(a.peak_logical_bytes),
                (
                    "  hlotop: each live value at its own shape, padding ignored"
                    + (
                        ""
                        if a.peak_logical_bytes == a.peak_bytes
                        else "; XLA's counts a tuple's value as the whole tuple"
                    ),
                    "dim",
                ),
            ),
        )
    )
    rows.append(
        (
            "Occupied at peak",
            Text.assemble(
                _bytes(a.peak_occupied_bytes),
                (
                    "  hlotop: allocation space those values use, padding included, "
                    "shared slices once",
                    "dim",
                ),
            ),
        )
    )
    return rows


_LOADING = Text("loading… (with the values and live ranges)", style="italic")


def _first_look_peak_rows(module: ModuleDump) -> list[tuple[str, Text]]:
    """:func:`peak_rows` of a first look: XLA's printed figure if it was added up, and
    hlotop's measures as still loading."""
    a = module.analysis
    if a.peak_bytes_source == "list":
        how = f"  the sum of XLA's list 'Live ranges at {a.peak_step} (peak)'"
        xla = Text.assemble(_bytes(a.peak_bytes), (how, "dim"))
    else:
        xla = Text(f"at step {a.peak_step}; its bytes: loading…", style="italic")
    return [("XLA's peak", xla), ("Logical at peak", _LOADING), ("Occupied at peak", _LOADING)]


PEAK_MEMORY_NOTES = {
    "static": "XLA's CPU rule: arguments, constants, outputs",
    "static+temp": "XLA's GPU rule: arguments, constants, outputs + temp peak",
}


def _peak_memory_cells(stats: MemoryStats, platform: str) -> tuple[str, str, Text]:
    """The ``peak_memory_in_bytes`` row's device, host and note cells (jax >= 0.11)."""
    rule = stats.peak_memory_rule
    if stats.peak_memory_in_bytes is not None and rule is not None:
        return (
            human_bytes(stats.peak_memory_in_bytes),
            "",
            Text(PEAK_MEMORY_NOTES[rule], style="dim"),
        )
    why = (
        "libtpu's own rule: not in the dump"
        if platform == "tpu"
        else "needs the live ranges and a known platform"
    )
    return "-", "", Text(why, style="dim")


def memory_stats_table(module: ModuleDump) -> Group | None:
    """JAX's ``memory_analysis()`` sizes by XLA's rule, device and host; None without
    allocations."""
    a = module.analysis
    stats = a.memory_stats
    if stats is None:
        return None
    table = Table(box=None, pad_edge=False)
    table.add_column("figure")
    table.add_column("device", justify="right")
    table.add_column("host", justify="right")
    table.add_column("")
    figures = stats.as_dict()
    for name in ("argument", "output", "alias", "temp"):
        note = ""
        if name == "alias":
            note = ALIAS_NOTES[stats.alias_source]
        elif name == "temp" and a.platform == "tpu":
            note = "see below"
        table.add_row(
            f"{name}_size_in_bytes",
            human_bytes(figures[f"{name}_size_in_bytes"]),
            human_bytes(figures[f"host_{name}_size_in_bytes"]),
            Text(note, style="dim"),
        )
    table.add_row("peak_memory_in_bytes", *_peak_memory_cells(stats, a.platform))
    parts: list[Text | Table] = [
        _heading("memory_analysis()", "JAX's figures, by XLA's rule from the allocations")
    ]
    parts.append(table)
    if a.platform == "tpu":
        parts.append(Text(TPU_TEMP_NOTE, style="dim"))
    return Group(*parts)


def kinds_table(module: ModuleDump) -> Group:
    """Bytes and allocations by kind, each allocation once (they add up to the total)."""
    a = module.analysis
    table = Table(box=None, pad_edge=False)
    table.add_column("kind")
    table.add_column("bytes", justify="right")
    table.add_column("allocations", justify="right")
    for kind, size in a.totals_by_kind.items():
        count = a.allocations_by_kind[kind]
        if count:
            table.add_row(kind, human_bytes(size), f"{with_commas(count)}")
    return Group(
        _heading("By allocation kind", "each allocation once, under its first kind"), table
    )


def spaces_table(module: ModuleDump) -> Group:
    """Each memory space: XLA's name and the dump's label, its allocations, the peak of
    its occupied bytes and its padding."""
    a = module.analysis
    table = Table(box=None, pad_edge=False)
    labels = any(space.dump_name for space in a.memory_spaces)
    table.add_column("memory space", no_wrap=True)
    if labels:
        table.add_column("label", no_wrap=True)
    table.add_column("bytes", justify="right")
    table.add_column("allocations", justify="right")
    table.add_column("peak", justify="right")
    table.add_column("step", justify="right")
    table.add_column("padding", justify="right")
    first_look = module.preview is not None  # no values or live ranges yet
    for space in a.memory_spaces:
        cells = [Text(f"{space.name} (color {space.color})", style=space_style(space.color))]
        if labels:
            cells.append(Text(printable(space.dump_name or "")))
        cells += [Text(human_bytes(space.total_bytes)), Text(f"{with_commas(space.allocations)}")]
        if first_look:
            cells += [Text("…", style="italic")] * 3
        else:
            cells += [
                Text(human_bytes(space.peak_bytes) if space.peak_step is not None else "-"),
                Text(str(space.peak_step) if space.peak_step is not None else "-"),
                Text(human_bytes(space.padding_bytes)),
            ]
        table.add_row(*cells)
    note = "label: the dump's own; peak: most bytes occupied at once"
    if first_look:
        note += "; peak and padding: loading…"
    return Group(_heading("By memory space", note), table)


_PADDING_COLUMNS: tuple[tuple[str, Literal["left", "right"]], ...] = (
    ("space", "left"),
    ("value", "left"),
    ("logical", "right"),
    ("allocated", "right"),
    ("x", "right"),
    ("cause", "left"),
    ("shape", "left"),
)


def _cause(advice: PaddingAdvice | None) -> str:
    """``dim 1 513→520`` for each dimension the tile rounds up (``scalar→512`` for a
    rank-0 value's whole tile); ``""`` for padding no tile explains (a tuple's table)."""
    if advice is None:
        return ""
    parts = []
    for c in advice.causes:
        where = "scalar" if c.dim is None else f"dim {c.dim} {c.size}"
        parts.append(f"{where}→{c.rounded}")
    return ", ".join(parts)


_PADDING_BREAKS = {
    "space": (WORD_BREAKS,),
    "value": (NAME_BREAKS,),
    "cause": (WORD_BREAKS,),
    "shape": SHAPE_ALL_BREAKS,
}


def padding_table(module: ModuleDump) -> Group | None:
    """The values with the most tiling padding in each memory space that has any, with
    the dimension the tile rounds up (:mod:`hlotop.analysis.padding_advice`) and, for
    the most padded, what a better size would save; None when nothing is padded."""
    a = module.analysis
    rows = []
    for space in a.memory_spaces:
        if space.padding_bytes:
            rows += [(space, v) for v in most_padded(a.values, space.color, PADDED_PER_SPACE)]
    if not rows:
        return None
    # Fitted, not cut: at 80 columns a cut value name ("reduce_sum.4…") stood for
    # three values; names wrap after . _ -, shapes at their commas and braces.
    columns = [
        Column(name, _PADDING_BREAKS.get(name, ()), right=justify == "right", whole=name == "value")
        for name, justify in _PADDING_COLUMNS
    ]
    advices = [advise_quietly(v) for _, v in rows]
    cells: list[list[Cell]] = []
    for (space, v), advice in zip(rows, advices, strict=True):
        cells.append(
            [
                Text(space.name, style=space_style(space.color)),
                Text(printable(v.value.label)),
                human_bytes(v.logical_bytes),
                human_bytes(v.allocated_bytes),
                f"{v.allocated_bytes / v.logical_bytes:.2f}×" if v.logical_bytes else "-",
                Text(_cause(advice)),
                Text(printable(v.shape or "?")),
            ]
        )
    parts: list[Text | FittedTable] = [
        _heading("Most padding", "allocated minus logical bytes, by the tile's rounding"),
        FittedTable(columns, cells),
    ]
    best = max(
        (x for x in advices if x is not None and x.causes),
        key=lambda x: x.padding_bytes,
        default=None,
    )
    if best is not None:
        cause = max(best.causes, key=lambda c: c.wasted_bytes)
        parts.append(Text(f"{printable(best.label)}: {cause.reason}", style="dim"))
    return Group(*parts)


def advise_quietly(info: ValueInfo) -> PaddingAdvice | None:
    """:func:`hlotop.analysis.padding_advice.advise`, None where the shape does not
    read."""
    from hlotop.analysis.padding_advice import advise

    try:
        return advise(info)
    except (ParseError, KeyError):
        return None
