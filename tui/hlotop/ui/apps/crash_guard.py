"""The top-level guard of the terminal UI: an hlotop bug never shows a traceback.

Textual sends every exception nobody caught inside the running app (a key handler, a
message handler, a worker, a paint) to one private method, which prints a Rich
traceback (with locals) once the app has exited
(:class:`hlotop.ui.base.textual_compat.UnhandledExceptionHook`). :class:`CrashGuard` replaces that:
the traceback goes to a log file (:func:`hlotop.crashlog.write_crash_log`, under
``~/.local/state/hlotop``), the app leaves through Textual's normal exit path (so the
terminal is restored), and one line on stderr names the log file. The exit status is
:data:`EXIT_CRASH`, as ``hlotop``'s own top-level handler in :mod:`hlotop.cli` uses.
"""

from __future__ import annotations

import sys

from rich.text import Text

from hlotop.crashlog import write_crash_log
from hlotop.safe_text import printable
from hlotop.ui.base.textual_compat import (
    UnhandledExceptionHook,
    keep_exception_for_tests,
    set_exit_message,
    stop_processing_messages,
)

EXIT_CRASH = 70  # EX_SOFTWARE, as cli.main returns for a bug outside the app
_REASON_MAX = 200  # characters of the exception's text in the one-line message


def crash_message(error: BaseException, log) -> str:
    """The one line shown on stderr for ``error`` (``log``: the crash log's path, or
    None when no folder could be written). Control characters are escaped and a long
    exception text is cut, so the line stays one line."""
    reason = printable(f"{type(error).__name__}: {error}")
    if len(reason) > _REASON_MAX:
        reason = reason[: _REASON_MAX - 1] + "…"
    where = f"; details in {log}" if log else "; no log file could be written"
    return f"hlotop: error: internal error ({reason}){printable(where)}"


class CrashGuard(UnhandledExceptionHook):
    """Mix into a Textual ``App`` (before ``App`` in the bases) to catch every
    unhandled exception at the top: it is written to a crash log, the app exits with
    return code :data:`EXIT_CRASH` and the one-line :func:`crash_message` as its exit
    message, and no traceback is printed.

    Only the first exception is logged; later ones (the app is already on its way
    out) are ignored. As Textual does, the first is kept so that ``App.run_test``
    re-raises it and a test that drives the app sees the bug.

    ``crash_log`` is the log's path once it has been written (None before, or when
    no folder could be written); ``crash_context()`` says what goes in the log beside
    the traceback (override it to add the app's own state).
    """

    crash_log = None
    _crashed = False

    def crash_context(self) -> str:
        """Text written above the traceback: the command line, the dump, the screen."""
        lines = [f"argv: {sys.argv!r}"]
        source = getattr(self, "source", None)
        if source is not None:
            lines.append(f"dump: {source}")
        try:
            lines.append(f"screen: {type(self.screen).__name__}")  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - no screen yet, or the stack is broken
            pass
        return "\n".join(lines)

    def unhandled_exception(self, error: Exception) -> None:
        """Textual calls this with every unhandled exception; it always ends the app."""
        if self._crashed:
            return
        self._crashed = True
        keep_exception_for_tests(self, error)  # type: ignore[arg-type]
        try:
            context = self.crash_context()
        except Exception:  # noqa: BLE001 - the context is a nicety, the log is not
            context = f"argv: {sys.argv!r}"
        self.crash_log = write_crash_log(error, context)
        self.exit(return_code=EXIT_CRASH)  # type: ignore[attr-defined]
        # The only exit message (Textual prints the first, plus a note when there are
        # more). A Text, not a str: Textual prints a str exit message as markup.
        set_exit_message(self, Text(crash_message(error, self.crash_log)))  # type: ignore[arg-type]
        # Printed whole, as one line (the terminal wraps it): Rich would break it at the
        # console's width, in the middle of the log's path.
        self.error_console.soft_wrap = True  # type: ignore[attr-defined]
        # Do not wait for the message queue to reach ExitApp: the app may be broken.
        stop_processing_messages(self)  # type: ignore[arg-type]
