"""Tokens shared by the section grammars, and the diagnostics sink they report to."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from operator import methodcaller
from typing import Any

from parsy import ParseError, Parser, Result

from hlotop.model import Diagnostic, HloValue
from hlotop.parse.line_form import Field, Lit, Nested, Opt, Part, flag

SPACED_INT_RE = r"\d{1,3}(?: \d{3})*|\d+"  # 41 943 040 (the stack-trace tree's byte counts)


def spaced_int_value(text: str) -> int:
    return int(text.replace(" ", ""))


def spaced_int_values(texts: Iterable[str]) -> Iterable[int]:
    """:func:`spaced_int_value` of each of ``texts``."""
    return map(int, map(methodcaller("replace", " ", ""), texts))


def spaced_int_field(field: str) -> Field:
    return Field(
        field,
        SPACED_INT_RE,
        "a byte count like 41 943 040",
        spaced_int_value,
        convert_column=spaced_int_values,
    )


# A share as printf prints it ("%3.0f%%" in the memory-usage report, "%.1f%%" in the
# stack-trace tree). For a module whose total is 0 bytes (one returning an empty tuple)
# XLA divides 0 by 0 and glibc prints "-nan": "0B(-nan%)".
PERCENT_RE = r"\d+(?:\.\d+)?|-?nan"
NAN = float("nan")  # the one NaN percentages read as, so that equal rows compare equal


def percent_value(text: str) -> float:
    """A share as the memory-usage report and the stack-trace tree print it, without
    its ``%``, to a float: ``"62"`` -> 62.0, ``"12.5"`` -> 12.5, ``"-nan"`` (or
    ``"nan"``) -> :data:`NAN`. Raises ValueError for other text (the field's pattern
    lets none through)."""
    return NAN if text.endswith("nan") else float(text)


def percent_values(texts: Iterable[str]) -> list[float]:
    """:func:`percent_value` of each of ``texts`` (each NaN the one :data:`NAN`)."""
    values = list(map(float, texts))
    for k in [k for k, v in enumerate(values) if v != v]:
        values[k] = NAN
    return values


def percent_field(field: str = "percent") -> Field:
    """The line-form field ``field`` for a share without its ``%`` (the ``%3.0f`` of
    ``BufferAssignment::MemoryUsageReport``, the ``%.1f`` of the stack-trace tree; see
    :data:`PERCENT_RE`), read as a float by :func:`percent_value`."""
    return Field(
        field,
        PERCENT_RE,
        "a percentage like 62, 12.5 or -nan",
        percent_value,
        convert_column=percent_values,
    )


# NameUniquer names are [A-Za-z0-9_.-]; be tolerant of anything that cannot be a
# delimiter in the lines that carry names (space, braces, angle brackets, colon, comma).
NAME_RE = r"[^\s{}<>:,]+"
INDEX_RE = r"\{(?:\d+(?:,\d+)*)?\}"  # a ShapeIndex as printed: {} or {0,1}

# The ShapeIndex texts most values and live ranges carry, with braces (value lines) and
# without (live-range lines), read once: a dict look-up in the hot loops, not a call.
KNOWN_INDEXES: dict[str, tuple[int, ...]] = {
    text: index for k in range(64) for text, index in ((f"{{{k}}}", (k,)), (str(k), (k,)))
}
KNOWN_INDEXES.update({"{}": (), "": ()})


def index_of(text: str | None) -> tuple[int, ...] | None:
    """The digits of a ShapeIndex (``"0,1"`` or ``"{0,1}"``) as a tuple; None stays None."""
    if text is None:
        return None
    known = KNOWN_INDEXES.get(text)
    if known is not None:
        return known
    text = text.strip("{}")
    return tuple(int(i) for i in text.split(",")) if text else ()


_KEPT_INDEXES = 4096


class _Indexes(dict):
    """:data:`KNOWN_INDEXES`, and other ShapeIndex texts kept once read (up to
    :data:`_KEPT_INDEXES` of them: a damaged dump could hold any number)."""

    def __missing__(self, text: str) -> tuple[int, ...] | None:
        index = index_of(text)
        if len(self) < _KEPT_INDEXES:
            self[text] = index
        return index


_INDEXES = _Indexes(KNOWN_INDEXES)


def index_values(texts: Iterable[str]) -> Iterable[tuple[int, ...] | None]:
    """:func:`index_of` of each text of a column: a dict look-up each, in C (71 000
    live ranges at 46 MB)."""
    return map(_INDEXES.__getitem__, texts)


def name_field(field: str = "name") -> Field:
    """An instruction name (NameUniquer's), as field ``field``; interned, so that the
    value lines, the live ranges and the peak list of a big dump share one copy of
    each name (4 MB at 46 MB)."""
    return Field(field, NAME_RE, "an instruction name", sys.intern)


def index_field(field: str = "shape_index", default: object = None) -> Field:
    """A ShapeIndex ``{0,1}``, as a tuple of ints."""
    return Field(field, INDEX_RE, "a ShapeIndex like {} or {0,1}", index_of, default, index_values)


def int_field(field: str, desc: str = "an integer") -> Field:
    return Field(field, r"\d+", desc, int)


def _at_most(n: int) -> str:
    """A regular expression for the decimal numbers 0 to ``n``: those shorter than
    ``n``, then those of its length below it digit by digit, then ``n``."""
    digits = str(n)
    alternatives = [rf"\d{{1,{len(digits) - 1}}}"]
    for k, digit in enumerate(digits):
        lowest = 1 if k == 0 else 0
        if int(digit) > lowest:
            rest = len(digits) - k - 1
            tail = rf"\d{{{rest}}}" if rest else ""
            alternatives.append(f"{digits[:k]}[{lowest}-{int(digit) - 1}]{tail}")
    alternatives.append(digits)
    return "(?:" + "|".join(alternatives) + r")(?!\d)"


# A byte count or offset as XLA prints it: an int64 (BufferAllocation::size(),
# HloValue's size, the peak list's bytes), so never 2^63 or more. A larger number is
# damage, and a line holding one does not read (a diagnostic names it) instead of
# reaching the columns the model keeps as 64-bit arrays.
INT64_RE = _at_most((1 << 63) - 1)


def byte_count_field(field: str, desc: str = "a byte count") -> Field:
    """An int64 byte count or offset (:data:`INT64_RE`) as field ``field``."""
    return Field(field, INT64_RE, f"{desc} below 2^63", int)


# <id name{index} (phi) @color>  (HloValue::ToShortString, since 2019-09)
VALUE_REF_PARTS: tuple[Part, ...] = (
    Lit("<"),
    int_field("id", "a value id"),
    Lit(" "),
    name_field(),
    Opt(index_field()),
    flag("is_phi", " (phi)"),
    Opt(Lit(" @"), int_field("color", "a memory space (color)")),
    Lit(">"),
)
VALUE_REF = Nested("value", HloValue, *VALUE_REF_PARTS)


class LineGrammar:
    """The grammar of one kind of line.

    ``fine`` is the grammar proper, built from small parsy tokens; it decides what a
    line means and, when a line does not fit, which column and token were expected.
    ``pattern`` and ``convert`` are a single regular expression for the common shape of
    the line and the function that turns its groups into the same value ``fine``
    gives. A dump has millions of lines, so the hot path is that one match
    (:attr:`fast`, a parsy parser); a line it rejects goes to
    ``fine``, so it can only make reading quicker, never change its result (a test
    checks both agree on every line of every sample dump).
    """

    def __init__(
        self,
        fine: Parser,
        pattern: str | None = None,
        convert: Callable[..., Any] | None = None,
    ):
        self.fine = fine
        self.pattern = re.compile(pattern) if pattern else None
        self.convert = convert
        self.fast = (
            _token(self.pattern, convert)
            if self.pattern is not None and convert is not None
            else None
        )


def _token(compiled: re.Pattern[str], convert: Callable[..., Any]) -> Parser:
    @Parser
    def token(stream: str, index: int) -> Result:
        m = compiled.match(stream, index)
        if m is None:
            return Result.failure(index, compiled.pattern)
        return Result.success(m.end(), convert(*m.groups()))

    return token


class Sink:
    """Collects the diagnostics of one file. ``line`` numbers are 1-based."""

    def __init__(self, path: str, diagnostics: list[Diagnostic] | None = None):
        self.path = path
        self.diagnostics = diagnostics if diagnostics is not None else []

    def error(self, line: int, message: str) -> None:
        """Record that ``line`` could not be read."""
        self.diagnostics.append(Diagnostic(self.path, line, message, "error"))

    def warning(self, line: int, message: str) -> None:
        """Record a problem that loses nothing."""
        self.diagnostics.append(Diagnostic(self.path, line, message, "warning"))

    def expected(self, line: int, what: str, text: str, err: ParseError) -> None:
        """Report that ``text`` (a ``what``) did not fit its grammar: at which column,
        what was expected there and what was found."""
        expected = " or ".join(sorted(err.expected))
        found = text[err.index : err.index + 24]
        found = repr(found) if found else "the end of the line"
        self.error(line, f"{what}: column {err.index + 1}: expected {expected}, found {found}")
