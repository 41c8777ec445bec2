"""``hlotop LOG``: the out-of-memory messages of an error text in the browser
(:class:`~hlotop.ui.screens.oom.OomScreen`), and with ``--dump`` the module its buffers
were linked to: Enter on a buffer opens that module in the main screen, as ``hlotop
DUMP`` would, with the buffer's value selected in every pane; backspace (or esc, where
the main screen has no pane to return to) comes back to the buffers.

The module was loaded to link the buffers (:func:`hlotop.cli.commands.oom_command`);
its main screen is made the first time (its panes' indexes in a thread worker, behind
the loading screen) and kept: another buffer opens it at once.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.binding import BindingType

from hlotop.analysis.oom_link import OomLink
from hlotop.model import ModuleDump
from hlotop.model.oom import OomReport
from hlotop.safe_text import printable
from hlotop.ui.apps.app import HlotopApp
from hlotop.ui.apps.ending_signals import run_app
from hlotop.ui.base.bindings import keys
from hlotop.ui.screens.directory_module import DirectoryLoadingScreen, DirectoryMainScreen
from hlotop.ui.screens.oom import OomScreen
from hlotop.units import human_bytes

_MODULE_SCREEN = "oom-module"
_BACK: list[BindingType] = [k.binding() for k in keys("oom") if k.action == "back_to_modules"]


class OomMainScreen(DirectoryMainScreen):
    """The module's main screen; backspace comes back to the buffers."""

    BINDINGS = _BACK


class OomLoadingScreen(DirectoryLoadingScreen):
    """The module's loading screen; backspace (or esc) comes back to the buffers."""

    BINDINGS = _BACK


class OomApp(HlotopApp):
    """The messages of one text (``reports``, ``label`` naming it), ``links[i]`` report
    i's buffers' values in ``module`` (``--dump``'s, None without one); ``first`` is the
    message shown first (the most telling)."""

    main_screen_class = OomMainScreen

    def __init__(
        self,
        label: str,
        reports: Sequence[OomReport],
        links: Sequence[Sequence[OomLink | None]] = (),
        module: ModuleDump | None = None,
        first: int = 0,
    ):
        source = module.files[0].path if module is not None and module.files else label
        super().__init__(str(source), open_dump=self._module)
        self.label = label
        self.reports = list(reports)
        self.links = list(links)
        self.oom_module = module
        self.first = first
        self.oom_screen: OomScreen | None = None
        self._pending: int | None = None  # the value to select once the module shows

    def _module(self) -> ModuleDump:
        """The loaded module (HlotopApp's load, in its worker, returns it)."""
        assert self.oom_module is not None  # open_value loads only with one
        return self.oom_module

    def on_mount(self, event: events.Mount | None = None) -> None:
        if event is not None:
            event.prevent_default()  # not the single module's load (HlotopApp.on_mount)
        name = self.oom_module.name if self.oom_module is not None else ""
        self.oom_screen = OomScreen(self.label, self.reports, self.links, name, self.first)
        self.push_screen(self.oom_screen)
        self._settled.set()

    # -- Enter: the value in the browser; backspace: back -------------------------------
    def open_value(self, value_id: int) -> None:
        """Show the module with value ``value_id`` selected in every pane."""
        if self.oom_module is None or self.exiting:
            return
        if self._main is not None:
            self.push_screen(_MODULE_SCREEN)
            self._select(value_id)
            return
        self._pending = value_id
        self._settled.clear()
        self.push_screen(OomLoadingScreen(self.display_name, self._dump_size()))
        self.run_worker(self._load, name="load", group="load", thread=True, exclusive=True)

    def _dump_size(self) -> str | None:
        try:
            return human_bytes(os.path.getsize(self.source))
        except OSError:
            return None

    def _show(self, dump: ModuleDump) -> None:
        if self.exiting:
            return
        self._main = self.main_screen_class(dump, indexes=self._take_indexes())
        self.install_screen(self._main, name=_MODULE_SCREEN)  # kept for the next Enter
        self.switch_screen(_MODULE_SCREEN)

    def on_main_screen_painted(self, message) -> None:
        # HlotopApp's handler runs too (the records pass).
        if self._pending is not None:
            value, self._pending = self._pending, None
            self._select(value)

    def _select(self, value_id: int) -> None:
        if self._main is not None:
            self._main.select_value(value_id, open_detail=self._main.compact)

    def back_to_modules(self) -> None:
        """Back to the buffers, where the cursor was (the module's screen is kept)."""
        self.workers.cancel_group(self, "load")
        self._pending = None
        while len(self.screen_stack) > 1 and not isinstance(self.screen, OomScreen):
            self.pop_screen()

    def _fail(self, message: str, return_code: int) -> None:
        self.back_to_modules()
        self.notify(Text(printable(message)).plain, title="hlotop", severity="error", timeout=10)


def run_oom_browser(
    label: str,
    reports: Sequence[OomReport],
    links: Sequence[Sequence[OomLink | None]] = (),
    module: ModuleDump | None = None,
    first: int = 0,
) -> int:
    """Browse the out-of-memory ``reports`` of the text ``label`` until the user quits
    (see :class:`OomApp`); returns the exit status (0)."""
    app = OomApp(label, reports, links, module, first)
    run_app(app)
    return app.return_code or 0
