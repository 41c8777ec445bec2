"""Half of a long write in a second process: ``--json`` on a big dump writes its value
records from two processes, one on each core.

A forked copy of this process shares the loaded dump (copy-on-write), writes its text
to an unlinked temporary file and its result (anything JSON can hold) to another; the
parent copies that text into its own output once the child is done. Where ``fork`` is
missing, or threads are running (a fork would copy their locks mid-use), or anything
about the child fails, :func:`start` or :meth:`Child.finish` says so and the caller
does the work itself: the output is the same either way.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Callable
from typing import IO, Any

_CHUNK = 1 << 20  # characters copied at a time


class Child:
    """A running forked worker; see :func:`start`."""

    def __init__(self, pid: int, text: IO[str], result: IO[str]):
        self.pid = pid
        self._text = text
        self._result = result

    def finish(self, out: IO[str], before: str = "") -> Any:
        """Wait for the child. If it succeeded, write ``before`` (unless it wrote
        nothing) and then its text to ``out``, and return its result; else write
        nothing and return None. Raises what writing to ``out`` raises."""
        try:
            _, status = os.waitpid(self.pid, 0)
            self.pid = 0
            if os.waitstatus_to_exitcode(status) != 0:
                return None
            self._result.seek(0)
            result = json.load(self._result)
            self._text.seek(0)
            first = self._text.read(_CHUNK)
            if first:
                out.write(before + first)
                shutil.copyfileobj(self._text, out, _CHUNK)
            return result
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child if it still runs, and free its files. Raises nothing."""
        if self.pid:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.pid = 0
        self._text.close()
        self._result.close()


def start(work: Callable[[IO[str]], Any]) -> Child | None:
    """Run ``work(out)`` in a forked copy of this process: it writes text to ``out``
    and returns a JSON-able result. Returns the :class:`Child`, or None when it cannot
    be forked here (no ``os.fork``, threads running, no temporary files); the caller
    then does the work itself. The child never touches this process's output."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return None
    try:
        text = tempfile.TemporaryFile("w+", encoding="utf-8")
        result = tempfile.TemporaryFile("w+", encoding="utf-8")
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        text.close()
        result.close()
        return None
    if pid == 0:  # the child: never returns
        code = 1
        try:
            json.dump(work(text), result)
            text.flush()
            result.flush()
            code = 0
        except BaseException:  # noqa: BLE001 - the parent does the work instead
            pass
        os._exit(code)
    return Child(pid, text, result)
