"""The app as the screens and widgets see it: :class:`HostApp`, what they may ask of
whichever of hlotop's apps runs them (:mod:`hlotop.ui.apps`), and :func:`host`, the
typed way to reach it.

Screens and widgets sit below the apps (the ui's layers, :mod:`hlotop.ui`): they do
not import an App class, and they no longer probe the app with ``getattr``. Every
App class defines every member, those without the feature as an explicit no-op or
None that says why (a test checks each App class against this protocol, and mypy
checks each member's type where :func:`host` is used).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from hlotop.loading.directory import ModuleEntry
    from hlotop.model import ModuleDump


@runtime_checkable
class HostApp(Protocol):
    """What screens and widgets need from the app that runs them."""

    @property
    def source(self) -> str:
        """What the user named: the dump's path (the module opened from a directory or
        linked to an out-of-memory text), the directory, both paths of a diff; ``""``
        where there is none (a text)."""
        ...

    @property
    def capacity(self) -> tuple[int, str] | None:
        """The device's memory from ``--capacity``: (bytes, what it is, e.g. ``"v5e"``),
        or None when none was given (the header then says no headroom)."""
        ...

    @property
    def module(self) -> ModuleDump | None:
        """The dump being browsed, None until it has loaded (and in an app that
        browses none: a diff, a text)."""
        ...

    @property
    def load_stage(self) -> str:
        """What the load is reading now (``"allocations 45%"``), set from the load's
        thread; ``""`` when it is not loading or says nothing."""
        ...

    @property
    def exiting(self) -> bool:
        """The app is exiting: workers stop at their next look, and a screen mounted
        now leaves its panes unstarted."""
        ...

    @property
    def no_color(self) -> bool:
        """``NO_COLOR`` is set (Textual's own attribute): nothing may rely on colour."""
        ...

    def yield_to_input(self, stop: Callable[[], bool] | None = None) -> float:
        """For a worker thread between two pieces of work: wait while keys or clicks
        keep coming (or until ``stop()``); returns the seconds waited (0.0 at once in
        an app whose screens run no such worker)."""
        ...

    def main_screen_started(self) -> None:
        """Called once by the main screen when its panes are set going: the app hands
        it the keys typed while the dump loaded."""
        ...

    def open_value(self, value_id: int) -> None:
        """Enter on an out-of-memory buffer: show its module with value ``value_id``
        selected in every pane (a no-op where no buffers are linked to a module)."""
        ...

    def open_entry(self, entry: ModuleEntry) -> None:
        """Enter on a row of the modules view: show ``entry``'s module in the main
        screen (a no-op where there is no modules view)."""
        ...

    def back_to_modules(self) -> None:
        """Backspace in a module opened from a list (the modules view, the
        out-of-memory buffers): back to that list (a no-op where there is none)."""
        ...


def host(node: DOMNode) -> HostApp:
    """The app running ``node`` (a screen or widget), as a :class:`HostApp`. Raises
    Textual's NoActiveAppError (a RuntimeError) when no app is running. Not checked at
    run time: every hlotop App class is one (a test checks it), and a test app that
    mounts a widget alone defines the members that widget reads."""
    return cast(HostApp, node.app)
