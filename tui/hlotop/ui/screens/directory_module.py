"""A module opened from the modules view: the main screen and the loading screen with
one more key, back to the list (backspace; esc too where the main screen has no pane
to return to). Everything else is the single-module browser's, unchanged."""

from __future__ import annotations

from textual.binding import BindingType
from textual.screen import Screen

from hlotop.ui.base.bindings import keys
from hlotop.ui.base.host import host
from hlotop.ui.screens.loading import LoadingScreen
from hlotop.ui.screens.main import MainScreen

_BACK: list[BindingType] = [k.binding() for k in keys("modules") if k.action == "back_to_modules"]


def _back(screen: Screen) -> None:
    host(screen).back_to_modules()


class DirectoryMainScreen(MainScreen):
    BINDINGS = _BACK

    def action_back(self) -> None:
        if self.lists.clear_active():  # the focused list's filter first
            return
        if self._came_from is not None:  # a small terminal's detail pane: its pane first
            super().action_back()
        else:
            _back(self)

    def action_back_to_modules(self) -> None:
        _back(self)


class DirectoryLoadingScreen(LoadingScreen):
    BINDINGS = _BACK + [k.binding() for k in keys("main") if k.action == "back"]

    def action_back_to_modules(self) -> None:
        _back(self)

    def action_back(self) -> None:
        _back(self)
