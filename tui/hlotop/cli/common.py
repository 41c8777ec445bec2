"""What the ``hlotop`` command's parts share: the one-line error, the terminal after
a pipe, standard output written whole or failed with its reason, how a report is
written (show), and the process policy while a report is made."""

from __future__ import annotations

import errno
import io
import os
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hlotop.safe_text import printable

if TYPE_CHECKING:
    pass


def error(message: str) -> int:
    # A path from a directory listing is text from a dump's author too: no control codes.
    print(f"hlotop: error: {printable(message)}", file=sys.stderr)
    return 2


def reattach_terminal() -> bool:
    """After reading a dump from a pipe, read keys from the terminal instead."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        return False
    os.dup2(fd, 0)
    os.close(fd)
    return True


EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, as a shell reports a writer the pipe closed on
# A directory's report (--summary DIR, --json DIR, diff DIR DIR) that lacks a module it
# could not read (each named with its reason in the report); not 1 (--strict,
# --fail-over), 2 (not a dump, a bad argument) or 70 (an hlotop bug).
EXIT_PARTIAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT: ctrl-c


# A write that failed for want of room: a full disk, a quota, ulimit -f (EFBIG: Python
# ignores SIGXFSZ, so the write fails instead of the process being killed).
NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


class WholeWrites(io.RawIOBase):
    """A file descriptor written whole: a write the system cuts short (a file reaching
    ``ulimit -f``, a disk filling up) is followed by another for the rest, which fails
    with the reason (``EFBIG``, ``ENOSPC``) as an ``OSError``. Under Python's own
    ``sys.stdout`` the rest of a short write was dropped without a word, and
    ``hlotop --summary DUMP > file`` under ``ulimit -f`` exited 0 with a cut report."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data) -> int:  # a bytes-like object, as RawIOBase.write takes
        view = memoryview(data).cast("B")
        done = 0
        while done < len(view):
            written = os.write(self._fd, view[done:])
            if written == 0:  # no room, and no error said why
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            done += written
        return done


def whole_stdout() -> None:
    """Make ``sys.stdout`` write whole or fail (:class:`WholeWrites`) when it is not a
    terminal; its encoding and error handler are kept. For the ``hlotop`` command
    only (a program that imports hlotop keeps its own stdout). Raises nothing."""
    out = sys.stdout
    try:
        fd = out.fileno()
        if os.isatty(fd):
            return
        out.flush()
    except (AttributeError, OSError, ValueError):
        return
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(WholeWrites(fd)),
        encoding=out.encoding,
        errors=out.errors,
        write_through=False,
    )


def output_failed(err: OSError) -> int:
    """The exit status when writing the output failed with ``err``: a closed pipe
    (``hlotop --json DUMP | head``: the reader has what it wants) is
    :data:`EXIT_BROKEN_PIPE`, silently; anything else (a full disk, ``ulimit -f``)
    is said in one line, ``hlotop: error: standard output: <reason> ...``, and is 1.
    Standard output is pointed at ``/dev/null`` so no later flush fails again."""
    stdout_to_devnull()
    if isinstance(err, BrokenPipeError):
        return EXIT_BROKEN_PIPE
    reason = err.strerror or str(err)
    print(
        f"hlotop: error: standard output: {reason}; the output is incomplete",
        file=sys.stderr,
    )
    return 1


def stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


@contextmanager
def reporting():
    """While a report is made: no cyclic GC (the model lives until the report is out
    and makes no cycles, so the GC would only re-scan it: a full pass over 10^6
    objects right after loading a 100 MB dump took 0.16 s). Nor after it, when the
    command ends by ``os._exit``: the model is then frozen before the collector is
    re-enabled, or the first allocation after it scanned the whole model (0.1-0.2 s of
    every ``--summary`` at 46 MB, after its output). Freed buffers are kept for reuse
    (:func:`~hlotop.process.big_buffers_for_reports`)."""
    from hlotop.process import big_buffers_for_reports, ends_by_exit, freeze_heap, gc_paused

    big_buffers_for_reports()
    with gc_paused():
        try:
            yield
        finally:
            if ends_by_exit():
                freeze_heap()


def show(report, as_json: bool = False) -> None:
    """Write ``report`` (a :class:`hlotop.report.reports.Report`) to stdout: its JSON
    document if ``as_json`` (a :class:`~hlotop.report.reports.JsonReport`), else its
    text. Every report of the command goes out through here."""
    if as_json:
        report.write_json(sys.stdout)
    else:
        report.write_text(sys.stdout)


def strict_status(module, strict: bool) -> int:
    if strict:
        module.read_records()  # every line checked
    return 1 if strict and module.diagnostics else 0
