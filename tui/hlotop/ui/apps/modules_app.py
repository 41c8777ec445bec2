"""``hlotop DIR``: the modules of a dump directory, then any of them in the browser.

The modules view (:class:`~hlotop.ui.screens.modules.ModulesScreen`) shows at once,
saying it is reading the modules. Then, all off the UI thread:

1. one thread worker ranks them (:func:`hlotop.loading.directory.rank_modules`: each
   module's first look, its allocation lines and totals, one after another: the
   browser runs threads, so it must not fork a process pool as ``--summary DIR`` does,
   and threads would share one interpreter lock; 200 modules, 49 MB, take ~0.2 s);
2. a second thread worker loads the modules one at a time (``load(path, lazy=True)``),
   the largest first, one per row, for each row's sparkline and need; it pauses while
   a module is open. Loaded modules are kept up to :data:`KEEP_BYTES` of dump text, and
   Enter on one of them opens it at once; Enter on the one being loaded waits for it.

Enter opens the row's module as ``hlotop PATH`` would (the loading screen, the first
look of a big dump, the records pass), in :class:`DirectoryMainScreen`, where
backspace (or esc, where there is no pane to return to) comes back to the list.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from textual import events
from textual.worker import Worker, WorkerState, get_current_worker

from hlotop.analysis.capacity import required_bytes
from hlotop.loading.directory import ModuleEntry, ModuleFigures, list_modules, rank_modules
from hlotop.loading.loader import load
from hlotop.model import ModuleDump
from hlotop.process import gc_paused
from hlotop.report.modules_report import REPORT_ONLY
from hlotop.safe_text import printable
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.apps.background_load import EXIT_LOAD_ERROR
from hlotop.ui.apps.ending_signals import run_app
from hlotop.ui.screens.directory_module import DirectoryLoadingScreen, DirectoryMainScreen
from hlotop.ui.screens.modules import ModulesScreen
from hlotop.ui.widgets.modules_list import sparkline
from hlotop.units import human_bytes

KEEP_BYTES = 128 << 20  # dump text whose loaded modules are kept for Enter
_PROGRESS_EVERY = 0.1  # seconds between two progress reports of the ranking
_POLL = 0.05


class _Stopped(Exception):
    """The app is exiting: the ranking stops."""


@dataclass(frozen=True, slots=True)
class _Filled:
    """One module loaded in the background: its sparkline (or why none) and its need."""

    entry: ModuleEntry
    module: ModuleDump | None
    spark: str | None
    note: str | None
    need: int | None


def _outcome(entry: ModuleEntry, module: ModuleDump) -> _Filled:
    curve = module.analysis.occupied_bytes.get(0) or []
    spark = sparkline(curve) if curve else None
    note = None if spark else REPORT_ONLY if module.report_only else "no live ranges"
    return _Filled(entry, module, spark, note, required_bytes(module))


class ModulesApp(HlotopApp):
    """The modules of ``directory`` (``entries``: its :func:`list_modules`, if the
    caller has them), ranked; ``capacity`` (bytes, label) adds a column of headroom.

    ``milestones`` (seconds since the app was made): ``"shown"`` (the view was first
    painted, reading the modules), ``"ranked"`` (the ranked list was painted) and ``"filled"`` (every row's module was loaded), besides the browser's."""

    main_screen_class = DirectoryMainScreen

    def __init__(
        self,
        directory: str,
        entries: list[ModuleEntry] | None = None,
        capacity: tuple[int, str] | None = None,
    ):
        super().__init__(directory)
        self.directory = str(directory)
        self.entries = list(entries) if entries else None
        self.capacity = capacity
        self.figures: list[ModuleFigures] | None = None
        self.modules_screen: ModulesScreen | None = None
        self.kept: dict[Path, ModuleDump] = {}  # loaded in the background, for Enter
        self._kept_bytes = 0
        self._filled_paths: set[Path] = set()
        self._to_fill = 0
        self._in_flight: Path | None = None  # the module the background is loading
        self._awaiting: Path | None = None  # opened while it was being loaded
        self._fill_go = threading.Event()  # set while the list is shown
        self._ranked = asyncio.Event()
        self._all_filled = asyncio.Event()

    @property
    def in_flight(self) -> Path | None:
        """The module the background is loading now (its dump's path), or None between
        two: Enter on it waits for that load rather than starting another."""
        return self._in_flight

    # -- for tests and benchmarks -------------------------------------------------------
    async def wait_until_ranked(self) -> None:
        """Return once the ranked list is shown (or the app is exiting)."""
        await self._ranked.wait()

    async def wait_until_filled(self) -> None:
        """Return once every row's module has been loaded (or the app is exiting)."""
        await self._all_filled.wait()

    def exit(self, *args, **kwargs) -> None:
        self._ranked.set()
        self._all_filled.set()
        super().exit(*args, **kwargs)

    # -- 1: the ranking -------------------------------------------------------------
    def on_mount(self, event: events.Mount | None = None) -> None:
        if event is not None:
            event.prevent_default()  # not the single module's load (HlotopApp.on_mount)
        count = len(self.entries) if self.entries is not None else 0
        self.modules_screen = ModulesScreen(self.directory, count, self.capacity)
        self.push_screen(self.modules_screen)
        self.call_after_refresh(self._mark, "shown")
        self.run_worker(self._rank, name="rank", group="rank", thread=True, exclusive=True)

    def _rank(self) -> list[ModuleFigures] | str | None:
        worker = get_current_worker()
        try:
            entries = self.entries if self.entries is not None else list_modules(self.directory)
        except OSError as err:
            return f"hlotop: error: {self.directory}: {err.strerror or err}"
        if not entries:
            return f"hlotop: error: {self.directory}: no *-buffer-assignment.txt dump in it"
        shown = [time.perf_counter()]

        def mapper(function, items):
            for done, item in enumerate(items):
                if worker.is_cancelled or self.exiting:
                    raise _Stopped
                if time.perf_counter() - shown[0] >= _PROGRESS_EVERY:
                    shown[0] = time.perf_counter()
                    self.call_from_thread(self._ranking_progress, done, len(items))
                yield function(item)

        try:
            with gc_paused():
                return rank_modules(entries, mapper)
        except _Stopped:
            return None

    def _ranking_progress(self, done: int, total: int) -> None:
        if self.modules_screen is not None:
            self.modules_screen.show_progress(done, total)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # HlotopApp's handler runs too (for its "load" worker).
        if event.worker.name != "rank" or event.state != WorkerState.SUCCESS:
            return
        result = event.worker.result
        if isinstance(result, str):
            self._fail_app(result)
        elif result is not None and not self.exiting and self.modules_screen is not None:
            self.figures = result
            self.modules_screen.show_ranking(result)
            self.call_after_refresh(self._ranking_painted)

    def _fail_app(self, message: str) -> None:
        HlotopApp._fail(self, message, EXIT_LOAD_ERROR)

    def _ranking_painted(self) -> None:
        self._mark("ranked")
        self._ranked.set()
        screen = self.modules_screen
        if screen is None or self.exiting:
            return
        # One module a row (those compiled alike are alike), the largest first.
        targets = sorted((r.figures.entry for r in screen.rows), key=lambda e: -e.size)
        self._to_fill = len(targets)
        self._fill_go.set()
        self.run_worker(
            lambda: self._fill(targets), name="fill", group="fill", thread=True, exclusive=True
        )

    # -- 2: the modules, one at a time, in the background -----------------------------
    def _fill(self, targets: list[ModuleEntry]) -> None:
        worker = get_current_worker()

        def stop() -> bool:
            return worker.is_cancelled or self.exiting

        for entry in targets:
            while not self._fill_go.wait(_POLL):  # a module is open: wait for the list
                if stop():
                    return
            if stop():
                return
            if entry.path in self._filled_paths:
                continue  # opened (and so loaded) meanwhile
            self._in_flight = entry.path
            self.yield_to_input(stop)
            try:
                with gc_paused():
                    module = load(entry.path, lazy=True, pause=lambda: self.yield_to_input(stop))
                outcome = _outcome(entry, module)
            except Exception:  # noqa: BLE001 - a LoadError, or a bug: said in its row
                outcome = _Filled(entry, None, None, "unreadable", None)
            try:
                self.call_from_thread(self._take_filled, outcome)
            except Exception:  # noqa: BLE001 - the app is exiting
                return

    def _take_filled(self, outcome: _Filled) -> None:
        path = outcome.entry.path
        self._in_flight = None
        self._filled_paths.add(path)
        module = outcome.module
        if module is not None:
            self._keep(outcome.entry, module)
        if self.modules_screen is not None:
            self.modules_screen.fill(path, outcome.spark, outcome.note, outcome.need)
        self._fill_status()
        if self._awaiting == path:
            self._awaiting = None
            if module is None:
                self._open_failed(f"hlotop: error: {printable(outcome.entry.name)}: unreadable")
            else:
                self._loaded(module)

    def _keep(self, entry: ModuleEntry, module: ModuleDump) -> None:
        """Keep ``module`` for Enter while the kept modules' dumps stay under
        :data:`KEEP_BYTES`."""
        if entry.path not in self.kept and self._kept_bytes + entry.size <= KEEP_BYTES:
            self.kept[entry.path] = module
            self._kept_bytes += entry.size

    def _fill_status(self) -> None:
        done = len(self._filled_paths)
        if self.modules_screen is not None:
            self.modules_screen.set_status(
                f" occupied bytes: {done} of {self._to_fill} modules loaded…"
                if done < self._to_fill
                else ""
            )
        if done >= self._to_fill:
            self._mark("filled")
            self._all_filled.set()

    # -- Enter: a module in the browser; backspace: back ------------------------------
    def open_entry(self, entry: ModuleEntry) -> None:
        """Show ``entry``'s module in the main screen: at once if it was loaded in the
        background, else through the loading screen as ``hlotop PATH`` does."""
        if self.exiting:
            return
        self._fill_go.clear()
        self.source = str(entry.path)
        self.load_stage = ""
        self.dump = None
        self._main = None
        self._indexes = None
        self._preview_painted.clear()
        self._settled.clear()
        module = self.kept.get(entry.path)
        if module is not None:
            self.dump = module
            self._main = self.main_screen_class(module)
            self.push_screen(self._main)
            return
        self.push_screen(DirectoryLoadingScreen(self.display_name, human_bytes(entry.size)))
        if self._in_flight == entry.path:
            self._awaiting = entry.path  # _take_filled opens it
            return
        self.run_worker(self._load, name="load", group="load", thread=True, exclusive=True)

    def _loaded(self, dump: ModuleDump) -> None:
        path = Path(self.source)
        entry = next((f.entry for f in self.figures or () if f.entry.path == path), None)
        if entry is not None:
            self._keep(entry, dump)
            if path not in self._filled_paths:  # opened before the background reached it
                self._filled_paths.add(path)
                outcome = _outcome(entry, dump)
                if self.modules_screen is not None:
                    self.modules_screen.fill(path, outcome.spark, outcome.note, outcome.need)
                self._fill_status()
        super()._loaded(dump)

    def back_to_modules(self) -> None:
        """Leave the module (or its load) for the list, where the cursor was."""
        if self.records_worker is not None:
            self.records_worker.cancel()
            self.records_worker = None
        self.workers.cancel_group(self, "load")
        self.forget_early_keys()
        self._awaiting = None
        self._main = None
        self.dump = None
        self._settled.set()
        while len(self.screen_stack) > 1 and not isinstance(self.screen, ModulesScreen):
            self.pop_screen()
        self._fill_go.set()

    def _fail(self, message: str, return_code: int) -> None:
        # A module of the list that cannot be read: back to the list, not out.
        self._open_failed(message)

    def _open_failed(self, message: str) -> None:
        self.back_to_modules()
        self.notify(printable(message), title="hlotop", severity="error", timeout=10)


def run_modules_browser(
    directory: str, entries: list, capacity: tuple[int, str] | None = None
) -> int:
    """Browse the modules of ``directory`` (``entries``: its
    :func:`~hlotop.loading.directory.list_modules`, more than one) until the user
    quits; ``capacity`` = (bytes, label) adds each module's headroom. Returns the exit
    status (0; 2 when the directory cannot be read)."""
    app = ModulesApp(directory, entries, capacity)
    run_app(app)
    return app.return_code or 0
