"""Part of a long write done by a second process: ``--json`` on a big dump writes its
value records from two processes, one on each core.

A forked copy of this process shares the loaded dump (copy-on-write), writes bytes to
an unlinked file in memory and returns a result (anything JSON can hold); the parent
reads that back once the child is done. The work is cut into numbered chunks that the
two take from either end (:class:`Chunks`) until they meet, so it is balanced however
fast each one runs. Where ``fork`` is missing, or threads are running (a fork would
copy their locks mid-use), or anything about the child fails, :func:`start` or
:meth:`Child.wait` says so and the caller does the work itself.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

_CURSORS = struct.Struct("qq")  # the next chunk from the front, the end of the back
_allowed = False


@contextmanager
def allowed() -> Iterator[None]:
    """A context in which :func:`start` may fork (the ``hlotop`` command's reports).
    Off otherwise: a program that loads dumps through the library may run threads
    Python cannot see (a JAX runtime's), and a fork copies their locks mid-use."""
    global _allowed
    before, _allowed = _allowed, True
    try:
        yield
    finally:
        _allowed = before


def _scratch(mode: str = "w+b", **kwargs) -> IO:
    """An unlinked file for the child's output: in memory (``memfd``) where Linux has
    it (a disk file's dirty pages made the writer wait for the disk: --json writes a
    few hundred megabytes there on a big dump), else a temporary file."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("hlotop", os.MFD_CLOEXEC), mode, **kwargs)
        except OSError:
            pass
    return tempfile.TemporaryFile(mode, **kwargs)


class Chunks:
    """Chunks ``0 .. count - 1`` of one job, taken by this process from the front
    (:meth:`front`) and by a forked child from the back (:meth:`back`) until they meet;
    each is taken once. The two cursors live in a temporary file, changed under a POSIX
    record lock (which, unlike ``flock``, a forked child does not share)."""

    def __init__(self, count: int):
        self.count = count
        self._file = _scratch()
        os.pwrite(self._file.fileno(), _CURSORS.pack(0, count), 0)

    def _take(self, from_front: bool) -> int | None:
        import fcntl

        fd = self._file.fileno()
        fcntl.lockf(fd, fcntl.LOCK_EX)
        try:
            front, back = _CURSORS.unpack(os.pread(fd, _CURSORS.size, 0))
            if front >= back:
                return None
            if from_front:
                chunk, front = front, front + 1
            else:
                chunk = back = back - 1
            os.pwrite(fd, _CURSORS.pack(front, back), 0)
            return chunk
        finally:
            fcntl.lockf(fd, fcntl.LOCK_UN)

    def front(self) -> Iterator[int]:
        """Chunks in ascending order, as long as the other end has not taken them."""
        while (chunk := self._take(True)) is not None:
            yield chunk

    def back(self) -> Iterator[int]:
        """Chunks in descending order, as long as the other end has not taken them."""
        while (chunk := self._take(False)) is not None:
            yield chunk

    def taken_from_front(self) -> int:
        """How many chunks the front has taken (all before that index)."""
        return _CURSORS.unpack(os.pread(self._file.fileno(), _CURSORS.size, 0))[0]

    def close(self) -> None:
        self._file.close()


class Child:
    """A running forked worker; see :func:`start`."""

    def __init__(self, pid: int, data: IO[bytes], result: IO[str]):
        self.pid = pid
        self._data = data
        self._result = result

    def wait(self) -> Any:
        """Wait for the child; its result, or None if it failed."""
        _, status = os.waitpid(self.pid, 0)
        self.pid = 0
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        self._result.seek(0)
        try:
            return json.load(self._result)
        except ValueError:
            return None

    def read(self, offset: int, length: int) -> bytes:
        """``length`` bytes the child wrote, from ``offset`` on."""
        return os.pread(self._data.fileno(), length, offset)

    def close(self) -> None:
        """Stop the child if it still runs, and free its files. Raises nothing."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = 0
        self._data.close()
        self._result.close()


def start(work: Callable[[IO[bytes]], Any]) -> Child | None:
    """Run ``work(out)`` in a forked copy of this process: it writes bytes to ``out``
    (note their offsets to read them back) and returns a JSON-able result. Returns the
    :class:`Child`, or None when it cannot be forked here (forking not allowed, no
    ``os.fork``, threads running, no temporary files); the caller then does the work
    itself. The child
    never touches this process's output and never returns from this call."""
    if not _allowed or not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    try:
        data = _scratch()
        result = _scratch("w+", encoding="utf-8")
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        data.close()
        result.close()
        return None
    if pid == 0:  # the child
        code = 1
        try:
            json.dump(work(data), result)
            data.flush()
            result.flush()
            code = 0
        except BaseException:  # noqa: BLE001 - the parent does the work instead
            pass
        os._exit(code)
    return Child(pid, data, result)
