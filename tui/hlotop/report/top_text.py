"""``hlotop --summary --top [N]`` and ``--summary --icicle``: the grouped live set as
pprof's ``top`` and as an icicle, from its tree of frames
(:mod:`hlotop.analysis.group_stacks`).

The top table has pprof's columns: ``flat`` (the bytes of a node's own values),
``flat%`` (of the step's total), ``sum%`` (the flat% of this row and every row above
it), ``cum`` (the bytes of its values and of every node under it) and ``cum%``; the
largest flat bytes first. The icicle draws every node as a bar on one line, where it
lies among the step's total bytes: a node's bar lies within its parent's (drawn light
around it), its children's side by side under it, the largest first; nodes narrower
than a cell of the bar are counted on the last line, not drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text

from hlotop.analysis.group_stacks import StackNode, stack_tree, top_nodes
from hlotop.analysis.grouping import Grouping
from hlotop.report.fitted_table import Column, FittedTable
from hlotop.report.grouped_text import ACCOUNTING_NOTES
from hlotop.report.text_fit import OP_NAME_BREAKS
from hlotop.safe_text import printable
from hlotop.units import human_bytes

DEFAULT_TOP = 10  # rows of --top without a number (pprof's top shows 10 nodes)
_FULL, _AROUND = "█", "░"
# Each top-level node and what is under it in one colour (a flame graph's look).
_COLOURS = ("dark_orange", "dodger_blue2", "green3", "orchid", "gold3", "turquoise2")
BYTES_W = 9
SHARE_W = 6


def _percent(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"


def heading(grouping: Grouping, what: str) -> Text:
    """``Live set at step 367 by scope: top 10 ...`` and the accounting, dim."""
    return Text.assemble(
        (f"Live set at step {grouping.step} by {', '.join(grouping.keys)}: {what}", "bold"),
        (f"  {ACCOUNTING_NOTES[grouping.accounting]}", "dim"),
    )


def top_table(grouping: Grouping, count: int = DEFAULT_TOP) -> Group:
    """pprof's ``top`` of ``grouping``'s tree of frames: its ``count`` nodes of most
    flat bytes (see the module's docstring), under a line saying how many nodes there
    are and what the rows shown account for."""
    root = stack_tree(grouping)
    nodes = top_nodes(root)
    total = root.cum
    shown = nodes[: max(count, 0)]
    columns = [
        *(Column(name, right=True) for name in ("flat", "flat%", "sum%", "cum", "cum%")),
        Column("name", OP_NAME_BREAKS),
    ]
    rows = []
    running = root.flat  # a stack with no frame (an empty scope): the root's own
    for node in shown:
        running += node.flat
        rows.append(
            [
                human_bytes(node.flat),
                _percent(node.flat, total),
                _percent(running, total),
                human_bytes(node.cum),
                _percent(node.cum, total),
                printable(node.name()),
            ]
        )
    note = Text(
        f"Showing {len(shown)} of {len(nodes)} nodes, accounting for {human_bytes(running)}, "
        f"{_percent(running, total)} of {human_bytes(total)} total",
        style="dim",
    )
    return Group(heading(grouping, f"top {len(shown)}"), note, FittedTable(columns, rows))


@dataclass(frozen=True, slots=True)
class IcicleLine:
    """One drawn line of an icicle: its node and its text."""

    node: StackNode
    text: Text


def bar_width(width: int) -> int:
    """Cells of the bars on a ``width``-column line: the rest holds the bytes, the
    share and a label of 20 cells at least; half the line on a wide one."""
    return max(10, min(width // 2, width - (BYTES_W + SHARE_W + 4 + 20)))


def icicle_lines(
    root: StackNode, width: int, *, plain: bool = False
) -> tuple[list[IcicleLine], list[StackNode]]:
    """The lines of an icicle of ``root``'s tree ``width`` columns wide (see the
    module's docstring): the root, then each node at least one cell of the bar wide,
    depth first, largest first; and the nodes left out (each narrower than a cell, or
    under one that is). ``plain``: no colours (NO_COLOR)."""
    bars = bar_width(width)
    total = root.cum
    lines: list[IcicleLine] = []
    left_out: list[StackNode] = []

    def cell(n: int) -> int:
        return round(n * bars / total) if total else 0

    def visit(node: StackNode, parent: StackNode | None, colour: str) -> None:
        start, stop = cell(node.start), cell(node.start + node.cum)
        if stop <= start:
            left_out.extend(node.walk())
            return
        outer = (cell(parent.start), cell(parent.start + parent.cum)) if parent else (start, stop)
        text = Text(no_wrap=True, end="")
        text.append(" " * outer[0])
        text.append(_AROUND * (start - outer[0]), style="" if plain else "dim")
        text.append(_FULL * (stop - start), style="" if plain else colour)
        text.append(_AROUND * (outer[1] - stop), style="" if plain else "dim")
        text.append(" " * (bars - outer[1]))
        text.append(f" {human_bytes(node.cum):>{BYTES_W}} {_percent(node.cum, total):>{SHARE_W}}  ")
        text.append("  " * max(node.depth - 1, 0))
        text.append(printable(node.label), style="bold" if node.depth <= 1 else "")
        lines.append(IcicleLine(node, text))
        for i, child in enumerate(node.children):
            visit(child, node, _COLOURS[i % len(_COLOURS)] if node is root else colour)

    visit(root, None, "bold")
    return lines, left_out


def left_out_note(left_out: list[StackNode]) -> Text | None:
    """The last line of an icicle: how many nodes were too narrow to draw and their
    bytes (their own, so that nested ones count once); None when none were."""
    if not left_out:
        return None
    flat = sum(n.flat for n in left_out)
    return Text(
        f"{len(left_out)} nodes narrower than a cell not drawn ({human_bytes(flat)} of values)",
        style="dim",
    )


class Icicle:
    """``grouping``'s icicle at the console's width (a Rich renderable)."""

    def __init__(self, grouping: Grouping):
        self.grouping = grouping
        self.root = stack_tree(grouping)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield heading(self.grouping, f"{human_bytes(self.root.cum)} as an icicle")
        lines, left_out = icicle_lines(self.root, options.max_width, plain=console.no_color)
        for line in lines:
            text = line.text.copy()
            text.end = "\n"
            text.truncate(options.max_width, overflow="ellipsis")
            yield text
        note = left_out_note(left_out)
        if note is not None:
            yield note
