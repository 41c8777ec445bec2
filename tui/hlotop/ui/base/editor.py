"""Opening a file at a line in the user's editor (``E``), the terminal handed over to
it and taken back after.

The editor is ``$VISUAL``, else ``$EDITOR`` (the order git and crontab use), split as a
shell would split it (``"code --wait"``), and run as ``EDITOR +LINE FILE``: the
convention of vi, vim, nvim, nano, emacs, micro and kakoune. An editor that takes
another form (VS Code's ``--goto FILE:LINE``) needs a small wrapper script as
``$EDITOR``.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

from textual.app import App, SuspendNotSupported


def editor_command(env: Mapping[str, str] = os.environ) -> list[str] | None:
    """The editor's command line from ``VISUAL`` or ``EDITOR`` in ``env``, split as
    a shell splits it; None if neither is set (or either is blank or cannot be split:
    an unbalanced quote)."""
    for name in ("VISUAL", "EDITOR"):
        text = env.get(name, "").strip()
        if text:
            try:
                words = shlex.split(text)
            except ValueError:
                return None
            return words or None
    return None


def editor_argv(command: list[str], path: Path, line: int | None) -> list[str]:
    """``command +LINE PATH`` (``command PATH`` without a line)."""
    return [*command, *([f"+{line}"] if line else []), str(path)]


def run_editor(app: App, argv: list[str]) -> str | None:
    """Run ``argv`` with the terminal handed over to it (``App.suspend``), and take
    it back when it exits. Returns None if it ran and exited with 0, else what went
    wrong, in a sentence (never raises). A headless app (the tests) has no terminal to
    hand over: the command runs with no input."""
    try:
        if app.is_headless:
            result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True)
        else:
            with app.suspend():
                result = subprocess.run(argv)
    except SuspendNotSupported:
        return "this terminal cannot be handed over to an editor"
    except FileNotFoundError:
        return f"no program {argv[0]!r} (from $VISUAL or $EDITOR)"
    except (OSError, ValueError) as err:
        return f"{argv[0]!r} could not run: {err}"
    if result.returncode != 0:
        return f"{argv[0]!r} exited with status {result.returncode}"
    return None
