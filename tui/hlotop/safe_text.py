"""Making dump text safe to put on a terminal.

Everything in a dump (op_names, source paths, labels) was written by someone else.
Control characters (C0, DEL, C1, and so ESC sequences such as an OSC title change)
are replaced by visible ``\\xNN`` escapes before any of it is shown or exported. Rich/Textual
markup is never interpreted because views build ``rich.text.Text`` objects from dump
text instead of markup strings.

What the browser draws of one piece of text is cut to :data:`DRAWN_CHARS` characters
(:func:`drawn`): a 20 MB shape or op_name is read whole, but wrapping all of it into a
card of half a million lines took minutes.
"""

from __future__ import annotations

import re

# Control characters, and lone surrogates: a file name's bytes that are not UTF-8
# (os.fsdecode gives each as U+DC80-U+DCFF), which no UTF-8 terminal can be sent.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _escape(m: re.Match) -> str:
    code = ord(m.group(0))
    if 0xDC80 <= code <= 0xDCFF:  # the byte os.fsdecode could not decode
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


# The characters of one label or line the browser draws: a hundred lines of a pane.
DRAWN_CHARS = 8192


def printable(text: str) -> str:
    """``text`` (one label or line) with tab and newline written as ``\\t``/``\\n``
    and every other C0/C1 control character as ``\\xNN``, so an ESC sequence in an
    op_name shows as text instead of acting on the terminal; a byte of a file name that
    is not UTF-8 (a lone surrogate, as ``os.fsdecode`` gives it) as ``\\xNN`` too.
    Raises nothing."""
    text = text.replace("\t", "\\t").replace("\n", "\\n")
    return _CONTROL.sub(_escape, text)


def has_control(text: str) -> bool:
    """Whether :func:`printable` would change ``text``. Raises nothing."""
    return "\t" in text or "\n" in text or _CONTROL.search(text) is not None


def drawn(text: str, limit: int = DRAWN_CHARS) -> str:
    """:func:`printable` of at most the first ``limit`` characters of ``text``, and
    when there are more, ``… (N more characters)`` after them: what the browser draws
    of one shape, op_name or instruction. Raises nothing."""
    if len(text) <= limit:
        return printable(text)
    return f"{printable(text[:limit])}… ({len(text) - limit:,} more characters)"
