"""ctrl+c in hlotop's apps: quit, as every terminal tool does, unless text is selected.

Textual 8 binds ctrl+c to a notice ("press ctrl+q to quit"), and to copying where text
is selected; a modal screen (the help, the search) keeps the app's bindings from its
keys. hlotop binds ctrl+c to :meth:`CopyOrQuit.action_copy_or_quit` with priority (see
the ``app`` scope of :mod:`hlotop.ui.base.bindings`): it copies what is selected, as
Textual's bindings did, and otherwise quits.
"""

from __future__ import annotations

from textual.app import App
from textual.widgets import Input


class CopyOrQuit:
    """Mix into an ``App``: the action ctrl+c runs."""

    def action_copy_or_quit(self) -> None:
        """Copy the text selected on the screen (with the mouse) or in the focused text
        box to the clipboard; with none selected, leave the app."""
        app = self
        assert isinstance(app, App)
        selected = app.screen.get_selected_text()
        focused = app.focused
        if not selected and isinstance(focused, Input):
            selected = focused.selected_text
        if selected:
            app.copy_to_clipboard(selected)
            return
        app.exit()
