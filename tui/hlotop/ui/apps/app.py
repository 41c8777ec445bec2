"""The hlotop terminal UI: ``HlotopApp(path).run()``.

Opening a dump happens in passes, all off the UI thread:

0. for a big dump, a first look (:func:`hlotop.loading.preview.glance`: every
   allocation, the true total and XLA's peak step, from one pass over the allocation
   lines, each allocation read when its row is shown) is shown at once, in a main
   screen whose panes say what is still loading (values, live ranges, the live set,
   diagnostics); then every allocation is read and analysed (JAX's
   ``memory_analysis()`` figures, :func:`~hlotop.loading.preview.completed`) and the
   header and the tree take it in; the whole dump replaces it in place when pass 1
   ends, keeping the pane, the sort order and the selection, and whatever dialog is
   open over it;
1. a thread worker loads the dump lazily (``load(path, lazy=True)``: the ``Used
   values`` records are only indexed) while a loading screen shows the file's name,
   size and the stage; the main screen takes over as soon as it returns;
2. once the main screen has been painted, a second thread worker reads every record
   (``ModuleDump.read_records``), to find the diagnostics they hold; the status bar
   shows its progress, and the header's diagnostics count is updated when it ends.
   What it found is kept (:mod:`hlotop.loading.record_cache`): re-opening the unchanged dump
   takes it from there and skips the pass.

``q`` quits at once in either pass: the first runs in a daemon thread that is left
behind, the second stops at its next progress report. A file that is not a dump ends
the app with return code 2 and a one-line message, never a traceback.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich.text import Text
from textual import events
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState, get_current_worker

from hlotop.analysis.value_order import ValueOrders
from hlotop.loading.directory import ModuleEntry
from hlotop.loading.loader import LoadError, load
from hlotop.loading.preview import completed, glance
from hlotop.loading.record_cache import cached_record_diagnostics, store_record_diagnostics
from hlotop.model import ModuleDump
from hlotop.process import freeze_heap
from hlotop.safe_text import printable
from hlotop.ui.apps.background_load import Failed, load_in_background
from hlotop.ui.apps.commands import HlotopCommands
from hlotop.ui.apps.crash_guard import CrashGuard
from hlotop.ui.apps.quit_key import CopyOrQuit
from hlotop.ui.base.bindings import bindings, keys
from hlotop.ui.base.messages import MainScreenPainted, RecordsProgress, RecordsRead
from hlotop.ui.base.type_ahead import TypeAhead
from hlotop.ui.screens.help import HelpScreen
from hlotop.ui.screens.loading import LoadingScreen
from hlotop.ui.screens.main import MainScreen, PaneIndexes
from hlotop.ui.view_models.tree_layout import TreeLayout
from hlotop.units import human_bytes, with_commas

_PASS_ATTEMPTS = 3  # tries of the background pass before its failure is reported
_PREVIEW_PAINT_WAIT = 2.0  # seconds the load waits for the preview to be painted
_INPUT_QUIET = 0.25  # seconds without a key or click before the background pass goes on
_EARLY_KEYS_MAX = 64  # keys typed during the load kept for the main screen
# The app's own keys (q, ?, ctrl+p ...) act at once, even while the dump loads.
_APP_KEYS = frozenset(k for key in keys("app") for k in key.keys.split(","))


class HlotopApp(CopyOrQuit, CrashGuard, App[None]):
    """Browse one module's buffer assignment. ``source`` is what the user named (shown
    by its file name only); ``open_dump`` replaces ``load(source, lazy=True)`` (tests,
    stdin), and ``open_preview`` replaces ``preview(source)`` (None: no preview; the
    default when ``open_dump`` is given).

    ``milestones`` holds seconds since the app was made, for benchmarks: ``"preview"``
    (the first look at a big dump was painted), ``"allocations"`` (a main screen
    showing every allocation was painted: the first look, which holds them all, or else
    the whole dump), ``"loaded"`` (the lazy load returned), ``"painted"`` (the main
    screen of the whole dump was painted once) and ``"records"`` (the background pass
    read every record)."""

    CSS_PATH = "hlotop.tcss"
    TITLE = "hlotop"
    BINDINGS = bindings("app")
    # Only hlotop's own commands: Textual's (theme, screenshot to a file, maximize)
    # would come first in an unstable order and crowd the list at 80x24.
    COMMANDS = {HlotopCommands}
    # The main screen's class (the modules view's app adds a key back to its list).
    main_screen_class: type[MainScreen] = MainScreen

    def __init__(
        self,
        source: str,
        open_dump: Callable[[], ModuleDump] | None = None,
        open_preview: Callable[[], ModuleDump | None] | None = None,
        capacity: tuple[int, str] | None = None,
    ):
        """``capacity``: the device's memory (bytes, what it is) from ``--capacity``:
        the header says the headroom or the excess, the timeline marks the steps over."""
        super().__init__()
        self.source = str(source)
        self.capacity = capacity
        self.load_stage = ""  # what the load is reading now, e.g. "allocations 45%"
        self._open_dump = (
            open_dump
            if open_dump is not None
            else (
                lambda: load(
                    self.source, lazy=True, pause=self.yield_to_input, stage=self._set_load_stage
                )
            )
        )
        if open_preview is None and open_dump is None:
            open_preview = lambda: glance(self.source)  # noqa: E731
        self._open_preview = open_preview
        # What the records pass over an unchanged dump found is kept (hlotop.loading.record_cache)
        # for dumps hlotop opened itself.
        self._use_cache = open_dump is None
        self.dump: ModuleDump | None = None
        self.milestones: dict[str, float] = {}
        self.records_worker: Worker | None = None
        self._started = time.perf_counter()
        self._exiting = threading.Event()
        self._settled = asyncio.Event()  # see wait_until_loaded
        self._last_input = 0.0  # perf_counter() of the last key or mouse button
        self._waited = 0.0  # seconds worker threads spent in yield_to_input
        self._main: MainScreen | None = None
        self._preview_painted = threading.Event()
        self._indexes: PaneIndexes | None = None  # the panes' indexes, made by the load
        # Keys typed while the dump loads, for the main screen (see main_screen_started).
        self._early_keys: list[tuple[str, str | None]] = []
        self._type_ahead = TypeAhead()  # keys read before a focus move, handed on

    @property
    def module(self) -> ModuleDump | None:
        """The loaded dump (None until it has loaded); ``hlotop --strict`` reads its
        diagnostics after the app exits."""
        return self.dump

    @property
    def display_name(self) -> str:
        return printable(Path(self.source).name or self.source)

    @property
    def exiting(self) -> bool:
        return self._exiting.is_set()

    def _mark(self, *milestones: str) -> None:
        """Set each of ``milestones`` (unless set before) to the seconds since start."""
        now = time.perf_counter() - self._started
        for milestone in milestones:
            self.milestones.setdefault(milestone, now)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(
            event, (events.Key, events.MouseDown, events.MouseScrollDown, events.MouseScrollUp)
        ):
            self._last_input = time.perf_counter()
        if isinstance(event, events.Key) and not event.is_forwarded:
            if self._holds(event.key):
                if len(self._early_keys) < _EARLY_KEYS_MAX:
                    self._early_keys.append((event.key, event.character))
                return
            self._type_ahead.read(self, event)
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        self._type_ahead.hand_on(self, event)  # a key read with one that moved the focus

    # -- keys typed before the main screen is there -------------------------------------
    def _holds(self, key: str) -> bool:
        """Whether ``key``, typed now, is kept for the main screen: the dump is still
        loading (or the main screen is being built), and neither the app nor the
        loading screen has a binding for it (q quits at once)."""
        screen = self.screen
        if isinstance(screen, MainScreen):
            if screen.started:
                return False
        elif not isinstance(screen, LoadingScreen):
            return False
        if key in _APP_KEYS:
            return False
        own = screen.BINDINGS if isinstance(screen, LoadingScreen) else []
        return not any(key in b.key.split(",") for b in own if isinstance(b, Binding))

    def main_screen_started(self) -> None:
        """The main screen has set its panes going (called by it once mounted): the
        keys typed while the dump loaded are handed to it now, in the order typed
        (they were lost: the loading screen has no use for them, and the main screen's
        panes were not there yet)."""
        keys, self._early_keys = self._early_keys, []
        for key, character in keys:
            event = events.Key(key, character)
            event.set_sender(self)
            self.post_message(event)

    # -- what only the apps that open a module from a list do (HostApp) ---------------
    def open_value(self, value_id: int) -> None:
        """Nothing: this app has no out-of-memory buffers to open a value from
        (:class:`~hlotop.ui.apps.oom_app.OomApp` has)."""

    def open_entry(self, entry: ModuleEntry) -> None:
        """Nothing: this app has no modules view to open a module from
        (:class:`~hlotop.ui.apps.modules_app.ModulesApp` has)."""

    def back_to_modules(self) -> None:
        """Nothing: a dump opened by itself has no list to go back to (the modules view's
        and the out-of-memory browser's apps have)."""

    def forget_early_keys(self) -> None:
        """Drop the keys kept for a main screen that will not come (a load left)."""
        self._early_keys.clear()

    def _set_load_stage(self, text: str) -> None:
        # From the load thread: one attribute, read by the preview's status bar.
        self.load_stage = text

    def yield_to_input(self, stop: Callable[[], bool] | None = None) -> float:
        """For worker threads, between two pieces of work: wait while keys or clicks
        keep coming. A worker shares the interpreter lock with the UI, which then gets
        half the CPU, and a key took twice as long. Returns the seconds waited."""
        started = now = time.perf_counter()
        if now - self._last_input >= _INPUT_QUIET:
            return 0.0  # the usual case, a record at a time: keep it cheap
        while (
            now - self._last_input < _INPUT_QUIET
            and not self.exiting
            and not (stop is not None and stop())
        ):
            time.sleep(_INPUT_QUIET / 4)
            now = time.perf_counter()
        self._waited += now - started
        return now - started

    def exit(self, *args, **kwargs) -> None:
        self._exiting.set()  # the workers see it at their next look and stop
        self._settled.set()
        super().exit(*args, **kwargs)

    async def wait_until_loaded(self) -> None:
        """Return once the dump is shown and every record has been read (or the app
        is exiting): for tests and benchmarks, which want a screen that no longer
        changes by itself."""
        await self._settled.wait()

    # -- pass 1: the lazy load --------------------------------------------------------
    def on_mount(self) -> None:
        try:
            size = human_bytes(os.path.getsize(self.source))
        except OSError:
            size = None
        self.push_screen(LoadingScreen(self.display_name, size))
        self.run_worker(self._load, name="load", group="load", thread=True, exclusive=True)

    def _load(self) -> ModuleDump | Failed | None:
        """Runs in a thread worker: the load, in the background
        (:func:`~hlotop.ui.apps.background_load.load_in_background`)."""
        worker = get_current_worker()

        def work() -> tuple[ModuleDump, PaneIndexes]:
            self._preview_first()
            dump = self._open_dump()
            return dump, PaneIndexes.of(dump)  # not in the UI thread

        loaded = load_in_background(
            work,
            name="hlotop-load",
            given_up=lambda: worker.is_cancelled or self.exiting,
            user_errors=(LoadError,),
            internal=f"{self.source}: internal error while loading",
            crash_context=f"loading {self.source!r} in the browser",
        )
        if not isinstance(loaded, tuple):
            return loaded
        dump, self._indexes = loaded
        return dump

    def _preview_first(self) -> None:
        """In the load thread: show the head of a big dump before loading all of it.
        A preview that fails is skipped; the whole load says what is wrong."""
        if self._open_preview is None:
            return
        try:
            head = self._open_preview()
        except Exception:  # noqa: BLE001 - the load that follows reports the problem
            return
        if head is None or self.exiting:
            return
        indexes = PaneIndexes.of(head)  # here, not in the UI thread
        try:
            self.call_from_thread(self._show_preview, head, indexes)
        except Exception:  # noqa: BLE001 - the app is exiting
            return
        # The load would take half the CPU from painting the preview: let it finish.
        self._preview_painted.wait(_PREVIEW_PAINT_WAIT)
        if head.reading_allocations and not self.exiting:
            # A glance: every allocation read and analysed now, laid out here.
            try:
                whole = completed(head, pause=self.yield_to_input)
                layout = TreeLayout.of(whole)
            except Exception:  # noqa: BLE001 - as a first look that fails: the load says
                return
            try:
                self.call_from_thread(self._complete_preview, whole, layout)
            except Exception:  # noqa: BLE001 - the app is exiting
                return

    def _complete_preview(self, whole: ModuleDump, layout: TreeLayout) -> None:
        if self.exiting or self._main is None or self._main.dump.preview is None:
            return
        self._main.complete_first_look(whole, layout)

    def _show_preview(self, head: ModuleDump, indexes: PaneIndexes) -> None:
        if self.exiting or not isinstance(self.screen, LoadingScreen):
            return
        self._main = self.main_screen_class(head, indexes=indexes)
        self.switch_screen(self._main)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # The load's outcome is acted on once its worker has ended, so that an exit it
        # causes never cancels a worker that is still running.
        if event.worker.name != "load" or event.state != WorkerState.SUCCESS:
            return
        result = event.worker.result
        if isinstance(result, Failed):
            self._fail(result.message, result.return_code)
        elif result is not None and not self.exiting:
            self._loaded(result)

    def _fail(self, message: str, return_code: int) -> None:
        # A Text, not a str: Textual prints a str exit message as markup.
        self.exit(return_code=return_code, message=Text(printable(message)))

    def _loaded(self, dump: ModuleDump) -> None:
        self.dump = dump
        self._mark("loaded")
        stage = (
            f"laying out {with_commas(len(dump.allocations))} allocations and "
            f"{with_commas(len(dump.analysis.values))} values"
        )
        if self._main is not None:  # a preview is shown: the whole dump replaces it
            self._main.show_loading_stage(stage)
            self.call_after_refresh(self._replace_preview, dump)
            return
        if isinstance(self.screen, LoadingScreen):
            self.screen.set_stage(stage)
        # Paint that stage before the main screen is built (which holds the UI thread).
        self.call_after_refresh(self._show, dump)

    def _show(self, dump: ModuleDump) -> None:
        if self.exiting:
            return
        self._main = self.main_screen_class(dump, indexes=self._take_indexes())
        self.switch_screen(self._main)

    def _take_indexes(self) -> PaneIndexes | None:
        indexes, self._indexes = self._indexes, None
        return indexes

    async def _replace_preview(self, dump: ModuleDump) -> None:
        """Swap the whole dump in for its preview, in the same screen: a dialog open
        over it (search, help) stays open, and the load never waits for it."""
        if self.exiting or self._main is None:
            return
        if not self._preview_painted.is_set():
            # Never before the preview has been mounted and painted (a screen whose
            # panes are replaced while it mounts finds them gone).
            self.set_timer(0.05, lambda: self.call_later(self._replace_preview, dump))
            return
        await self._main.take_dump(dump, self._take_indexes())

    # -- pass 2: every record, in the background --------------------------------------
    def on_main_screen_painted(self, message: MainScreenPainted) -> None:
        # The first look holds every allocation (hlotop.loading.preview), as the whole
        # dump does: whichever is painted first shows them all.
        if message.dump.preview is not None:
            self._mark("allocations", "preview")
            self._preview_painted.set()
            return
        self._mark("allocations", "painted")
        # The panes' own indexes (timeline rows, live index) are built: freeze them too.
        freeze_heap()
        dump = self.dump
        if dump is None or self.exiting:
            return
        if self._use_cache and not dump.records_read:
            found = cached_record_diagnostics(dump)  # this unchanged dump, opened before
            if found is not None:
                dump.take_record_diagnostics(found)
        if dump.records_read:
            self._records_read(True)
            return
        self.records_worker = self.run_worker(
            lambda: self._read_records(dump),
            name="records",
            group="records",
            thread=True,
            exclusive=True,
        )

    def _read_records(self, dump: ModuleDump) -> None:
        """Runs in a thread worker: parse every record, reporting progress as messages.
        A failure in the pass (a bug) is retried from the start a few times, then
        reported; the dump stays browsable either way."""
        worker = get_current_worker()
        started, waited = time.perf_counter(), self._waited

        def progress(done: int, total: int) -> bool:
            # Every 1024 records: the pass stands aside while keys come in (it shares
            # the interpreter lock with the UI thread).
            self.yield_to_input(lambda: worker.is_cancelled or self.exiting)
            if worker.is_cancelled or self.exiting:
                return True  # stop: the app is exiting
            reading = time.perf_counter() - started - (self._waited - waited)  # not paused
            if done < total:
                self.post_message(
                    RecordsProgress(done, total, done / reading if reading > 0.25 else None)
                )
            return False

        error = None
        before = len(dump.diagnostics)
        for _ in range(_PASS_ATTEMPTS):
            started, waited = time.perf_counter(), self._waited
            try:
                dump.read_records(progress)
            except Exception as err:  # noqa: BLE001 - reported in the UI
                error = f"{type(err).__name__}: {err}"
                continue
            error = None
            break
        if dump.records_read and error is None and self._use_cache:
            store_record_diagnostics(dump, dump.diagnostics[before:])
        if not (worker.is_cancelled or self.exiting):
            self.post_message(RecordsRead(dump.records_read, error))

    def on_records_progress(self, message: RecordsProgress) -> None:
        if self._main is not None:
            self._main.show_records_progress(message.done, message.total, message.rate)

    def on_records_read(self, message: RecordsRead) -> None:
        if message.error is not None:
            self.notify(
                f"Not every value record could be read ({message.error}), so the "
                "diagnostics may be incomplete. Please report it.",
                title="hlotop: internal error",
                severity="error",
                timeout=15,
            )
        self._records_read(message.complete)

    def _records_read(self, complete: bool) -> None:
        if complete:
            self._mark("records")
        # What the panes and the pass built since the last freeze: out of every later
        # GC pass too (measured at 100 MB: the longest full pass 70 -> 41 ms).
        freeze_heap()
        if self._main is not None:
            self._main.records_read()
            orders = self._main.value_orders
            # Then every order of `s` is ranked ahead of the key (0.1-0.4 s an order
            # at 70 000 values), standing aside while keys come in.
            self.run_worker(
                lambda: self._warm_orders(orders), name="orders", group="orders", thread=True
            )
        else:
            self._settled.set()

    def _warm_orders(self, orders: ValueOrders) -> None:
        """Runs in a thread worker: rank the values in every order of ``s``, then
        say the app has settled."""
        try:
            orders.warm(pause=self.yield_to_input, stop=lambda: self.exiting)
        finally:
            if not self.exiting:
                self.call_from_thread(self._settled.set)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
        else:
            self.push_screen(HelpScreen())
