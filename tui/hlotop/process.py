"""Process policy: how an hlotop process treats Python's garbage collector and whether
it may start worker processes. Only the entry points call this module (``cli`` for the
reports, the browser's load thread in ``ui.apps.app``); the core below them (parse, model,
analysis, loading, report) never touches the collector or forks by itself: it is told
how many worker processes it may use.

Why the collector matters: building the model of a big dump allocates millions of
objects and no reference cycles, so every cyclic-GC pass during the build re-scans a
growing heap for nothing (a third of the load time at 100 MB, and a records pass that
grew with the square of the dump's size), and a full pass over the finished model
freezes a browser for ~0.3 s. So the collector is paused while a model is built and the
result is frozen (never scanned again) once built.

Why the C allocator is told to give big buffers back: a file's text is tens of
megabytes, freed once read. glibc's ``malloc`` serves such buffers with ``mmap`` and
returns them on free, but the first time one is freed it raises its threshold to that
size, and later buffers below it come from the heap, which keeps them once freed
(Python's own objects never reuse that room): the records' text given back after
indexing then left more resident at 46 MB than it saved. A fixed threshold keeps big
buffers mapped and given back: glibc's first one, 128 kB, for the browser (whose peak
is the figure to keep down: 180 MB at 46 MB, against 189 MB with 16 MB); 16 MB for
``--json``, which makes and drops many buffers of a few megabytes as it writes (128 kB
made it 7% slower, for 2 MB less). A report (``--summary``, ``--json``, ``diff``) ends
when it is printed, so its peak, not what it holds after a free, is the figure: there
freed buffers are kept for the next ones (:func:`big_buffers_for_reports`). Each page
of a buffer mapped again, or of heap given back and taken again, is a page fault
(about 2.5 us here): at 46 MB ``--summary`` made 104 000 of them with the browser's
policy and 55 000 with the reports' (0.29 s of system time against 0.17 s, the peak
resident size 113 MB against 119 MB); ``--json`` 145 000 against 91 000 (wall time
2.3 s against 2.0 s, the same peak).

Why forking needs permission: a program that loads dumps through the library may run
threads Python cannot see (a JAX runtime's); a fork copies their locks mid-use. The
``hlotop`` command's reports run no threads, so they may use worker processes.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """A context in which the cyclic GC does not run (it is re-enabled on exit if it was
    enabled before). Raises nothing of its own."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def freeze_heap() -> None:
    """Move every object alive now to the GC's permanent generation: a model just built
    is never scanned again by later collections (``gc.freeze``)."""
    gc.freeze()


# glibc's mallopt parameters, and the sizes from which a buffer is always mmapped (glibc
# starts at 128 kB and raises it up to 32 MB as mapped buffers are freed).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 << 10
REPORT_MMAP_THRESHOLD = 32 << 20  # --summary, diff: glibc's own ceiling
WRITER_MMAP_THRESHOLD = 16 << 20  # --json
# Free heap at its top kept for reuse by a report, instead of glibc's 128 kB (twice the
# mmap threshold once glibc raises it itself).
REPORT_TRIM_THRESHOLD = 64 << 20


def give_back_big_buffers(from_bytes: int = MMAP_THRESHOLD) -> bool:
    """Have the C allocator (glibc's) map every buffer of ``from_bytes`` bytes or more
    and return it to the OS when freed, for the rest of the process (and the processes
    it forks). True if it was told; False where there is no ``mallopt`` (not glibc).
    Raises nothing."""
    global _GIVING_BACK
    _GIVING_BACK = _mallopt((_M_MMAP_THRESHOLD, from_bytes))
    return _GIVING_BACK


_GIVING_BACK = False  # give_back_big_buffers was called, and told


def big_buffers_for_reports() -> None:
    """For a process about to read a dump, print a report and exit (``--summary``,
    ``diff``): if big buffers are given back (:func:`give_back_big_buffers` was called:
    the ``hlotop`` command), from now on only those of :data:`REPORT_MMAP_THRESHOLD`
    bytes or more are, and up to :data:`REPORT_TRIM_THRESHOLD` bytes of free heap are
    kept for reuse: a file's text, its pieces and the tables built from them then reuse
    one another's pages instead of mapping new ones. Raises nothing."""
    if _GIVING_BACK:
        _keep_freed(REPORT_MMAP_THRESHOLD)


def big_buffers_for_writing() -> None:
    """For a process about to write a big document (``--json``): as
    :func:`big_buffers_for_reports`, but buffers of :data:`WRITER_MMAP_THRESHOLD` bytes
    or more are given back. Raises nothing."""
    if _GIVING_BACK:
        _keep_freed(WRITER_MMAP_THRESHOLD)


def _keep_freed(mmap_from: int) -> None:
    _mallopt((_M_MMAP_THRESHOLD, mmap_from), (_M_TRIM_THRESHOLD, REPORT_TRIM_THRESHOLD))


def _mallopt(*settings: tuple[int, int]) -> bool:
    """Tell glibc's ``mallopt`` each ``(parameter, value)`` in turn; True if it took
    every one, False where there is no ``mallopt`` (not glibc). Raises nothing."""
    import ctypes  # here: library callers of this module never pay for importing it

    try:
        mallopt = ctypes.CDLL(None).mallopt
        return all([bool(mallopt(parameter, value)) for parameter, value in settings])
    except (AttributeError, OSError, ctypes.ArgumentError):
        return False


_KEPT: list[object] | None = None  # a list once the process ends by os._exit


def exit_frees_memory() -> None:
    """Say that this process ends with ``os._exit`` (the ``hlotop`` command does): from
    now on :func:`keep_until_exit` keeps what it is given."""
    global _KEPT
    if _KEPT is None:
        _KEPT = []


def ends_by_exit() -> bool:
    """Whether this process ends with ``os._exit`` (:func:`exit_frees_memory` was
    called). Raises nothing."""
    return _KEPT is not None


@contextmanager
def ending_by_exit() -> Iterator[list[object]]:
    """A context in which this process is taken to end with ``os._exit``, as after
    :func:`exit_frees_memory`: it gives the list of what :func:`keep_until_exit` keeps
    in it, oldest first. On leaving, the process is as it was before (what was kept
    is let go): for a caller of :func:`hlotop.cli.main` that stands in for the
    ``hlotop`` command and then goes on (a test, a benchmark). Raises nothing of its
    own."""
    global _KEPT
    before = _KEPT
    kept: list[object] = []
    _KEPT = kept
    try:
        yield kept
    finally:
        _KEPT = before


def keep_until_exit(obj: object) -> None:
    """Keep ``obj`` alive until the process ends, if it ends by ``os._exit``
    (:func:`exit_frees_memory`): a big model is then freed by the OS at once instead of
    object by object when the function that made it returns (0.1 s at 46 MB). Else
    (a test calling ``main``) nothing is kept. Raises nothing."""
    if _KEPT is not None:
        _KEPT.append(obj)


def report_workers() -> int:
    """How many worker processes a report (``--json``) may fork: the cores this process
    may run on, or 0 where it must not fork (no ``os.fork``, or threads are running,
    whose locks a fork would copy mid-use). Call it from the ``hlotop`` command only."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return 0
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return cores if cores > 1 else 0
