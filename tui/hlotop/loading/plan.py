"""Planning the read of one module: which files make it, which of them a worker process
reads (:mod:`hlotop.loading.ahead`) and in what order each process reads its own. No
file is read here, only their names and sizes; :mod:`hlotop.loading.loader` reads them
as the plan says."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from hlotop.loading.ahead import Job, Part
from hlotop.loading.discover import module_files

# The files of a split module a worker may read, in the order it reads them: the
# records' index (the values file), then the live ranges, while this process reads the
# allocations and the memory-usage report, then analyses what needs no live ranges (but
# the records) while the worker still reads them. The live ranges come back before
# their stack-trace tree, which the worker reads while this process works out the
# figures (at 46 MB it took the worker 0.1 s of the 0.5 before this process could go
# on). Measured no quicker: a worker for the report too (again after the tree went
# last); and (on two cores) a worker for each part, three processes.
AHEAD_KINDS = ("values", "live-range")


@dataclass(eq=False, repr=False)  # only __init__: 0.4 ms less at every start
class ReadPlan:
    """Who reads which file of a module. ``main`` is the file named; ``files`` the
    module's files and their kinds (:func:`~hlotop.loading.discover.module_files`'s
    order, the order their sections and diagnostics are put together in); ``ahead``
    the indexes in ``files`` of those a worker reads, in the order it reads them."""

    main: Path
    files: tuple[tuple[Path, str | None], ...]
    ahead: tuple[int, ...] = ()

    @property
    def here(self) -> tuple[int, ...]:
        """The indexes of the files this process reads, in its order: a split module's
        values file first (its records are indexed, and handed on, while the rest is
        read), then the others in the files' order."""
        rest = (i for i in range(len(self.files)) if i not in self.ahead)
        return tuple(sorted(rest, key=lambda i: self.files[i][1] != "values"))

    @property
    def order(self) -> tuple[int, ...]:
        """Every file's index in the order they are taken: this process's own, then
        the worker's in the order it reads them (each taken as it arrives)."""
        return self.here + self.ahead

    def parts(self, job_of: Callable[[str | None], Job]) -> list[Part]:
        """The parts :meth:`hlotop.loading.ahead.PartsAhead.start` is offered: each file
        of :attr:`ahead` as ``(key, size, job, args)``, its key its path, its job
        ``job_of(kind)``, run as ``job(label, path, diagnostics)``."""
        out: list[Part] = []
        for i in self.ahead:
            path, kind = self.files[i]
            out.append((str(path), _size(path), job_of(kind), (str(path), path)))
        return out

    def handed(self, keys: list[str]) -> ReadPlan:
        """The plan once the worker took the parts ``keys`` (in the order it reads
        them): the files it did not take are read here."""
        position = {str(path): i for i, (path, _) in enumerate(self.files)}
        return replace(self, ahead=tuple(position[key] for key in keys))


def plan_module(main: Path, *, records_here: bool = False) -> ReadPlan:
    """The plan of the module whose file ``main`` is: its files, and as
    :attr:`ReadPlan.ahead` those a worker may read (:data:`AHEAD_KINDS`, but ``main``
    itself, and but the values file when ``records_here``: its records are handed on
    from this process as soon as they are indexed). Reads names and nothing else."""
    files = tuple(module_files(main))
    ahead = tuple(
        i
        for kind_ahead in AHEAD_KINDS
        for i, (path, kind) in enumerate(files)
        if kind == kind_ahead and path != main and not (kind == "values" and records_here)
    )
    return ReadPlan(main, files, ahead)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
