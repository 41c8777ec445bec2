"""The diff browser's help screen: the keys that work there, from
:mod:`hlotop.ui.base.bindings` (the help screen of ``hlotop DUMP`` lists every scope)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from hlotop.ui.base.bindings import SCOPES
from hlotop.ui.screens.help import HelpScreen, scope_table
from hlotop.ui.widgets.scroll_body import ScrollBody

DIFF_SCOPES = ("app", "diff", "detail", "group_keys", "scroll", "modal")


def diff_help_renderable() -> Group:
    parts: list[RenderableType] = [
        Text("hlotop diff keys", style="bold"),
        Text(
            "OLD and NEW are the two compiles. Groups hold the values live at each side's "
            "own XLA peak; a value's bytes are its allocated bytes (padding included).",
            style="dim",
        ),
    ]
    for scope in SCOPES:
        if scope.name in DIFF_SCOPES:
            parts += [Text(""), scope_table(scope)]
    return Group(*parts)


class DiffHelpScreen(HelpScreen):
    """Modal list of the diff browser's keys; Escape, q or ? closes it."""

    def compose(self) -> ComposeResult:
        with ScrollBody(id="help-body", classes="modal-body") as body:
            body.border_title = "Help · esc closes"
            yield Static(diff_help_renderable(), id="help-text")
