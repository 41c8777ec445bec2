"""The hlotop terminal UI: ``HlotopApp(path).run()``.

The dump loads in a thread worker while a loading screen shows; then the main screen
takes over. A file that is not a dump ends the app with return code 2 and a one-line
message, never a traceback.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual.app import App

from hlotop.bindings import bindings
from hlotop.commands import HlotopCommands
from hlotop.loader import LoadError, ModuleDump, load
from hlotop.safe_text import printable
from hlotop.screens.help import HelpScreen
from hlotop.screens.loading import LoadingScreen
from hlotop.screens.main import MainScreen
from hlotop.units import human_bytes

EXIT_LOAD_ERROR = 2
EXIT_INTERNAL_ERROR = 1


class HlotopApp(App[None]):
    """Browse one module's buffer assignment. ``source`` is what the user named (shown
    by its file name only); ``open_dump`` replaces ``load(source)`` (tests, stdin)."""

    CSS_PATH = "hlotop.tcss"
    TITLE = "hlotop"
    BINDINGS = bindings("app")
    # Only hlotop's own commands: Textual's (theme, screenshot to a file, maximize)
    # would come first in an unstable order and crowd the list at 80x24.
    COMMANDS = {HlotopCommands}

    def __init__(self, source: str, open_dump: Callable[[], ModuleDump] | None = None):
        super().__init__()
        self.source = str(source)
        self._open_dump = open_dump if open_dump is not None else (lambda: load(self.source))
        self.dump: ModuleDump | None = None

    @property
    def module(self) -> ModuleDump | None:
        """The loaded dump (None until it has loaded); ``hlotop --strict`` reads its
        diagnostics after the app exits."""
        return self.dump

    @property
    def display_name(self) -> str:
        return printable(Path(self.source).name or self.source)

    def on_mount(self) -> None:
        label = self.display_name
        try:
            label += f" ({human_bytes(os.path.getsize(self.source))})"
        except OSError:
            pass
        self.push_screen(LoadingScreen(label))
        self.run_worker(self._load, name="load", thread=True, exclusive=True)

    def _load(self) -> None:
        """Runs in a thread. A full GC pass over a big model stalls the UI, so the
        collector is off while the model is built, and the model is frozen after."""
        gc.disable()
        try:
            dump = self._open_dump()
        except LoadError as err:
            self.call_from_thread(self._fail, f"hlotop: error: {err}", EXIT_LOAD_ERROR)
            return
        except Exception as err:  # a bug in hlotop: say where, without a traceback
            tb = err.__traceback__
            while tb is not None and tb.tb_next is not None:
                tb = tb.tb_next
            where = f" at {Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}" if tb else ""
            self.call_from_thread(
                self._fail, f"hlotop: error: {self.source}: internal error while loading: "
                            f"{type(err).__name__}: {err}{where} (please report it)",
                EXIT_INTERNAL_ERROR)
            return
        finally:
            gc.enable()
            gc.freeze()
        self.call_from_thread(self._show, dump)

    def _fail(self, message: str, return_code: int) -> None:
        # A Text, not a str: Textual prints a str exit message as markup.
        self.exit(return_code=return_code, message=Text(printable(message)))

    def _show(self, dump: ModuleDump) -> None:
        self.dump = dump
        self.switch_screen(MainScreen(dump))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
        else:
            self.push_screen(HelpScreen())
