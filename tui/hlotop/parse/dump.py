"""The section reader: splits one file of a dump into lines and hands each run of them
to the reader of the section it is in (a :class:`~hlotop.parse.section.Section`,
chosen by the header line that opens it from :data:`HEADERS`; FORMATS.md sections 2
and 12).

A line no section can use becomes a :class:`~hlotop.model.Diagnostic` and reading goes
on with the next line, so one bad line never loses the rest of the dump.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import Any, AnyStr, Generic, cast

from hlotop.model import ByteSource, Diagnostic, ParsedSections, UsedValues
from hlotop.parse import live_range as lr
from hlotop.parse import scan
from hlotop.parse.allocations import TOTAL_LINE, TOTAL_PREFIX, AllocationSection
from hlotop.parse.memory_report import DETAIL_HEADER, SORTED_HEADER, MemoryReportSection
from hlotop.parse.records import used_values
from hlotop.parse.scan import newline_of
from hlotop.parse.section import Section
from hlotop.parse.stack_trace import TreeApart
from hlotop.parse.tokens import Sink
from hlotop.parse.values import HEADER as USED_VALUES_HEADER
from hlotop.parse.values import UsedValuesSection


def split_lines(text: str) -> list[str]:
    """Split file text into lines without their ``\\n`` or ``\\r\\n`` ending."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" not in text:  # as the loader gives it: no line to look at again
        return lines
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


_PAUSE_EVERY = 4096  # lines


@dataclass(frozen=True, slots=True)
class ReadHooks:
    """What a caller hears while a dump is read (each may be None)."""

    pause: Callable[[], object] | None = None  # every 4096 lines: a browser gives way
    # to key presses in it
    # a Used values section, once indexed, before the rest of its file is read
    on_records: Callable[[UsedValues[str] | UsedValues[bytes]], object] | None = None
    stage: Callable[[str], object] | None = None  # what is read now: "allocations 45%"
    # The file the text is, byte for byte but for its decoding (see
    # UsedValues.release_text): the records are read back from it once indexed, and
    # the text is not held while the rest is read.
    source: ByteSource | None = None
    # Where the stack-trace tree's lines are set aside unread (a worker sends the rest
    # of a -live-range.txt before it reads them): see TreeApart.
    tree_apart: TreeApart | None = None


_NO_HOOKS = ReadHooks()


def parse_text(
    path: str,
    text: AnyStr | list[AnyStr],
    diagnostics: list[Diagnostic],
    hooks: ReadHooks = _NO_HOOKS,
) -> ParsedSections:
    """Parse the text of one dump file of any layout or era.

    ``path`` names the file in diagnostics; ``text`` is its whole decoded content, or
    its bytes if they are all ASCII (the value records are then decoded one by one,
    when read). Given as a one-item list, the text is taken out of it, and with
    ``hooks.source`` it is dropped as soon as its lines are cut and its records
    indexed: a big dump's text is then not held while its lines are read.
    Problems are appended to ``diagnostics``; raises nothing. ``hooks`` are called as
    :class:`ReadHooks` says.
    """
    if hooks.stage is not None:
        hooks.stage("finding the value records")
    records, chunks = _records_first(path, text.pop() if isinstance(text, list) else text, hooks)
    del text  # the caller's, if it kept it; else gone (once its chunks are read)
    reading = _Reading(Sink(path, diagnostics), records, hooks)
    while chunks:
        reading.read_chunk(chunks.pop(0))
    return reading.finish()


def _records_first(
    path: str, whole: AnyStr, hooks: ReadHooks
) -> tuple[UsedValues[AnyStr] | None, list[Chunk[AnyStr]]]:
    """:func:`_cut_records` of ``whole``, the records handed to ``hooks.on_records``
    and, with ``hooks.source``, read back from there from now on."""
    records, chunks = _cut_records(path, whole)
    if records is not None and hooks.on_records is not None:
        hooks.on_records(records)
    if records is not None and hooks.source is not None:
        records.release_text(hooks.source)
    return records, chunks


class _NotAHeader:
    """What a header's opener returns for a line that starts like the header but is
    not one here: the line goes to the section being read."""


NOT_A_HEADER = _NotAHeader()


@dataclass(eq=False, repr=False)  # only __init__: 0.4 ms less at every start
class Header:
    """A line that heads a section: the line itself (``whole``) or how it starts
    (``starts``: a prefix, or several), and ``opens(reading, line, lineno, lines, i)``
    (``lines[i]`` the line after it): the section whose lines follow, None if none
    does (a line that stands alone), or :data:`NOT_A_HEADER`. With ``feeds``, the
    header is the first line of its section too, and is fed to it. ``named``: how the
    diagnostic of a line outside any section names it, if it does."""

    starts: str | tuple[str, ...]
    opens: Callable[[_Reading, str, int, list[str], int], Section | None | _NotAHeader]
    named: str | None = None
    whole: bool = False
    feeds: bool = False

    def heads(self, line: str) -> bool:
        """Whether ``line`` is this header's line (or starts like it)."""
        return line == self.starts if self.whole else line.startswith(self.starts)


class _Reading:
    """One file being read: the section whose lines come now, the section readers
    opened so far (each once, in the order they were opened) and the fields the
    header lines themselves gave. The header openers of :data:`HEADERS` are its
    methods."""

    def __init__(
        self, sink: Sink, records: UsedValues[str] | UsedValues[bytes] | None, hooks: ReadHooks
    ):
        self.sink = sink
        self.records = records  # the first Used values section's, cut out and indexed
        self.hooks = hooks
        self.section: Section | None = None  # the section whose lines come now
        self.readers: dict[type, Section] = {}
        self.fields: dict[str, Any] = {}  # ParsedSections' fields read from header lines
        self.skipping = False  # inside a "*** Begin <file> ***" block of another dump file

    def read_chunk(self, chunk: Chunk) -> None:
        """Read the lines of ``chunk``, a piece of text at a time (each piece's lines
        made as it comes, and let go as they are read: the lines of a whole dump of
        small allocations, made at once, were its reader's peak memory): each piece but
        the last up to its last :data:`_LOOKAHEAD` lines, which are read with the next
        (a line's reader may look at the few after it)."""
        carry: list[str] = []
        first_line = chunk.first_line
        for lines, before, span, last in chunk.pieces():
            if carry:
                lines = carry + lines
            stop = len(lines) if last else max(0, len(lines) - _LOOKAHEAD)
            self.read(lines, first_line, stop, (before, span))
            carry = lines[stop:]
            first_line += stop

    def read(
        self,
        lines: list[str],
        first_line: int,
        stop: int | None = None,
        share: tuple[float, float] = (0.0, 1.0),
    ) -> None:
        """Read ``lines[:stop]`` (all of them if ``stop`` is None; those after may be
        looked at), the first of them line ``first_line`` (1-based): each run of a
        section's ordinary lines by its reader's :meth:`~Section.take_run`, each other
        line through :meth:`line`. Every :data:`_PAUSE_EVERY` lines the hooks hear; how
        far into its section the reading is, ``share`` says: the part of it read
        before these lines and the part they are."""
        n = len(lines) if stop is None else stop
        i = 0
        next_pause = 0
        done = 0  # lines[:done] are read and let go
        while i < n:
            if i >= next_pause:
                # The lines read are let go (nothing looks back): a dump of small
                # allocations has ~4 lines an allocation, 390 bytes of line objects,
                # else held with the allocations made of them until the file is read.
                if i - 1 > done:
                    lines[done : i - 1] = repeat("", i - 1 - done)  # one shared ""
                    done = i - 1
                self._progress(i, n, share)
                next_pause = i + _PAUSE_EVERY
            section = self.section
            if section is not None:
                taken = section.take_run(lines, i, min(n, next_pause), first_line)
                if taken > i:
                    i = taken
                    continue
            i += 1
            self.line(lines[i - 1], first_line + i - 1, lines, i)

    def _progress(self, i: int, n: int, share: tuple[float, float]) -> None:
        pause, stage, section = self.hooks.pause, self.hooks.stage, self.section
        if pause is not None:
            pause()
        if stage is not None and section is not None and section.stage is not None:
            before, part = share
            stage(f"{section.stage} {min(99, int(100 * (before + part * i / n)))}%")

    def line(self, line: str, lineno: int, lines: list[str], i: int) -> None:
        """Read one line that no run took (``lines[i]`` the one after it): a wrapper
        marker, a header (:data:`HEADERS`), or a line of the section being read."""
        if _wrapper_marker(self, line) or self.skipping or not line:
            return
        if line.startswith(_HEADER_STARTS):
            for header in HEADERS:
                if header.heads(line):
                    opened = header.opens(self, line, lineno, lines, i)
                    if opened is NOT_A_HEADER:
                        break
                    self.section = cast("Section | None", opened)
                    if not header.feeds:
                        return
                    break
        section = self.section
        if section is None or not section.feed(line, lineno, lines[i] if i < len(lines) else None):
            _unexpected(self.sink, line, lineno, section)

    def reader(self, kind: type, make: Callable[[], Section]) -> Section:
        """The reader of ``kind`` opened before, else ``make()``'s, kept."""
        found = self.readers.get(kind)
        if found is None:
            found = self.readers[kind] = make()
        return found

    # -- the openers of HEADERS ---------------------------------------------------------

    def allocations(self, line: str, lineno: int, lines: list[str], i: int) -> Section:
        return self.reader(AllocationSection, lambda: AllocationSection(self.sink))

    def total(
        self, line: str, lineno: int, lines: list[str], i: int
    ) -> Section | None | _NotAHeader:
        """``Total bytes used``: the module's, or the first line of an era-A report."""
        if MemoryReportSection in self.readers:
            return NOT_A_HEADER
        total = TOTAL_LINE.read(self.sink, line, lineno)
        if _next_nonblank(lines, i - 1) == SORTED_HEADER:
            bytes_ = None if total is None else total["bytes"]
            return self.reader(MemoryReportSection, lambda: MemoryReportSection(self.sink, bytes_))
        self.fields["total_bytes_used"] = None if total is None else total["bytes"]
        self.fields["total_bytes_sized"] = total is not None and total["size"] is not None
        return None

    def used_values(self, line: str, lineno: int, lines: list[str], i: int) -> Section:
        return self.reader(UsedValuesSection, lambda: UsedValuesSection(self.sink, self.records))

    def live_range(self, line: str, lineno: int, lines: list[str], i: int) -> Section | None:
        if lr.LiveRangeSection in self.readers:
            self.sink.warning(lineno, "a second HloLiveRange block; using the first")
            return None
        max_time = lr.HEADER.read(self.sink, line, lineno) or 0
        apart = self.hooks.tree_apart
        return self.reader(
            lr.LiveRangeSection, lambda: lr.LiveRangeSection(self.sink, max_time, lineno, apart)
        )

    def unavailable(self, line: str, lineno: int, lines: list[str], i: int) -> Section | None:
        """``HloLiveRange not available``: said, and the section being read goes on."""
        self.fields["live_range_unavailable"] = True
        return self.section

    def memory_report(
        self, line: str, lineno: int, lines: list[str], i: int
    ) -> Section | _NotAHeader:
        """An era-B report's first memory space, or a report without its total."""
        if MemoryReportSection in self.readers:
            return NOT_A_HEADER
        return self.reader(MemoryReportSection, lambda: MemoryReportSection(self.sink, None))

    def finish(self) -> ParsedSections:
        """The sections read: each reader finished in the order it was opened."""
        fields = dict(self.fields)
        for reader in self.readers.values():
            fields.update(reader.finish())
        if self.records is not None and UsedValuesSection not in self.readers:
            fields["used_values"] = self.records  # its header was in a block skipped
        return ParsedSections(**fields)


# The lines that head a section or stand alone, in the order they are tried.
HEADERS: tuple[Header, ...] = (
    Header("BufferAssignment:", _Reading.allocations, "BufferAssignment:", whole=True),
    Header(TOTAL_PREFIX, _Reading.total, TOTAL_PREFIX),
    Header(USED_VALUES_HEADER, _Reading.used_values, USED_VALUES_HEADER, whole=True),
    Header(lr.HEADER_PREFIX, _Reading.live_range, "HloLiveRange"),
    Header(lr.UNAVAILABLE, _Reading.unavailable),
    Header(
        ("Memory Space: ", SORTED_HEADER, DETAIL_HEADER),
        _Reading.memory_report,
        "Memory Space:",
        feeds=True,
    ),
)
_HEADER_STARTS = tuple(
    start for h in HEADERS for start in ((h.starts,) if isinstance(h.starts, str) else h.starts)
)


def _wrapper_marker(reading: _Reading, line: str) -> bool:
    """Whether ``line`` is a marker of ``--xla_dump_to=-``, which writes every dump file
    to stdout between ``*** Begin <file> ***`` and ``*** End <file> ***``: only the
    buffer-assignment family is ours, the others' lines are skipped."""
    if line.startswith("*** Begin ") and line.endswith(" ***"):
        reading.skipping = not _is_ours(line[len("*** Begin ") : -len(" ***")])
        reading.section = None
        return True
    if line.startswith("*** End ") and line.endswith(" ***"):
        reading.skipping = False
        return True
    return False


_OUR_FILES = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
)


def _is_ours(filename: str) -> bool:
    return filename.endswith(_OUR_FILES)


# How the lines that end a Used values section start.
_AFTER_RECORDS = (
    "HloLiveRange",
    "*** End ",
    "*** Begin ",
    "BufferAssignment:",
    TOTAL_PREFIX,
    "Memory Space:",
    "Allocations sorted by size",
)
_AFTER_RECORDS_BYTES = tuple(a.encode() for a in _AFTER_RECORDS)
# A line that starts with none of the characters record lines start with: a candidate
# for the end of the records, found in one scan of the section (most of a big dump).
_NOT_A_RECORD_LINE = re.compile(r"\n[^ <\n]")
_NOT_A_RECORD_LINE_BYTES = re.compile(rb"\n[^ <\n]")


def _records_end(text: AnyStr, start: int) -> int:
    """Offset of the first line from ``start`` on that starts with one of
    :data:`_AFTER_RECORDS`, or ``len(text)``."""
    if isinstance(text, bytes):
        candidate, after = _NOT_A_RECORD_LINE_BYTES.search, _AFTER_RECORDS_BYTES
    else:
        candidate, after = _NOT_A_RECORD_LINE.search, _AFTER_RECORDS
    pos = max(start - 1, 0)
    while pos < len(text) - 1:
        stop = min(pos + scan.SCAN, len(text))
        m = candidate(text, pos, stop)
        if m is None:
            pos = stop - 1  # a line end there is matched with what follows it
            continue
        if text.startswith(after, m.start() + 1):
            return m.start() + 1
        pos = m.start() + 1
    return len(text)


def _find_line(text: AnyStr, line: str) -> int:
    """Offset of the first line equal to ``line``, or -1."""
    nl = newline_of(text)
    want = line.encode() if isinstance(text, bytes) else line
    if text.startswith(want + nl) or text == want:
        return 0
    at = text.find(nl + want + nl)
    if at < 0 and text.endswith(nl + want):
        at = len(text) - len(want) - 1
    return at + 1 if at >= 0 else -1


# Lines of a piece read with the next one (see _Reading.read_chunk): more than any
# reader looks ahead (the header openers, three).
_LOOKAHEAD = 8


@dataclass(frozen=True, slots=True)
class Chunk(Generic[AnyStr]):
    """The lines of ``text[start:end]`` (a ``str``, or ``bytes`` all ASCII), the first
    of them line ``first_line`` (1-based), to be read a :data:`~scan.PIECE` at a time
    (:meth:`pieces`)."""

    first_line: int
    text: AnyStr
    start: int
    end: int

    def pieces(self) -> Iterator[tuple[list[str], float, float, bool]]:
        """Each piece's lines (:func:`split_lines`, decoded if bytes), with the share of
        the chunk before it and its own (of its characters), and whether it is the
        last. One split of a 500 MB dump's allocations held the interpreter for 0.2 s;
        its lines, all at once, were most of the memory a dump of small allocations
        took to read."""
        start, end, text = self.start, self.end, self.text
        total = max(1, end - start)
        at = start
        for piece in scan.pieces(text, None, start, end):
            lines = split_lines(piece.decode("ascii") if isinstance(piece, bytes) else piece)
            size = len(piece)
            yield lines, (at - start) / total, size / total, at + size >= end
            at += size


def _cut_records(path: str, text: AnyStr) -> tuple[UsedValues[AnyStr] | None, list[Chunk[AnyStr]]]:
    """Cut the body of the first ``Used values:`` section out as a lazy
    :class:`~hlotop.model.UsedValues`; return it (or None) and the rest as (first line, lines) chunks.
    ``text`` may be the file's bytes if they are all ASCII: only the rest is decoded."""
    header = _find_line(text, USED_VALUES_HEADER)
    if header < 0:
        return None, [Chunk(1, text, 0, len(text))]
    body_start = min(header + len(USED_VALUES_HEADER) + 1, len(text))
    body_end = _records_end(text, body_start)
    first = scan.count_lines(text, 0, body_start) + 1
    table = used_values(path, text, first, body_start, body_end)  # shared text
    tail_first = table.line_at_end()  # the records indexed, and their lines counted
    return table, [Chunk(1, text, 0, body_start), Chunk(tail_first, text, body_end, len(text))]


def _next_nonblank(lines: list[str], i: int) -> str | None:
    for line in lines[i + 1 : i + 4]:
        if line.strip():
            return line.strip()
    return None


def _unexpected(sink: Sink, line: str, lineno: int, section: Section | None) -> None:
    if section is not None:
        where = section.expects
    else:
        where = "a section header (" + ", ".join(repr(h.named) for h in HEADERS if h.named) + ")"
    shown = line if len(line) <= 60 else line[:57] + "..."
    sink.error(lineno, f"unexpected line {shown!r}: expected {where}")
