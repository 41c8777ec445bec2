"""Shared set-up of the Textual Pilot tests: a sync wrapper for async tests, waiting
for the main screen, and reading what a screen or widget shows."""

from __future__ import annotations

import asyncio
import functools
import io

from rich.console import Console

from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.base.textual_compat import screen_lines
from hlotop.ui.screens.main import MainScreen

TPU = "seeds/003_a3085531593bac68.txt"  # TPU, V1 live ranges, VMEM/SMEM, peak at step 11
CPU_TRACE = "seeds/000_aa093b3e4f73e23a.txt"  # CPU, stack-trace breakdown, op_name args[0]


def pilot_test(fn):
    """Run an async test with asyncio.run (no pytest-asyncio in the environment)."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return run


async def started(app: HlotopApp, pilot) -> MainScreen:
    """Wait for the main screen, with every value record read (the background pass)."""
    await app.wait_until_loaded()
    await pilot.pause()
    assert isinstance(app.screen, MainScreen)
    return app.screen


def plain(renderable, width: int = 200) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.export_text()


def widget_lines(widget) -> list[str]:
    """What a Line API widget shows, row by row."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def screen_text(app) -> str:
    return "\n".join(screen_lines(app.screen))


def notifications(app) -> list[str]:
    """The message of every notification ``app`` has shown and not yet dismissed, oldest
    first (toasts go as they time out)."""
    # Textual keeps them in a private list and has no public reader; this is the one
    # place the tests read it (hlotop itself never does: ui/base/textual_compat.py).
    return [str(n.message) for n in app._notifications]


def notes(app) -> str:
    """:func:`notifications`, one a line."""
    return "\n".join(notifications(app))
