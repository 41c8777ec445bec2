"""Parts of a dump read by a worker process while this process reads the rest: a big
split module's live ranges (its ``-live-range.txt``) are parsed on another core while
this one reads the allocations, indexes the records and reads the memory-usage report.

The worker is a forked copy of this process (``multiprocessing``, one process and one
pipe a part). A job names what to read (a file), never the text itself: the worker
reads it from the file. It sends back the part's :class:`~hlotop.model.ParsedSections`
and diagnostics, pickled (the live ranges, the peak list and the stack-trace tree go
across as columns, see :mod:`hlotop.model.live_range`), and this process unpickles them
in its own thread when it takes them: no helper thread here competes with the reading
for the interpreter. Whether this process may fork is the caller's to say
(:func:`hlotop.process.report_workers`); with 0 workers, or if the worker cannot start
or fails, the part is read here, and the result is the same.

A combined file's ``HloLiveRange`` block is read here: handing it to a worker was
measured no quicker (its 2·10^5-step schedule costs as much to send back as to read).
"""

from __future__ import annotations

import multiprocessing
import pickle
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from hlotop.model import Diagnostic, ParsedSections

# A job: (*args, diagnostics) -> the part's sections, or None if it was skipped.
Job = Callable[..., "ParsedSections | None"]
Read = tuple["ParsedSections | None", list[Diagnostic]]

# Parts smaller than this (bytes) are read here: a worker costs more than they do.
MIN_BYTES = 2 << 20


def _read(job: Job, args: tuple) -> Read:
    found: list[Diagnostic] = []
    return job(*args, found), found


def _work(job: Job, args: tuple) -> Read:
    """What the worker runs for one part."""
    return _read(job, args)


def _run(send: Connection, job: Job, args: tuple) -> None:
    """The worker's body: the part, pickled down the pipe (or nothing if it failed:
    this process then reads the part itself)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl-c is the parent's to handle
    try:
        send.send_bytes(pickle.dumps(_work(job, args), pickle.HIGHEST_PROTOCOL))
    except BaseException:  # noqa: BLE001 - reported by the pipe closing empty
        pass
    finally:
        send.close()


class PartsAhead:
    """Parts of a dump handed to worker processes as soon as they are known, and taken
    back with :meth:`take`. Use it as a context manager: the workers are stopped on
    exit. ``workers``: how many worker processes this process may start (0: none,
    every part is read by :meth:`take`)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._started: dict[str, tuple[BaseProcess, Connection]] = {}

    def start(self, key: str, size: int, job: Job, *args: object) -> bool:
        """Have a worker run ``job(*args, diagnostics)`` for a part of ``size`` bytes if
        a worker may run and the part is worth one; True if it was handed over. ``key``
        names the part for :meth:`take`. Raises nothing."""
        if len(self._started) >= self.workers or size < MIN_BYTES:
            return False
        try:
            context = multiprocessing.get_context("fork")
            receive, send = context.Pipe(duplex=False)
            worker = context.Process(target=_run, args=(send, job, args), daemon=True)
            worker.start()
            send.close()  # the worker's end
        except Exception:  # no fork here, no room for a process: read it in take()
            return False
        self._started[key] = (worker, receive)
        return True

    def take(self, key: str, job: Job, *args: object) -> Read:
        """``(sections or None, diagnostics)`` of the part: the worker's if it was
        handed over, else ``job(*args, diagnostics)`` run here (also when it failed in
        the worker). Raises what the job raises."""
        started = self._started.pop(key, None)
        if started is not None:
            worker, receive = started
            try:
                return pickle.loads(receive.recv_bytes())
            except Exception:  # the worker failed or was killed: read it here
                pass
            finally:
                receive.close()
                worker.join()
        return _read(job, args)

    def __enter__(self) -> PartsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        for worker, receive in self._started.values():  # not taken (an error on the way)
            receive.close()
            worker.terminate()
            worker.join()
        self._started.clear()
