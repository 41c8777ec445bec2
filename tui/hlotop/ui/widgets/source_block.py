"""The value detail's source block: a few lines of the Python file that made the value,
around its line, when that file is on this machine (:mod:`hlotop.loading.source_lines`
finds and reads it; nothing is shown when it is not there)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from rich.console import RenderableType
from rich.text import Text

from hlotop.loading.source_lines import resolve_source, source_lines, split_location
from hlotop.model import ValueInfo
from hlotop.safe_text import printable

CONTEXT = 2  # lines shown above and below the value's line
# Where each file was found, by (file, the dump's files, the current folder).
_found: dict[tuple[str, tuple[str, ...], str], Path | None] = {}


def source_block(info: ValueInfo, near: Sequence[str]) -> list[RenderableType]:
    """Lines around ``info``'s source ``file:line`` (``near``: the dump's files, where
    a relative file is looked for), the line itself marked ``▶``; [] when the value
    has no source line or the file is not on this machine. Control characters are
    escaped, tabs expanded, the indentation the lines share taken off."""
    source = info.source
    if not source:
        return []
    file, line = split_location(source)
    if line is None:
        return []
    try:
        cwd = os.getcwd()
    except OSError:
        cwd = ""
    key = (file, tuple(near), cwd)
    if key not in _found:
        _found[key] = resolve_source(file, near)
    path = _found[key]
    read = source_lines(path, line, CONTEXT) if path is not None else None
    if read is None:
        return []
    width = len(str(read.first + len(read.lines) - 1))
    lines = [text.expandtabs(4) for text in read.lines]
    indent = min((len(t) - len(t.lstrip(" ")) for t in lines if t.strip()), default=0)
    out: list[RenderableType] = [
        Text(""),
        Text(f"source on this machine: {printable(str(path))}", style="dim", overflow="fold"),
    ]
    for number, text in enumerate(lines, read.first):
        at = number == line
        row = Text(no_wrap=True, overflow="ellipsis")
        row.append(f"{'▶' if at else ' '} {number:>{width}}  ", style="bold" if at else "dim")
        row.append(printable(text[indent:]), style="bold" if at else "")
        out.append(row)
    return out
