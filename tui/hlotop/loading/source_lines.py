"""A value's Python source on this machine: where its ``file:line`` is, and a few lines
around that line, for the detail pane and the editor (``E``).

XLA prints the op's ``source_file`` and ``source_line`` in the metadata of each
instruction (``metadata={op_name=... source_file="x.py" source_line=42}``); JAX
writes the file as the tracing machine saw it, often relative (``scripts/train.py``,
``flax/linen/normalization.py``: a library's file, relative to its ``site-packages``).
A relative file is looked for under the current folder, then under the dump's folder
and each folder above it, then under the folders Python imports from (``sys.path``:
a library installed here, beside hlotop).

Every read is small and bounded: only a regular file, at most :data:`MAX_BYTES`
bytes of it, lines up to :data:`MAX_LINE`; what was read is kept while the file is
unchanged (its size and modification time).
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

MAX_BYTES = 4 << 20  # bytes read at most to reach a line
MAX_LINE = 100_000  # lines beyond are not looked for
_LINE_CUT = 400  # characters kept of one line
_KEEP = 64  # files' lines kept


def split_location(source: str) -> tuple[str, int | None]:
    """``"x.py:42"`` -> ``("x.py", 42)``; ``"x.py"`` -> ``("x.py", None)``: what
    :attr:`hlotop.model.ValueInfo.source` gives, split at its last ``:``."""
    file, colon, line = source.rpartition(":")
    if colon and file and line.isdigit():
        return file, int(line)
    return source, None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()  # a regular file: no FIFO, device or folder
    except (OSError, ValueError):  # a NUL in the name, a path too long, no access
        return False


def resolve_source(file: str, near: Iterable[str] = ()) -> Path | None:
    """The file ``file`` (a ``source_file`` as XLA printed it) on this machine: itself
    if it is absolute, else under the current folder, then under each of ``near``
    (paths of the dump's files: their folders and every folder above), then under each
    folder of ``sys.path``; None if it is found nowhere. Never raises."""
    if not file or "\x00" in file:
        return None
    path = Path(file)
    if path.is_absolute():
        return path if _is_file(path) else None
    try:
        here = Path.cwd()
    except OSError:  # the current folder was removed
        here = None
    candidates: list[Path] = [here / path] if here is not None else []
    seen: set[Path] = set()
    for where in near:
        try:
            folder = Path(where).resolve()
        except (OSError, ValueError, RuntimeError):
            continue
        if not folder.is_dir():
            folder = folder.parent
        for above in (folder, *folder.parents):
            if above not in seen:
                seen.add(above)
                candidates.append(above / path)
    candidates += [Path(folder) / path for folder in sys.path if folder]
    return next((p for p in candidates if _is_file(p)), None)


@dataclass(frozen=True, slots=True)
class SourceLines:
    """Lines ``first``.. of ``path`` as read (newline and carriage return removed),
    around line ``line`` (1-based)."""

    path: Path
    line: int
    first: int
    lines: tuple[str, ...]

    def numbered(self) -> list[tuple[int, str]]:
        """(line number, text) of each line read."""
        return [(self.first + i, text) for i, text in enumerate(self.lines)]


_read: OrderedDict[tuple, SourceLines | None] = OrderedDict()


def source_lines(path: Path, line: int, context: int = 2) -> SourceLines | None:
    """Lines ``line - context`` to ``line + context`` of the regular file ``path``
    (1-based; UTF-8, undecodable bytes replaced; each line cut at 400 characters),
    or None if the file cannot be read, is not a regular file, or ``line`` is past its
    end, past :data:`MAX_LINE` or past its first :data:`MAX_BYTES` bytes. Kept while
    the file's size and modification time stay the same. Never raises."""
    if line < 1 or line > MAX_LINE:
        return None
    try:
        stat = path.stat()
    except (OSError, ValueError):
        return None
    key = (str(path), stat.st_size, stat.st_mtime_ns, line, context)
    if key in _read:
        _read.move_to_end(key)
        return _read[key]
    found = _read_lines(path, line, context) if _is_file(path) else None
    _read[key] = found
    while len(_read) > _KEEP:
        _read.popitem(last=False)
    return found


def _read_lines(path: Path, line: int, context: int) -> SourceLines | None:
    first, last = max(1, line - context), line + context
    kept: list[str] = []
    budget = MAX_BYTES
    try:
        # O_NONBLOCK: a file swapped for a FIFO after the check never blocks the open.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            for number in range(1, last + 1):
                raw = f.readline(min(budget, MAX_BYTES))
                if not raw:
                    break
                budget -= len(raw)
                if number >= first:
                    text = raw.decode("utf-8", "replace").rstrip("\r\n")
                    kept.append(text[:_LINE_CUT])
                if budget <= 0:
                    break
    except (OSError, ValueError):
        return None
    if len(kept) < line - first + 1:  # the line itself was not reached
        return None
    return SourceLines(path, line, first, tuple(kept))
