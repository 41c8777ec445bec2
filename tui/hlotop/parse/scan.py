"""Long scans of a dump's text (``str``, or ``bytes`` when it is all ASCII), made
:data:`SCAN` characters at a time: one call into C holds the interpreter lock, and a
browser's keys wait for it (a 500 MB dump's records were one 0.3 s scan)."""

from __future__ import annotations

from typing import AnyStr

SCAN = 1 << 23  # characters one call into C scans at most


def newline_of(text: AnyStr) -> AnyStr:
    """``"\\n"`` in the type of ``text``."""
    return b"\n" if isinstance(text, bytes) else "\n"


def count_lines(text: AnyStr, start: int, end: int) -> int:
    """Line ends in ``text[start:end]``."""
    nl = newline_of(text)
    return sum(text.count(nl, at, min(at + SCAN, end)) for at in range(start, end, SCAN))


def contains(data: bytes, needle: bytes) -> bool:
    """``needle in data``."""
    overlap = len(needle) - 1
    return any(data.find(needle, at, at + SCAN + overlap) >= 0 for at in range(0, len(data), SCAN))


def is_ascii(data: bytes) -> bool:
    """``data.isascii()``."""
    return all(data[at : at + SCAN].isascii() for at in range(0, len(data), SCAN))
