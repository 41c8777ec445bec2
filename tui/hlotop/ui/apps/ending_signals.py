"""SIGTERM and SIGHUP while a browser runs (``timeout``, ``kill``, a closed SSH
session): the app leaves as ``q`` leaves it, the terminal restored (the alternate
screen left, the cursor shown, mouse reporting and raw mode off), and the process then
ends as the signal would have ended it (a shell's status 128 + the signal).

Textual restores the terminal on its exit path only; a signal's default action ends
the process before it, leaving the terminal unusable. Here the handler hands the app
its exit on its own event loop; if the loop does not get there within
:data:`FORCE_AFTER` seconds (stuck), the terminal is restored from a thread and the
process ends.
"""

from __future__ import annotations

import os
import signal
import threading

from textual.app import App

from hlotop.loading.workers import ENDING_SIGNALS, end_by
from hlotop.ui.base.textual_compat import event_loop_of, restore_terminal

FORCE_AFTER = 2.0  # seconds the app has to leave by itself after a signal


def run_app(app: App) -> None:
    """``app.run()``, with SIGTERM and SIGHUP meanwhile leaving the app as ``q`` does
    and then ending this process by that signal (this function does not return then);
    one that is ignored (``nohup``) stays ignored. Off the main thread (where no signal
    handler can be set) it is ``app.run()``."""
    if threading.current_thread() is not threading.main_thread():
        app.run()
        return
    received: list[int] = []

    def on_signal(signum: int, frame: object) -> None:
        if received:
            return  # already leaving
        received.append(signum)
        loop = event_loop_of(app)
        try:
            if loop is None:
                raise RuntimeError("not running")
            loop.call_soon_threadsafe(lambda: app.exit(None, 128 + signum))
        except RuntimeError:  # not started, or its loop closed: nothing to undo
            end_by(signum)
        timer = threading.Timer(FORCE_AFTER, _force, (app, signum))
        timer.daemon = True
        timer.start()

    previous = {
        signum: signal.signal(signum, on_signal)
        for signum in ENDING_SIGNALS
        if signal.getsignal(signum) != signal.SIG_IGN  # nohup's SIGHUP stays ignored
    }
    try:
        app.run()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if received:
        end_by(received[0])


def _force(app: App, signum: int) -> None:
    """The app did not leave in time: restore the terminal from here and end."""
    restore_terminal(app)
    os._exit(128 + signum)
