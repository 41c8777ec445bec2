"""A whole ``--xla_dump_to`` directory: every module in it, and the figures that rank
them, read quickly (the first look of each module: its allocation lines, its total
and XLA's peak list; :mod:`hlotop.loading.preview`).

A run writes hundreds of modules, many tiny (constants, small jits); programs do not
run at once, so the largest single program, not a sum, decides an out-of-memory,
except for arguments and outputs that stay resident (FEATURES.md).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from hlotop.analysis.capacity import required_bytes
from hlotop.analysis.platform import platform_of
from hlotop.loading.discover import module_files, module_name, split_module_prefix
from hlotop.loading.errors import LoadError
from hlotop.loading.loader import load
from hlotop.loading.preview import PastInt64, preview
from hlotop.loading.workers import OrderedMap
from hlotop.model import MemoryStats
from hlotop.model.memory_space import PLATFORMS


@dataclass(frozen=True, slots=True)
class ModuleEntry:
    """A module of a directory: the file to open it by and all its files."""

    name: str
    # its -buffer-assignment.txt (combined or split), or its -memory-usage-report.txt
    # when it has no -buffer-assignment.txt (report_only)
    path: Path
    files: tuple[Path, ...]
    size: int  # bytes in its files

    @property
    def platform(self) -> str:
        """``tpu``, ``gpu``, ``cpu`` from XLA's file name, else ``unknown``."""
        return platform_of(self.path.name, ())

    @property
    def report_only(self) -> bool:
        """Whether the module is known by its memory-usage report alone: no
        ``-buffer-assignment.txt`` beside it, so no allocation line, value or live
        range (its figures are the report's total and allocation count)."""
        return self.path.name.endswith(REPORT_SUFFIX)


@dataclass(frozen=True, slots=True)
class ModuleFigures:
    """What ranks a module, from its first look. Bytes are ints; None where the dump
    does not say (no peak list, no allocation could be read). A report-only module
    (``entry.report_only``) has the report's total and allocation count, and no peak
    or ``memory_analysis()``."""

    entry: ModuleEntry
    total_bytes_used: int | None  # a report-only module's: its memory-usage report's total
    allocations: int  # a report-only module's: those its report lists
    peak_step: int | None
    peak_bytes: int | None  # the sum of XLA's printed peak list
    memory_stats: MemoryStats | None
    fingerprint: str  # equal for one program (module name less its number) compiled alike
    error: str | None = None  # why the module could not be read
    # What it needs on its device (hlotop.analysis.capacity.required_bytes: on TPU of
    # HBM alone), from the first look's allocations; None without allocations.
    required_bytes: int | None = None


MODULES_A_TASK = 4  # modules a worker reads at a time (rank_modules)
# the number a run gives a module (after a run's subfolder: list_run_modules)
MODULE_NUMBER = re.compile(r"(?:^|(?<=/))module_\d+\.")
COMPILER_BUILD = re.compile(r"\.cl_\d+(?=\.|$)")  # a TPU compiler's build


def program_of(name: str) -> str:
    """The program a module compiles, the same in every run: its name less the number
    the run gave it (``module_0034.``) and a TPU compiler's build (``.cl_933746096``):
    ``module_0034.jit_train_step.cpu_after_optimizations`` ->
    ``jit_train_step.cpu_after_optimizations``. A module of a folder of runs keeps its
    run (:func:`list_run_modules`): ``run_a/module_0034.jit_f.cpu_after_optimizations``
    -> ``run_a/jit_f.cpu_after_optimizations``."""
    return COMPILER_BUILD.sub("", MODULE_NUMBER.sub("", name))


@dataclass(frozen=True, slots=True)
class ModulePair:
    """One program in two dump directories: its module on each side (None where the
    directory has none: added or removed), by :func:`pair_modules`."""

    program: str
    old: ModuleFigures | None
    new: ModuleFigures | None


def pair_modules(old: list[ModuleFigures], new: list[ModuleFigures]) -> list[ModulePair]:
    """The modules of two runs paired by program (:func:`program_of`); a program
    compiled several times in a run (``jit__normal`` for each shape) pairs in module
    order, the first with the first. The largest XLA peak (of either side) first, then
    the program's name. Raises nothing."""

    def by_program(figures: list[ModuleFigures]) -> dict[str, list[ModuleFigures]]:
        out: dict[str, list[ModuleFigures]] = {}
        for f in sorted(figures, key=lambda f: f.entry.name):
            out.setdefault(program_of(f.entry.name), []).append(f)
        return out

    before, after = by_program(old), by_program(new)
    pairs = []
    for program in before.keys() | after.keys():
        was, now = before.get(program, []), after.get(program, [])
        for k in range(max(len(was), len(now))):
            pairs.append(
                ModulePair(
                    program,
                    was[k] if k < len(was) else None,
                    now[k] if k < len(now) else None,
                )
            )

    def size(f: ModuleFigures | None) -> int:
        return 0 if f is None else size_of(f)

    pairs.sort(key=lambda p: (-max(size(p.old), size(p.new)), p.program))
    return pairs


REPORT_SUFFIX = "-memory-usage-report.txt"


def list_modules(directory: str | os.PathLike) -> list[ModuleEntry]:
    """Every module in ``directory`` (not its subdirectories), by name: each
    ``*-buffer-assignment.txt``, combined or split (its siblings with it), and each
    ``*-memory-usage-report.txt`` that has no ``-buffer-assignment.txt`` beside it
    (report-only: :attr:`ModuleEntry.report_only`). Raises OSError when the directory
    cannot be listed."""
    out = []
    folder = Path(directory)
    paths = sorted(folder.glob("*-buffer-assignment.txt"))
    for report in sorted(folder.glob("*" + REPORT_SUFFIX)):
        split = split_module_prefix(report)
        if split is not None and not report.with_name(split[0] + "-buffer-assignment.txt").exists():
            paths.append(report)
    for path in sorted(paths):
        if split_module_prefix(path) is None or not path.is_file():
            continue
        files = tuple(f for f, _ in module_files(path))
        size = sum(f.stat().st_size for f in files if f.exists())
        out.append(ModuleEntry(module_name(path), path, files, size))
    return out


def list_run_modules(directory: str | os.PathLike) -> list[ModuleEntry]:
    """Every module of ``directory`` (:func:`list_modules`); where it holds none (a
    folder of ``--xla_dump_to`` runs, one a subfolder: ``runs/a/``, ``runs/b/``), every
    module of each subfolder, named ``<subfolder>/<module>`` so that two runs' modules
    of one program are told apart (their names, :func:`program_of` and so the rows of
    modules compiled alike, differ). Subfolders in name order, one level down; one
    that cannot be listed is left out. Raises OSError when ``directory`` cannot be
    listed."""
    found = list_modules(directory)
    if found:
        return found
    folder = Path(directory)
    out: list[ModuleEntry] = []
    for sub in sorted(os.listdir(folder)):
        path = folder / sub
        try:
            if not path.is_dir():
                continue
            entries = list_modules(path)
        except OSError:
            continue
        out += [replace(e, name=f"{sub}/{e.name}") for e in entries]
    return out


def quick_figures(entry: ModuleEntry) -> ModuleFigures:
    """The ranking figures of one module from its first look (allocation lines,
    ``Total bytes used``, XLA's peak list; of a report-only module, its report).
    Raises nothing: a module that cannot be read has ``error`` set, saying why (a size
    of 2^63 or more names its line; an hlotop bug names its exception)."""
    try:
        if entry.report_only:
            return _report_figures(entry)
        return _quick_figures(entry)
    except PastInt64 as err:
        return unread(entry, err.reason)
    except Exception as err:  # noqa: BLE001 - an hlotop bug: this module, not the rest
        return unread(entry, f"internal error ({type(err).__name__}: {err})")


def unread(entry: ModuleEntry, reason: str) -> ModuleFigures:
    """The figures of a module that could not be read, and why (``reason``)."""
    return ModuleFigures(entry, None, 0, None, None, None, "", reason)


def _quick_figures(entry: ModuleEntry) -> ModuleFigures:
    module = preview(entry.path, from_bytes=0, explain=True)
    if module is None:
        return unread(entry, "no allocation could be read")
    a = module.analysis
    digest = hashlib.sha1(usedforsecurity=False)
    # the program, not its number (a file name's bytes as the file system has them)
    digest.update(os.fsencode(program_of(entry.name)))
    for alloc in module.allocations:
        digest.update(
            f"{alloc.size},{alloc.color},{alloc.parameter},{alloc.maybe_live_out},"
            f"{alloc.is_constant},{alloc.is_thread_local};".encode()
        )
    digest.update(str(module.total_bytes_used).encode())
    return ModuleFigures(
        entry,
        module.total_bytes_used,
        len(module.allocations),
        a.peak_step,
        a.peak_bytes if a.peak_bytes_source == "list" else None,
        a.memory_stats,
        digest.hexdigest(),
        required_bytes=required_bytes(module),
    )


def _report_figures(entry: ModuleEntry) -> ModuleFigures:
    """:func:`quick_figures` of a report-only module: its report's total and
    allocation count (:class:`~hlotop.model.MemoryUsageReport`); no peak, no
    ``memory_analysis()``."""
    try:
        report = load(entry.path, lazy=True).memory_usage_report
    except LoadError as err:
        return ModuleFigures(entry, None, 0, None, None, None, "", err.reason)
    if report is None:
        return ModuleFigures(entry, None, 0, None, None, None, "", "no memory-usage report")
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(f"report:{program_of(entry.name)}:{report.total}:{report.listed()}".encode())
    return ModuleFigures(entry, report.total, report.listed(), None, None, None, digest.hexdigest())


def size_of(f: ModuleFigures) -> int:
    """What ranks a module: XLA's peak (bytes), or where it has none (no peak list, a
    report-only module) its total, which is at least the peak (every allocation)."""
    return f.peak_bytes if f.peak_bytes is not None else f.total_bytes_used or 0


def platform_order(platform: str) -> int:
    """Where a platform's modules come: TPU, GPU, CPU, then unknown."""
    return PLATFORMS.index(platform) if platform in PLATFORMS else len(PLATFORMS)


def platform_ranks(figures: list[ModuleFigures]) -> list[int]:
    """Each module's rank within its platform (from 1), in ``figures``' order (ranked
    by :func:`rank_modules`)."""
    seen: dict[str, int] = {}
    ranks = []
    for f in figures:
        seen[f.entry.platform] = seen.get(f.entry.platform, 0) + 1
        ranks.append(seen[f.entry.platform])
    return ranks


def rank_modules(
    entries: Iterable[ModuleEntry],
    mapper: Callable[
        [Callable[[ModuleEntry], ModuleFigures], list[ModuleEntry]], Iterator[ModuleFigures]
    ]
    | None = None,
    workers: int = 0,
) -> list[ModuleFigures]:
    """:func:`quick_figures` of each module, ranked within its platform (TPU, GPU, CPU,
    unknown: programs of one platform share a device, and only they): the largest XLA
    peak first, a module with none by its total (:func:`size_of`), then total bytes,
    then name. ``mapper(function, entries)``: how to map over the modules (the
    caller's choice), else up to ``workers`` forked processes
    (:class:`~hlotop.loading.workers.OrderedMap`, four modules a task; 0: one at a time
    here). A module whose worker is killed reading it (even alone) has ``error`` set,
    saying by which signal; the others are read."""
    items = list(entries)
    if mapper is not None:
        figures = list(mapper(quick_figures, items))
    else:
        with OrderedMap(
            lambda i: quick_figures(items[i]),
            len(items),
            workers,
            chunk=MODULES_A_TASK,
            lost=lambda i, reason: unread(items[i], reason),
        ) as read:
            figures = list(read)
    figures.sort(
        key=lambda f: (
            platform_order(f.entry.platform),
            -size_of(f),
            -(f.total_bytes_used or 0),
            f.entry.name,
        )
    )
    return figures


def collapse_identical(figures: list[ModuleFigures]) -> list[tuple[ModuleFigures, int]]:
    """Modules with the same fingerprint (the same program name less its module number,
    the same allocations and total: one program compiled again) as one row with their
    count, in the given order."""
    seen: dict[str, int] = {}
    out: list[tuple[ModuleFigures, int]] = []
    for f in figures:
        if f.fingerprint and f.fingerprint in seen:
            first, count = out[seen[f.fingerprint]]
            out[seen[f.fingerprint]] = (first, count + 1)
            continue
        if f.fingerprint:
            seen[f.fingerprint] = len(out)
        out.append((f, 1))
    return out
