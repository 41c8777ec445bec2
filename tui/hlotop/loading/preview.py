"""The first look at a big dump: every allocation, the true total and XLA's peak step,
in a fraction of the time the whole dump takes to load.

XLA prints the allocations first (``BufferAssignment:``, FORMATS.md 3.2-3.3: the
combined file, or a split module's ``-buffer-assignment.txt``), then ``Total bytes
used``, then the value records and the live ranges, whose ``Live ranges at N (peak):``
line (FORMATS.md 5) names XLA's peak step. The first look reads only the allocation
section, and of it only the allocation lines (one match each of
:data:`~hlotop.parse.allocations.ALLOCATION_HEAD`, the form the whole load reads;
a 100 MB dump's 56 000 allocations in about 0.1 s), the total after it, and the peak
line found from the end of the live ranges. The value lines inside the allocations,
the records and the live ranges come with the whole load
(:func:`hlotop.loading.loader.load`), which the browser swaps in when it is done.
"""

from __future__ import annotations

import mmap
import os
import re
from pathlib import Path

from hlotop.analysis.analyze import analyze
from hlotop.loading.discover import module_files, module_name, resolve, split_module_prefix
from hlotop.loading.errors import LoadError
from hlotop.loading.module_text import read_io_alias
from hlotop.model import BufferAllocation, Diagnostic, DumpFile, ModuleDump, ParsedSections
from hlotop.parse.allocations import ALLOCATION_HEAD

PREVIEW_FROM = 1 << 20  # bytes: a smaller dump loads whole about as fast
_CHUNK = 1 << 23  # bytes read at a time while looking for the end of the allocations
# Lines that end the allocation section.
_AFTER_ALLOCATIONS = (b"\nTotal bytes used:", b"\nUsed values:", b"\nHloLiveRange")
# Found by their literal start ("allocation "), each then checked to start a line: a
# "^" in the pattern would make the search try every line (twice as long).
_ALLOCATION_LINES = re.compile(ALLOCATION_HEAD.body + "$", re.M)
_TOTAL = re.compile(rb"\nTotal bytes used: (\d+)")
_PEAK = re.compile(rb"\n  Live ranges at (\d+) \(peak\):")
# The lines of the peak list, one after another from the peak line on (up to 256 at a
# time), and the byte count of each.
_PEAK_RUN = re.compile(rb"(?:\n    [^\n]*?: \d+ bytes[^\n]*){1,256}")
_PEAK_BYTES = re.compile(rb"\n    [^\n]*?: (\d+) bytes")


def preview(path: str | os.PathLike, *, from_bytes: int = PREVIEW_FROM) -> ModuleDump | None:
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
    Raises nothing; reads the allocation section and the live ranges' peak line only.
    """
    if str(path) == "-":
        return None
    try:
        main = resolve(path)
        files = module_files(main)
        total = sum(f.stat().st_size for f, _ in files)
        if total < from_bytes:
            return None
        if split_module_prefix(main) is not None:
            kinds = dict((kind, f) for f, kind in files)
            allocations_file = kinds.get("buffer-assignment")
            if allocations_file is None:
                return None
            main = allocations_file
            head, read = _allocation_section(main)
            peak_step, peak_bytes = _peak(kinds.get("live-range") or main)
            values = kinds.get("values")
            if values is not None:  # its first lines hold Total bytes used (jax >= 0.10)
                with open(values, "rb") as f:
                    head += b"\n" + f.read(4096)
        else:
            head, read = _allocation_section(main)
            peak_step, peak_bytes = _peak(main)
    except (LoadError, OSError):
        return None
    allocations, total_bytes = _allocations(head)
    if not allocations:
        return None
    sections = ParsedSections(
        allocations=allocations,
        total_bytes_used=total_bytes,
        input_output_alias=read_io_alias(main),  # one line of the HLO text beside it
    )
    ignored: list[Diagnostic] = []
    analysis = analyze(sections, ignored, str(main))
    analysis.peak_step = peak_step
    if peak_bytes is not None:  # XLA's figure: the sum of its printed list
        analysis.peak_bytes, analysis.peak_bytes_source = peak_bytes, "list"
    return ModuleDump(
        module_name(main),
        (DumpFile(str(main), "buffer-assignment"),),
        sections,
        [],
        analysis,
        preview=(read, total),
    )


def _allocation_section(path: Path) -> tuple[bytes, int]:
    """The head of ``path`` up to and including the line after its allocation section
    (``Total bytes used``), read a chunk at a time; and how many bytes were read."""
    data = bytearray()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            looked_from = max(len(data) - 32, 0)
            data += chunk
            ends = [at for at in (data.find(m, looked_from) for m in _AFTER_ALLOCATIONS) if at >= 0]
            if ends:
                line_end = data.find(b"\n", min(ends) + 1)
                if line_end < 0:
                    line_end = len(data)
                return bytes(data[: line_end + 1]), len(data)
    return bytes(data), len(data)


def _allocations(head: bytes) -> tuple[tuple[BufferAllocation, ...], int | None]:
    """The allocation lines of ``head`` (each read by the allocation line's form, with
    its 1-based line number) and ``Total bytes used`` if it is there."""
    text = head.decode("utf-8", errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    build, count = ALLOCATION_HEAD.build, text.count
    allocations: list[BufferAllocation] = []
    append = allocations.append
    line, at = 1, 0
    for m in _ALLOCATION_LINES.finditer(text):
        start = m.start()
        if start and text[start - 1] != "\n":
            continue
        line += count("\n", at, start)
        at = start
        append(build(m, line))
    total = _TOTAL.search(head)
    return tuple(allocations), int(total.group(1)) if total else None


def _peak(path: Path | None) -> tuple[int | None, int | None]:
    """XLA's ``Live ranges at N (peak):`` in ``path`` (the live ranges come last: found
    from the end): the step N, and the bytes of the values it lists added up (its
    ``name{i}: B bytes`` lines); (None, None) if it has none."""
    if path is None:
        return None, None
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return None, None
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            # The peak line is near the end (only the stack-trace tree is after it):
            # found from there, then checked to be inside a live-range block.
            peak_line = mm.rfind(b"\n  Live ranges at ")
            if peak_line < 0:
                return None, None
            if (
                mm[:18] != b"HloLiveRange (max "
                and mm.rfind(b"\nHloLiveRange (max ", 0, peak_line) < 0
            ):
                return None, None
            m = _PEAK.match(mm, peak_line)
            if m is None:
                return None, None
            # The list runs while its lines match, one after another: found in runs of
            # _PEAK_RUN bytes, each added up at once (10^4 lines at 46 MB).
            total, at = 0, m.end()
            while True:
                run = _PEAK_RUN.match(mm, at)
                if run is None or run.end() == at:
                    break
                total += sum(map(int, _PEAK_BYTES.findall(mm, at, run.end())))
                at = run.end()
            return int(m.group(1)), total
