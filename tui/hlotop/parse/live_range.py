"""Grammar of ``HloLiveRange::ToString`` (FORMATS.md section 5): the instruction
sequence, each value's live range, and the peak lines of every variant (V1-V4)."""

from __future__ import annotations

import re
import sys
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from hlotop.model import (
    BufferLiveRange,
    HloLiveRange,
    LiveRanges,
    PeakEntries,
    PeakEntry,
    PeakUsage,
    format_shape_index,
)
from hlotop.parse.line_form import Field, LineForm, Lit, Opt
from hlotop.parse.stack_trace import STACK_HEADER_PREFIX, StackTraceSection, TreeApart
from hlotop.parse.tokens import Sink, byte_count_field, index_field, int_field, name_field

HEADER_PREFIX = "HloLiveRange (max "
# "HloLiveRange (max 1234):" (the schedule's last step)
HEADER = LineForm(
    "HloLiveRange header",
    Lit(HEADER_PREFIX),
    int_field("max_time", "a schedule step"),
    Lit("):"),
    make=lambda max_time: max_time,
)
UNAVAILABLE = "HloLiveRange not available"
# "    3:fusion.2" (the flattened instruction sequence)
SEQUENCE_LINE = LineForm(
    "instruction sequence line",
    Lit("    "),
    int_field("step", "a schedule step"),
    Lit(":"),
    Field("name", r"\S+", "a name"),
    make=lambda step, name: (step, name),
)
# "    fusion.2{0}:3-7" (BufferLiveRange, inclusive steps)
BUFFER_LINE = LineForm(
    "buffer live range",
    Lit("    "),
    name_field(),
    index_field(),
    Lit(":"),
    int_field("start", "a schedule step"),
    Lit("-"),
    int_field("end", "a schedule step"),
    make=BufferLiveRange,
    context=("line",),
)
PEAK_PREFIX = "  Live ranges at "
# "  Live ranges at 40 (peak):" (the peak step; the first look searches for its body)
PEAK_HEADER = LineForm(
    "peak header",
    Lit(PEAK_PREFIX),
    int_field("time", "a schedule step"),
    Lit(" (peak):"),
    make=lambda time: time,
)
# "    fusion.2{0}: 1024 bytes (cumulative: 4096 bytes)" (V1 has no index, V3+ cumulative)
PEAK_LINE = LineForm(
    "peak line",
    Lit("    "),
    name_field(),
    Opt(index_field()),
    Lit(": "),
    byte_count_field("bytes"),
    Lit(" bytes"),
    Opt(Lit(" (cumulative: "), byte_count_field("cumulative"), Lit(" bytes)")),
    make=PeakEntry,
    context=("line",),
)

_sequence_match = SEQUENCE_LINE.pattern.match
# The instruction of a schedule step whose line is lost or does not read (no name can be
# this: names have no spaces), so that the later steps keep their printed numbers.
MISSING_STEP = "(no line)"
# More steps missing at once than this is taken for a damaged step number instead.
_MAX_LOST = 1 << 16
# The same form for a run of lines joined by "\n", one match per line: a schedule's
# lines are read _RUN at a time by one findall (a 250 000-step schedule, most of a
# combined 36 MB dump's lines, in a third of the time one match per line takes).
_SEQUENCE_LINES = re.compile(f"^{SEQUENCE_LINE.body}$", re.M)
_RUN = 1024


# The lines that start a part of the block: they end a stack-trace tree's lines.
_PART_HEADERS = (
    "  InstructionSequence:",
    "  BufferLiveRange:",
    PEAK_PREFIX,
    STACK_HEADER_PREFIX,
)


class LiveRangeSection:
    """Reads one ``HloLiveRange`` block line by line. With ``apart``, the lines of its
    stack-trace tree are set aside there unread (:class:`TreeApart`), and the block is
    finished without the tree (its peak list is V4 all the same). A
    :class:`~hlotop.parse.section.Section`."""

    stage = "live ranges"
    expects = "an indented HloLiveRange line"

    def __init__(self, sink: Sink, max_time: int, line: int, apart: TreeApart | None = None):
        self.sink = sink
        self.apart = apart
        self.max_time = max_time
        self.line = line
        self.sequence: list[str] = []
        # The live ranges as columns (LiveRanges): names, ShapeIndexes, first and last
        # steps, line numbers.
        self.ranges: tuple[Any, ...] = _range_columns()
        self.peak_time: int | None = None
        self.peak_line = 0
        # The peak list as columns (PeakEntries): names, ShapeIndexes, bytes,
        # cumulative bytes, line numbers.
        self.peak_entries: tuple[Any, ...] = ([], [], array("q"), [], array("q"))
        self.stack = StackTraceSection(sink)
        self._state = ""
        self._sequence_line = 0  # line of "  InstructionSequence:"
        self._buffers_line = 0  # line of "  BufferLiveRange:", which ends the sequence
        self._unreadable = 0  # schedule lines just before this one that were reported

    def take_run(self, lines: list[str], i: int, stop: int, first_line: int) -> int:
        """Read the ordinary lines of the current sub-section (instruction sequence, live
        ranges, peak list or stack-trace tree) from ``lines[i]`` on, at most up to
        ``lines[stop]``, by their one-match path; ``first_line`` is the 1-based line number of ``lines[0]``.
        Returns the index of the first line not taken (``i`` if none was), which goes
        through :meth:`feed`."""
        j = i
        if self._state == "buffers":
            j = BUFFER_LINE.take_columns(lines, j, stop, first_line, self.ranges)
        elif self._state == "sequence":
            while True:
                taken = _take_sequence(lines, j, stop, self.sequence)
                if taken > j:
                    self._unreadable = 0
                j = taken
                if j >= stop or not self._resync(lines, j, first_line):
                    break
                j += 1
        elif self._state == "peak":
            j = PEAK_LINE.take_columns(lines, j, stop, first_line, self.peak_entries)
        elif self._state == "stack":
            if self.apart is None:
                j = self.stack.take_run(lines, j, stop, first_line)
            else:  # the lines feed would hand the tree, set aside
                k = j
                while (
                    k < stop
                    and lines[k].startswith("  ")
                    and not lines[k].startswith(_PART_HEADERS)
                ):
                    k += 1
                if k > j:
                    self.apart.put(len(self.sink.diagnostics), lines[j:k], first_line + j)
                j = k
        return j

    def _resync(self, lines: list[str], j: int, first_line: int) -> bool:
        """Read ``lines[j]``, a schedule line whose step is not the next one, if the line
        after it tells why: lines lost before it (the next line's step follows its own:
        the steps between are filled with :data:`MISSING_STEP`, reported once, unless
        they are the lines just reported as unreadable), or its own number damaged (the
        next line's step follows the expected one: it takes the expected step,
        reported), or a step listed again (the same line: not used, reported). The later
        steps keep their own numbers, which the live ranges use. True if the line was
        read so; False leaves it to :meth:`feed`."""
        m = _sequence_match(lines[j])
        after = _sequence_match(lines[j + 1]) if j + 1 < len(lines) else None
        if m is None or after is None:
            return False
        step, following = int(m.group(1)), int(after.group(1))
        sequence = self.sequence
        expected = len(sequence)
        lineno = first_line + j
        if following == step + 1 and expected < step <= expected + _MAX_LOST:
            lost = step - expected
            if lost != self._unreadable:  # else said already: the lines that did not read
                steps = f"steps {expected}-{step - 1}" if lost > 1 else f"step {expected}"
                self.sink.warning(
                    lineno,
                    f"no line for schedule {steps} before this one (lost?): "
                    f"shown as {MISSING_STEP!r}",
                )
            sequence += [MISSING_STEP] * lost
        elif following == expected + 1:
            self.sink.warning(
                lineno, f"schedule step {expected} printed as step {step}: taken as {expected}"
            )
        elif step < expected and sequence[step] == m.group(2):
            self.sink.warning(lineno, f"schedule step {step} listed again: not used")
            return True
        else:
            return False
        sequence.append(m.group(2))
        self._unreadable = 0
        return True

    def feed(self, line: str, lineno: int, next_line: str | None = None) -> bool:
        """Read one line of the block (headers, sequence, ranges, peak, stack tree);
        True if it was ours (read, or reported), False at the first line that is not."""
        if line == "  InstructionSequence:":
            self._state = "sequence"
            self._sequence_line = self._sequence_line or lineno
            return True
        if line == "  BufferLiveRange:":
            self._state = "buffers"
            self._buffers_line = self._buffers_line or lineno
            return True
        if line.startswith(PEAK_PREFIX):
            self.peak_time = PEAK_HEADER.read(self.sink, line, lineno)
            self.peak_line = lineno
            self._state = "peak"
            return True
        if line.startswith(STACK_HEADER_PREFIX):
            self._state = "stack"
            if self.apart is not None:
                self.stack.seen = True
                self.apart.put(len(self.sink.diagnostics), [line], lineno)
                return True
            return self.stack.feed_header(line, lineno)
        if not line.startswith("  "):
            return False
        if self._state == "sequence":
            parsed = SEQUENCE_LINE.read(self.sink, line, lineno)
            if parsed is None:  # reported: its step is filled by the next line's read
                self._unreadable += 1
            else:
                self._unreadable = 0
                step, instr = parsed
                if step != len(self.sequence):
                    self.sink.warning(
                        lineno, f"schedule step {step} out of order: expected {len(self.sequence)}"
                    )
                self.sequence.append(instr)
        elif self._state == "buffers":
            buffer = BUFFER_LINE.read(self.sink, line, lineno, lineno)
            if buffer is not None:
                fields = (buffer.name, buffer.shape_index, buffer.start, buffer.end, buffer.line)
                for column, value in zip(self.ranges, fields, strict=True):
                    column.append(value)
        elif self._state == "peak":
            entry = PEAK_LINE.read(self.sink, line, lineno, lineno)
            if entry is not None:
                fields = (entry.name, entry.shape_index, entry.bytes, entry.cumulative, entry.line)
                for column, value in zip(self.peak_entries, fields, strict=True):
                    column.append(value)
        elif self._state == "stack":
            if self.apart is not None:
                self.apart.put(len(self.sink.diagnostics), [line], lineno)
            else:
                self.stack.feed(line, lineno)
        else:
            self.sink.error(
                lineno,
                "line inside HloLiveRange before any of "
                "'InstructionSequence:', 'BufferLiveRange:', 'Live ranges at'",
            )
        return True

    def finish(self) -> dict[str, Any]:
        """The block read so far (``live_range``); the peak variant is told from its
        lines. A schedule end that its own instruction sequence belies, and live ranges
        that end after it, are reported and not used (XLA prints ``end <= max``)."""
        return {"live_range": self.live_range()}

    def live_range(self) -> HloLiveRange:
        """The block read so far, as :meth:`finish` says."""
        self._check_schedule_end()
        peak = None
        if self.peak_time is not None:
            entries = PeakEntries(*map(_column, self.peak_entries))
            peak = PeakUsage(
                self.peak_time, entries, _variant(entries, self.stack.seen), self.peak_line
            )
        return HloLiveRange(
            self.max_time,
            tuple(self.sequence),
            LiveRanges(*map(_column, self.ranges)),
            peak,
            self.stack.finish() if self.apart is None else None,
            self.line,
        )

    def _check_schedule_end(self) -> None:
        """``HloLiveRange (max N)``: N is the length of the instruction sequence below
        it. When the whole sequence was read (``BufferLiveRange:`` follows it), an N
        smaller than the steps it lists, or more than twice the lines it takes (a
        damaged number, not lines lost from it), is reported and the listed count
        used. Then each live range ending after N is reported and skipped: the
        timeline and the live-bytes curve have one step per schedule step, so a
        damaged huge number must not size them."""
        listed = len(self.sequence)
        if self._sequence_line and self._buffers_line > self._sequence_line:
            room = self._buffers_line - self._sequence_line - 1
            if self.max_time < listed or self.max_time > 2 * room + 16:
                if self.max_time:  # else the header itself was reported unreadable
                    self.sink.warning(
                        self.line,
                        f"'HloLiveRange (max {self.max_time})' "
                        f"does not fit its instruction sequence of {listed} "
                        f"steps: using {listed}",
                    )
                self.max_time = listed
        end = self.max_time
        ends = self.ranges[3]
        if end <= 0 or not ends or max(ends) <= end:
            return
        kept = _range_columns()
        for name, index, first, last, line in zip(*self.ranges, strict=True):
            if last > end:
                label = name + format_shape_index(index)
                self.sink.error(
                    line,
                    f"live range {label}:{first}-{last} ends after "
                    f"the schedule's last step, {end} ('HloLiveRange (max "
                    f"{end})'): skipped",
                )
            else:
                for column, value in zip(kept, (name, index, first, last, line), strict=True):
                    column.append(value)
        self.ranges = kept


def _take_sequence(lines: list[str], i: int, stop: int, sequence: list[str]) -> int:
    """Append to ``sequence`` the instruction names of ``lines[i:stop]`` while each is
    the line of the next step (``    N:name``, N = ``len(sequence)``); return the index
    of the first line that is not. :data:`_RUN` lines at a time by one findall; the
    run in which one does not fit (the sequence's end, a damaged line, a step out of
    order) is read line by line, as :class:`LiveRangeSection.feed` then expects."""
    j = i
    while j < stop:
        run = lines[j : j + _RUN if j + _RUN < stop else stop]
        found = _SEQUENCE_LINES.findall("\n".join(run))
        first = len(sequence)
        if len(found) == len(run):  # every line is one of the form, none split in two
            steps, names = zip(*found, strict=True)
            if steps == tuple(map(str, range(first, first + len(run)))):
                # Interned: most are the names of the values they define, which the
                # value lines and the live ranges share (65 bytes a step of a dump of
                # small allocations; 40 ms for the 250 000 of a big schedule).
                sequence += map(sys.intern, names)
                j += len(run)
                continue
        for line in run:
            m = _sequence_match(line)
            if m is None or int(m.group(1)) != len(sequence):
                return j
            sequence.append(m.group(2))
            j += 1
    return j


class Numbers:
    """A column of ints, kept as an ``array("q")`` while every one fits in 64 bits (a
    step of a damaged line may not: then as a list): 8 bytes a number, where a list
    of them held an int object each until the block was read. ``append`` and
    ``extend`` as a list's; read as a sequence."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: array[int] | list[int] = array("q")

    def append(self, value: int) -> None:
        try:
            self.items.append(value)
        except OverflowError:
            self.items = [*self.items, value]

    def extend(self, values: Iterable[int]) -> None:
        items = self.items
        if isinstance(items, list):
            items.extend(values)
            return
        values = values if isinstance(values, (list, tuple, range)) else list(values)
        try:
            more = array("q", values)
        except OverflowError:
            self.items = [*items, *values]
            return
        items.extend(more)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[int]:
        return iter(self.items)

    def __getitem__(self, k: int) -> int:
        return self.items[k]


def _range_columns() -> tuple[Any, ...]:
    """Empty columns of live ranges (:class:`LiveRanges`' fields)."""
    return ([], [], Numbers(), Numbers(), array("q"))


def _column(column: Any) -> Any:
    """A column as :class:`~hlotop.model.column_rows.ColumnRows` takes it."""
    return column.items if isinstance(column, Numbers) else column


def _variant(entries: PeakEntries, has_stack: bool) -> str:
    """V1 lines have no index; V2 adds it; V3 adds cumulative; V4 adds the stack tree."""
    if has_stack:
        return "V4"
    if not entries:
        return "V1"
    if entries.cumulatives[0] is not None:
        return "V3"
    return "V2" if entries.shape_indexes[0] is not None else "V1"
