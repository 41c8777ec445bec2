"""An hlotop bug inside the running browser (issue 4): caught at the top, its traceback
in a crash log, the terminal restored, one line on stderr naming the log, exit 70."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, sample
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.apps.crash_guard import EXIT_CRASH, crash_message
from hlotop.ui.screens.main import MainScreen

TPU = "seeds/003_a3085531593bac68.txt"


@pytest.fixture
def state_home(tmp_path, monkeypatch) -> Path:
    """Crash logs go under ``$XDG_STATE_HOME/hlotop`` (crashlog.py); keep them in tmp."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "hlotop"


def test_a_key_handler_that_raises_ends_the_app_with_a_log_and_one_line(
    state_home, monkeypatch, capsys
):
    def broken(self):
        raise RuntimeError("simulated bug in a key handler")

    monkeypatch.setattr(MainScreen, "action_sort", broken)
    app = HlotopApp(sample(TPU))

    async def drive() -> None:
        async with app.run_test(size=(120, 34)) as pilot:
            await app.wait_until_loaded()
            await pilot.pause()
            await pilot.press("s")  # MainScreen.action_sort
            await pilot.pause()

    capsys.readouterr()
    # run_test re-raises the first unhandled exception, as Textual does for tests.
    with pytest.raises(RuntimeError, match="simulated bug"):
        asyncio.run(drive())
    assert app.return_code == EXIT_CRASH
    log = app.crash_log
    assert log is not None and log.parent == state_home and log.is_file()
    text = log.read_text()
    assert "RuntimeError: simulated bug in a key handler" in text
    assert "Traceback" in text and "in broken" in text
    assert f"dump: {sample(TPU)}" in text and "screen: MainScreen" in text
    err = capsys.readouterr().err
    assert err == (
        "hlotop: error: internal error (RuntimeError: simulated bug in a key "
        f"handler); details in {log}\n"
    )
    assert "Traceback" not in err


def test_crash_message_is_one_short_line_without_control_characters():
    error = ValueError("line one\nline two \x1b]0;pwned\x07" + "x" * 500)
    message = crash_message(error, Path("/state/hlotop/crash.log"))
    assert "\n" not in message and "\x1b" not in message and "\x07" not in message
    assert message.startswith("hlotop: error: internal error (ValueError: line one\\nline two ")
    assert message.endswith("…); details in /state/hlotop/crash.log")
    assert len(message) < 300
    assert crash_message(error, None).endswith("; no log file could be written")


_CRASHING_RUN = """\
import sys
from hlotop.cli import main
from hlotop.ui.screens.main import MainScreen

def broken(self):
    raise RuntimeError("simulated bug in a key handler")

MainScreen.action_sort = broken
sys.exit(main([sys.argv[1]]))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs a Linux pty")
def test_on_a_real_terminal_the_screen_is_restored_and_one_line_is_left(state_home):
    """``hlotop PATH`` on a pseudo-terminal: press s (made to raise), and the process
    exits 70, leaves the alternate screen, and prints one line naming the log."""
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="100", LINES="30")
    env.pop("NO_COLOR", None)
    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_RUN, sample(TPU)],
        cwd=ROOT,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=env,
        close_fds=True,
    )
    os.close(terminal)
    out = bytearray()

    def read_for(seconds: float, until: bytes | None = None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until and until in out):
            ready, _, _ = select.select([controller], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the child closed the terminal
                    return
                if not chunk:
                    return
                out.extend(chunk)

    def read_until_quiet(quiet: float, limit: float) -> None:
        """Read until nothing new comes for ``quiet`` seconds (a busy machine paints
        the first screen in several frames), at most ``limit`` seconds."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            before = len(out)
            read_for(quiet)
            if len(out) == before:
                return

    try:
        read_for(30, until=b"Allocations")  # the main screen is up
        read_until_quiet(1.0, 30)  # and settled
        os.write(controller, b"s")
        proc.wait(timeout=30)
        read_for(2)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(controller)
    assert proc.returncode == EXIT_CRASH
    text = out.decode("utf-8", "replace")
    assert "\x1b[?1049h" in text and "\x1b[?1049l" in text  # entered and left the alt screen
    after = text.rsplit("\x1b[?1049l", 1)[1]
    assert "Traceback" not in text
    logs = list(state_home.glob("crash-*.log"))
    assert len(logs) == 1 and "simulated bug" in logs[0].read_text()
    lines = [ln for ln in after.replace("\r", "").split("\n") if "hlotop: error" in ln]
    assert len(lines) == 1
    assert lines[0].strip().endswith(f"details in {logs[0]}")
