"""A read-only screen of Rich text (an out-of-memory text's breakdown): scroll with the
keys, q or esc quits. Its content is what ``--summary`` prints, at the terminal's width."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import RenderableType
from textual.app import App, ComposeResult
from textual.widgets import Footer, Static

from hlotop.loading.directory import ModuleEntry
from hlotop.model import ModuleDump
from hlotop.ui.apps.ending_signals import run_app
from hlotop.ui.base.bindings import bindings
from hlotop.ui.widgets.scroll_body import ScrollBody


class TextApp(App[int]):
    """``title`` over ``body``, scrollable (↑↓ j k, pgup/pgdn, home/end g G)."""

    BINDINGS = bindings("text")
    CSS = """
    #text-body { padding: 0 1; border: round $accent; }
    """

    def __init__(self, title: str, body: RenderableType):
        super().__init__()
        self.title_text, self.body = title, body
        self._exiting = False

    def compose(self) -> ComposeResult:
        with ScrollBody(id="text-body") as scroll:
            scroll.border_title = self.title_text
            yield Static(self.body, id="text")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "hlotop"
        self.sub_title = self.title_text
        self.query_one("#text-body").focus()

    def action_quit_text(self) -> None:
        self.exit(0)

    # -- the app as the screens see it (HostApp): a text has no dump -------------------
    @property
    def source(self) -> str:
        """``""``: the text was given, not a file (its title names it)."""
        return ""

    @property
    def capacity(self) -> tuple[int, str] | None:
        """None: the text's figures are already written out (``--capacity`` in them)."""
        return None

    @property
    def module(self) -> ModuleDump | None:
        """None: a text browses no dump."""
        return None

    @property
    def load_stage(self) -> str:
        """``""``: nothing is loaded; the text is there when the app starts."""
        return ""

    @property
    def exiting(self) -> bool:
        """Whether the app has been asked to exit (q, esc, ctrl+c)."""
        return self._exiting

    def exit(self, *args, **kwargs) -> None:
        self._exiting = True
        super().exit(*args, **kwargs)

    def yield_to_input(self, stop: Callable[[], bool] | None = None) -> float:
        """0.0 at once: a text runs no worker."""
        return 0.0

    def main_screen_started(self) -> None:
        """Nothing: a text has no main screen and keeps no keys."""

    def open_value(self, value_id: int) -> None:
        """Nothing: a text has no buffers to open."""

    def open_entry(self, entry: ModuleEntry) -> None:
        """Nothing: a text has no modules view."""

    def back_to_modules(self) -> None:
        """Nothing: a text has no list to go back to."""


def run_text_browser(title: str, body: RenderableType) -> int:
    """Show ``body`` until the user quits; returns the exit status (0)."""
    app = TextApp(title, body)
    run_app(app)
    return app.return_code or 0
