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
from dataclasses import dataclass, fields, replace
from functools import partial
from pathlib import Path
from typing import Any, cast

from hlotop.analysis.analyze import BeforeLiveRanges, analyze
from hlotop.loading.agreement import check_agreement, check_stack_trace
from hlotop.loading.ahead import Job, PartsAhead, Read
from hlotop.loading.checks import (
    STDIN_REPORT,
    check_consistency,
    check_siblings,
    check_truncation,
    report_alone,
)
from hlotop.loading.decode import read_text
from hlotop.loading.discover import (
    SPLIT_SUFFIXES,
    module_files,
    module_name,
    resolve,
    split_module_prefix,
)
from hlotop.loading.errors import LoadError
from hlotop.loading.input_bytes import read_stream
from hlotop.loading.module_text import (
    called_metadata_reader,
    entry_parameters_reader,
    read_io_alias,
    read_stack_frames,
)
from hlotop.loading.one_file import (
    kind_of,
    live_ranges_then_tree,
    parse_file,
    parse_sibling,
    read_bytes,
)
from hlotop.loading.plan import ReadPlan, plan_module
from hlotop.model import (
    Diagnostic,
    DumpFile,
    IoAlias,
    ModuleDump,
    ParsedSections,
    StackFrameTable,
    StackTrace,
    UsedValues,
)
from hlotop.parse.dump import ReadHooks

__all__ = [  # what other layers take from here
    "SPLIT_SUFFIXES",
    "LoadError",
    "load",
    "load_bytes",
    "module_files",
    "module_name",
    "read_text",
    "resolve",
    "split_module_prefix",
]
_NO_HOOKS = ReadHooks()
# load's on_records: told a file's records (str or, all ASCII, bytes) and the stack frames
OnRecords = Callable[[UsedValues[str] | UsedValues[bytes], StackFrameTable | None], object]


def _merge(parts: list[ParsedSections]) -> ParsedSections:
    """Combine the sections read from several files: of each field, the first value a
    file gave (:func:`_given`), else the first file's."""
    merged: dict[str, Any] = {}  # field name -> value, whatever the field's type
    for f in fields(ParsedSections):
        values = [getattr(p, f.name) for p in parts]
        merged[f.name] = next((v for v in values if _given(v)), values[0] if values else None)
    return ParsedSections(**merged)


def _given(value: object) -> bool:
    """Whether a file gave this section: a number is a figure even when it is 0 (an
    empty module's ``Total bytes used: 0 (0B)``); None, False and empty collections
    are sections the file did not have."""
    if isinstance(value, int) and not isinstance(value, bool):
        return True
    return bool(value)


def load(
    path: str | os.PathLike,
    *,
    stdin=None,
    lazy: bool = False,
    pause: Callable[[], object] | None = None,
    on_records: OnRecords | None = None,
    stage: Callable[[str], object] | None = None,
    workers: int = 0,
    meanwhile: Callable[[], object] | None = None,
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
    ``"live ranges 80%"``, ``"analysing"``. ``workers``: how many worker processes
    this process may fork (:func:`hlotop.process.report_workers` says; 0, the default:
    none); with one, a split module's records are indexed (its
    ``-buffer-assignment-values.txt``, unless ``on_records`` is given) and its live
    ranges read (its ``-live-range.txt``) on another core (:mod:`hlotop.loading.ahead`),
    and ``pause`` and ``stage`` are not told of them. ``meanwhile``, if given, is
    called at most once, when this process would otherwise wait for the worker: the
    caller's work that needs nothing of the dump (``--summary``'s imports) is done then.
    Returns a :class:`ModuleDump`; sizes in bytes, times in schedule steps.
    Raises :class:`LoadError` (one-line reason) when the input is missing,
    unreadable, empty, binary or not a dump (standard input is read under the bounds
    of :func:`~hlotop.loading.input_bytes.read_stream`; a gzip-compressed file or
    stream is decompressed).
    """
    hooks = ReadHooks(pause, None, stage)
    return _load(
        path,
        stdin=stdin,
        lazy=lazy,
        hooks=hooks,
        on_records=on_records,
        workers=workers,
        meanwhile=meanwhile,
    )


def _load(
    path: str | os.PathLike,
    *,
    stdin=None,
    lazy: bool = False,
    hooks: ReadHooks = _NO_HOOKS,
    on_records: OnRecords | None = None,
    workers: int = 0,
    meanwhile: Callable[[], object] | None = None,
) -> ModuleDump:
    if str(path) == "-":
        return load_bytes(_stdin_bytes(stdin), lazy=lazy)
    plan = plan_module(resolve(path), records_here=on_records is not None)
    with PartsAhead(workers, meanwhile) as ahead:
        # With a worker: the records indexed and the live ranges read on another core,
        # unless the records are handed on as soon as they are indexed (on_records:
        # --json starts writing them then), which this process does first. The live
        # ranges come back before their stack-trace tree, which the worker reads after.
        plan = plan.handed(ahead.start(plan.parts(_job)))
        # The HLO text's head once the workers are off (0.1 s at 46 MB: its stack frames
        # and a 256-layer model's 12 000 aliases), before the dump's files: on_records
        # is handed the frames with the records.
        beside = _HloText.read(plan.main)
        if on_records is not None:
            hooks = replace(hooks, on_records=partial(_with_frames, on_records, beside.frames))
        read, before = _read_files(plan, ahead, hooks, beside)
        return _module(plan, read, ahead, beside, hooks, lazy, before)


def _stdin_bytes(stdin) -> bytes:
    """What standard input (``stdin``, default ``sys.stdin``) holds, under the bounds of
    :func:`~hlotop.loading.input_bytes.read_stream`. Raises :class:`LoadError`."""
    stream = stdin if stdin is not None else sys.stdin
    if hasattr(stream, "buffer"):
        return read_stream(stream.buffer, "<stdin>")
    return stream.read().encode()


def _job(kind: str | None) -> Job:
    """How a worker reads a file of ``kind``: a -live-range.txt its tree last."""
    return live_ranges_then_tree if kind == "live-range" else parse_sibling


def _with_frames(on_records: OnRecords, frames: StackFrameTable | None, table) -> object:
    return on_records(table, frames)


@dataclass(eq=False, repr=False)  # only __init__: 0.3 ms less at every start
class _HloText:
    """What the module's HLO text beside the dump gives at once: its stack frames (and
    the diagnostics of reading them) and the entry's input/output aliases (None where
    it gives none)."""

    frames: StackFrameTable | None
    diagnostics: list[Diagnostic]
    aliases: tuple[IoAlias, ...] | None

    @classmethod
    def read(cls, main: Path) -> _HloText:
        """The head of the HLO text beside dump file ``main``. Raises nothing."""
        found: list[Diagnostic] = []
        return cls(read_stack_frames(main, found), found, read_io_alias(main))

    def into(self, sections: ParsedSections) -> ParsedSections:
        """``sections`` with what this gives, where it gives it."""
        if self.aliases is not None:
            sections = replace(sections, input_output_alias=self.aliases)
        if self.frames is not None:
            sections = replace(sections, stack_frames=self.frames)
        return sections


def _read_files(
    plan: ReadPlan, ahead: PartsAhead, hooks: ReadHooks, beside: _HloText
) -> tuple[dict[int, Read], BeforeLiveRanges | None]:
    """Each file of ``plan`` read, by index, in :attr:`ReadPlan.order`: this process's
    own here (the file named, or a sibling, whose failure is a warning), the worker's
    taken from ``ahead``. Before the live ranges are taken from the worker, while it may
    still read them, the analysis that needs none (returned with the files)."""
    read: dict[int, Read] = {}
    before: BeforeLiveRanges | None = None
    for i in plan.order:
        file_path, kind = plan.files[i]
        label = str(file_path)
        if i in plan.ahead:
            if before is None and kind == "live-range":
                so_far = [parsed for parsed, _ in read.values() if parsed is not None]
                before = BeforeLiveRanges(beside.into(_merge(so_far)))
            read[i] = ahead.take(label, _job(kind), label, file_path)
            continue
        found: list[Diagnostic] = []
        if hooks.stage is not None:
            hooks.stage(f"reading {file_path.name}")
        if file_path == plan.main:
            read[i] = (parse_file(label, *read_bytes(file_path), found, hooks), found)
        else:
            read[i] = (parse_sibling(label, file_path, found, hooks), found)
    return read, before


def _module(
    plan: ReadPlan,
    read: dict[int, Read],
    ahead: PartsAhead,
    beside: _HloText,
    hooks: ReadHooks,
    lazy: bool,
    before: BeforeLiveRanges | None,
) -> ModuleDump:
    """The module of the files ``read`` (by index in ``plan.files``): their sections
    merged in the files' order with what the HLO text beside gives, each file's kind
    and diagnostics, the checks across files, and the analysis."""
    diagnostics: list[Diagnostic] = []
    files: list[DumpFile] = []
    parts: list[ParsedSections] = []
    tree_later: Callable[[ParsedSections], ParsedSections] | None = None
    for i, (file_path, named_kind) in enumerate(plan.files):
        parsed, found = read[i]
        label = str(file_path)
        if i in plan.ahead and named_kind == "live-range" and parsed is not None:
            tree_later = partial(_with_tree, ahead, label, parsed, diagnostics, len(diagnostics))
        diagnostics.extend(found)
        if parsed is None:
            continue
        parts.append(parsed)
        kind = kind_of(parsed, named_kind)
        files.append(DumpFile(label, kind))
        check_truncation(label, parsed, kind, diagnostics)
    sections = beside.into(_merge(parts))
    check_siblings(plan.main, files, diagnostics, sections.memory_usage_report)
    diagnostics.extend(beside.diagnostics)
    called = called_metadata_reader(plan.main)
    if called is not None:
        sections = replace(
            sections, called_metadata=called, entry_parameters=entry_parameters_reader(plan.main)
        )
    if beside.frames is not None:
        files.append(DumpFile(beside.frames.path, "module-text"))
    if hooks.stage is not None:
        hooks.stage("analysing")
    name = module_name(plan.main)
    return _finish(name, tuple(files), sections, diagnostics, lazy, before, tree_later)


def _with_tree(
    ahead: PartsAhead,
    key: str,
    parsed: ParsedSections,
    diagnostics: list[Diagnostic],
    offset: int,
    sections: ParsedSections,
) -> ParsedSections:
    """``sections`` with the stack-trace tree of the live-range file ``parsed`` (read
    apart by :func:`live_ranges_then_tree`, taken from ``ahead`` as part ``key``), and
    the tree's diagnostics put among the file's, whose first is ``diagnostics[offset]``,
    where they would have come had it been read in turn."""
    later = ahead.take_later(key)
    if later is None:
        return sections
    tree, found = cast(tuple[StackTrace | None, list[tuple[int, list[Diagnostic]]]], later)
    for at, problems in reversed(found):
        diagnostics[offset + at : offset + at] = problems
    live = sections.live_range
    if tree is None or live is None or live is not parsed.live_range:
        return sections
    return replace(sections, live_range=replace(live, stack_trace=tree))


def load_bytes(data: bytes, label: str = "<stdin>", *, lazy: bool = False) -> ModuleDump:
    """Open a combined dump already read into memory (``hlotop -``); ``label`` names it
    in diagnostics. ``lazy`` as for :func:`load`. Raises :class:`LoadError` like it."""
    diagnostics: list[Diagnostic] = []
    parsed = parse_file(label, data, None, diagnostics)
    kind = kind_of(parsed, None)
    check_truncation(label, parsed, kind, diagnostics, stdin=True)
    report = parsed.memory_usage_report
    if kind == "memory-usage-report" and report is not None:
        diagnostics.append(Diagnostic(label, 0, report_alone(report, STDIN_REPORT), "warning"))
    return _finish(label, (DumpFile(label, kind),), parsed, diagnostics, lazy)


def _finish(
    name: str,
    files: tuple[DumpFile, ...],
    sections: ParsedSections,
    diagnostics: list[Diagnostic],
    lazy: bool = False,
    before: BeforeLiveRanges | None = None,
    tree_later: Callable[[ParsedSections], ParsedSections] | None = None,
) -> ModuleDump:
    label = files[0].path if files else name
    analysis = analyze(sections, diagnostics, label, before)
    check_consistency(label, sections, analysis, diagnostics)
    check_agreement(files, sections, analysis, diagnostics, label)
    if tree_later is not None:  # read by the worker while the figures were worked out
        sections = tree_later(sections)
    check_stack_trace(files, sections.live_range, diagnostics)
    module = ModuleDump(name, files, sections, diagnostics, analysis)
    if not lazy:
        module.read_records()
    return module
