"""The diff browser's help screen: the keys that work there, from
:mod:`hlotop.ui.base.bindings` (the help screen of ``hlotop DUMP`` lists every scope)."""

from __future__ import annotations

from functools import cache

from rich.console import Group, RenderableType
from rich.text import Text

from hlotop.ui.base.bindings import SCOPES
from hlotop.ui.screens.help import HelpScreen, scope_table
from hlotop.ui.widgets.rendered_text import WholeText

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


@cache
def diff_help_text() -> WholeText:
    """The diff browser's help, rendered into lines once a width for the whole run."""
    return WholeText(diff_help_renderable())


class DiffHelpScreen(HelpScreen):
    """Modal list of the diff browser's keys; Escape, q or ? closes it."""

    def text(self) -> WholeText:
        return diff_help_text()
