"""A text stream that drops the spaces at the end of each line written to it.

Rich pads every row of a table to the table's width, and a report's lines to the
console's: on a terminal nobody sees them, but a report piped into a file, ``diff`` or
``grep`` carries up to 160 trailing spaces a line. :func:`hlotop.report.summary.stdout_console`
writes through :class:`TrailingSpacesDropped` when stdout is not a terminal.
"""

from __future__ import annotations

import io
import re
from typing import TextIO

# Spaces before a line's end, and any style codes after them (FORCE_COLOR): the codes stay.
_LINE_END = re.compile(r" +((?:\x1b\[[0-9;]*m)*)\n")
_SPACES_AT_END = re.compile(r" +$")


class TrailingSpacesDropped(io.TextIOBase):
    """Wraps ``stream``: what is written reaches it without the spaces that end a line.
    Spaces at the end of one write are held until the next shows whether a line ends
    there (a flush writes them). ``isatty``, ``fileno`` and ``encoding`` are the
    stream's."""

    def __init__(self, stream: TextIO):
        super().__init__()
        self.stream = stream
        self._held = ""  # spaces at the end of the last write

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    def write(self, text: str) -> int:
        written = len(text)
        text = _LINE_END.sub(r"\1\n", self._held + text)
        held = _SPACES_AT_END.search(text)
        self._held = held.group() if held else ""
        self.stream.write(text[: len(text) - len(self._held)])
        return written

    def flush(self) -> None:
        if self._held:
            self.stream.write(self._held)
            self._held = ""
        self.stream.flush()
