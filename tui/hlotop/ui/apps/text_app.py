"""A read-only screen of Rich text (an out-of-memory text's breakdown): scroll with the
keys, q or esc quits. Its content is what ``--summary`` prints, at the terminal's width."""

from __future__ import annotations

from rich.console import RenderableType
from textual.app import App, ComposeResult
from textual.widgets import Footer, Static

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


def run_text_browser(title: str, body: RenderableType) -> int:
    """Show ``body`` until the user quits; returns the exit status (0)."""
    app = TextApp(title, body)
    run_app(app)
    return app.return_code or 0
