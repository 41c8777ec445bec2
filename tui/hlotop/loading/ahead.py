"""Parts of a dump read by a worker process while this process reads the rest: a big
split module's records are indexed (its ``-buffer-assignment-values.txt``) and its live
ranges parsed (its ``-live-range.txt``) on another core, in turn, while this one reads
the allocations and the memory-usage report, then works out what needs no live ranges.

The worker is a forked copy of this process (``multiprocessing``, one process and one
pipe for the parts it is handed, which it reads in the order given). A job names what to
read (a file), never the text itself: the worker reads it from the file. It sends back
each part's :class:`~hlotop.model.ParsedSections` and diagnostics as soon as it is done,
pickled (the live ranges, the peak list and the stack-trace tree go across as columns,
see :mod:`hlotop.model.live_range`; the records as their index and the file to read them
back from, see :class:`~hlotop.model.UsedValues`), and this process unpickles each in its
own thread when it takes it: no helper thread here competes with the reading for the
interpreter. Whether this process may fork is the caller's to say
(:func:`hlotop.process.report_workers`); with 0 workers, or if the worker cannot start
or fails, a part is read here, and the result is the same.

One worker reads both parts, and more only where there are cores to spare beyond this
process's: with two cores, a worker for each part (three processes) was measured no
quicker than one for the live ranges alone (--summary at 46 MB 1.85 s against 1.77),
while one reading both in turn keeps this process and the worker about equally busy.
A combined file's ``HloLiveRange`` block is read here: handing it to a worker was
measured no quicker (its 2·10^5-step schedule costs as much to send back as to read).
"""

from __future__ import annotations

import pickle
import signal
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from hlotop.model import Diagnostic, ParsedSections

if TYPE_CHECKING:  # multiprocessing is imported when a worker starts (10 ms otherwise)
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

# A job: (*args, diagnostics) -> the part's sections, or None if it was skipped.
Job = Callable[..., "ParsedSections | None"]
Read = tuple["ParsedSections | None", list[Diagnostic]]
# A part to hand over: (key, size in bytes, job, args).
Part = tuple[str, int, Job, tuple]

# Parts smaller than this (bytes) are read here: a worker costs more than they do.
MIN_BYTES = 2 << 20


def _read(job: Job, args: tuple) -> Read:
    found: list[Diagnostic] = []
    return job(*args, found), found


def _work(job: Job, args: tuple) -> Read:
    """What the worker runs for one part."""
    return _read(job, args)


def _run(send: Connection, jobs: list[tuple[str, Job, tuple]]) -> None:
    """The worker's body: each part in turn, its key then its result pickled down the
    pipe as soon as it is read (or nothing more once one fails: this process then reads
    that part and those after it itself). A result is sent by a thread of the worker's
    while it reads the next part: the pipe holds 64 KiB, and this process takes a part
    only when it needs it (the records' index waited 0.3 s at 46 MB, and the live
    ranges with it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ctrl-c is the parent's to handle
    sending: threading.Thread | None = None
    try:
        for key, job, args in jobs:
            result = pickle.dumps(_work(job, args), pickle.HIGHEST_PROTOCOL)
            if sending is not None:
                sending.join()  # the parts go in order
            sending = threading.Thread(target=_send, args=(send, key, result))
            sending.start()
    except BaseException:  # noqa: BLE001 - reported by the pipe closing early
        pass
    finally:
        if sending is not None:
            sending.join()
        send.close()


def _send(send: Connection, key: str, result: bytes) -> None:
    try:
        send.send_bytes(key.encode())
        send.send_bytes(result)
    except OSError:  # this process stopped taking them
        pass


class _Worker:
    """A worker process, the keys of the parts it was handed and not yet taken, and
    the results it sent that were not taken yet (pickled)."""

    def __init__(self, process: BaseProcess, receive: Connection, keys: list[str]):
        self.process, self.receive = process, receive
        self.waiting = set(keys)
        self.arrived: dict[str, bytes] = {}

    def result(self, key: str) -> bytes | None:
        """The pickled result of part ``key`` (waited for), or None if the worker
        ended without sending it."""
        while key not in self.arrived:
            try:
                sent = self.receive.recv_bytes().decode()
                self.arrived[sent] = self.receive.recv_bytes()
            except (EOFError, OSError):  # it failed, or was stopped
                break
        self.waiting.discard(key)
        return self.arrived.pop(key, None)

    def stop(self, terminate: bool) -> None:
        self.receive.close()
        if terminate:
            self.process.terminate()
        self.process.join()


class PartsAhead:
    """Parts of a dump handed to worker processes as soon as they are known, and taken
    back with :meth:`take`. Use it as a context manager: the workers are stopped on
    exit. ``workers``: how many processes this process may start (0: none, every part
    is read by :meth:`take`); one reads every part handed over, in turn, unless there
    are cores to spare beyond this process's (``workers`` 3 or more)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._of: dict[str, _Worker] = {}  # key -> the worker reading it

    def start(self, parts: Sequence[Part]) -> list[str]:
        """Have workers run each ``job(*args, diagnostics)`` of ``parts`` (``(key,
        size, job, args)``, ``key`` naming it for :meth:`take`) that is worth one: a
        part of :data:`MIN_BYTES` or more. Each worker reads its parts in the order
        given: one worker, or up to ``workers - 1`` (each part in turn to the next).
        Returns the keys handed over (none if no worker may run or none could start).
        Raises nothing."""
        worth = [(key, job, args) for key, size, job, args in parts if size >= MIN_BYTES]
        count = min(len(worth), max(1, self.workers - 1)) if self.workers > 0 else 0
        handed: list[str] = []
        if count:
            import multiprocessing
        for n in range(count):
            jobs = worth[n::count]
            try:
                context = multiprocessing.get_context("fork")
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=_run, args=(send, jobs), daemon=True)
                process.start()
                send.close()  # the worker's end
            except Exception:  # no fork here, no room for a process: read in take()
                continue
            keys = [key for key, _, _ in jobs]
            worker = _Worker(process, receive, keys)
            self._of.update(dict.fromkeys(keys, worker))
            handed += keys
        return handed

    def take(self, key: str, job: Job, *args: object) -> Read:
        """``(sections or None, diagnostics)`` of the part: the worker's if it was
        handed over, else ``job(*args, diagnostics)`` run here (also when it failed in
        the worker). Raises what the job raises."""
        worker = self._of.pop(key, None)
        if worker is not None:
            data = worker.result(key)
            if not worker.waiting:
                worker.stop(terminate=False)
            if data is not None:
                try:
                    return pickle.loads(data)
                except Exception:  # noqa: BLE001 - not read back: read it here
                    pass
        return _read(job, args)

    def __enter__(self) -> PartsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        # Parts not taken (an error on the way): their workers are stopped.
        for worker in {id(w): w for w in self._of.values()}.values():
            worker.stop(terminate=True)
        self._of.clear()
