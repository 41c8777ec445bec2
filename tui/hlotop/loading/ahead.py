"""Parts of a dump read by a worker process while this process reads the rest: a big
split module's records are indexed (its ``-buffer-assignment-values.txt``) and its live
ranges parsed (its ``-live-range.txt``) on another core, in turn, while this one reads
the allocations and the memory-usage report, then works out what needs no live ranges.

The worker is a forked copy of this process (one process and one pipe for the parts it
is handed, which it reads in the order given), started as every hlotop worker is
(:mod:`hlotop.loading.workers`: it ignores ctrl-c, and dies with this process). A job names what to
read (a file), never the text itself: the worker reads it from the file. It sends back
each part's :class:`~hlotop.model.ParsedSections` and diagnostics as soon as it is done,
pickled (the live ranges, the peak list and the stack-trace tree go across as columns,
see :mod:`hlotop.model.live_range`; the records as their index and the file to read them
back from, see :class:`~hlotop.model.UsedValues`), and this process unpickles each in its
own thread when it takes it: no helper thread here competes with the reading for the
interpreter. A job may leave some of its work for after its part is sent
(:class:`Later`): the worker sends the part, then does the rest (a split module's
stack-trace tree, which the figures do not need) while this process goes on. Whether
this process may fork is the caller's to say (:func:`hlotop.process.report_workers`);
with 0 workers, or if the worker cannot start or fails, a part is read here, and the
result is the same.

One worker reads both parts, and more only where there are cores to spare beyond this
process's: with two cores, a worker for each part (three processes) was measured no
quicker than one for the live ranges alone (--summary at 46 MB 1.85 s against 1.77),
while one reading both in turn keeps this process and the worker about equally busy.
A combined file's ``HloLiveRange`` block is read here: handing it to a worker was
measured no quicker (its 2·10^5-step schedule costs as much to send back as to read).

This protocol, not the standard library's process pool that the other workers run on
(:class:`hlotop.loading.workers.OrderedMap`): on a pool of one worker, the parts and
each one's later work as tasks in turn, the pool's thread takes and unpickles each
result in this process as soon as it comes, while this process reads. Measured on a
40 MB split module (2 cores, a busy machine, in turn): its load 0.639 s against 0.614
s (medians of 20 in one process; paired ratio 1.04, quartiles 0.98-1.12),
``--summary`` 1.07 s against 0.92 s and ``--json`` 2.38 s against 2.02 s (medians of
15 fresh processes).
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from hlotop.loading.workers import fork_context, start_worker
from hlotop.model import Diagnostic, ParsedSections

if TYPE_CHECKING:  # multiprocessing is imported when a worker starts (10 ms otherwise)
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess


class Later(NamedTuple):
    """What a job returns when some of its work is better done after its sections are
    handed on: ``sections`` now, and ``then()`` right after, by the same process (a
    worker runs it once it has sent ``sections``); :meth:`PartsAhead.take_later` takes
    what ``then()`` returns."""

    sections: ParsedSections | None
    then: Callable[[], object]


# A job: (*args, diagnostics) -> the part's sections, or None if it was skipped, or
# them with more to do (Later).
Job = Callable[..., "ParsedSections | Later | None"]
Read = tuple["ParsedSections | None", list[Diagnostic]]
# A part to hand over: (key, size in bytes, job, args).
Part = tuple[str, int, Job, tuple]

# Parts smaller than this (bytes) are read here: a worker costs more than they do.
MIN_BYTES = 2 << 20


# The key a part's later result (Later.then's) is sent under: its own and this.
LATER = " (later)"


def _read(job: Job, args: tuple) -> tuple[ParsedSections | Later | None, list[Diagnostic]]:
    found: list[Diagnostic] = []
    return job(*args, found), found


def _work(job: Job, args: tuple) -> tuple[ParsedSections | Later | None, list[Diagnostic]]:
    """What the worker runs for one part."""
    return _read(job, args)


def _run(send: Connection, jobs: list[tuple[str, Job, tuple]], parent: int) -> None:
    """The worker's body: each part in turn, its key then its result pickled down the
    pipe as soon as it is read (or nothing more once one fails: this process then reads
    that part and those after it itself). A result is sent by a thread of the worker's
    while it reads the next part: the pipe holds 64 KiB, and this process takes a part
    only when it needs it (the records' index waited 0.3 s at 46 MB, and the live
    ranges with it). A part whose job returns :class:`Later` is sent as
    ``(sections, diagnostics, True)``, then what its ``then()`` returns under its key
    and :data:`LATER`; the others as ``(sections, diagnostics, False)``. ``parent``:
    the pid of this process, which the worker dies with."""
    start_worker(parent)
    sending: threading.Thread | None = None

    def send_in_turn(key: str, result: bytes) -> None:
        nonlocal sending
        if sending is not None:
            sending.join()  # the parts go in order
        sending = threading.Thread(target=_send, args=(send, key, result))
        sending.start()

    try:
        for key, job, args in jobs:
            result, found = _work(job, args)
            later = result.then if isinstance(result, Later) else None
            sections = result.sections if isinstance(result, Later) else result
            read = (sections, found, later is not None)
            send_in_turn(key, pickle.dumps(read, pickle.HIGHEST_PROTOCOL))
            if later is not None:
                send_in_turn(key + LATER, pickle.dumps(later(), pickle.HIGHEST_PROTOCOL))
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

    def arriving(self, key: str) -> bool:
        """Whether part ``key`` is here or on its way (the worker has sent something
        not yet taken, or ended): taking it would not wait for the worker to read it."""
        return key in self.arrived or self.receive.poll()

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
        """Close the pipe; with ``terminate``, end the worker and wait for it. Without,
        the worker has sent every part and ends by itself: its exit (10 ms at 46 MB,
        unmapping the heap it was forked with) is not waited for, and multiprocessing
        reaps it when this process starts another or exits."""
        self.receive.close()
        if terminate:
            self.process.terminate()
            self.process.join()


class PartsAhead:
    """Parts of a dump handed to worker processes as soon as they are known, and taken
    back with :meth:`take`. Use it as a context manager: the workers are stopped on
    exit. ``workers``: how many processes this process may start (0: none, every part
    is read by :meth:`take`); one reads every part handed over, in turn, unless there
    are cores to spare beyond this process's (``workers`` 3 or more). ``meanwhile``,
    if given, is called once, the first time :meth:`take` would wait for a worker
    still reading the part: work the caller has to do anyway and that needs nothing
    of the dump (a report's imports) is then done in that wait, not after it."""

    def __init__(self, workers: int, meanwhile: Callable[[], object] | None = None):
        self.workers = workers
        self._of: dict[str, _Worker] = {}  # key -> the worker reading it
        self._meanwhile = meanwhile
        # key -> the job and args of a part taken (to read it again here if its later
        # result is lost), and the then() of a Later read here
        self._taken: dict[str, tuple[Job, tuple]] = {}
        self._later_here: dict[str, Callable[[], object]] = {}

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
        for n in range(count):
            jobs = worth[n::count]
            try:
                context = fork_context()
                receive, send = context.Pipe(duplex=False)
                process = context.Process(target=_run, args=(send, jobs, os.getpid()), daemon=True)
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
        the worker). A job's :class:`Later` gives its sections here; what its
        ``then()`` returns is taken with :meth:`take_later`. Raises what the job
        raises."""
        self._taken[key] = (job, args)
        worker = self._of.pop(key, None)
        if worker is not None:
            meanwhile = self._meanwhile
            if meanwhile is not None and not worker.arriving(key):
                self._meanwhile = None
                meanwhile()
            data = worker.result(key)
            read = None
            if data is not None:
                try:
                    sections, found, later = pickle.loads(data)
                except Exception:  # noqa: BLE001 - not read back: read it here
                    pass
                else:
                    read = sections, found
                    if later:  # its later result comes next: the worker goes on
                        worker.waiting.add(key + LATER)
                        self._of[key + LATER] = worker
            if not worker.waiting:
                worker.stop(terminate=False)
            if read is not None:
                return read
        sections, found = _read(job, args)
        if isinstance(sections, Later):
            self._later_here[key] = sections.then
            sections = sections.sections
        return sections, found

    def take_later(self, key: str) -> object:
        """What the ``then()`` of part ``key``'s :class:`Later` returns (None if its
        job gave none), once :meth:`take` has taken the part: the worker's, or run
        here (the part read again here first if the worker ended before sending it).
        Raises what the job raises."""
        worker = self._of.pop(key + LATER, None)
        if worker is not None:
            data = worker.result(key + LATER)
            if not worker.waiting:
                worker.stop(terminate=False)
            if data is not None:
                try:
                    return pickle.loads(data)
                except Exception:  # noqa: BLE001 - not read back: read it here
                    pass
        then = self._later_here.pop(key, None)
        if then is None and key in self._taken:  # sent by a worker that then ended
            job, args = self._taken[key]
            sections, _ = _read(job, args)
            then = sections.then if isinstance(sections, Later) else None
        return then() if then is not None else None

    def __enter__(self) -> PartsAhead:
        return self

    def __exit__(self, *exc: object) -> None:
        # Parts not taken (an error on the way): their workers are stopped.
        for worker in {id(w): w for w in self._of.values()}.values():
            worker.stop(terminate=True)
        self._of.clear()
