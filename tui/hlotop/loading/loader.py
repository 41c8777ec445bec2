"""Opening a dump: from a path (any file of a split module, a combined file, a directory
holding one module) or standard input, to a :class:`ModuleDump` with its analysis.

Files are only ever read. Anything that is not a dump is refused with a
:class:`LoadError` whose message is one line; problems inside a dump become
diagnostics and the rest of it still opens.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import fields, replace
from pathlib import Path

from hlotop.analysis.analyze import analyze
from hlotop.model import (
    Analysis,
    Diagnostic,
    DumpFile,
    ModuleDump,
    ParsedSections,
    StackFrameTable,
    UsedValues,
)
from hlotop.parse import scan
from hlotop.parse.dump import ReadHooks, parse_text
from hlotop.parse.live_range import UNAVAILABLE
from hlotop.parse.stack_frames import parse_stack_frames
from hlotop.parse.tokens import Sink
from hlotop.process import gc_paused  # noqa: F401 - TEMPORARY: report/ still imports it here

# Since 2026-04 a module's buffer assignment is split over these files (FORMATS.md 1).
SPLIT_SUFFIXES = {
    "-buffer-assignment.txt": "buffer-assignment",
    "-buffer-assignment-values.txt": "values",
    "-live-range.txt": "live-range",
    "-memory-usage-report.txt": "memory-usage-report",
}
_SNIFF_BYTES = 8192
_NO_HOOKS = ReadHooks()


class LoadError(Exception):
    """The input cannot be opened as a dump. ``str()`` is ``"<path>: <reason>"``."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def split_module_prefix(path: Path) -> tuple[str, str] | None:
    """``module_0001.f.cpu_after_optimizations-live-range.txt`` ->
    (``module_0001.f.cpu_after_optimizations``, ``"live-range"``); None for other names."""
    name = path.name
    for suffix in sorted(SPLIT_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)], SPLIT_SUFFIXES[suffix]
    return None


def module_files(path: Path) -> list[tuple[Path, str | None]]:
    """The files of the module ``path`` belongs to, with their kind where the name
    tells it: the siblings of a split module that exist, in dump order."""
    split = split_module_prefix(path)
    if split is None:
        return [(path, None)]
    prefix, _ = split
    out = []
    for suffix, kind in SPLIT_SUFFIXES.items():
        candidate = path.with_name(prefix + suffix)
        if candidate == path or candidate.exists():
            out.append((candidate, kind))
    return out


def read_text(path: str, data: bytes, diagnostics: list[Diagnostic]) -> str | bytes:
    """A dump's text, with LF line ends: its bytes as they are if they are all ASCII
    (as XLA writes them; :func:`~hlotop.parse.dump.parse_text` decodes only the parts
    it reads line by line, so a big dump is not held twice), else decoded as UTF-8,
    invalid bytes replaced and reported at their line. A binary file (many control
    bytes) or an empty one raises :class:`LoadError`."""
    if not data or data.isspace():  # not data.strip(): a copy of the whole file
        raise LoadError(path, "the file is empty")
    if _looks_binary(data[:_SNIFF_BYTES]):
        raise LoadError(path, "a binary file, not a text dump")
    if scan.contains(data, b"\r\n"):
        data = data.replace(b"\r\n", b"\n")  # CRLF and LF dumps read the same
    elif not scan.contains(data, b"\n") and scan.contains(data, b"\r"):
        data = data.replace(b"\r", b"\n")  # old Mac line ends: CR alone
    if scan.is_ascii(data):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        diagnostics.append(
            Diagnostic(
                path, line, "invalid UTF-8; undecodable bytes are shown as U+FFFD", "warning"
            )
        )
        return data.decode("utf-8", errors="replace")


_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r") + b"\x7f"


def _looks_binary(sample: bytes) -> bool:
    """More than 10% control bytes: an executable, a proto, an image. A text dump with a
    stray NUL is damaged, not binary: it opens, and the line is reported."""
    control = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    return control * 10 > len(sample)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise LoadError(str(path), "no such file") from None
    except PermissionError:
        raise LoadError(str(path), "permission denied") from None
    except IsADirectoryError:
        raise LoadError(str(path), "is a directory") from None
    except OSError as err:
        raise LoadError(str(path), err.strerror or str(err)) from None


def _merge(parts: list[ParsedSections]) -> ParsedSections:
    """Combine the sections read from several files: the first non-empty of each."""
    merged = {}
    for f in fields(ParsedSections):
        values = [getattr(p, f.name) for p in parts]
        merged[f.name] = next((v for v in values if v), values[0] if values else None)
    return ParsedSections(**merged)


def _kind_of(parsed: ParsedSections, named: str | None) -> str:
    if parsed.saw_buffer_assignment and parsed.saw_used_values:
        return "combined"
    if named:
        return named
    if parsed.saw_buffer_assignment:
        return "combined"  # a pre-2019 or cut-short file: only the allocations
    if parsed.saw_used_values:
        return "values"
    if parsed.live_range is not None or parsed.live_range_unavailable:
        return "live-range"
    return "memory-usage-report"


def _is_dump(parsed: ParsedSections) -> bool:
    return bool(
        parsed.saw_buffer_assignment
        or parsed.saw_used_values
        or parsed.live_range is not None
        or parsed.live_range_unavailable
        or parsed.memory_usage_report is not None
        or parsed.total_bytes_used is not None
    )


def _parse_one(
    label: str,
    data: bytes | list[bytes],
    diagnostics: list[Diagnostic],
    hooks: ReadHooks = _NO_HOOKS,
) -> ParsedSections:
    """Parse one file's bytes. Given as a one-item list, the bytes are released as soon
    as they are decoded, so a big dump is not held twice while it is parsed."""
    if isinstance(data, list):
        text = read_text(label, data.pop(), diagnostics)
    else:
        text = read_text(label, data, diagnostics)
    file_diags: list[Diagnostic] = []
    parsed = parse_text(label, text, file_diags, hooks)
    if not _is_dump(parsed):
        raise LoadError(
            label,
            "not an XLA buffer-assignment dump (no 'BufferAssignment:', "
            "'Used values:' or 'HloLiveRange' section)",
        )
    head = text[: len(UNAVAILABLE)]
    if isinstance(head, bytes):
        head = head.decode("ascii")
    if not text.endswith(scan.newline_of(text)) and not head.startswith(UNAVAILABLE):
        last = scan.count_lines(text, 0, len(text)) + 1
        file_diags.append(
            Diagnostic(
                label,
                last,
                "truncated: the file does not end with a "
                "newline, so it was probably cut short here",
                "warning",
            )
        )
    diagnostics.extend(file_diags)
    return parsed


def check_truncation(
    path: str, parsed: ParsedSections, kind: str, diagnostics: list[Diagnostic]
) -> None:
    """Warnings (``truncated: ...``) for a file whose sections stop where a whole dump
    would go on: what was read before the cut is kept. ``kind`` as in :class:`DumpFile`."""

    def cut(message: str, line: int = 0) -> None:
        diagnostics.append(Diagnostic(path, line, "truncated: " + message, "warning"))

    if kind == "combined" and parsed.saw_buffer_assignment:
        if parsed.total_bytes_used is None:
            cut("the file ends before 'Total bytes used': only the allocations were read")
        elif not parsed.saw_used_values:
            cut("no 'Used values:' section after 'Total bytes used'")
    records = parsed.used_values
    if isinstance(records, UsedValues) and len(records) > 1:
        first, last = records.record(0), records.record(len(records) - 1)
        if (
            first is not None
            and last is not None
            and first.instruction_text is not None
            and last.instruction_text is None
        ):
            cut(
                f"the last value record ({last.value}) stops before its 'from instruction' line",
                last.line,
            )
    live = parsed.live_range
    if live is not None:
        if len(live.instruction_sequence) < live.max_time:
            cut(
                f"the schedule lists {len(live.instruction_sequence)} of the "
                f"{live.max_time} steps of 'HloLiveRange (max {live.max_time})'",
                live.line,
            )
        elif live.instruction_sequence and not live.buffers:
            cut("no 'BufferLiveRange:' lines after the instruction sequence", live.line)


def _find_module_in_dir(directory: Path) -> Path:
    candidates = sorted(directory.glob("*-buffer-assignment.txt"))
    if not candidates:
        raise LoadError(str(directory), "no *-buffer-assignment.txt dump in this directory")
    if len(candidates) > 1:
        largest = max(candidates, key=lambda p: p.stat().st_size)
        raise LoadError(
            str(directory),
            f"{len(candidates)} modules here; name one, e.g. {largest.name} (the largest)",
        )
    return candidates[0]


def load(
    path: str | os.PathLike,
    *,
    stdin=None,
    lazy: bool = False,
    pause: Callable[[], object] | None = None,
    on_records: Callable[[UsedValues, StackFrameTable | None], object] | None = None,
    stage: Callable[[str], object] | None = None,
) -> ModuleDump:
    """Open a dump and analyse it.

    ``path``: a combined ``*-buffer-assignment.txt`` of any era, any one file of a split
    module (its siblings are found and read), a directory holding exactly one module,
    or ``"-"`` to read a combined dump from ``stdin`` (default ``sys.stdin``).
    With ``lazy=True`` the ``Used values`` records are only indexed, and each is parsed
    when first asked for (its diagnostics then come with :meth:`ModuleDump.read_records`);
    otherwise all are read and checked now.
    ``pause``, if given, is called every few thousand lines (a browser's load thread
    waits in it while keys come in). ``on_records(table, frames)``, if given, is called
    with a file's ``Used values`` :class:`~hlotop.model.UsedValues` (and the module's stack frames,
    or None) as soon as it is indexed, before the rest of the dump is read (``--json``
    starts writing records then). ``stage(text)``,
    if given, is told what is being read: ``"reading <file>"``, ``"allocations 45%"``,
    ``"live ranges 80%"``, ``"analysing"``.
    Returns a :class:`ModuleDump`; sizes in bytes, times in schedule steps.
    Raises :class:`LoadError` (one-line reason) when the input is missing,
    unreadable, empty, binary or not a dump.
    """
    return _load(path, stdin=stdin, lazy=lazy, hooks=ReadHooks(pause, on_records, stage))


def _load(
    path: str | os.PathLike, *, stdin=None, lazy: bool = False, hooks: ReadHooks = _NO_HOOKS
) -> ModuleDump:
    if str(path) == "-":
        stream = stdin if stdin is not None else sys.stdin
        data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read().encode()
        return load_bytes(data, lazy=lazy)
    diagnostics: list[Diagnostic] = []
    p = resolve(path)
    # Read before the dump's files: on_records is handed them with the records.
    frame_diagnostics: list[Diagnostic] = []
    frames = read_stack_frames(p, frame_diagnostics)
    if hooks.on_records is not None:
        on_records = hooks.on_records
        hooks = replace(hooks, on_records=lambda table: on_records(table, frames))
    parts: list[ParsedSections] = []
    files: list[DumpFile] = []
    entries = module_files(p)
    read: dict[int, tuple[ParsedSections | None, list[Diagnostic]]] = {}
    # A split module's values file is read first: its records are indexed (and, with
    # on_records, handed on) by another process while the rest is read. Diagnostics
    # still come in the files' order.
    order = sorted(range(len(entries)), key=lambda i: entries[i][1] != "values")
    for i in order:
        file_path, _ = entries[i]
        label, found = str(file_path), []
        if hooks.stage is not None:
            hooks.stage(f"reading {file_path.name}")
        read[i] = (
            _parse_one(label, [_read_bytes(file_path)], found, hooks)
            if file_path == p
            else _parse_sibling(label, file_path, found, hooks),
            found,
        )
    for i, (file_path, named_kind) in enumerate(entries):
        parsed, found = read[i]
        diagnostics.extend(found)
        if parsed is None:
            continue
        label = str(file_path)
        parts.append(parsed)
        kind = _kind_of(parsed, named_kind)
        files.append(DumpFile(label, kind))
        check_truncation(label, parsed, kind, diagnostics)
    sections = _merge(parts)
    _check_siblings(p, files, diagnostics)
    diagnostics.extend(frame_diagnostics)
    if frames is not None:
        sections = replace(sections, stack_frames=frames)
        files.append(DumpFile(frames.path, "module-text"))
    if hooks.stage is not None:
        hooks.stage("analysing")
    return _finish(module_name(p), tuple(files), sections, diagnostics, lazy)


def resolve(path: str | os.PathLike) -> Path:
    """The dump file a user's ``path`` names: the path itself, the one module in a
    directory, or the buffer assignment beside a module's HLO text. Raises
    :class:`LoadError` for a missing path or a directory without exactly one module."""
    p = Path(path)
    try:
        if p.is_dir():
            return _find_module_in_dir(p)
        if not p.exists():
            if p.is_symlink():
                raise LoadError(
                    str(p), "a symbolic link that leads nowhere (a loop, or its target is missing)"
                )
            raise LoadError(str(p), "no such file or directory")
        if not p.is_file():  # a FIFO or a device would be read forever
            raise LoadError(str(p), "not a regular file")
        sibling = p.with_name(p.stem + "-buffer-assignment.txt")
        if split_module_prefix(p) is None and sibling.exists():
            return sibling  # the module's HLO text was named
    except OSError as err:  # a name too long, a folder that cannot be listed, ...
        raise LoadError(str(p), err.strerror or str(err)) from None
    return p


def module_name(path: Path) -> str:
    """The module's name: a split module's common prefix, else the file's stem."""
    split = split_module_prefix(path)
    return split[0] if split else path.stem


def load_bytes(data: bytes, label: str = "<stdin>", *, lazy: bool = False) -> ModuleDump:
    """Open a combined dump already read into memory (``hlotop -``); ``label`` names it
    in diagnostics. ``lazy`` as for :func:`load`. Raises :class:`LoadError` like it."""
    diagnostics: list[Diagnostic] = []
    parsed = _parse_one(label, data, diagnostics)
    check_truncation(label, parsed, _kind_of(parsed, None), diagnostics)
    return _finish(label, (DumpFile(label, _kind_of(parsed, None)),), parsed, diagnostics, lazy)


def read_stack_frames(path: Path, diagnostics: list[Diagnostic]):
    """The stack-frame tables from the head of the module's HLO text beside the dump
    (``<module>.<backend>_after_optimizations.txt``), or None. Only the head is read."""
    split = split_module_prefix(path)
    if split is None:
        return None
    text_path = path.with_name(split[0] + ".txt")
    try:
        with open(text_path, encoding="utf-8", errors="replace") as f:
            sink = Sink(str(text_path), diagnostics)
            return parse_stack_frames(str(text_path), (ln.rstrip("\r\n") for ln in f), sink)
    except OSError:
        return None


def _parse_sibling(
    label: str, path: Path, diagnostics: list[Diagnostic], hooks: ReadHooks = _NO_HOOKS
):
    """A sibling that cannot be read is a warning: the rest of the module still opens."""
    try:
        return _parse_one(label, [_read_bytes(path)], diagnostics, hooks)
    except LoadError as err:
        diagnostics.append(Diagnostic(label, 0, f"sibling file skipped: {err.reason}", "warning"))
        return None


def _check_siblings(path: Path, files: list[DumpFile], diagnostics: list[Diagnostic]) -> None:
    split = split_module_prefix(path)
    if split is None or any(f.kind == "combined" for f in files):
        return
    have = {f.kind for f in files}
    for suffix, kind in SPLIT_SUFFIXES.items():
        if kind not in have:
            diagnostics.append(
                Diagnostic(
                    str(path.with_name(split[0] + suffix)),
                    0,
                    f"truncated: missing sibling file of a split "
                    f"module ({kind}); what it holds is not shown",
                    "warning",
                )
            )


def _finish(
    name: str,
    files: tuple[DumpFile, ...],
    sections: ParsedSections,
    diagnostics: list[Diagnostic],
    lazy: bool = False,
) -> ModuleDump:
    label = files[0].path if files else name
    analysis = analyze(sections, diagnostics, label)
    _check_consistency(label, sections, analysis, diagnostics)
    module = ModuleDump(name, files, sections, diagnostics, analysis)
    if not lazy:
        module.read_records()
    return module


def _check_consistency(
    path: str, sections: ParsedSections, analysis: Analysis, diagnostics: list[Diagnostic]
) -> None:
    """Warnings for figures that disagree with each other."""
    total = sections.total_bytes_used
    allocated = sum(a.size for a in sections.allocations)
    if total is not None and sections.allocations and total != allocated:
        diagnostics.append(
            Diagnostic(
                path,
                0,
                f"'Total bytes used: {total}' but the allocations add up to {allocated} bytes",
                "warning",
            )
        )
    live = sections.live_range
    if (
        live is not None
        and live.peak is not None
        and analysis.peak_step is not None
        and live.peak.time != analysis.peak_step
    ):
        diagnostics.append(
            Diagnostic(
                path,
                live.peak.line,
                f"XLA printed the peak at step "
                f"{live.peak.time}; hlotop computes "
                f"step {analysis.peak_step}",
                "warning",
            )
        )
