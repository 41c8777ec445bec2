"""The diff browser's keys: each of its panes binds its share of the one ``diff`` scope
of :mod:`hlotop.ui.base.bindings` (where every key is declared)."""

from __future__ import annotations

from textual.binding import BindingType

from hlotop.ui.base.bindings import keys

LIST_ACTIONS = ("cursor_up", "cursor_down", "page_up", "page_down", "first_row", "last_row")


def diff_bindings(*actions: str) -> list[BindingType]:
    """The bindings of the ``diff`` scope whose action (its name before any argument)
    is one of ``actions``."""
    return [k.binding() for k in keys("diff") if k.action.split("(")[0] in actions]
