"""The diff browser, ``hlotop diff OLD NEW`` on a terminal: :func:`run_diff_browser`.

Both compiles are loaded, compared and grouped in a thread worker (see
:func:`hlotop.ui.view_models.diff_data.load_diff`) while a loading screen names them and says
what is being done; then :class:`~hlotop.ui.screens.diff.DiffScreen` shows the
comparison. ``q`` quits at any time (the load runs in a daemon thread that is left
behind). A side that is not a dump ends the app with return code 2 and one line, an
hlotop bug with 70 and a log file, never a traceback.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.text import Text
from textual.app import App
from textual.worker import Worker, WorkerState, get_current_worker

from hlotop.loading.directory import ModuleEntry
from hlotop.loading.loader import LoadError
from hlotop.model import ModuleDump
from hlotop.safe_text import printable
from hlotop.ui.apps.background_load import Failed, load_in_background
from hlotop.ui.apps.commands import HlotopCommands
from hlotop.ui.apps.crash_guard import CrashGuard
from hlotop.ui.apps.ending_signals import run_app
from hlotop.ui.apps.quit_key import CopyOrQuit
from hlotop.ui.base.bindings import bindings
from hlotop.ui.screens.diff import DiffScreen
from hlotop.ui.screens.diff_help import DiffHelpScreen
from hlotop.ui.screens.loading import LoadingScreen
from hlotop.ui.view_models.diff_data import DiffData, load_diff


def run_diff_browser(old_path: str, new_path: str, keys: tuple[str, ...], accounting: str) -> int:
    """Browse the comparison of two compiles (``hlotop diff OLD NEW`` on a terminal).
    ``old_path``/``new_path``: a dump file, any file of a split module or a directory
    holding one module; ``keys``: the grouping keys of the change by group
    (``analysis.grouping.parse_keys``); ``accounting``: ``logical`` or ``occupied``.
    Returns the exit status: 0, 2 when a side cannot be opened, 70 for an hlotop bug."""
    app = DiffApp(old_path, new_path, keys, accounting)
    run_app(app)
    return app.return_code or 0


class DiffApp(CopyOrQuit, CrashGuard, App[None]):
    """The diff browser. ``open_diff(stage)`` replaces loading and comparing the two
    paths (tests); ``stage(text)`` says what it is doing."""

    CSS_PATH = "hlotop.tcss"
    TITLE = "hlotop diff"
    BINDINGS = bindings("app")
    COMMANDS = {HlotopCommands}

    def __init__(
        self,
        old_path: str,
        new_path: str,
        keys: Sequence[str] = ("phase", "scope"),
        accounting: str = "logical",
        open_diff: Callable[[Callable[[str], None]], DiffData] | None = None,
    ):
        super().__init__()
        self.old_path, self.new_path = str(old_path), str(new_path)
        self.source = f"{self.old_path} {self.new_path}"  # named in a crash log
        self._open = open_diff or (
            lambda stage: load_diff(self.old_path, self.new_path, keys, accounting, stage)
        )
        self.data: DiffData | None = None
        self._loading: LoadingScreen | None = None
        self._exiting = threading.Event()
        self._settled = asyncio.Event()

    # -- the app as the screens see it (HostApp) ----------------------------------------
    @property
    def exiting(self) -> bool:
        return self._exiting.is_set()

    @property
    def capacity(self) -> tuple[int, str] | None:
        """None: ``hlotop diff`` takes no ``--capacity``."""
        return None

    @property
    def module(self) -> ModuleDump | None:
        """None: a diff browses two compiles, not one dump (:attr:`data` holds both)."""
        return None

    @property
    def load_stage(self) -> str:
        """``""``: the diff's load says its stage on its own loading screen."""
        return ""

    def yield_to_input(self, stop: Callable[[], bool] | None = None) -> float:
        """0.0 at once: no worker of the diff's screens waits for the keys (its grouping
        is one call, not a loop of pieces)."""
        return 0.0

    def main_screen_started(self) -> None:
        """Nothing: the diff has no main screen and keeps no keys typed while it loads."""

    def open_value(self, value_id: int) -> None:
        """Nothing: the diff has no out-of-memory buffers to open."""

    def open_entry(self, entry: ModuleEntry) -> None:
        """Nothing: the diff has no modules view."""

    def back_to_modules(self) -> None:
        """Nothing: the diff has no list of modules to go back to."""

    def exit(self, *args, **kwargs) -> None:
        self._exiting.set()
        self._settled.set()
        super().exit(*args, **kwargs)

    async def wait_until_loaded(self) -> None:
        """Return once the comparison is shown (or the app is exiting): for tests."""
        await self._settled.wait()

    def on_mount(self) -> None:
        names = " and ".join(printable(Path(p).name or p) for p in (self.old_path, self.new_path))
        self._loading = LoadingScreen(names)
        self._loading.stage = "reading both compiles"
        self.push_screen(self._loading)
        self.run_worker(self._load, name="load", group="load", thread=True, exclusive=True)

    def _stage(self, text: str) -> None:
        if self._loading is not None:  # from the load thread: one attribute, ticked
            self._loading.stage = text

    def _load(self) -> DiffData | Failed | None:
        """In a thread worker: both compiles, read and compared in the background
        (:func:`~hlotop.ui.apps.background_load.load_in_background`)."""
        worker = get_current_worker()
        return load_in_background(
            lambda: self._open(self._stage),
            name="hlotop-diff-load",
            given_up=lambda: worker.is_cancelled or self.exiting,
            user_errors=(LoadError, ValueError),
            internal="internal error while comparing",
            crash_context=f"comparing {self.old_path!r} and {self.new_path!r}",
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "load" or event.state != WorkerState.SUCCESS:
            return
        result = event.worker.result
        if isinstance(result, Failed):
            self.exit(return_code=result.return_code, message=Text(printable(result.message)))
        elif isinstance(result, DiffData) and not self.exiting:
            self.data = result
            self._loading = None
            self.switch_screen(DiffScreen(result))
            self.call_after_refresh(self._settled.set)

    def action_help(self) -> None:
        if isinstance(self.screen, DiffHelpScreen):
            self.screen.dismiss(None)
        else:
            self.push_screen(DiffHelpScreen())
