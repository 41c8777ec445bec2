"""The text an out-of-memory message comes in: sizes in XLA's and libtpu's units, and
the message's logical lines, its decorations removed and its hard-wrapped lines joined
(the grammar of the messages themselves is :mod:`hlotop.parse.oom`).

Sizes: XLA prints ``HumanReadableNumBytes`` (``4.50GiB``, ``38.7KiB``, ``12B``); libtpu
prints the same figures without the ``iB`` (``30.21G``, ``530.00M``, ``481.0K``,
``3.84T``, ``3.47E``), and these are binary units too: in the samples an unpadded
``f32[4,128,128,9,18]`` (42467328 bytes) is printed ``40.50M`` and a
``bf16[256000,3072]`` (1572864000 bytes) ``1.46G`` (decimal would be 42.47M and 1.57G).
A rounded figure reads as ``round(value * 1024**k)``; where the text also gives the
exact count (``(rounded to N)``, ``(N bytes)``, ``N bytes (6.94GiB)``) that is used.

Logical lines: each physical line loses its decorations (ANSI codes, HTML entities and
tags, backticks, ``> `` quote marks, log prefixes), and a line that continues a long one
(it starts with no known key and carries no log prefix and no whole headline) is joined
back to it as it is, with no separator.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

# ---- sizes -------------------------------------------------------------------------
_NUM = r"\d[\d,]*(?:\.\d+)?"
_UNIT = r"(?:[KMGTPE]i?B?|B|bytes)"
SIZE_RE = rf"{_NUM}\s?{_UNIT}?(?:\s?\((?:rounded to\s?)?{_NUM}\s?{_UNIT}?\))?"
_SIZE_TOKEN = re.compile(rf"(?P<num>{_NUM})\s?(?P<unit>{_UNIT})?")
_POWER = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def size_bytes(text: str) -> int:
    """Bytes (int) of a size as XLA or libtpu prints it: ``4.50GiB``, ``30.21G``,
    ``12B``, ``17528955952 bytes``, ``27.93GiB (rounded to 29995136256)``,
    ``7,450,374,152 bytes (6.94GiB)`` or a bare count. A figure in bytes is exact and
    wins; a rounded one reads as ``round(value * 1024**k)`` (``K``..``E`` binary, with
    or without ``iB``). Raises ``ValueError`` when ``text`` holds no size."""
    rounded = None
    for m in _SIZE_TOKEN.finditer(text):
        num, unit = m["num"].replace(",", ""), m["unit"]
        if unit in ("B", "bytes") or (unit is None and "." not in num):
            return int(num) if "." not in num else round(float(num))
        if rounded is None:
            scale = 1024 ** _POWER[unit[0]] if unit else 1
            rounded = round(float(num) * scale)
    if rounded is None:
        raise ValueError(f"not a size: {text!r}")
    return rounded


def size_or_none(text: str) -> int | None:
    return None if text.startswith("unknown") else size_bytes(text)


def identity(text: str) -> str:
    return text


# ---- logical lines ---------------------------------------------------------------------
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_TAGS = re.compile(
    r"</?(?:pre|code|div|span|br|p|details|summary|b|i|em|strong|kbd|samp)\b[^>]*>", re.I
)
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_PREFIXES = re.compile(
    r"^(?:\[\d+\]\s+|\(\w+ pid=\d+[^)]*\)\s*"  # [1] ranks, (Worker pid=12) Ray
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?:?\s*"  # timestamps
    r"|[IWEF]\d{4} \d\d:\d\d:\d+\.\d+\s+\d+\s+[\w./-]+:\d+\]\s?"  # glog
    r"|[IWEF]\s+(?:\d+\s+)?[\w./-]+\.\w+:\d+\]\s?"  # level file:line] (after a timestamp)
    r"|(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL):[\w.-]+:\s?)"  # Python logging
)
WRAP_WIDTH = 50  # a hard-wrapped line is at least this long


@dataclass(slots=True)
class Line:
    text: str  # decorations removed, continuations joined; not stripped
    line: int  # 1-based number of its first physical line


def _strip_prefixes(text: str) -> tuple[str, bool]:
    found = False
    while (m := _PREFIXES.match(text)) is not None and m.end():
        text, found = text[m.end() :], True
    return text, found


def _clean(raw: str) -> tuple[str, bool, int]:
    """A physical line without decorations; whether it had a log prefix; its width."""
    text = _ANSI.sub("", raw.rstrip("\r"))
    width = len(text)
    if "&" in text:
        text = html.unescape(text)
    if "<" in text:
        text = _TAGS.sub("", text)
    text, prefixed = _strip_prefixes(_QUOTE.sub("", text.replace("`", "")))
    return text, prefixed, width


def logical_lines(text: str, starts_line: Callable[[str], bool]) -> list[Line]:
    """``text`` as logical lines: decorations gone, the pieces of a hard-wrapped line
    joined. A piece with a log prefix of its own, or one that ``starts_line`` (given the
    piece without decorations: a known key or a whole headline), starts a line.
    Raises nothing."""
    pieces: list[list[str]] = []
    numbers: list[int] = []
    last_width = 0
    for number, raw in enumerate(text.split("\n"), 1):
        line, prefixed, width = _clean(raw)
        body = line.strip()
        if (
            body
            and not prefixed
            and last_width >= WRAP_WIDTH
            and pieces
            and pieces[-1][0].strip()
            and not starts_line(line)
        ):
            pieces[-1].append(line)
        else:
            pieces.append([line])
            numbers.append(number)
        last_width = width
    return [
        Line(p[0] if len(p) == 1 else _strip_prefixes("".join(p))[0], n)
        for p, n in zip(pieces, numbers, strict=True)
    ]


def undecorated(text: str) -> str:
    """``text`` without ANSI codes and with HTML entities unescaped."""
    return html.unescape(_ANSI.sub("", text))
