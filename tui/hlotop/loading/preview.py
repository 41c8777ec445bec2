"""The first look at a big dump: every allocation, the true total and XLA's peak step,
in a fraction of the time the whole dump takes to load.

XLA prints the allocations first (``BufferAssignment:``, FORMATS.md 3.2-3.3: the
combined file, or a split module's ``-buffer-assignment.txt``), then ``Total bytes
used``, then the value records and the live ranges, whose ``Live ranges at N (peak):``
line (FORMATS.md 5) names XLA's peak step. The first look reads only the allocation
section, and of it only the allocation lines (one match each of
:data:`~hlotop.parse.allocations.ALLOCATION_HEAD`, the form the whole load reads,
in one pass: a 100 MB dump's 58 000 allocations in about 0.1 s), the total after it,
and the peak line found from the end of the live ranges.

It comes in two steps. :func:`glance` keeps each allocation line as it is and takes
only its index, size and colour from that pass: enough to sort every allocation and
add up each memory space; an allocation is read whole when asked for (the rows a
screen shows). :func:`completed` then reads them all and works out what needs their
kinds (JAX's ``memory_analysis()`` figures, the totals by kind) and XLA's peak bytes
(its printed list added up). :func:`preview` is both. The value lines inside the
allocations, the records and the live ranges come with the whole load
(:func:`hlotop.loading.loader.load`), which the browser swaps in when it is done.
"""

from __future__ import annotations

import mmap
import os
import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import accumulate, repeat
from operator import itemgetter
from pathlib import Path

from hlotop.analysis.analyze import analyze
from hlotop.analysis.totals import bytes_by_color
from hlotop.loading.discover import module_files, module_name, resolve
from hlotop.loading.errors import LoadError
from hlotop.loading.input_bytes import LIVE_RANGE_START
from hlotop.loading.module_text import read_io_alias
from hlotop.model import (
    AllocationLines,
    Analysis,
    BufferAllocation,
    DumpFile,
    ModuleDump,
    ParsedSections,
    ValuesById,
)
from hlotop.parse.allocations import ALLOCATION_HEAD, TOTAL_LINE, TOTAL_PREFIX
from hlotop.parse.live_range import PEAK_HEADER, PEAK_PREFIX
from hlotop.parse.values import HEADER as VALUES

PREVIEW_FROM = 1 << 20  # bytes: a smaller dump loads whole about as fast
_CHUNK = 1 << 23  # bytes read at a time while looking for the end of the allocations
# Lines that end the allocation section (one search for the three: half the time of
# three finds).
_AFTER_ALLOCATIONS = re.compile(
    b"\n(?:"
    + b"|".join(re.escape(s.encode()) for s in (TOTAL_PREFIX, VALUES, "HloLiveRange"))
    + b")"
)
# Each found by its line end and literal start ("\nallocation "): a "^" in the pattern
# would make the search try every line (three times as long). Group 1 is the line,
# then its index, size and colour: the form's other fields match without a group (a
# tenth quicker than making them all, 58 000 times).
_ALLOCATION_LINES = re.compile(
    rf"\n({ALLOCATION_HEAD.body_keeping('index', 'size', 'color')})(?=\r?\n|\Z)".encode()
)
_ALLOCATION_START = re.compile(rb"\nallocation ")
_TOTAL = re.compile(b"\n" + TOTAL_LINE.body_keeping("bytes").encode())  # group 1: the bytes
_PEAK = re.compile(b"\n" + PEAK_HEADER.body.encode())  # group 1: the step
_PEAK_START = b"\n" + PEAK_PREFIX.encode()
# The lines of the peak list, one after another from the peak line on (up to 256 at a
# time), and the byte count of each.
_PEAK_RUN = re.compile(rb"(?:\n    [^\n]*?: \d+ bytes[^\n]*){1,256}")
_PEAK_BYTES = re.compile(rb"\n    [^\n]*?: (\d+) bytes")
# An allocation line whose size has 19 digits or more: perhaps 2^63 or more, which no
# allocation line reads as (XLA's sizes are int64; hlotop.parse.tokens.INT64_RE).
_LONG_SIZE = re.compile(rb"\nallocation (\d+): [^\n]*?size (\d{19,})(?!\d)")
_INT64_END = 1 << 63


def glance(
    path: str | os.PathLike, *, from_bytes: int = PREVIEW_FROM, explain: bool = False
) -> ModuleDump | None:
    """The first look at the dump ``path`` names, as soon as it can be had: as
    :func:`preview` says, but its allocations are an
    :class:`~hlotop.model.AllocationLines`, each allocation read from its line when
    first asked for (a screen reads the rows it shows), and its analysis holds only
    what their index, size and colour give: ``totals_by_color``, ``allocation_of``
    (read on first use), and XLA's peak step. XLA's peak bytes (its list added up),
    the kinds' totals, JAX's ``memory_analysis()`` figures (and the input/output
    aliases they need, from the HLO text beside the dump) and the memory spaces are
    not there yet: :func:`completed` adds them. Returns None and raises nothing as
    :func:`preview` (``explain`` as there).
    """
    if str(path) == "-":
        return None
    values_head = b""
    try:
        main = resolve(path)
        files = module_files(main)
        total = sum(f.stat().st_size for f, _ in files)
        if total < from_bytes:
            return None
        kinds = {kind: f for f, kind in files if kind is not None}  # a split module's
        if kinds:  # a split module's file named: its allocations are in one of them
            allocations_file = kinds.get("buffer-assignment")
            if allocations_file is None:
                return None
            main = allocations_file
        if "values" in kinds or "live-range" in kinds:
            # A split module: the allocation section is the whole file.
            with open(main, "rb") as f:
                head = f.read()
            read = len(head)
            values = kinds.get("values")
            if values is not None:  # its first lines hold Total bytes used (jax >= 0.10)
                with open(values, "rb") as f:
                    values_head = f.read(4096)
        else:  # a combined dump (named as a split module's first file, or not)
            head, read = _allocation_section(main)
        peak_step, _ = _peak(_peak_file(main, files), with_bytes=False)
    except (LoadError, OSError):
        return None
    allocations = _allocations(head)
    if explain and head.count(b"\nallocation ") != len(allocations):
        _no_size_past_int64(main, head)  # a line the pass left out: why
    if not allocations:
        return None
    # Total bytes used: a split module's values file prints it first (jax >= 0.10);
    # else it follows the allocations (not looked for through 19 MB of them in vain).
    total_bytes = _total(b"\n" + values_head) if values_head else None
    if total_bytes is None:
        total_bytes = _total(head)
    sections = ParsedSections(
        allocations=allocations,  # read on first use
        total_bytes_used=total_bytes,
        # the input/output aliases (for memory_analysis()) come with completed(): the
        # first line of the HLO text beside the dump, 0.07 s at 12 000 entries
    )
    analysis = Analysis(
        values=[],
        by_id=ValuesById([]),
        max_time=0,
        live_bytes=[],
        peak_step=peak_step,
        peak_bytes=0,
        peak_values=[],
        peak_occupied_bytes=0,
        totals_by_kind={},
        allocations_by_kind={},
        totals_by_color=bytes_by_color(allocations.colors, allocations.sizes),
        allocation_of=allocations.by_index(),
    )
    return ModuleDump(
        module_name(main),
        (DumpFile(str(main), "buffer-assignment"),),
        sections,
        [],
        analysis,
        preview=(read, total),
    )


def completed(
    first: ModuleDump, pause: Callable[[], object] | None = None, *, explain: bool = False
) -> ModuleDump:
    """The :func:`glance` ``first`` with every allocation read and analysed as
    :func:`preview` gives it (their columns, an :class:`~hlotop.model.AllocationTable`;
    the first look's lines read their allocations from it from then on, their text let
    go). ``pause``, if given, is called every
    :data:`~hlotop.model.allocation_lines.PAUSE_EVERY` allocations read (a browser's
    load thread waits in it while keys come in: reading 58 000 allocations takes a
    quarter of a second). Raises nothing, or with ``explain`` :class:`PastInt64` for a
    peak-list entry of 2^63 bytes or more (else the peak bytes are left unset)."""
    path = first.files[0].path
    lines = first.sections.allocations
    if isinstance(lines, AllocationLines):
        # Their columns, none kept as an object: from now on the first look's lines
        # read their allocations from there, and their text is let go.
        allocations: Sequence[BufferAllocation] = lines.read_all(pause)
    else:
        allocations = tuple(lines)
    sections = replace(
        first.sections,
        allocations=allocations,
        input_output_alias=read_io_alias(Path(path)),  # one line of the HLO text beside it
    )
    analysis = analyze(sections, [], path)
    analysis.peak_step = first.analysis.peak_step
    try:
        main = Path(path)
        _, peak_bytes = _peak(_peak_file(main, module_files(main)))
    except PastInt64:  # a damaged peak list: no figure (the whole load says where)
        if explain:
            raise
        peak_bytes = None
    except (LoadError, OSError):
        peak_bytes = None
    if peak_bytes is not None:  # XLA's figure: the sum of its printed list
        analysis.peak_bytes, analysis.peak_bytes_source = peak_bytes, "list"
    return ModuleDump(first.name, first.files, sections, [], analysis, preview=first.preview)


def preview(
    path: str | os.PathLike, *, from_bytes: int = PREVIEW_FROM, explain: bool = False
) -> ModuleDump | None:
    """The first look at the dump ``path`` names (as for
    :func:`hlotop.loading.loader.load`): a :class:`ModuleDump` holding every allocation
    (index, size in bytes, colour, kinds; no value slots yet), ``Total bytes used`` and,
    as ``analysis.peak_step``, the peak step XLA printed (None if it prints none: the
    whole load computes it), and as ``analysis.peak_bytes`` the sum of the list XLA
    printed under that line (source ``"list"``). Its ``preview`` is (bytes read, bytes in the module's
    files); it has no records, no live ranges and no diagnostics (the whole load
    reports them).

    Returns None when a first look would not help or cannot be made: standard input,
    a dump under ``from_bytes`` bytes (the whole load is as quick), a file with no
    allocation, or any problem opening it (the whole load then says what it is).
    With ``explain``, a size of 2^63 bytes or more (an allocation's, or an entry's of
    XLA's peak list: damage, XLA's sizes are int64) raises :class:`PastInt64` naming
    its line; without, such an allocation or peak list is left out.

    Raises nothing else; reads the allocation section and the live ranges' peak line
    only.
    """
    first = glance(path, from_bytes=from_bytes, explain=explain)
    return None if first is None else completed(first, explain=explain)


class PastInt64(LoadError):
    """A byte count of 2^63 or more in a dump: no number XLA prints (an int64)."""


def _no_size_past_int64(path: Path, head: bytes) -> None:
    """Raise :class:`PastInt64` for the first allocation line of ``head`` (the
    allocation section of ``path``) whose size is 2^63 or more; return if none is."""
    for m in _LONG_SIZE.finditer(head):
        if int(m.group(2)) >= _INT64_END:
            line = head.count(b"\n", 0, m.start()) + 2
            raise PastInt64(
                str(path),
                f"line {line}: allocation {int(m.group(1))}: size {int(m.group(2))} is 2^63 or "
                "more (XLA's sizes are int64)",
            )


def _allocation_section(path: Path) -> tuple[bytes, int]:
    """The head of ``path`` up to and including the line after its allocation section
    (``Total bytes used``), read a chunk at a time; and how many bytes were read."""
    data = bytearray()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            looked_from = max(len(data) - 32, 0)
            data += chunk
            end = _AFTER_ALLOCATIONS.search(data, looked_from)
            if end is not None:
                line_end = data.find(b"\n", end.start() + 1)
                if line_end < 0:
                    line_end = len(data)
                with memoryview(data) as view:  # one copy, not two
                    return bytes(view[: line_end + 1]), len(data)
    return bytes(data), len(data)


def _allocations(head: bytes) -> AllocationLines:
    """The allocation lines of ``head`` (each read by the allocation line's form when
    first asked for, with its 1-based line number, counted then; their index, size
    and colour read now)."""
    found = _ALLOCATION_LINES.findall(head)
    column = lambda group: map(itemgetter(group), found)  # noqa: E731
    allocations = AllocationLines(
        list(column(0)),
        array("q", map(int, column(1))),
        array("q", map(int, column(2))),
        _colors(list(column(3))),
        _read_allocation,
        lambda: _line_numbers(head, len(found)),
    )
    return allocations


def _colors(printed: list[bytes]) -> array:
    """The colour of each allocation line from its printed ``color N`` (b"" when it
    prints none: colour 0, as on every CPU and GPU allocation)."""
    if not any(printed):
        return array("q", bytes(8 * len(printed)))
    return array("q", [int(c) if c else 0 for c in printed])


def _total(head: bytes) -> int | None:
    """``Total bytes used`` in ``head``, if it is there."""
    total = _TOTAL.search(head)
    return int(total.group(1)) if total else None


def _line_numbers(head: bytes, lines: int) -> array:
    """The 1-based line of each of the ``lines`` allocation lines of ``head``."""
    starts = [m.start() for m in _ALLOCATION_START.finditer(head)]
    if len(starts) != lines:  # a line that starts as one and is not: the slow way
        starts = [m.start() for m in _ALLOCATION_LINES.finditer(head)]
    # Each start is the line end before its line, whose number is two more than the
    # line ends before that one.
    gaps = map(head.count, repeat(b"\n"), [0, *starts], starts)
    return array("q", accumulate(gaps, initial=2))[1:]


def _read_allocation(line_bytes: bytes, line: int) -> BufferAllocation:
    m = ALLOCATION_HEAD.pattern.match(line_bytes.decode("utf-8", errors="replace"))
    assert m is not None, "an allocation line the first look matched"
    allocation: BufferAllocation = ALLOCATION_HEAD.build(m, line)
    return allocation


def _peak_file(main: Path, files: list[tuple[Path, str | None]]) -> Path | None:
    """The file of the module of ``main`` (its ``files``) that holds the live ranges:
    a split module's live-range file, else ``main`` itself."""
    return next((f for f, kind in files if kind == "live-range"), main)


def _peak(path: Path | None, *, with_bytes: bool = True) -> tuple[int | None, int | None]:
    """XLA's ``Live ranges at N (peak):`` in ``path`` (the live ranges come last: found
    from the end): the step N, and (``with_bytes``, else None) the bytes of the values
    it lists added up (its ``name{i}: B bytes`` lines); (None, None) if it has none.
    Raises ``OSError``, or :class:`PastInt64` for a line of 2^63 bytes or more."""
    if path is None:
        return None, None
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return None, None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            # The peak line is near the end (only the stack-trace tree is after it):
            # found from there, then checked to be inside a live-range block.
            peak_line = mm.rfind(_PEAK_START)
            if peak_line < 0:
                return None, None
            if (
                mm[: len(LIVE_RANGE_START)] != LIVE_RANGE_START
                and mm.rfind(b"\n" + LIVE_RANGE_START, 0, peak_line) < 0
            ):
                return None, None
            m = _PEAK.match(mm, peak_line)
            if m is None:
                return None, None
            if not with_bytes:
                return int(m.group(1)), None
            # The list runs while its lines match, one after another: found in runs of
            # _PEAK_RUN bytes, each added up at once (10^4 lines at 46 MB).
            total, at = 0, m.end()
            while True:
                run = _PEAK_RUN.match(mm, at)
                if run is None or run.end() == at:
                    break
                entries = list(map(int, _PEAK_BYTES.findall(mm, at, run.end())))
                if max(entries) >= _INT64_END:
                    _peak_entry_past_int64(path, mm, at, run.end())
                total += sum(entries)
                at = run.end()
            return int(m.group(1)), total


def _peak_entry_past_int64(path: Path, mm: mmap.mmap, start: int, end: int) -> None:
    """Raise :class:`PastInt64` for the first peak-list line in ``mm[start:end]`` (of
    ``path``) whose bytes are 2^63 or more."""
    for m in _PEAK_BYTES.finditer(mm, start, end):
        if int(m.group(1)) >= _INT64_END:
            line = mm[: m.start()].count(b"\n") + 2
            raise PastInt64(
                str(path),
                f"line {line}: a peak-list entry of {int(m.group(1))} bytes is 2^63 or more "
                "(XLA's sizes are int64)",
            )
