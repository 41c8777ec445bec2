"""The op_name of many values at once, cheaply: for search and column widths.

``ValueInfo.op_name`` parses the whole from-instruction line (about 0.3 ms each), which
is right for the handful of rows on screen but takes a minute over the 100k values of
a big dump. Searching needs every op_name, so this module finds the ``op_name="..."``
field of the ``metadata={...}`` block with one regular expression instead, and keeps
the answers. The text it reads is CEscaped (FORMATS.md 3.6); simple escapes are undone.
"""

from __future__ import annotations

import re

from hlotop.analysis import ValueInfo

_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\(.)")


def quick_op_name(info: ValueInfo) -> str | None:
    """The op_name in the value's from-instruction metadata, or None."""
    text = info.used.instruction_text if info.used is not None else None
    if not text:
        return None
    at = text.find("metadata={")
    if at < 0:
        return None
    match = _OP_NAME.search(text, at)
    if match is None:
        return None
    name = match.group(1)
    return _ESCAPE.sub(r"\1", name) if "\\" in name else name


class OpNames:
    """``value id -> op_name`` for a list of values, filled on first use."""

    def __init__(self, values: list[ValueInfo]):
        self.values = values
        self._names: dict[int, str | None] | None = None

    def all(self) -> dict[int, str | None]:
        if self._names is None:
            self._names = {v.value.id: quick_op_name(v) for v in self.values}
        return self._names
