"""Opening dumps off the UI thread, the same way in every hlotop app: the work runs in
a daemon thread with the collector paused (and what it made frozen), a Textual thread
worker waits for it and can give up at once, and an error becomes the one-line
message and return code the app exits with, never a traceback.

Why a daemon thread under the worker: a load cannot be stopped half-way, and on exit
(``q`` while a big dump loads) the worker must return at once; the daemon thread is
left to die with the process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from hlotop.crashlog import write_crash_log
from hlotop.process import freeze_heap, gc_paused

EXIT_LOAD_ERROR = 2  # the input is not a dump (missing, unreadable, not one)
EXIT_INTERNAL_ERROR = 70  # a bug in hlotop, as the command's own crash exit (cli.main)
POLL = 0.05  # seconds between two looks at the load thread

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Failed:
    """The load failed: the app exits with this message and return code."""

    message: str
    return_code: int


@dataclass(slots=True)
class _Box(Generic[T]):
    value: T | None = None
    error: BaseException | None = None


def load_in_background(
    work: Callable[[], T],
    *,
    name: str,
    given_up: Callable[[], bool],
    user_errors: tuple[type[BaseException], ...],
    internal: str,
    crash_context: str,
) -> T | Failed | None:
    """Run ``work()`` in a daemon thread called ``name``, with the cyclic GC paused
    and what it made frozen after (:mod:`hlotop.process`), and wait for it, asking
    ``given_up()`` every :data:`POLL` seconds. Call it from a Textual thread worker.

    Returns what ``work`` returned; None as soon as ``given_up()`` is true (the thread
    is left behind); or a :class:`Failed`: for an error of ``user_errors`` (a file that
    is not a dump) ``hlotop: error: <error>`` with :data:`EXIT_LOAD_ERROR`; for any
    other (a bug) ``hlotop: error: <internal>: <type>: <error> at <file>:<line>`` with
    :data:`EXIT_INTERNAL_ERROR`, its traceback written to a crash log
    (:func:`hlotop.crashlog.write_crash_log`, told ``crash_context``) that the message
    names. Raises nothing of its own."""
    box: _Box[T] = _Box()
    done = threading.Event()

    def run() -> None:
        try:
            with gc_paused():
                box.value = work()
                freeze_heap()
        except BaseException as err:  # noqa: BLE001 - reported below, in the UI
            box.error = err
        finally:
            done.set()

    threading.Thread(target=run, name=name, daemon=True).start()
    while not done.wait(POLL):
        if given_up():
            return None
    err = box.error
    if err is None:
        return box.value
    if isinstance(err, user_errors):
        return Failed(f"hlotop: error: {err}", EXIT_LOAD_ERROR)
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}" if tb else ""
    log = write_crash_log(err, crash_context)
    details = f"; details in {log}" if log else ""
    return Failed(
        f"hlotop: error: {internal}: {type(err).__name__}: {err}{where}{details}",
        EXIT_INTERNAL_ERROR,
    )
