"""``hlotop fit DUMP DUMP [DUMP...]``: compiles of one program at several sizes, each
figure fitted as ``a + b * size`` (:mod:`hlotop.analysis.fit`), as text (``--summary``,
the default) and as JSON (``--json``, :mod:`hlotop.report.fit_table`).

The text: the compiles and their sizes; whether the lines are checked and linear; each
figure's line; the figures at each compiled size and each ``--at`` size; with
``--capacity``, the largest size that fits; what grows with the size, by group and by
value."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from hlotop.analysis.fit import CAPACITY_FIGURE, FIGURE_PEAK, FIGURE_REQUIRED, SizeFit
from hlotop.analysis.linear_fit import COMPILED, LINEARITY_THRESHOLD, Line, Prediction
from hlotop.report.fit_table import FitReport
from hlotop.report.fitted_table import Cell, Column, FittedTable, Wrapped
from hlotop.report.grouped_text import key_column
from hlotop.report.text_fit import NAME_BREAKS, PATH_BREAKS, SHAPE_ALL_BREAKS
from hlotop.safe_text import printable
from hlotop.units import human_bytes

MAX_GROUPS = 15
MAX_VALUES = 10
LABELS = {
    FIGURE_PEAK: "XLA's peak",
    FIGURE_REQUIRED: "required (arg + out - alias + temp)",
}


def label(name: str) -> str:
    """A figure's row label: XLA's peak, the capacity's need, or JAX's own name."""
    return LABELS.get(name, name)


def short_label(name: str) -> str:
    """A figure's column header: ``XLA's peak``, ``required``, or JAX's name less its
    ``_size_in_bytes`` (``_in_bytes``): ``temp``, ``peak_memory``."""
    if name == FIGURE_REQUIRED:
        return "required"
    return LABELS.get(name, name.removesuffix("_size_in_bytes").removesuffix("_in_bytes"))


def _bytes(x) -> str:
    """Bytes, fractional or not, in XLA's units (rounded to the byte)."""
    return human_bytes(round(x))


def _percent(x) -> str:
    return f"{float(x):.2%}"


def _shown(fit: SizeFit) -> list[str]:
    """The figures worth a row: those not 0 at every size."""
    return [name for name, line in fit.figures.items() if any(line.bytes)]


def _header(fit: SizeFit) -> Group:
    n = len(fit.compiles)
    if fit.sizes_given:
        said = "the sizes given (--sizes)"
    elif fit.dimensions:
        said = "the size from " + ", ".join(d.describe() for d in fit.dimensions)
    else:  # pragma: no cover - find_sizes refuses this
        said = "the sizes found"
    parts: list = [
        Text.assemble(
            ("hlotop fit", "bold"),
            f"  {printable(fit.program)}: {n} compiles, {printable(said)}",
        )
    ]
    for c, size in zip(fit.compiles, fit.sizes, strict=True):
        path = c.module.files[0].path if c.module.files else c.path
        parts.append(
            Wrapped(printable(str(path)), PATH_BREAKS, indent=13, lead=f" size {size:>5}  ")
        )
    return Group(*parts)


def _linearity(fit: SizeFit) -> Text:
    lines = {name: fit.figures[name] for name in _shown(fit)}
    distinct = len(set(fit.sizes))
    if distinct < 3:
        return Text(
            f"{distinct} sizes: each line goes through both exactly; nothing checks that the "
            "figures grow linearly (a compile at a third size would)",
            style="yellow",
        )
    bent = {name: line for name, line in lines.items() if not line.linear}
    worst = max(lines, key=lambda name: lines[name].max_relative_residual, default=None)
    if not bent:
        off = (
            f" (the furthest: {label(worst)}, {_percent(lines[worst].max_relative_residual)})"
            if worst is not None
            else ""
        )
        return Text(
            f"{distinct} sizes: every figure within {_percent(LINEARITY_THRESHOLD)} of its "
            f"line{off}"
        )
    names = ", ".join(
        f"{label(n)} ({_percent(line.max_relative_residual)} off)" for n, line in bent.items()
    )
    return Text(
        f"Not linear: {names}, more than {_percent(LINEARITY_THRESHOLD)}: those figures are "
        f"not extrapolated outside {min(fit.sizes)}..{max(fit.sizes)}",
        style="bold red",
    )


def _lines_table(fit: SizeFit) -> Group:
    columns = [
        Column("figure"),
        Column("a (at 0)", right=True),
        Column("b (per size)", right=True),
        Column("max residual", right=True),
    ]
    rows: list[list[Cell]] = []
    for name in _shown(fit):
        line = fit.figures[name]
        residual = _percent(line.max_relative_residual) if line.checked else "exact"
        style = "" if line.linear else "bold red"
        rows.append([label(name), _bytes(line.a), _bytes(line.b), Text(residual, style=style)])
    heading = Text.assemble(
        ("Each figure as a + b × size", "bold"), ("  least squares over the compiles", "dim")
    )
    parts: list = [heading, FittedTable(columns, rows)]
    if fit.platform == "tpu" and "temp_size_in_bytes" in _shown(fit):
        parts.append(
            Text(
                "on TPU, temp_size_in_bytes is the dump's preallocated-temp allocations (VMEM "
                "included); libtpu's own comes from its metadata and differs",
                style="dim",
            )
        )
    return Group(*parts)


def _at_table(report: FitReport) -> Group:
    fit = report.fit
    # the figures that change with the size (the others are the same everywhere)
    names = [n for n in _shown(fit) if len(set(fit.figures[n].bytes)) > 1]
    # XLA's peak and the need always; JAX's sizes left out first where they grow least
    growth = sorted(
        (n for n in names if n not in LABELS), key=lambda n: fit.figures[n].b, reverse=True
    )
    optional = {n: k + 1 for k, n in enumerate(growth)}
    columns = [Column("size", right=True), Column("from")]
    columns += [Column(short_label(n), right=True, optional=optional.get(n, 0)) for n in names]
    rows: list[list[Cell]] = []
    notes: list[str] = []
    asked = [(s, p) for s, p in report.at if s not in fit.sizes]
    compiled = [
        (s, {n: Prediction(s, COMPILED, line.bytes[i]) for n, line in fit.figures.items()})
        for i, s in enumerate(fit.sizes)
    ]
    for size, predictions in sorted(compiled + asked, key=lambda sp: sp[0]):
        source = next(iter(predictions.values())).source if predictions else COMPILED
        cells: list[Cell] = [str(size), Text(source, style="" if source == COMPILED else "cyan")]
        for n in names:
            p = predictions[n]
            if p.bytes is None:
                cells.append(Text("refused", style="bold red"))
                notes.append(f"{label(n)} at {size}: {p.refused}")
            elif p.warning:
                cells.append(Text(human_bytes(p.bytes) + "?", style="yellow"))
                notes.append(f"{label(n)} at {size}: {p.warning}")
            else:
                cells.append(human_bytes(p.bytes))
        rows.append(cells)
    same = [n for n in _shown(fit) if n not in names]
    legend = []
    if FIGURE_REQUIRED in names:
        legend.append("required: argument + output - alias + temp, what --capacity measures")
    jax = [short_label(n) for n in names if n not in LABELS]
    if jax:
        legend.append(f"{', '.join(jax)}: JAX's memory_analysis() sizes")

    parts: list = [
        Text.assemble(("At each size", "bold"), ("  the figures that change with it", "dim")),
        FittedTable(columns, rows) if names else Text("No figure changes with the size."),
    ]
    if legend:
        parts.append(Text("; ".join(legend), style="dim"))
    if same:
        parts.append(
            Text(
                "The same at every size: "
                + ", ".join(f"{label(n)} {human_bytes(fit.figures[n].bytes[0])}" for n in same),
                style="dim",
            )
        )
    parts += [Text(printable(note), style="yellow") for note in dict.fromkeys(notes)]
    return Group(*parts)


def _capacity(report: FitReport) -> Text | None:
    if report.capacity is None:
        return None
    largest, what = report.capacity
    text = Text.assemble(
        ("Capacity ", "bold"),
        human_bytes(largest.capacity_bytes),
        (f" ({printable(what.split(' (')[0])})" if what else "", "dim"),
        f" · the largest size whose {CAPACITY_FIGURE} fits: ",
    )
    if largest.size is None:
        style = "bold green" if (largest.note or "").startswith("every size") else "bold red"
        text.append(printable(largest.note or "none"), style=style)
        return text
    text.append(str(largest.size), style="bold green")
    line = report.fit.figures[CAPACITY_FIGURE]
    unchecked = (
        ", from 2 sizes: unchecked" if largest.source != COMPILED and not line.checked else ""
    )
    text.append(f" ({largest.source}{unchecked})", style="dim")
    if largest.bytes is not None and largest.next_bytes is not None:
        text.append(
            f": {human_bytes(largest.bytes)} there (headroom "
            f"{human_bytes(largest.capacity_bytes - largest.bytes)}); {largest.size + 1} "
            f"would need {human_bytes(largest.next_bytes)} (over by "
            f"{human_bytes(largest.next_bytes - largest.capacity_bytes)})"
        )
    if largest.note:
        text.append(f"; {printable(largest.note)}", style="yellow")
    for space in report.fit.growing_elsewhere():
        text.append(
            f"\n{printable(space.name)} grows too, {_bytes(space.line.b)} per size "
            f"({human_bytes(space.line.bytes[-1])} at {max(report.fit.sizes)}), and "
            f"{CAPACITY_FIGURE} leaves it out: once it is full, the compiler places values "
            "in HBM and the figure grows faster than its line",
            style="yellow",
        )
    return text


def _ends(line: Line) -> tuple[str, str]:
    return human_bytes(line.bytes[0]), human_bytes(line.bytes[-1])


def _spaces_table(fit: SizeFit) -> Group | None:
    if len(fit.spaces) < 2:
        return None
    low, high = min(fit.sizes), max(fit.sizes)
    columns = [
        Column("memory space"),
        Column("b (per size)", right=True),
        Column(f"at {low}", right=True),
        Column(f"at {high}", right=True),
        Column("max residual", right=True, optional=1),
    ]
    rows: list[list[Cell]] = [
        [
            printable(f"{s.name} (colour {s.color})"),
            _bytes(s.line.b),
            *_ends(s.line),
            _percent(s.line.max_relative_residual) if s.line.checked else "exact",
        ]
        for s in fit.spaces
    ]
    heading = Text.assemble(
        ("Memory spaces", "bold"), ("  the sizes of their allocations, fitted", "dim")
    )
    return Group(heading, FittedTable(columns, rows))


def _groups_table(fit: SizeFit) -> Group | None:
    growing = [g for g in fit.groups if g.line.b > 0][:MAX_GROUPS]
    if not growing:
        return None
    low, high = min(fit.sizes), max(fit.sizes)
    columns = [key_column(k) for k in fit.keys]
    columns += [
        Column("b (per size)", right=True),
        Column(f"at {low}", right=True),
        Column(f"at {high}", right=True),
    ]
    rows: list[list[Cell]] = [
        [*(printable(k) for k in g.key), _bytes(g.line.b), *_ends(g.line)] for g in growing
    ]
    note = f"live at each compile's XLA peak, {fit.accounting} bytes, the largest growth first"
    heading = Text.assemble(
        (f"What grows with the size, by {', '.join(fit.keys)}", "bold"), (f"  {note}", "dim")
    )
    return Group(heading, FittedTable(columns, rows))


def _values_table(fit: SizeFit) -> Group | None:
    growing = [v for v in fit.values if v.line.b > 0][:MAX_VALUES]
    if not growing:
        return None
    low, high = min(fit.sizes), max(fit.sizes)
    columns = [
        Column("value", (NAME_BREAKS,)),
        Column(f"shape at {high}", SHAPE_ALL_BREAKS, optional=1),
        Column("b (per size)", right=True),
        Column(f"at {low}", right=True),
        Column(f"at {high}", right=True),
    ]
    rows: list[list[Cell]] = [
        [printable(v.name), printable(v.shape), _bytes(v.line.b), *_ends(v.line)] for v in growing
    ]
    matched = sum(1 for v in fit.values if v.line.b > 0)
    note = (
        f"{matched} grow; matched from compile to compile as hlotop diff matches, allocated bytes"
    )
    heading = Text.assemble(("Values that grow the most", "bold"), (f"  {note}", "dim"))
    return Group(heading, FittedTable(columns, rows))


def render_fit(report: FitReport) -> Group:
    """The text of ``hlotop fit`` (see the module's docstring)."""
    fit = report.fit
    parts: list = [_header(fit), Text(""), _linearity(fit), Text("")]
    parts += [_lines_table(fit), Text(""), _at_table(report)]
    capacity = _capacity(report)
    if capacity is not None:
        parts += [Text(""), capacity]
    for block in (_spaces_table(fit), _groups_table(fit), _values_table(fit)):
        if block is not None:
            parts += [Text(""), block]
    return Group(*parts)
