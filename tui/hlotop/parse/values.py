"""Grammar of the ``Used values:`` section (``HloValue::ToString``, ``HloPosition::
ToString``, ``HloUse::ToString``; FORMATS.md sections 3.5-3.6), including the
2024-01..2024-11 dumps whose records are glued onto the previous line."""

from __future__ import annotations

import re
from typing import Any, TypedDict

from hlotop.model import HloPosition, HloUse, HloValue, UsedValue, UsedValues
from hlotop.parse.instruction import parse_instruction_text
from hlotop.parse.line_form import LineForm, Lit, Opt
from hlotop.parse.tokens import VALUE_REF_PARTS, Sink, index_field, int_field, name_field

HEADER = "Used values:"
RECORD_HEAD = LineForm("value record", *VALUE_REF_PARTS, make=HloValue)
# "  name {0}" (HloPosition::ToString)
POSITION_LINE = LineForm(
    "position",
    Lit("  "),
    name_field("instruction"),
    Opt(Lit(" "), index_field()),
    make=HloPosition,
)
# "  name, operand 1 {0}" (HloUse::ToString)
USE_LINE = LineForm(
    "use",
    Lit("  "),
    name_field("instruction"),
    Lit(", operand "),
    int_field("operand_number", "an operand number"),
    Opt(Lit(" "), index_field("operand_index")),
    make=HloUse,
)
FROM_PREFIX = " from instruction:"
_POSITIONS = re.compile(POSITION_LINE.body + r"\n")
_USES = re.compile(USE_LINE.body + r"\n")


def positions_of(block: str) -> tuple[HloPosition, ...]:
    """The positions in a block of position lines (``"  name {0}\n"`` each) that
    :data:`POSITION_LINE` accepts one by one."""
    build = POSITION_LINE.build
    return tuple(build(m) for m in _POSITIONS.finditer(block))


def uses_of(block: str) -> tuple[HloUse, ...]:
    """The uses in a block of use lines that :data:`USE_LINE` accepts one by one, or
    ``"  (none)\n"`` (no uses)."""
    build = USE_LINE.build
    return tuple(build(m) for m in _USES.finditer(block))


class _RecordText:
    """Reads what a record keeps as text, on first use (:class:`~hlotop.model.RecordTextReader`)."""

    positions = staticmethod(positions_of)
    uses = staticmethod(uses_of)
    instruction = staticmethod(parse_instruction_text)


RECORD_TEXT = _RecordText()


# A value reference glued to the end of a from-instruction line (2024 era).
_GLUED_REF = re.compile(r"<\d+ [^\s<>{}]+(?:\{[\d,]*\})?(?: \(phi\))?(?: @\d+)?>\Z")


class _OpenRecord(TypedDict):
    """The record being read, until its next line is not its own."""

    value: HloValue
    positions: list[HloPosition]
    uses: list[HloUse] | None  # None: "uses are not initialized yet"
    instruction: str | None
    line: int


class UsedValuesSection:
    """Reads value records line by line (a :class:`~hlotop.parse.section.Section`).
    ``table`` is the first section's records, already cut out of the text and indexed
    (:class:`~hlotop.model.UsedValues`): then the lines read here are a second
    section's, which is reported and not used."""

    stage = None
    expects = (
        "a value record line ('<id name @color>', ' positions:', ' uses:', "
        "'  <entry>', ' from instruction: ...')"
    )

    def __init__(self, sink: Sink, table: UsedValues[str] | UsedValues[bytes] | None = None):
        self.sink = sink
        self.table = table
        self.records: list[UsedValue] = []
        self._current: _OpenRecord | None = None
        self._state = ""  # "positions" or "uses" inside a record
        self.glued = 0  # records found glued to the previous line

    def _close(self) -> None:
        c = self._current
        if c is not None:
            uses = None if c["uses"] is None else tuple(c["uses"])
            self.records.append(
                UsedValue(
                    c["value"],
                    tuple(c["positions"]),
                    uses,
                    c["instruction"],
                    c["line"],
                    RECORD_TEXT,
                )
            )
        self._current, self._state = None, ""

    def _start(self, text: str, lineno: int) -> None:
        self._close()
        value = RECORD_HEAD.read(self.sink, text, lineno)
        if value is not None:
            self._current = _OpenRecord(
                value=value, positions=[], uses=[], instruction=None, line=lineno
            )

    def take_run(self, lines: list[str], i: int, stop: int, first_line: int) -> int:
        """No line is taken in a run: a big dump's records are indexed before its lines
        are read (:data:`table`), and the rest come one by one to :meth:`feed`."""
        return i

    def feed(self, line: str, lineno: int, next_line: str | None = None) -> bool:
        """Read one record line; ``next_line`` (None if no line follows) tells a glued
        2024-era head from text. True if it was ours (read, or reported), False if not."""
        if line.startswith("<"):
            self._start(line, lineno)
            return True
        if line in (" positions:", " uses:"):
            self._state = line.strip(" :")
            self._need_record(lineno)
            return True
        if line == " uses are not initialized yet.":
            current = self._need_record(lineno)
            if current is not None:
                current["uses"] = None
            self._state = ""
            return True
        if line.startswith(FROM_PREFIX):
            text = line[len(FROM_PREFIX) :]
            glued = None
            if next_line == " positions:":
                m = _GLUED_REF.search(text)
                if m:
                    glued, text = m.group(0), text[: m.start()]
            current = self._need_record(lineno)
            if current is not None:
                current["instruction"] = text.lstrip(" ")
            self._state = ""
            if glued is not None:
                self.glued += 1
                self._start(glued, lineno)
            return True
        if line.startswith("  ") and self._state:
            return self._feed_entry(line, lineno)
        return False

    def _feed_entry(self, line: str, lineno: int) -> bool:
        current = self._need_record(lineno)
        if current is None:
            return True
        if self._state == "positions":
            pos = POSITION_LINE.read(self.sink, line, lineno)
            if pos is not None:
                current["positions"].append(pos)
        elif line != "  (none)":
            use = USE_LINE.read(self.sink, line, lineno)
            if use is not None and current["uses"] is not None:
                current["uses"].append(use)
        return True

    def _need_record(self, lineno: int) -> _OpenRecord | None:
        """The record open now; None, reported, if there is none."""
        if self._current is None:
            self.sink.error(
                lineno, "line belongs to a value record, but no record '<id name @color>' is open"
            )
        return self._current

    def records_read(self) -> list[UsedValue]:
        """The records read line by line, in dump order."""
        self._close()
        return self.records

    def finish(self) -> dict[str, Any]:
        """The records: the indexed :data:`table` if there is one (the records read
        here are then reported as a second section), else those read."""
        read = self.records_read()
        if self.table is None:
            return {"used_values": tuple(read), "saw_used_values": True}
        if read:
            self.sink.warning(read[0].line, "a second 'Used values:' section; using the first")
        return {"used_values": self.table, "saw_used_values": True}
