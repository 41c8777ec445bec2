"""Fitting dump text (names, shapes, op_names) into a table column of the console's
width without cutting a number or a word: wrapped where the text allows a break, or
shortened to its end. Shared by the reports' narrow tables (80 columns over SSH)."""

from __future__ import annotations

import re

from rich.cells import cell_len

ELEMENT_BREAKS = re.compile(r"(?<=, )")  # between a tuple shape's elements
SHAPE_BREAKS = re.compile(r"(?=\{)|(?<=:)")  # in an element: before its layout, after ":"
DIM_BREAKS = re.compile(r"(?<=,)|(?=[{(])")  # in a piece still too long: after a comma
# a name after . _ - (or a run of them), never inside an arrow (an einsum's bhqk,bkhd->bqhd)
NAME_BREAKS = re.compile(r"(?<=[._\-])(?![._\->])")
SCOPE_BREAKS = re.compile(r"(?<=/)")  # an op_name or a scope after each /
WORD_BREAKS = re.compile(r"(?<= )")  # after a space (an op_name's [params])
OP_NAME_BREAKS = (SCOPE_BREAKS, NAME_BREAKS, WORD_BREAKS)  # an op_name's, coarsest first
# a list of paths (after a comma), then a path (after a /), then a name
PATH_BREAKS = (re.compile(r"(?<=,)"), SCOPE_BREAKS, NAME_BREAKS)
SHAPE_ALL_BREAKS = (ELEMENT_BREAKS, SHAPE_BREAKS, DIM_BREAKS)  # a shape's, coarsest first
WHOLE_SHAPE = 40  # a shape up to this long is never wrapped while a name can be


def tail(text: str, width: int) -> str:
    """``text`` in ``width`` cells: whole, or its end after an ellipsis (an op_name's
    last part names the operation)."""
    if cell_len(text) <= width:
        return text
    cut = text[len(text) - (width - 1) :]
    while cell_len(cut) > width - 1:
        cut = cut[1:]
    if "/" in cut:  # from a whole part of the name scope on
        cut = cut[cut.index("/") :]
    return "…" + cut


def _pieces(text: str, width: int, breaks: tuple[re.Pattern[str], ...]) -> list[str]:
    if not breaks:
        return [text]
    out: list[str] = []
    for piece in breaks[0].split(text):
        out += _pieces(piece, width, breaks[1:]) if cell_len(piece) > width else [piece]
    return out


def longest_piece(text: str, *breaks: re.Pattern[str]) -> int:
    """The cells of the longest piece of ``text`` when it is broken wherever any of
    ``breaks`` allows: the narrowest ``text`` can be wrapped without cutting it."""
    return max((cell_len(p.strip()) for p in _pieces(text, 0, breaks)), default=0)


def wrap(text: str, width: int, *breaks: re.Pattern[str]) -> str:
    """``text`` on lines of at most ``width`` cells, broken only where the first of
    ``breaks`` allows, or, in a piece still longer than a line, where the next allows
    (a piece longer than a line even so is left to the table to fold). The lines are
    filled in turn, then the last one takes pieces from the end of the one before
    while it stays the shorter: ``opt_state_0__mu__params____`` /
    ``wte____embedding__.1``, not a lone ``1`` under the whole name."""
    if cell_len(text) <= width:
        return text
    lines: list[list[str]] = [[]]
    for piece in _pieces(text, width, breaks):
        if lines[-1] and _cells(lines[-1] + [piece]) > width:
            lines.append([])
        lines[-1].append(piece)
    while len(lines) > 1 and len(lines[-2]) > 1:
        moved = [lines[-2][-1], *lines[-1]]
        if _cells(moved) > min(width, _cells(lines[-2][:-1])):
            break
        lines[-1] = moved
        lines[-2].pop()
    return "\n".join("".join(line).strip() for line in lines)


def _cells(pieces: list[str]) -> int:
    return cell_len("".join(pieces).strip())
