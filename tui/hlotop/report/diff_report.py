"""``hlotop diff OLD NEW``: the comparison of two compiles as text (``--summary``) and
as a CI gate (``--fail-over``); its JSON (``--json``) is :mod:`hlotop.report.diff_table`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from hlotop.analysis.diff import CLASSES, MATCH_KEYS, ModuleDiff, Side, ValueChange
from hlotop.report.fitted_table import Cell, Column, FittedTable, Wrapped
from hlotop.report.grouped_text import key_column
from hlotop.report.text_fit import NAME_BREAKS, PATH_BREAKS, SHAPE_ALL_BREAKS, WHOLE_SHAPE, wrap
from hlotop.safe_text import printable
from hlotop.units import human_bytes, parse_human_bytes

MAX_GROUPS = 25
MAX_VALUES = 15
NEW_LARGE_SHARE = 0.01  # a group only in NEW at least this share of NEW's peak is flagged


@dataclass(frozen=True, slots=True)
class Threshold:
    """``--fail-over``: a size in bytes, or a percentage of OLD's figure."""

    bytes: int | None = None
    percent: float | None = None

    @classmethod
    def parse(cls, text: str) -> Threshold:
        """``"5%"``, ``"512MiB"``, ``"1.5GiB"`` or ``"1048576"`` (bytes). Raises
        ValueError for anything else."""
        text = text.strip()
        try:
            if text.endswith("%"):
                return cls(percent=float(text[:-1]))
            if text.isdigit():
                return cls(bytes=int(text))
            return cls(bytes=parse_human_bytes(text))
        except ValueError:
            raise ValueError(
                f"--fail-over {text!r}: give a percentage (5%) or a size (512MiB, 1.5GiB, 1048576)"
            ) from None

    def exceeded(self, old: int, new: int) -> bool:
        growth = new - old
        if self.percent is not None:
            return growth > old * self.percent / 100 if old else growth > 0
        return growth > (self.bytes or 0)

    def __str__(self) -> str:
        return f"{self.percent:g}%" if self.percent is not None else human_bytes(self.bytes or 0)


def gate(diff: ModuleDiff, threshold: Threshold) -> str | None:
    """The one line ``--fail-over`` prints when NEW's XLA peak or total bytes exceed
    OLD's by more than ``threshold``; None when neither does."""
    for label, old, new in (
        ("XLA's peak", diff.old.peak_bytes, diff.new.peak_bytes),
        ("total bytes used", diff.old.total_bytes, diff.new.total_bytes),
    ):
        if threshold.exceeded(old, new):
            return (
                f"hlotop diff: {label} grew by {growth(old, new)}, "
                f"from {human_bytes(old)} to {human_bytes(new)}: over the {threshold} allowed"
            )
    return None


def percent(old: int, new: int) -> str:
    """``+84.8%``, ``-13.9%``, ``from 0B`` (growth from nothing: no percent, and not
    "new": a figure of 0 bytes, such as an empty memory space's peak, was there) or
    ``0%``."""
    if not old:
        return f"from {human_bytes(0)}" if new else "0%"
    return f"{100 * (new - old) / old:+.1f}%"


def growth(old: int, new: int) -> str:
    """How much NEW grew: ``2.68MiB (+16.1%)``, or without a percent from 0 bytes (the
    line goes on "from 0B to ...")."""
    grew = human_bytes(new - old)
    return f"{grew} ({percent(old, new)})" if old else grew


def signed(delta: int) -> str:
    """``+4.00MiB``, ``-768.0KiB`` or ``0B``."""
    return ("+" if delta > 0 else "") + human_bytes(delta)


def change_style(delta: int, flat: bool = False) -> str:
    """Red for growth, green for shrinking, dim for none; bold when ``flat`` (no
    colours: ``NO_COLOR``; the sign says which)."""
    if not delta:
        return "dim"
    if flat:
        return "bold"
    return "red" if delta > 0 else "green"


def change_text(old: int, new: int, flat: bool = False, with_percent: bool = True) -> Text:
    """NEW minus OLD as ``+65.93MiB (+84.8%)``, coloured by :func:`change_style`."""
    delta = new - old
    if not delta:
        return Text("0B", style="dim")
    body = signed(delta) + (f" ({percent(old, new)})" if with_percent else "")
    return Text(body, style=change_style(delta, flat))


def _figures(side: Side) -> dict[str, int | None]:
    out: dict[str, int | None] = {
        "Total bytes used": side.total_bytes,
        "XLA's peak": side.peak_bytes,
    }
    out.update({name: size for name, size in side.memory_stats.items()})
    out.update({f"{name} occupied peak": size for name, size in side.space_peaks.items()})
    return out


def render_diff(diff: ModuleDiff) -> Group:
    """The ``--summary`` of a diff: the headline figures, the values' changes, the
    groups by absolute change and the largest value changes."""
    head = Table(box=None, pad_edge=False)
    head.add_column("figure")
    for name in ("OLD", "NEW", "change"):
        head.add_column(name, justify="right")
    old, new = _figures(diff.old), _figures(diff.new)
    for label in dict.fromkeys([*old, *new]):
        a, b = old.get(label) or 0, new.get(label) or 0
        head.add_row(label, human_bytes(a), human_bytes(b), change_text(a, b))
    steps = f"XLA's peak step: OLD {diff.old.peak_step}, NEW {diff.new.peak_step}"
    # Each side's file beside its label, wrapped under the path after a / . _ -.
    files = [
        Wrapped(
            printable(side.module.files[0].path if side.module.files else side.module.name),
            PATH_BREAKS,
            indent=5,
            lead=f" {label} ",
        )
        for label, side in (("OLD", diff.old), ("NEW", diff.new))
    ]
    parts: list = [
        Text("hlotop diff", style="bold"),
        *files,
        Text(""),
        head,
        Text(steps, style="dim"),
        Text(""),
        _values_line(diff),
    ]
    shown = curves(diff)
    if shown is not None:
        parts += [Text(""), shown]
    if diff.groups:
        parts += [Text(""), _groups_table(diff)]
    moved = sorted(
        (c for c in diff.changes if c.change in ("added", "removed", "grown", "shrunk")),
        key=lambda c: (-abs(c.delta_bytes), c.change),
    )[:MAX_VALUES]
    if moved:
        parts += [Text(""), _values_table(moved)]
    return Group(*parts)


CURVE_WIDTH = 60
_EIGHTHS = " ▁▂▃▄▅▆▇█"


def resample(curve: Sequence[int], width: int) -> list[int]:
    """``curve`` (bytes per step) as ``width`` columns over the program's length, each
    the maximum of the steps it covers; [] for an empty curve."""
    if not curve:
        return []
    n = len(curve)
    return [
        max(curve[c * n // width : max(c * n // width + 1, (c + 1) * n // width)])
        for c in range(width)
    ]


def curves(diff: ModuleDiff, width: int = CURVE_WIDTH) -> Group | None:
    """Both sides' occupied bytes of their main memory space (colour 0) over the
    program, each scaled to its own schedule's length, on one axis (the larger
    maximum), and the difference: ``▲`` where NEW holds more, ``▼`` less."""
    old = diff.old.module.analysis.occupied_bytes.get(0, [])
    new = diff.new.module.analysis.occupied_bytes.get(0, [])
    if not old or not new:
        return None
    a, b = resample(old, width), resample(new, width)
    top = max(max(a), max(b)) or 1

    def row(values: list[int]) -> str:
        return "".join(_EIGHTHS[min(8, round(v * 8 / top))] for v in values)

    marks = "".join(
        "▲" if y - x > top / 100 else "▼" if x - y > top / 100 else "·"
        for x, y in zip(a, b, strict=True)
    )
    name = (
        diff.old.module.analysis.memory_spaces[0].name
        if diff.old.module.analysis.memory_spaces
        else "0"
    )
    heading = Text.assemble(
        (f"{name} occupied over the program", "bold"), (f"  top {human_bytes(top)}", "dim")
    )
    return Group(  # each line within 80 columns (CURVE_WIDTH and 4)
        heading,
        Text(f"OLD {row(a)}"),
        Text(f"NEW {row(b)}"),
        Text(f"    {marks}", style="dim"),
        Text("    each side scaled to its schedule; ▲ more in NEW, ▼ less", style="dim"),
    )


def _values_line(diff: ModuleDiff) -> Text:
    matched = [c for c in diff.changes if c.matched_by is not None]
    by = ", ".join(f"{sum(1 for c in matched if c.matched_by == k)} by {k}" for k in MATCH_KEYS)
    counts = ", ".join(f"{diff.count(k)} {k}" for k in CLASSES if diff.count(k))
    return Text.assemble(("Values", "bold"), f"  {len(matched)} matched ({by}); {counts or 'none'}")


def _groups_table(diff: ModuleDiff) -> Group:
    columns = [key_column(key) for key in diff.keys]
    columns += [Column(name, right=True) for name in ("OLD", "NEW", "change")]
    columns.append(Column(""))
    big = diff.new.peak_bytes * NEW_LARGE_SHARE
    rows: list[list[Cell]] = []
    for g in diff.groups[:MAX_GROUPS]:
        if not g.delta_bytes:
            continue
        flag = "new, large" if not g.in_old and g.new_bytes >= big else ""
        rows.append(
            [
                *(printable(k) for k in g.key),
                human_bytes(g.old_bytes),
                human_bytes(g.new_bytes),
                change_text(g.old_bytes, g.new_bytes),
                Text(flag, style="bold red"),
            ]
        )
    note = f"live at each side's peak, {diff.accounting} bytes, largest change first"
    heading = Text.assemble((f"By {', '.join(diff.keys)}", "bold"), (f"  {note}", "dim"))
    return Group(heading, FittedTable(columns, rows))


def _name(info) -> str:
    return printable(info.value.label) if info is not None else "-"


RESHAPED = "→"  # between OLD's and NEW's shapes of a value matched at another shape
_RESHAPED_BREAK = re.compile(rf"(?<={RESHAPED} )")


def shape_change(c: ValueChange) -> str:
    """The value's shape as printed, once when both sides print it alike, else ``OLD
    → NEW`` (one instruction at two shapes, :attr:`ValueChange.reshaped`, or a layout
    changed); an added or removed value's own."""
    if c.old is None or c.new is None:
        either = c.new if c.old is None else c.old
        return printable((either.shape if either is not None else None) or "?")
    old, new = printable(c.old.shape or "?"), printable(c.new.shape or "?")
    return old if old == new else f"{old} {RESHAPED} {new}"


def matched_text(c: ValueChange) -> str:
    """The key that matched the pair (``op_name``), ``, reshaped`` added when its
    shapes differ; "" for an added or removed value."""
    if c.matched_by is None:
        return ""
    return c.matched_by + (", reshaped" if c.reshaped else "")


def _value(c: ValueChange) -> str:
    """The value on both sides: its name once if the two are named alike, else
    ``old → new`` (an added or removed value: the side it is on)."""
    if c.old is None or c.new is None:
        return _name(c.new if c.old is None else c.old)
    old, new = _name(c.old), _name(c.new)
    return old if old == new else f"{old} → {new}"


class ValuesTable:
    """The largest value changes, fitted to the console's width (80 columns over SSH)
    without cutting a name, a shape or a size: the value named once on both sides;
    when too wide, the "matched by" column left out, then the names wrapped after a
    dot, a dash or an underscore and the shapes at their commas and braces."""

    GAP = 2  # between two columns
    COLUMNS = ("change", "matched by", "value", "shape", "delta")

    def __init__(self, changes: list[ValueChange]):
        self.rows: list[tuple[str, str, str, str, Text]] = []
        for c in changes:
            old_bytes = c.old.allocated_bytes if c.old else 0
            new_bytes = c.new.allocated_bytes if c.new else 0
            self.rows.append(
                (
                    c.change,
                    matched_text(c),
                    _value(c),
                    shape_change(c),
                    change_text(old_bytes, new_bytes),
                )
            )

    def layout(self, width: int) -> tuple[list[str], dict[str, int]]:
        """The columns shown at ``width`` and the widths the value and the shape are
        wrapped to (none if they fit)."""
        widths = {
            name: max([cell_len(name)] + [_cells(row[k]) for row in self.rows])
            for k, name in enumerate(self.COLUMNS)
        }
        columns = list(self.COLUMNS)

        def total(shown: list[str]) -> int:
            return sum(widths[c] for c in shown) + self.GAP * (len(shown) - 1)

        if total(columns) <= width:
            return columns, {}
        columns.remove("matched by")
        if total(columns) <= width:
            return columns, {}
        # Shapes of up to WHOLE_SHAPE columns stay whole (as in --summary's peak
        # table); the names take what is left, a third of the room at least.
        room = width - total(["change", "delta"]) - 3 * self.GAP
        value = min(widths["value"], max(room - min(widths["shape"], WHOLE_SHAPE), room // 3))
        value = max(value, cell_len("value"))
        return columns, {"value": value, "shape": max(room - value, cell_len("shape"))}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        columns, narrow = self.layout(options.max_width)
        table = Table(box=None, pad_edge=False)
        for column in columns:
            right = column == "delta"
            table.add_column(
                column, justify="right" if right else "left", no_wrap=right, overflow="fold"
            )
        for change, matched, value, shape, delta in self.rows:
            if narrow:
                value = wrap(value, narrow["value"], NAME_BREAKS)
                shape = wrap(shape, narrow["shape"], _RESHAPED_BREAK, *SHAPE_ALL_BREAKS)
            cells: dict[str, str | Text] = dict(
                zip(self.COLUMNS, (change, matched, value, shape, delta), strict=True)
            )
            table.add_row(*(Text(x) if isinstance(x, str) else x for x in map(cells.get, columns)))
        yield table


def _cells(text: str | Text) -> int:
    return text.cell_len if isinstance(text, Text) else cell_len(text)


def _values_table(changes: list[ValueChange]) -> Group:
    return Group(
        Text("Largest value changes  (allocated bytes)", style="bold"), ValuesTable(changes)
    )
