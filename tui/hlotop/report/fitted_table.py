"""A table of dump text fitted to the console's width (80 columns over SSH) without
cutting a number, a name or a shape in the middle: the text columns are narrowed
where that adds the fewest lines, their cells wrapped only where their text allows
a break (an op_name after a ``/``, a shape at a comma or a brace, a name after ``.``
``_`` ``-``); then the columns are one space apart instead of two; then the optional
columns are left out, in their order, and a line under the table says which.
:class:`Wrapped` fits one text (a path) the same way.

Used by the reports whose text columns are long and unbroken (the OOM text's
buffers, the grouped live set, the diff's groups); the peak table of ``--summary``
keeps rules of its own (op_name cut to its end first).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from hlotop.report.text_fit import longest_piece, wrap

GAP = 2  # between two columns, when there is room
MIN_WRAP = 10  # a wrapped column is not made narrower than this (or its header)
MAX_FLOOR = 32  # ... nor kept wider than this for a piece that has no break in it


@dataclass(frozen=True)
class Column:
    """One column: ``breaks`` are where its cells may be wrapped, coarsest first (none:
    a number or a short word, never wrapped, right-justified if ``right``);
    ``optional`` columns are left out when even the narrowest layout is too wide,
    the highest ``optional`` first (0: always shown); a ``whole`` column (a name the
    rows are known by) is wrapped only if leaving them all out is not enough."""

    name: str
    breaks: tuple[re.Pattern[str], ...] = ()
    right: bool = False
    optional: int = 0
    whole: bool = False  # wrapped only when leaving out the optional columns is not enough


Cell = str | Text


class Layout(NamedTuple):
    """The columns shown (indexes into the table's columns), each one's width in
    cells, and the gap between two columns."""

    shown: list[int]
    widths: list[int]
    gap: int


def _lines_len(cell: Cell) -> int:
    text = cell.plain if isinstance(cell, Text) else cell
    return max((cell_len(line) for line in text.split("\n")), default=0)


def _header_floor(column: Column) -> int:
    """The narrowest a wrapped column's header goes: its longest word (the table
    wraps a header between words: "value in" / "the dump")."""
    return max((cell_len(word) for word in column.name.split()), default=0)


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


class FittedTable:
    """``rows`` (one cell a column, a str or a Rich ``Text``) under ``columns``, laid
    out for the console's width when rendered (:meth:`layout`)."""

    def __init__(self, columns: Sequence[Column], rows: Sequence[Sequence[Cell]]):
        self.columns = list(columns)
        self.rows = [list(r) for r in rows]
        self.natural = [
            max([cell_len(c.name)] + [_lines_len(r[i]) for r in self.rows])
            for i, c in enumerate(self.columns)
        ]
        self.floor = [self._floor(i) for i in range(len(self.columns))]
        # the last resort: a wrapped column down to MIN_WRAP, its long pieces folded
        self.least = [
            min(self.natural[i], max(_header_floor(c), MIN_WRAP)) if c.breaks else self.natural[i]
            for i, c in enumerate(self.columns)
        ]
        self._wraps: dict[tuple[int, int], tuple[int, int]] = {}  # (column, width) ->

    def _floor(self, i: int) -> int:
        column = self.columns[i]
        if not column.breaks:
            return self.natural[i]
        pieces = max([longest_piece(_plain(r[i]), *column.breaks) for r in self.rows], default=0)
        least = max(_header_floor(column), MIN_WRAP, min(pieces, MAX_FLOOR))
        return min(self.natural[i], least)

    def _wrapped(self, i: int, width: int) -> tuple[int, int]:
        """Column ``i``'s cells wrapped to ``width``: how many lines they take in all
        (a piece longer than the line counted as the table folds it) and the widest
        line."""
        key = (i, width)
        if key not in self._wraps:
            lines, widest = 0, 0
            breaks = self.columns[i].breaks
            for row in self.rows:
                for line in wrap(_plain(row[i]), width, *breaks).split("\n"):
                    cells = cell_len(line)
                    lines += max(1, -(-cells // width))
                    widest = max(widest, min(cells, width))
            self._wraps[key] = lines, widest
        return self._wraps[key]

    def _fit(
        self, shown: list[int], gap: int, width: int, floor: list[int] | None = None
    ) -> list[int] | None:
        """The widths of ``shown`` within ``width``, or None if even the floors are too
        wide. From every column at its natural width, the wrapped columns are narrowed
        step by step, each step where it adds the fewest lines (to the widest line of
        the next narrower wrap, so a step that adds none goes as far as it can)."""
        floor = floor or self.floor
        room = width - gap * (len(shown) - 1)
        if sum(floor[i] for i in shown) > room:
            return None
        widths = {i: self.natural[i] for i in shown}
        while sum(widths.values()) > room:
            steps = []
            for i in shown:
                if widths[i] <= floor[i]:
                    continue
                lines, _ = self._wrapped(i, widths[i])
                more, widest = self._wrapped(i, widths[i] - 1)
                steps.append((more - lines, -widths[i], i, max(widest, floor[i])))
            _, _, i, narrower = min(steps)
            widths[i] = narrower
        return [widths[i] for i in shown]

    def layout(self, width: int) -> Layout:
        """The layout at ``width`` cells: every column at two cells apart, else one,
        else without the optional columns one by one, else with the wrapped columns
        down to :data:`MIN_WRAP` (their longest pieces folded); if nothing fits (a
        terminal narrower than the numbers), every column at that, left to the table
        to fold. A :attr:`Column.whole` column is kept whole while an optional column
        can go instead."""
        by_option = sorted(
            (i for i, c in enumerate(self.columns) if c.optional),
            key=lambda i: -self.columns[i].optional,
        )
        whole = [self.natural[i] if c.whole else self.floor[i] for i, c in enumerate(self.columns)]
        floors = [whole, self.floor] if any(c.whole for c in self.columns) else [self.floor]
        for floor in floors:
            shown = list(range(len(self.columns)))
            for gap in (GAP, 1):
                fitted = self._fit(shown, gap, width, floor)
                if fitted is not None:
                    return Layout(shown, fitted, gap)
            for i in by_option:
                shown = [j for j in shown if j != i]
                fitted = self._fit(shown, 1, width, floor)
                if fitted is not None:
                    return Layout(shown, fitted, 1)
        fitted = self._fit(shown, 1, width, self.least)
        return Layout(shown, fitted or [self.least[i] for i in shown], 1)

    def _cell(self, cell: Cell, column: Column, width: int) -> Text:
        """The cell wrapped to ``width``, as a ``Text`` (dump text is never markup)."""
        if isinstance(cell, Text):
            if not column.breaks or cell.spans or _lines_len(cell) <= width:
                return cell  # (styled in parts: left to the table to fold)
            return Text(wrap(cell.plain, width, *column.breaks), style=cell.style)
        if column.breaks and _lines_len(cell) > width:
            cell = wrap(cell, width, *column.breaks)
        return Text(cell)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        shown, widths, gap = self.layout(options.max_width)
        table = Table(box=None, pad_edge=False, collapse_padding=gap < GAP)
        for i, width in zip(shown, widths, strict=True):
            column = self.columns[i]
            narrowed = width < self.natural[i]
            table.add_column(
                column.name,
                justify="right" if column.right else "left",
                no_wrap=column.right,
                overflow="fold",
                width=width if narrowed else None,
            )
        for row in self.rows:
            table.add_row(
                *(
                    self._cell(row[i], self.columns[i], width)
                    for i, width in zip(shown, widths, strict=True)
                )
            )
        yield table
        left_out = [c.name for i, c in enumerate(self.columns) if i not in shown]
        if left_out:
            yield Text(
                f"left out at {options.max_width} columns: {', '.join(left_out)} (--json has them)",
                style="dim",
            )


class Wrapped:
    """One text (a path, a list of files) wrapped to the console's width where it
    allows a break (``breaks``, coarsest first), in ``style``: its first line after
    ``lead`` (a label), the others after ``indent`` spaces; a piece longer than a line
    is folded."""

    def __init__(
        self,
        text: str,
        breaks: tuple[re.Pattern[str], ...],
        indent: int = 0,
        style: str = "",
        lead: str | None = None,
    ):
        self.text, self.breaks, self.indent, self.style = text, breaks, indent, style
        self.lead = " " * indent if lead is None else lead

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        margin = max(cell_len(self.lead), self.indent)
        width = max(options.max_width - margin, MIN_WRAP)
        for k, line in enumerate(wrap(self.text, width, *self.breaks).split("\n")):
            pad = self.lead if k == 0 else " " * self.indent
            yield Text(pad + line, style=self.style, overflow="fold")
