"""Keys typed ahead of a focus move, handed on to where the focus went.

Textual hands each key to the widget focused when the app reads it, and the app runs
the key's binding once the key comes back up to it, from the focus of that moment.
Keys read together (pasted, sent by a script, or typed within a frame: ``f`` and the
filter's first letters) all went to the pane that had the focus, though the first of
them (``f``) moves it to a text box: its bindings are found, but the text was lost,
or run as the main screen's keys (``a`` opened the advice).
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

from textual import events
from textual.app import App
from textual.widget import Widget
from textual.widgets import Input


class TypeAhead:
    """Where the focus was when each key was read, to hand a key on when the focus
    has moved since (an App's ``on_event`` calls :meth:`read`, its ``on_key``
    :meth:`hand_on`)."""

    def __init__(self) -> None:
        self._focus: WeakKeyDictionary[events.Key, Widget | None] = WeakKeyDictionary()

    def read(self, app: App, event: events.Key) -> None:
        """``app`` has just read ``event``: remember where its focus is."""
        self._focus[event] = app.focused

    def hand_on(self, app: App, event: events.Key) -> bool:
        """``event`` came back up to ``app`` for its binding: if the focus moved away
        from the widget the key was handed to, and to a text box, stop ``event`` and
        read the key again (the app hands it to the box, as if typed after the move)
        and return True; else False, and the app's bindings run as usual (they are the
        focused widget's already, wherever the key was handed: ``2`` then ``→`` moves
        the timeline's cursor)."""
        handed = self._focus.pop(event, None)
        focused = app.focused
        if handed is None or focused is handed or not isinstance(focused, Input):
            return False
        event.prevent_default()  # not this key's binding where the focus was
        event.stop()
        again = events.Key(event.key, event.character)
        again.set_sender(app)
        app.post_message(again)
        return True
