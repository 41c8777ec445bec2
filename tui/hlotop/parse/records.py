"""The ``Used values:`` section, read lazily (``HloValue::ToString`` records; FORMATS.md
3.5-3.6).

Records are most of a dump (six lines or more per value, one of them the long
from-instruction text) and most of them are never looked at. So the section is only
indexed when the dump opens: one regular-expression scan finds where each record starts
(its ``<id name @color>`` head, followed by `` positions:``; in 2024-era dumps the head is
glued to the end of the previous line). A record is parsed by the grammar in
:mod:`hlotop.parse.values` when it is asked for, and :meth:`RecordTable.parse_all` reads
them all when every figure and diagnostic is wanted (``--json``, ``--strict``, the
browser's background pass).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterator

from hlotop.model import Diagnostic, HloValue, UsedValue
from hlotop.parse.scan import newline_of
from hlotop.parse.tokens import NAME_RE, VALUE_REF_RE, Sink, value_from_groups
from hlotop.parse.values import FROM_PREFIX, UsedValuesSection
from hlotop.report import forked

_RECORD_START = re.compile(VALUE_REF_RE + r"(?=\n positions:\n)")
_RECORD_START_BYTES = re.compile(_RECORD_START.pattern.encode())  # for ASCII bytes
# A whole ordinary record as one token: head, position lines, use lines (or "(none)")
# and the from-instruction text, each line exactly as its line grammar reads it, with
# the numbers in ShapeIndexes and operand numbers as XLA prints them (no leading
# zeros), so the lines kept as text read back the same. Matched against one record's
# span; anything else (uninitialised uses, blank lines, a glued 2024-era head, a
# damaged line) goes through the line grammar of hlotop.parse.values.
_NUMBER = r"(?:0|[1-9]\d*)"
_INDEX = rf"\{{(?:{_NUMBER}(?:,{_NUMBER})*)?\}}"
RECORD = re.compile(
    VALUE_REF_RE
    + rf"\n positions:\n((?:  {NAME_RE}(?: {_INDEX})?\n)+)"
    + rf" uses:\n((?:  {NAME_RE}, operand {_NUMBER}(?: {_INDEX})?\n)+|  \(none\)\n)"
    + "(?:"
    + re.escape(FROM_PREFIX)
    + r" ?(.*)\n?)?\Z"
)


_CACHE = 4096
INDEX_IN_CHILD_FROM = 8 << 20  # characters of records: a section this big is indexed
# by a forked child (0.2 s a 100 MB dump) while the rest of the dump is read
_STRIDE = 256  # records between line-number checkpoints


class RecordTable:
    """The records of one ``Used values:`` section, by value id, parsed on demand.

    The section's body (the lines after ``Used values:``) is ``text[begin:end]`` (the
    whole ``text`` by default: a big dump's text is shared, not copied; ``text`` may
    be the file's bytes if they are all ASCII, each record decoded when read) and
    ``first_line`` the 1-based line number of its first line in ``path``; ``end_line``,
    if given, that of ``text[end]``.
    Behaves as a read-only sequence of :class:`UsedValue` in dump order.
    """

    def __init__(
        self,
        path: str,
        text: str,
        first_line: int,
        begin: int = 0,
        end: int | None = None,
        end_line: int | None = None,
    ):
        self.path = path
        self.end_line = end_line  # the line text[end] is on, if the caller counted it
        self.text = text
        self._nl = newline_of(text)
        self.begin = begin
        self.end = len(text) if end is None else end
        self.first_line = first_line
        self._starts: array | None = None  # offsets in text, of each record's head
        self._ids: array | None = None  # the value id of each record
        self._heads: dict[int, int] | None = None  # made on first need
        self._checkpoints: array | None = None  # line of every _STRIDE-th record, on demand
        self._cache: dict[int, UsedValue | None] = {}
        # A big section is indexed by a forked child (hlotop.report.forked) while this process
        # reads the rest of the dump; the index is taken from it on first use.
        self._indexer = (
            forked.start(self._write_index)
            if self.end - self.begin >= INDEX_IN_CHILD_FROM
            else None
        )

    def _scan(self) -> tuple[array, array]:
        starts, ids = array("q"), array("q")
        pattern = _RECORD_START_BYTES if isinstance(self.text, bytes) else _RECORD_START
        for m in pattern.finditer(self.text, self.begin, self.end):
            vid = int(m.group(1))
            if vid >= 1 << 63:  # no value id: its lines go with the record before,
                continue  # and are reported when it is read
            starts.append(m.start())
            ids.append(vid)
        return starts, ids

    def _write_index(self, out) -> int:
        """In the child: the index as bytes (the offsets, then the ids)."""
        starts, ids = self._scan()
        out.write(starts.tobytes() + ids.tobytes())
        return len(starts)

    def _take_index(self) -> None:
        indexer, self._indexer = self._indexer, None
        count = indexer.wait() if indexer is not None else None
        if isinstance(count, int):
            data = indexer.read(0, 16 * count)
            starts, ids = array("q"), array("q")
            starts.frombytes(data[: 8 * count])
            ids.frombytes(data[8 * count :])
        else:  # no child, or it failed
            starts, ids = self._scan()
        if indexer is not None:
            indexer.close()
        self._starts, self._ids = starts, ids

    @property
    def starts(self) -> array:
        """The offset in :attr:`text` of each record's head, in dump order."""
        if self._starts is None:
            self._take_index()
        return self._starts

    @property
    def ids(self) -> array:
        """The value id of each record, in dump order."""
        if self._ids is None:
            self._take_index()
        return self._ids

    @property
    def leading(self) -> int:
        """Where record 0 starts: ``text[begin:leading]`` comes before it."""
        return self.starts[0] if self.starts else self.end

    @property
    def heads(self) -> dict[int, int]:
        """Value id -> record number (the first, if an id repeats)."""
        if self._heads is None:
            self._heads = dict(
                zip(reversed(self.ids), range(len(self.ids) - 1, -1, -1), strict=False)
            )
        return self._heads

    def __len__(self) -> int:
        return len(self.starts)

    def __bool__(self) -> bool:
        return len(self.starts) > 0 or bool(self.text[self.begin : self.end].strip())

    def __iter__(self) -> Iterator[UsedValue]:
        for number in range(len(self.starts)):
            record = self.record(number)
            if record is not None:
                yield record

    def __getitem__(self, number: int) -> UsedValue:
        if number < 0:
            number += len(self.starts)
        if not 0 <= number < len(self.starts):
            raise IndexError(number)
        record = self.record(number)
        if record is None:
            raise IndexError(f"record {number} could not be read")
        return record

    def line_of(self, number: int) -> int:
        """The 1-based line of record ``number``'s head (counted on first need)."""
        if self._checkpoints is None and number == 0:
            return self.first_line + self.text.count(self._nl, self.begin, self.starts[0])
        if (
            self._checkpoints is None
            and number == len(self.starts) - 1
            and self.end_line is not None
        ):  # the last: counted back from the end
            return self.end_line - self.text.count(self._nl, self.starts[number], self.end)
        if self._checkpoints is None:
            checkpoints, line, pos = array("q"), self.first_line, self.begin
            for k in range(0, len(self.starts), _STRIDE):
                line += self.text.count(self._nl, pos, self.starts[k])
                pos = self.starts[k]
                checkpoints.append(line)
            self._checkpoints = checkpoints
        base = (number // _STRIDE) * _STRIDE
        return self._checkpoints[number // _STRIDE] + self.text.count(
            self._nl, self.starts[base], self.starts[number]
        )

    def head(self, number: int) -> HloValue:
        """The value a record is about, from its head alone (cheap)."""
        m = _RECORD_START.match(self._span(number))
        return value_from_groups(*m.group(1, 2, 3, 4, 5))

    def _span(self, number: int) -> str:
        """Record ``number``'s text, up to the next record's head."""
        start = self.starts[number]
        end = self.starts[number + 1] if number + 1 < len(self.starts) else self.end
        return self._str(start, end)

    def _str(self, start: int, end: int) -> str:
        span = self.text[start:end]
        return span.decode("ascii") if isinstance(span, bytes) else span

    def get(self, value_id: int) -> UsedValue | None:
        """The record of ``value_id``, parsed now (cached), or None if it has none."""
        number = self.heads.get(value_id)
        return None if number is None else self.record(number)

    def record(
        self, number: int, sink: Sink | None = None, line: int | None = None
    ) -> UsedValue | None:
        """Parse record ``number``; its unreadable lines go to ``sink`` if given.
        ``line``: its head's line number, when the caller already knows it."""
        if sink is None and number in self._cache:
            return self._cache[number]
        if line is None:
            line = self.line_of(number)
        record = self._read(number, line, sink)
        if len(self._cache) >= _CACHE:
            self._cache.pop(next(iter(self._cache)))
        self._cache[number] = record
        return record

    def _read(self, number: int, line: int, sink: Sink | None) -> UsedValue | None:
        span = self._span(number)
        m = RECORD.match(span)
        if m is not None:  # the one-match path
            vid, vname, index, phi, color, positions, uses, instruction = m.groups()
            return UsedValue.printed(
                value_from_groups(vid, vname, index, phi, color), positions, uses, instruction, line
            )
        section = UsedValuesSection(sink or Sink(self.path, []))
        _feed(section, span, line)
        records = section.finish()
        _unindexed(section.sink, records[1:])
        return records[0] if records else None

    def checked(
        self, diagnostics: list[Diagnostic], first: int = 0, stop: int | None = None
    ) -> Iterator[UsedValue]:
        """Every record in dump order (or records ``first`` to ``stop - 1``), each parsed
        once, with what cannot be read appended to ``diagnostics`` (the text before the
        first record included, with record 0)."""
        sink = Sink(self.path, diagnostics)
        stop = len(self.starts) if stop is None else min(stop, len(self.starts))
        if (
            first == 0
            and self.leading > self.begin
            and self.text[self.begin : self.leading].strip()
        ):
            section = UsedValuesSection(sink)
            _feed(section, self._str(self.begin, self.leading), self.first_line)
            _unindexed(sink, section.finish())
        if first >= stop:
            return
        line, pos = self.line_of(first), self.starts[first]
        count, read, nl = self.text.count, self._read, self._nl
        for number in range(first, stop):
            start = self.starts[number]
            line += count(nl, pos, start)  # counted as we go: no lookups
            pos = start
            record = read(number, line, sink)  # once each: not kept in the cache
            if record is not None:
                yield record

    def parse_all(
        self,
        diagnostics: list[Diagnostic],
        progress: Callable[[int, int], bool | None] | None = None,
    ) -> int:
        """Read every record, appending what cannot be read to ``diagnostics``.

        ``progress(records done, records in all)`` is called every 1024 records and at
        the end; if it returns True, reading stops there. Returns the number of records
        read. Raises nothing.
        """
        total = len(self.starts)
        done = 0
        for done, _ in enumerate(self.checked(diagnostics), 1):
            if progress is not None and done % 1024 == 0 and progress(done, total):
                return done
        if progress is not None:
            progress(total, total)
        return total


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
