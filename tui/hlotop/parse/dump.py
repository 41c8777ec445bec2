"""The section reader: splits one file of a dump into lines and dispatches each line to
the grammar of the section it is in (FORMATS.md sections 2 and 12).

A line no section can use becomes a :class:`~hlotop.model.Diagnostic` and reading goes
on with the next line, so one bad line never loses the rest of the dump.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import repeat
from typing import AnyStr, TypeAlias

from parsy import regex, string

from hlotop.model import ByteSource, Diagnostic, ParsedSections, UsedValue, UsedValues
from hlotop.parse import live_range as lr
from hlotop.parse import scan
from hlotop.parse.allocations import AllocationSection
from hlotop.parse.memory_report import DETAIL_HEADER, SORTED_HEADER, MemoryReportSection
from hlotop.parse.records import used_values
from hlotop.parse.scan import newline_of
from hlotop.parse.stack_trace import TreeApart
from hlotop.parse.tokens import Sink
from hlotop.parse.values import HEADER as USED_VALUES_HEADER
from hlotop.parse.values import UsedValuesSection

TOTAL_LINE = (
    string("Total bytes used: ")
    >> regex(r"\d+").map(int)
    << regex(r"(?: \(-?\d+(?:\.\d+)?[KMGTPE]?i?B\))?").desc("'(size)' after the total")
)

_SECTION_HEADS = (
    "BufferAssignment:",
    "Total bytes used:",
    "Used values:",
    "HloLiveRange",
    "Memory Space:",
)


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
# What reads the lines of one section (parse_text's ``section``: the one reading now).
_Section: TypeAlias = (
    AllocationSection | UsedValuesSection | lr.LiveRangeSection | MemoryReportSection
)
_STAGE_NAMES = {
    AllocationSection: "allocations",
    lr.LiveRangeSection: "live ranges",
    MemoryReportSection: "the memory-usage report",
}


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
    sink = Sink(path, diagnostics)
    pause, stage = hooks.pause, hooks.stage
    if stage is not None:
        stage("finding the value records")
    whole = text.pop() if isinstance(text, list) else text
    del text
    records, chunks = _cut_records(path, whole)
    if records is not None and hooks.on_records is not None:
        hooks.on_records(records)
    if records is not None and hooks.source is not None:
        records.release_text(hooks.source)
    del whole  # the caller's, if it kept it; else gone
    allocations = AllocationSection(sink)
    used = UsedValuesSection(sink)
    live: lr.LiveRangeSection | None = None
    report: MemoryReportSection | None = None
    total: int | None = None
    saw_ba = saw_values = unavailable = sized = False
    section: _Section | None = None  # the section object whose lines come now
    skipping = False  # inside a "*** Begin <file> ***" block of some other dump file
    for first_line, lines in chunks:
        n = len(lines)
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
                if pause is not None:
                    pause()
                if stage is not None and type(section) in _STAGE_NAMES:
                    stage(f"{_STAGE_NAMES[type(section)]} {100 * i // n}%")
                next_pause = i + _PAUSE_EVERY
            # Most lines are ordinary lines of the section being read: let it take a run
            # of them by their one-match path before any dispatch.
            if section is not None and not isinstance(section, UsedValuesSection):
                taken = section.take_run(lines, i, min(n, next_pause), first_line)
                if taken > i:
                    i = taken
                    continue
            line = lines[i]
            lineno = first_line + i
            i += 1
            if line.startswith("*** Begin ") and line.endswith(" ***"):
                # --xla_dump_to=- writes every dump file to stdout between these markers;
                # only the buffer-assignment family is ours.
                skipping = not _is_ours(line[len("*** Begin ") : -len(" ***")])
                section = None
                continue
            if line.startswith("*** End ") and line.endswith(" ***"):
                skipping = False
                continue
            if skipping or not line:
                continue
            if line == "BufferAssignment:":
                saw_ba, section = True, allocations
                continue
            if line.startswith("Total bytes used:") and report is None:
                if _next_nonblank(lines, i - 1) == SORTED_HEADER:
                    report = MemoryReportSection(
                        sink, sink.parse(TOTAL_LINE, line, lineno, "total")
                    )
                    section = report
                else:
                    total = sink.parse(TOTAL_LINE, line, lineno, "'Total bytes used' line")
                    sized = total is not None and line.rstrip().endswith(")")
                    section = None
                continue
            if line == USED_VALUES_HEADER:
                saw_values, section = True, used
                continue
            if line.startswith("HloLiveRange (max "):
                if live is not None:
                    sink.warning(lineno, "a second HloLiveRange block; using the first")
                    section = None
                    continue
                max_time = sink.parse(lr.HEADER, line, lineno, "HloLiveRange header")
                live = lr.LiveRangeSection(sink, max_time or 0, lineno, hooks.tree_apart)
                section = live
                continue
            if line.startswith(lr.UNAVAILABLE):
                unavailable = True
                continue
            if line.startswith(("Memory Space: ", SORTED_HEADER, DETAIL_HEADER)) and report is None:
                report = MemoryReportSection(sink, None)
                section = report
            if section is used:
                handled = used.feed(line, lineno, lines[i] if i < n else None)
            elif section is not None:
                handled = section.feed(line, lineno)
            else:
                handled = False
            if not handled:
                _unexpected(sink, line, lineno, section)
    return ParsedSections(
        allocations=tuple(allocations.finish()),
        total_bytes_used=total,
        used_values=_records_of(records, used.finish(), sink),
        live_range=live.finish() if live is not None else None,
        live_range_unavailable=unavailable,
        memory_usage_report=report.finish() if report is not None else None,
        saw_buffer_assignment=saw_ba,
        saw_used_values=saw_values,
        total_bytes_sized=sized,
    )


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
    "Total bytes used:",
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


def _lines(text: AnyStr) -> list[str]:
    """:func:`split_lines` of ``text`` (decoded if bytes), a :data:`~scan.PIECE` at a
    time: one split of a 500 MB dump's allocations held the interpreter for 0.2 s."""
    lines: list[str] = []
    for piece in scan.pieces(text):
        lines += split_lines(piece.decode("ascii") if isinstance(piece, bytes) else piece)
    return lines


def _cut_records(
    path: str, text: AnyStr
) -> tuple[UsedValues[AnyStr] | None, list[tuple[int, list[str]]]]:
    """Cut the body of the first ``Used values:`` section out as a lazy
    :class:`~hlotop.model.UsedValues`; return it (or None) and the rest as (first line, lines) chunks.
    ``text`` may be the file's bytes if they are all ASCII: only the rest is decoded."""
    header = _find_line(text, USED_VALUES_HEADER)
    if header < 0:
        return None, [(1, _lines(text))]
    body_start = min(header + len(USED_VALUES_HEADER) + 1, len(text))
    body_end = _records_end(text, body_start)
    first = scan.count_lines(text, 0, body_start) + 1
    table = used_values(path, text, first, body_start, body_end)  # shared text
    tail_first = table.line_at_end()  # the records indexed, and their lines counted
    return table, [(1, _lines(text[:body_start])), (tail_first, _lines(text[body_end:]))]


def _records_of(
    table: UsedValues[AnyStr] | None, eager: list[UsedValue], sink: Sink
) -> UsedValues[AnyStr] | tuple[UsedValue, ...]:
    if table is None:
        return tuple(eager)
    if eager:
        sink.warning(eager[0].line, "a second 'Used values:' section; using the first")
    return table


def _next_nonblank(lines: list[str], i: int) -> str | None:
    for line in lines[i + 1 : i + 4]:
        if line.strip():
            return line.strip()
    return None


def _unexpected(sink: Sink, line: str, lineno: int, section: _Section | None) -> None:
    where = {
        AllocationSection: "an allocation line 'allocation N: size S, ...:' or ' value: <...>'",
        UsedValuesSection: "a value record line ('<id name @color>', ' positions:', ' uses:', "
        "'  <entry>', ' from instruction: ...')",
        lr.LiveRangeSection: "an indented HloLiveRange line",
        MemoryReportSection: "a memory-usage report line",
    }.get(type(section), "a section header (" + ", ".join(repr(h) for h in _SECTION_HEADS) + ")")
    shown = line if len(line) <= 60 else line[:57] + "..."
    sink.error(lineno, f"unexpected line {shown!r}: expected {where}")
