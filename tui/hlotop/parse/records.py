"""How the ``Used values:`` section is read lazily (``HloValue::ToString`` records;
FORMATS.md 3.5-3.6): the grammar behind :class:`hlotop.model.UsedValues`.

One regular-expression scan finds where each record starts (its ``<id name @color>``
head, followed by `` positions:``; in 2024-era dumps the head is glued to the end of the
previous line). A record is read by one match of its whole text when it is ordinary,
else line by line by the grammar of :mod:`hlotop.parse.values`, which says what a
damaged line lacked. No caching, threads or processes here: the collection holds the
text, the index and the cache.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator
from typing import AnyStr

from hlotop.model import Diagnostic, HloValue, UsedValue, UsedValues
from hlotop.parse.tokens import NAME_RE, Sink
from hlotop.parse.values import FROM_PREFIX, RECORD_HEAD, RECORD_TEXT, UsedValuesSection

_RECORD_START = re.compile(RECORD_HEAD.body + r"(?=\n positions:\n)")
_RECORD_START_BYTES = re.compile(_RECORD_START.pattern.encode())  # for ASCII bytes
# A whole ordinary record as one token: head, position lines, use lines (or "(none)")
# and the from-instruction text, each line exactly as its line grammar reads it, with
# the numbers in ShapeIndexes and operand numbers as XLA prints them (no leading
# zeros), so the lines kept as text read back the same. Matched against one record's
# span; anything else (uninitialised uses, blank lines, a glued 2024-era head, a
# damaged line) goes through the line grammar of hlotop.parse.values.
_NUMBER = r"(?:0|[1-9]\d*)"
_INDEX = rf"\{{(?:{_NUMBER}(?:,{_NUMBER})*)?\}}"
RECORD = re.compile(  # the head's groups first: RECORD_HEAD.build reads them
    RECORD_HEAD.body
    + rf"\n positions:\n((?:  {NAME_RE}(?: {_INDEX})?\n)+)"
    + rf" uses:\n((?:  {NAME_RE}, operand {_NUMBER}(?: {_INDEX})?\n)+|  \(none\)\n)"
    + "(?:"
    + re.escape(FROM_PREFIX)
    + r" ?(.*)\n?)?\Z"
)

# A from-instruction line, its text as RECORD's last group reads it (the instruction's
# own reader strips the leading space RECORD leaves out).
_FROM_LINE = re.compile(r"\n" + re.escape(FROM_PREFIX) + r"(.*)")
_FROM_LINE_BYTES = re.compile(_FROM_LINE.pattern.encode())

_POSITIONS_GROUP = RECORD_HEAD.pattern.groups + 1
_USES_GROUP, _FROM_GROUP = _POSITIONS_GROUP + 1, _POSITIONS_GROUP + 2


class _RecordGrammar:
    """How a ``Used values`` record's text is read (:class:`~hlotop.model.RecordGrammar`):
    one regular-expression scan indexes the records; a record is read by its
    one-match path (:data:`RECORD`), else line by line by the grammar of
    :mod:`hlotop.parse.values`, which reports what it cannot read."""

    def index(self, text: AnyStr, begin: int, end: int) -> tuple[array, array]:
        starts, ids = array("q"), array("q")
        pattern = _RECORD_START_BYTES if isinstance(text, bytes) else _RECORD_START
        for m in pattern.finditer(text, begin, end):
            vid = int(m.group(1))
            if vid >= 1 << 63:  # no value id: its lines go with the record before,
                continue  # and are reported when it is read
            starts.append(m.start())
            ids.append(vid)
        return starts, ids

    def head(self, span: str) -> HloValue:
        m = _RECORD_START.match(span)
        assert m is not None, "an indexed record starts with its head"
        return RECORD_HEAD.build(m)

    def read(
        self, span: str, line: int, path: str, diagnostics: list[Diagnostic] | None
    ) -> UsedValue | None:
        m = RECORD.match(span)
        if m is not None:  # the one-match path
            positions, uses, instruction = m.group(_POSITIONS_GROUP, _USES_GROUP, _FROM_GROUP)
            return UsedValue.printed(
                RECORD_HEAD.build(m), positions, uses, instruction, line, RECORD_TEXT
            )
        section = UsedValuesSection(Sink(path, diagnostics if diagnostics is not None else []))
        _feed(section, span, line)
        records = section.records_read()
        _unindexed(section.sink, records[1:])
        return records[0] if records else None

    def instruction_lines(self, text: AnyStr) -> Iterator[tuple[int, int]]:
        pattern = _FROM_LINE_BYTES if isinstance(text, bytes) else _FROM_LINE
        for m in pattern.finditer(text):
            yield m.span(1)

    def read_leading(self, span: str, line: int, path: str, diagnostics: list[Diagnostic]) -> None:
        sink = Sink(path, diagnostics)
        section = UsedValuesSection(sink)
        _feed(section, span, line)
        _unindexed(sink, section.records_read())


RECORDS = _RecordGrammar()


def used_values(
    path: str,
    text: AnyStr,
    first_line: int,
    begin: int = 0,
    end: int | None = None,
    end_line: int | None = None,
) -> UsedValues[AnyStr]:
    """The lazy collection of the records in ``text[begin:end]`` (the body of a ``Used
    values:`` section; ``first_line`` is the 1-based line of ``text[begin]``,
    ``end_line`` that of ``text[end]`` if known), read with this module's grammar."""
    return UsedValues(path, text, RECORDS, first_line, begin, end, end_line)


def _unindexed(sink: Sink, records: list[UsedValue]) -> None:
    """Records read where the index saw none: reported if their head's id is out of
    range (a damaged line between a head and its positions is reported already)."""
    for r in records:
        if r.value.id >= 1 << 63:
            sink.error(
                r.line,
                f"value id {r.value.id} is out of range (more than 64 bits): its record is skipped",
            )


def _feed(section: UsedValuesSection, text: str, first_line: int) -> None:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if not section.feed(line, first_line + i, nxt):
            section.sink.error(
                first_line + i, f"unexpected line {line[:60]!r}: expected a value record line"
            )
