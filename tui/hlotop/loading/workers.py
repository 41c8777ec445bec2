"""hlotop's worker processes: how they are forked, how they end, and an ordered map on
the standard library's process pool.

Every worker process hlotop starts (a split module's parts read ahead,
:mod:`hlotop.loading.ahead`; ``--json``'s records, :mod:`hlotop.report.parallel`; a
directory's modules, :mod:`hlotop.loading.directory`) is forked here
(:func:`fork_context`: a copy of this process, the loaded dump shared copy-on-write),
and starts with :func:`start_worker`:

* ctrl-c is the parent's to handle: a worker ignores SIGINT (the terminal sends it to
  the whole process group), and SIGTERM and SIGHUP end it at once (a handler the parent
  installed is not run in the copy);
* it dies with its parent, whatever kills the parent (``kill -9`` and the kernel's
  out-of-memory killer too): on Linux the kernel sends it SIGKILL when the parent
  ends (``prctl(PR_SET_PDEATHSIG)``); elsewhere a thread of the worker's looks for a
  new parent process twice a second.

The parent's side (:func:`stop_with_signals`, installed by the ``hlotop`` command):
SIGTERM and SIGHUP (``timeout``, ``kill``, a closed SSH session, a cancelled CI job)
kill the workers, remove the temporary folders made with :func:`temporary_folder`,
then end the process as the signal would have (a shell reports 128 + the signal).

:class:`OrderedMap` maps a function over ``0 .. count-1`` on up to ``workers``
processes (:class:`concurrent.futures.ProcessPoolExecutor`) and gives the results in
order. Only the indices and the results cross between processes: the function and
what it reads are the forked copy's. A worker that dies (killed, out of memory) breaks
the pool; the items it did not finish are run again: each one a worker had started,
alone in a process of its own (so that the one that kills its worker is found), and
the rest on a new pool. An item that kills its lone process too is ``lost`` (the
caller says what stands for it, with the reason); without workers, or when the pool
cannot start, each item is run here.
"""

from __future__ import annotations

import itertools
import mmap
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:  # multiprocessing is imported when a worker starts (10 ms otherwise)
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.context import ForkContext

T = TypeVar("T")

# Signals that end hlotop and its workers (the parent's handler: stop_with_signals).
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_PARENT_POLL = 0.5  # seconds between two looks for a new parent, without prctl


def fork_context() -> ForkContext:
    """The multiprocessing context every hlotop worker is started with: ``fork``.
    Raises ValueError where the system cannot fork."""
    import multiprocessing

    return multiprocessing.get_context("fork")


def start_worker(parent: int, nice: int = 0) -> None:
    """The first thing a worker does (``parent``: the pid of the process that forked
    it): ignore ctrl-c, end at once on SIGTERM and SIGHUP (unless the parent ignores
    them: ``nohup``), die with ``parent``, and lower its priority by ``nice``
    (``os.nice``; where that is refused, the same work at the same priority). Raises
    nothing."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for signum in ENDING_SIGNALS:
        if callable(signal.getsignal(signum)):  # the parent's handler, copied by fork
            signal.signal(signum, signal.SIG_DFL)
    _die_with(parent)
    if nice:
        try:
            os.nice(nice)
        except OSError:
            pass


def _die_with(parent: int) -> None:
    """Have the kernel kill this process when ``parent`` ends (Linux), else a thread
    that ends it when its parent is no longer ``parent``."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            prctl = ctypes.CDLL(None, use_errno=True).prctl
            if prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # it ended before prctl took effect
                    os._exit(1)
                return
        except (AttributeError, OSError):
            pass

    def watch() -> None:
        while os.getppid() == parent:
            threading.Event().wait(_PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="hlotop-parent-watch", daemon=True).start()


# -- the parent's side ----------------------------------------------------------------

_FOLDERS: set[str] = set()  # temporary folders to remove if this process is killed
_OWNER = os.getpid()  # the process whose handlers these are (a fork's copy is not it)


def temporary_folder(prefix: str) -> str:
    """A new temporary folder (``tempfile.mkdtemp``), removed by :func:`remove_folder`
    or, if this process is ended by SIGTERM or SIGHUP first, by the handler of
    :func:`stop_with_signals`. Raises OSError as ``mkdtemp`` does."""
    import tempfile  # here: 5 ms that only --json's workers need

    folder = tempfile.mkdtemp(prefix=prefix)
    _FOLDERS.add(folder)
    return folder


def remove_folder(folder: str) -> None:
    """Remove ``folder`` (made by :func:`temporary_folder`) and what is in it. Raises
    nothing."""
    import shutil

    _FOLDERS.discard(folder)
    shutil.rmtree(folder, ignore_errors=True)


def stop_workers() -> None:
    """Kill every worker process this process started and still runs, wait for them,
    and remove the temporary folders. Raises nothing."""
    if "multiprocessing" in sys.modules:
        import multiprocessing

        try:
            children = multiprocessing.active_children()
            for child in children:
                child.kill()
            for child in children:
                child.join(1)
        except Exception:  # noqa: BLE001 - on the way out: the kernel kills them anyway
            pass
    for folder in list(_FOLDERS):
        remove_folder(folder)


def stop_with_signals() -> None:
    """Have SIGTERM and SIGHUP stop this process's workers (:func:`stop_workers`)
    before it ends as the signal would have it; a signal ignored (``nohup`` ignores
    SIGHUP) stays ignored. Call it from the main thread of an entry point (the
    ``hlotop`` command); a worker forked later resets them (:func:`start_worker`).
    Raises ValueError off the main thread."""
    global _OWNER
    _OWNER = os.getpid()
    for signum in ENDING_SIGNALS:
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _on_ending_signal)


def _on_ending_signal(signum: int, frame: object) -> None:
    if os.getpid() == _OWNER:
        stop_workers()
    end_by(signum)


def end_by(signum: int) -> None:
    """End this process as signal ``signum``'s default action does (its parent sees
    it killed by the signal: a shell's status 128 + ``signum``)."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # a signal whose default is to go on: end anyway


# -- the ordered map --------------------------------------------------------------------

# In a worker: what each map runs (set in the parent before the pool forks, so the
# workers have it; only keys and indices are sent).
_MAPS: dict[int, tuple[Callable[[int], Any], mmap.mmap]] = {}
_KEYS = itertools.count()
_STARTED = 1  # an item's mark in the map's shared bytes once a worker has begun it
_MAX_EMPTY_BREAKS = 3  # breaks in a row that found no item begun: the rest run here


def _start_map_worker(parent: int, nice: int) -> None:
    start_worker(parent, nice)


def _run_items(key: int, items: Sequence[int]) -> list:
    """In a worker: the map's function of each of ``items``, in turn; each marked as
    begun first, in the bytes the parent sees."""
    function, begun = _MAPS[key]
    out = []
    for i in items:
        begun[i] = _STARTED
        out.append(function(i))
    return out


def _run_alone(key: int, i: int, send: Any, parent: int, nice: int) -> None:
    """The body of the process that runs item ``i`` alone: its result or the
    exception it raised, sent down ``send``."""
    start_worker(parent, nice)
    function, _ = _MAPS[key]
    try:
        result: tuple[bool, Any] = (True, function(i))
    except Exception as err:  # noqa: BLE001 - raised in the parent, as the pool does
        result = (False, err)
    send.send(result)
    send.close()


def death_reason(exitcode: int | None) -> str:
    """Why a worker process ended without a result, from its exit code."""
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        why = " (as the kernel's out-of-memory killer does)" if name == "SIGKILL" else ""
        return f"the worker process reading it was killed by {name}{why}"
    return f"the worker process reading it ended (exit status {exitcode})"


class OrderedMap(Generic[T]):
    """``function(i)`` for each ``i`` in ``0 .. count-1``, run by up to ``workers``
    forked processes (a pool, ``chunk`` items to a task) that start at once, and
    iterated in order. ``function`` runs in the workers' copy of this process: it is
    never pickled, its results are. ``nice``: added to the workers' nice value.

    ``here(i)`` (default ``function``) stands for an item no worker runs: all of them
    with fewer than one worker or when the pool cannot start, the rest after pools
    broke repeatedly with no item begun. ``lost(i, reason)`` (default ``here(i)``)
    stands for an item that killed its worker when run alone (``reason``: which
    signal). An exception ``function`` raises in a worker is raised by the iteration.

    Use it as a context manager, or :meth:`close` it."""

    def __init__(
        self,
        function: Callable[[int], T],
        count: int,
        workers: int,
        *,
        chunk: int = 1,
        nice: int = 0,
        here: Callable[[int], T] | None = None,
        lost: Callable[[int, str], T] | None = None,
    ):
        self.function, self.count, self.chunk, self.nice = function, count, max(1, chunk), nice
        self.here = here or function
        here_ = self.here
        self.lost: Callable[[int, str], T] = lost or (lambda i, _reason: here_(i))
        self.workers = max(0, min(workers, -(-count // self.chunk)))
        self.parallel = False  # whether worker processes were started
        self._key = next(_KEYS)
        self._begun: mmap.mmap | None = None
        self._pool: ProcessPoolExecutor | None = None
        # In order: (items, a pool's future of their results, or the results, or None:
        # to be run here).
        self._queue: deque[tuple[Sequence[int], Future | list | None]] = deque()
        self._empty_breaks = 0
        if self.workers < 1:
            self._queue.append((range(count), None))
            return
        try:
            self._begun = mmap.mmap(-1, max(1, count))  # shared with the forks
            _MAPS[self._key] = (function, self._begun)
            self._queue.extend(self._submit(range(count)))
            self.parallel = True
        except Exception:  # noqa: BLE001 - no fork, no pipes, no room: run here
            self.close(kill=True)
            self._queue.clear()
            self._queue.append((range(count), None))

    def _submit(self, items: Sequence[int]) -> list[tuple[Sequence[int], Future | list | None]]:
        """``items`` in tasks of ``chunk`` on the pool (started now if there is none)."""
        if self._pool is None:
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=fork_context(),
                initializer=_start_map_worker,
                initargs=(os.getpid(), self.nice),
            )
        out: list[tuple[Sequence[int], Future | list | None]] = []
        for at in range(0, len(items), self.chunk):
            part = items[at : at + self.chunk]
            out.append((part, self._pool.submit(_run_items, self._key, tuple(part))))
        return out

    def __iter__(self) -> Iterator[T]:
        from concurrent.futures.process import BrokenProcessPool

        while self._queue:
            items, source = self._queue[0]
            if source is None:
                self._queue.popleft()
                for i in items:
                    yield self.here(i)
                continue
            if isinstance(source, list):
                self._queue.popleft()
                yield from source
                continue
            try:
                results = source.result()
            except BrokenProcessPool:
                self._after_break()
                continue
            except BaseException:
                self.close(kill=True)
                raise
            self._queue.popleft()
            yield from results
        self.close()

    def _after_break(self) -> None:
        """A worker died and the pool is broken: keep what came back; run each item a
        worker had begun alone (its result, or ``lost``), then the rest on a new pool
        (each started with no other thread of the pool's left to copy)."""
        begun = self._begun
        assert begun is not None
        self.close(kill=True, keep_marks=True)
        queue: list[tuple[Sequence[int], Future | list | None]] = []
        rest: list[int] = []
        alone: list[int] = []
        for items, source in self._queue:
            if isinstance(source, list) or source is None:
                queue.append((items, source))
            elif source.done() and not source.cancelled() and source.exception() is None:
                queue.append((items, source.result()))
            else:
                for i in items:
                    (alone if begun[i] == _STARTED else rest).append(i)
                    begun[i] = 0
        self._empty_breaks = 0 if alone else self._empty_breaks + 1
        queue += [((i,), [self._alone(i)]) for i in alone]
        runs = _runs(rest)  # the rest in runs of consecutive items, kept in order
        if self._empty_breaks >= _MAX_EMPTY_BREAKS:
            queue += [(run, None) for run in runs]
        else:
            new: list[tuple[Sequence[int], Future | list | None]] = []
            try:
                for run in runs:
                    new += self._submit(run)
            except Exception:  # noqa: BLE001 - no new pool: the rest here
                self.close(kill=True, keep_marks=True)
                new = [(run, None) for run in runs]
            queue += new
        queue.sort(key=lambda part: part[0][0])
        self._queue = deque(queue)

    def _alone(self, i: int) -> T:
        """Item ``i`` run in a process of its own: its result, or ``lost(i, why)`` if
        the process dies. Raises what the function raises."""
        try:
            context = fork_context()
            receive, send = context.Pipe(duplex=False)
            process = context.Process(
                target=_run_alone,
                args=(self._key, i, send, os.getpid(), self.nice),
                daemon=True,
            )
            process.start()
        except Exception:  # noqa: BLE001 - no process to run it in: here
            return self.here(i)
        send.close()
        try:
            ok, result = receive.recv()
        except (EOFError, OSError):
            process.join()
            return self.lost(i, death_reason(process.exitcode))
        finally:
            receive.close()
        process.join()
        if not ok:
            raise result
        return result

    def close(self, kill: bool = False, *, keep_marks: bool = False) -> None:
        """Stop the workers: each finishes the task it is on, or with ``kill`` is
        killed at once (an error or ctrl-c on the way). Raises nothing."""
        pool, self._pool = self._pool, None
        if pool is not None:
            try:
                if kill:
                    for process in _processes(pool):
                        process.kill()
                # waits for the pool's thread (and, without kill, each task on the way)
                pool.shutdown(wait=True, cancel_futures=True)
            except Exception:  # noqa: BLE001
                pass
        if not keep_marks:
            _MAPS.pop(self._key, None)
            begun, self._begun = self._begun, None
            if begun is not None:
                begun.close()

    def __enter__(self) -> OrderedMap[T]:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self.close(kill=kind is not None)


def _runs(items: list[int]) -> list[range]:
    """``items`` (ascending) as ranges of consecutive items."""
    runs: list[range] = []
    for i in items:
        if runs and runs[-1].stop == i:
            runs[-1] = range(runs[-1].start, i + 1)
        else:
            runs.append(range(i, i + 1))
    return runs


def _processes(pool: ProcessPoolExecutor) -> list:
    """The worker processes of ``pool`` (the standard library keeps them in a private
    dict; Python 3.14 adds ``kill_workers``)."""
    return list((getattr(pool, "_processes", None) or {}).values())
