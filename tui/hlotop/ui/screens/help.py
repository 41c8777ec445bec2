"""The help screen: every key binding, generated from :mod:`hlotop.ui.base.bindings`."""

from __future__ import annotations

from functools import cache

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.screen import ModalScreen

from hlotop.ui.base.bindings import SCOPES, Scope, bindings
from hlotop.ui.widgets.rendered_text import RenderedText, WholeText


def help_rows() -> list[tuple[str, str, str, str]]:
    """(scope title, keys, description, help sentence) for every binding, in order."""
    return [
        (scope.title, key.display, key.description, key.help)
        for scope in SCOPES
        for key in scope.keys
    ]


def help_renderable() -> Group:
    parts: list[RenderableType] = [
        Text("hlotop keys", style="bold"),
        Text(
            "Sizes are in XLA's units (KiB = 1024 bytes). 'logical' bytes ignore "
            "tiling padding, as XLA's peak does; 'allocated' bytes include it; "
            "'occupied' counts the allocation bytes the live values use, each "
            "shared slice once.",
            style="dim",
        ),
        Text("The command palette (ctrl+p) offers the main actions by name.", style="dim"),
    ]
    for scope in SCOPES:
        parts += [Text(""), scope_table(scope)]
    return Group(*parts)


def scope_table(scope: Scope) -> Table:
    """One scope's keys as the help screens list them: keys, action, help sentence."""
    table = Table(
        title=scope.title,
        title_justify="left",
        title_style="bold",
        show_header=False,
        box=None,
        padding=(0, 2, 0, 1),
        expand=False,
    )
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(style="dim")
    for key in scope.keys:
        table.add_row(Text(key.display), Text(key.description), Text(key.help))
    return table


@cache
def help_text() -> WholeText:
    """The help, rendered into lines once a width for the whole run (the keys do not
    change)."""
    return WholeText(help_renderable())


class HelpScreen(ModalScreen[None]):
    """Modal list of all keys; Escape, q or ? closes it."""

    BINDINGS = bindings("modal")

    def text(self) -> WholeText:
        """What this help lists."""
        return help_text()

    def compose(self) -> ComposeResult:
        body = RenderedText(self.text(), id="help-body", classes="modal-body")
        body.border_title = "Help · esc closes"
        yield body

    def on_mount(self) -> None:
        self.query_one(RenderedText).focus()  # its keys scroll it (j/k, g/G, pgdn ...)

    def action_close(self) -> None:
        self.dismiss(None)
