"""The main screen's keys about the last search and the selected value:

- ``n``/``N``: the next and previous match of the last search, whose query the next
  ``/`` opens on. A value chosen from a search, or by ``n``, is selected in every pane,
  and the step cursor moves into its live range when it is outside (to the nearest step
  of it), so the live set shows it.
- ``[``/``]``: the steps where the selected value is defined and where it dies.
- ``y``: copy its name, op_name, shape or source ``file:line``.
- ``E``: open its source in the editor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hlotop.loading.source_lines import resolve_source, split_location
from hlotop.model import ValueInfo
from hlotop.safe_text import printable
from hlotop.ui.base.editor import editor_argv, editor_command, run_editor
from hlotop.ui.screens.copy import CopyScreen, copy_fields

if TYPE_CHECKING:
    from hlotop.ui.screens.main import MainScreen
    from hlotop.ui.screens.search import SearchScreen


@dataclass
class LastSearch:
    """The last search: its query, its matches (value ids, ranked as listed) and the
    one chosen last (-1: none yet)."""

    query: str = ""
    matches: list[int] = field(default_factory=list)
    at: int = -1
    complete: bool = True  # False: closed before the search had read every op_name


class ValueKeys:
    """What the keys of this module do on ``screen``."""

    def __init__(self, screen: MainScreen):
        self.screen = screen
        self.last = LastSearch()

    # -- the search ------------------------------------------------------------------
    def remember(self, search: SearchScreen, chosen: int | None) -> None:
        """Keep what ``search`` found (its query, its matches) for ``n`` and the next
        ``/``; ``chosen``: the value it closed on, if any."""
        query = search.query_text.strip()
        if not query:
            return
        matches = [info.value.id for info in search.matches]
        at = matches.index(chosen) if chosen in matches else -1
        self.last = LastSearch(query, matches, at, search.complete)

    def next_match(self, direction: int) -> None:
        """Select the next (``direction`` 1) or previous (-1) match of the last
        search, from the selected value if it is one, wrapping at either end."""
        screen, last = self.screen, self.last
        if not last.query:
            screen.notify("No search yet: / searches the values by name or op_name.")
            return
        if not last.matches:
            screen.notify(f"No value matches {printable(last.query)!r}.", severity="warning")
            return
        here = screen.selected_value
        at = last.matches.index(here) if here in last.matches else last.at
        if at < 0:
            at = 0 if direction > 0 else len(last.matches) - 1
        else:
            at += direction
        wrapped = not 0 <= at < len(last.matches)
        last.at = at % len(last.matches)
        value_id = last.matches[last.at]
        self.go_to(value_id)
        info = screen.dump.analysis.by_id.get(value_id)
        label = printable(info.value.label) if info is not None else str(value_id)
        note = f"match {last.at + 1}/{len(last.matches)} of {printable(last.query)!r}: {label}"
        if wrapped:
            note += " (from the top)" if direction > 0 else " (from the bottom)"
        if not last.complete:
            note += " · the search was closed before it ended: the matches found by then"
        screen.notify(note, timeout=3)

    def go_to(self, value_id: int, *, open_detail: bool = False) -> None:
        """Select ``value_id`` in every pane, the step cursor first moved into its live
        range if it is outside (to its nearest step)."""
        screen = self.screen
        info = screen.dump.analysis.by_id.get(value_id)
        live = info.live if info is not None else None
        timeline = screen.timeline
        if live is not None and timeline.counts and not live.start <= screen.step <= live.end:
            timeline.set_step(max(live.start, min(screen.step, live.end)))
        screen.select_value(value_id, open_detail=open_detail)

    # -- the selected value -----------------------------------------------------------
    def selected(self, doing: str) -> ValueInfo | None:
        """The selected value; None, and a notification saying so, when there is none
        (an allocation of several values is highlighted)."""
        screen = self.screen
        info = (
            screen.dump.analysis.by_id.get(screen.selected_value)
            if screen.selected_value is not None
            else None
        )
        if info is None:
            screen.notify(f"Select a value to {doing} (expand the allocation: →).")
        return info

    def value_step(self, end: str) -> None:
        """Move the step cursor to the first (``end`` "start") or last ("end") step of
        the selected value's live range, the value still selected there."""
        info = self.selected("go to its steps")
        screen = self.screen
        if info is None or not screen._live_ranges_ready():
            return
        if info.live is None:
            screen.notify(
                f"{printable(info.value.label)} has no live range (not in the HloLiveRange "
                "section, e.g. thread-local).",
                severity="warning",
            )
            return
        screen.timeline.set_step(info.live.start if end == "start" else info.live.end)
        screen.select_value(info.value.id)

    def copy(self) -> None:
        """Offer the selected value's fields to copy; the one chosen goes to the
        clipboard (OSC 52), and a notification says what was copied."""
        info = self.selected("copy its name, op_name, shape or source")
        if info is None:
            return
        screen = self.screen

        def chosen(picked: tuple[str, str] | None) -> None:
            if picked is not None:
                name, text = picked
                screen.app.copy_to_clipboard(text)
                screen.notify(f"Copied the {name}: {printable(text)}", timeout=4)

        screen.app.push_screen(CopyScreen(info.value.label, copy_fields(info)), chosen)

    def edit_source(self) -> None:
        """Open the selected value's source file at its line in the editor; a
        notification says why not when it cannot (no source, no file, no editor)."""
        info = self.selected("open its source")
        if info is None:
            return
        screen = self.screen
        source = info.source
        if not source:
            screen.notify(
                f"{printable(info.value.label)} has no source file:line (its metadata has none).",
                severity="warning",
            )
            return
        file, line = split_location(source)
        path = resolve_source(file, (f.path for f in screen.dump.files))
        if path is None:
            screen.notify(
                f"{printable(file)} is not on this machine (looked under the current folder "
                "and the dump's folders).",
                severity="warning",
            )
            return
        command = editor_command()
        where = f"{printable(str(path))}{f':{line}' if line else ''}"
        if command is None:
            screen.notify(f"Set $EDITOR (or $VISUAL) to open {where}.", severity="warning")
            return
        problem = run_editor(screen.app, editor_argv(command, path, line))
        if problem is not None:
            screen.notify(f"Not opened: {printable(problem)} ({where}).", severity="error")
