"""Making dump text safe to put on a terminal.

Everything in a dump (op_names, source paths, labels) was written by someone else.
Control characters (C0, DEL, C1, and so ESC sequences such as an OSC title change)
are replaced by visible ``\\xNN`` escapes before any of it is shown. Rich/Textual
markup is never interpreted because views build ``rich.text.Text`` objects from dump
text instead of markup strings.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` (one label or line) with tab and newline written as ``\\t``/``\\n``
    and every other C0/C1 control character as ``\\xNN``, so an ESC sequence in an
    op_name shows as text instead of acting on the terminal. Raises nothing."""
    text = text.replace("\t", "\\t").replace("\n", "\\n")
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)
