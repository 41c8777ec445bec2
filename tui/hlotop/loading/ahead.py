"""Parts of a dump read by a worker process while this process reads the rest: a big
dump's live ranges (a split module's ``-live-range.txt``, or the ``HloLiveRange`` block
at the end of a combined file) and its memory-usage report are parsed on another core
while this one reads the allocations and indexes the records.

The worker is a forked copy of this process on the standard library's process pool. A
job names what to read (a file, or where a part of one starts), never the text itself:
the worker reads it from the file. It hands back the part's
:class:`~hlotop.model.ParsedSections` and diagnostics, pickled (the live ranges, the
peak list and the stack-trace tree go across as columns, see
:mod:`hlotop.model.live_range`). Whether this process may fork is the caller's to say
(:func:`hlotop.process.report_workers`); with 0 workers, or if the pool cannot start or
a job fails in it, the part is read here, and the result is the same.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor

from hlotop.model import Diagnostic, ParsedSections

# A job: (*args, diagnostics) -> the part's sections, or None if it was skipped.
Job = Callable[..., "ParsedSections | None"]
Read = tuple["ParsedSections | None", list[Diagnostic]]

# Parts smaller than this (bytes) are read here: a worker costs more than they do.
MIN_BYTES = 2 << 20


def _quiet() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl-c is the parent's to handle


def _read(job: Job, args: tuple) -> Read:
    found: list[Diagnostic] = []
    return job(*args, found), found


def _work(job: Job, args: tuple) -> Read:
    """What the worker runs for one part."""
    return _read(job, args)


class PartsAhead:
    """Parts of a dump handed to one worker process as soon as they are known, and
    taken back with :meth:`take`. Use it as a context manager: the worker is stopped
    on exit. ``workers``: how many worker processes this process may start (one is
    used; 0: none, every part is read by :meth:`take`)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[str, Future[Read]] = {}

    def start(self, key: str, size: int, job: Job, *args: object) -> bool:
        """Have the worker run ``job(*args, diagnostics)`` for a part of ``size`` bytes
        if a worker may run and the part is worth one; True if it was handed over.
        ``key`` names the part for :meth:`take`. Raises nothing."""
        if self.workers < 1 or size < MIN_BYTES:
            return False
        try:
            if self._pool is None:
                context = multiprocessing.get_context("fork")
                self._pool = ProcessPoolExecutor(1, mp_context=context, initializer=_quiet)
            self._futures[key] = self._pool.submit(_work, job, args)
        except Exception:  # no fork here, no room for a process: read it in take()
            return False
        return True

    def take(self, key: str, job: Job, *args: object) -> Read:
        """``(sections or None, diagnostics)`` of the part: the worker's if it was
        handed over, else ``job(*args, diagnostics)`` run here (also when it failed in
        the worker). Raises what the job raises."""
        future = self._futures.pop(key, None)
        if future is not None:
            try:
                return future.result()
            except Exception:  # a worker killed, a result that would not pickle: read here
                pass
        return _read(job, args)

    def __enter__(self) -> PartsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
