"""Sibling files of a split module read by a worker process while this process reads the
rest: the ``-live-range.txt`` and the ``-memory-usage-report.txt`` of a big dump are
parsed on another core while this one reads the allocations and indexes the records.

The worker is a forked copy of this process on the standard library's process pool; it
hands back each file's :class:`~hlotop.model.ParsedSections` and diagnostics, pickled
(the live ranges, the peak list and the stack-trace tree go across as columns, see
:mod:`hlotop.model.live_range`). Whether this process may fork is the caller's to say
(:func:`hlotop.process.report_workers`); with 0 workers, or if the pool cannot start or
fails, the files are read here, and the result is the same.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from hlotop.model import Diagnostic, ParsedSections

# (label, path, diagnostics) -> the file's sections, or None if it was skipped
ReadFile = Callable[[str, Path, list[Diagnostic]], "ParsedSections | None"]
Read = tuple["ParsedSections | None", list[Diagnostic]]

# Smaller files than this are read here: starting a worker costs more than they do.
MIN_BYTES = 2 << 20


def _quiet() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl-c is the parent's to handle


def _read(read_file: ReadFile, label: str, path: Path) -> Read:
    found: list[Diagnostic] = []
    return read_file(label, path, found), found


def _work(read_file: ReadFile, label: str, path: Path) -> Read:
    """What the worker runs for one file."""
    return _read(read_file, label, path)


class FilesAhead:
    """Files handed to one worker process as soon as they are known, taken back with
    :meth:`take` in any order. Use it as a context manager: the worker is stopped on
    exit. ``workers``: how many worker processes this process may start (one is used;
    0: none, every file is read by :meth:`take`)."""

    def __init__(self, read_file: ReadFile, workers: int):
        self.read_file = read_file
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[str, Future[Read]] = {}

    def start(self, label: str, path: Path) -> bool:
        """Have the worker read ``path`` (named ``label``) if it is big enough to be worth
        it and a worker may run; True if it was handed over. Raises nothing."""
        if self.workers < 1:
            return False
        try:
            if path.stat().st_size < MIN_BYTES:
                return False
            if self._pool is None:
                context = multiprocessing.get_context("fork")
                self._pool = ProcessPoolExecutor(1, mp_context=context, initializer=_quiet)
            self._futures[label] = self._pool.submit(_work, self.read_file, label, path)
        except Exception:  # no fork here, no room for a process: read it in take()
            return False
        return True

    def take(self, label: str, path: Path) -> Read:
        """``(sections or None, diagnostics)`` of the file: the worker's if it read it,
        else read here (also when the worker failed). Raises what ``read_file`` raises."""
        future = self._futures.pop(label, None)
        if future is not None:
            try:
                return future.result()
            except Exception:  # a worker killed, a result that would not pickle: read here
                pass
        return _read(self.read_file, label, path)

    def __enter__(self) -> FilesAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
