"""The bottom status line: what is selected, the timeline's step, and (while the
value records are read in the background) how far that has got."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from hlotop.model import BufferAllocation, ValueInfo
from hlotop.safe_text import drawn
from hlotop.ui.widgets.fit import fitted
from hlotop.ui.widgets.legend import plain, space_style
from hlotop.units import human_bytes, with_commas

_PARTS = " ▏▎▍▌▋▊▉"
BAR_W = 10


def progress_bar(fraction: float, width: int = BAR_W) -> str:
    """``███▌      ``: ``fraction`` (0..1) of ``width`` cells, in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_PARTS[part] if part else "")).ljust(width)


def rate_text(per_second: float) -> str:
    """``52k``, ``8.5k``, ``640``: a rate in few characters."""
    if per_second >= 10_000:
        return f"{per_second / 1000:.0f}k"
    if per_second >= 1000:
        return f"{per_second / 1000:.1f}k"
    return f"{per_second:.0f}"


def progress_text(done: int, total: int, rate: float | None, width: int) -> Text:
    """``reading value records 41 000 / 130 000 · 52k/s ███▌``; shorter below 110 columns."""
    fraction = done / total if total else 1.0
    text = Text(no_wrap=True, end="")
    if width >= 110:
        text.append(f"reading value records {with_commas(done)} / {with_commas(total)}")
        if rate:
            text.append(f" · {rate_text(rate)}/s", style="dim")
    else:
        text.append(f"reading records {fraction:.0%}")
    text.append(" ")
    text.append(progress_bar(fraction), style="reverse dim")
    return text


# The fewest cells of the step worth showing beside the selection ("step 26…").
_STEP_MIN = 8


class StatusBar(Widget):
    """``▶ <36 fusion.12 @1> 14.00MiB live 7-11 │ step 11/15 fusion · live 284.00MiB``."""

    DEFAULT_CSS = """
    StatusBar { height: 1; }
    """

    def __init__(self, *, id: str | None = "status"):
        super().__init__(id=id)
        self.step_text = Text("")
        self.selection = Text("")
        # (records done, records in all, records per second or None) while the
        # background pass runs and has reported; None otherwise.
        self.progress: tuple[int, int, float | None] | None = None
        # What is still loading (a preview is shown), when there is no progress to show.
        self.note: Text | None = None

    def set_step_text(self, text: Text) -> None:
        self.step_text = text
        self.refresh()

    def set_value(self, info: ValueInfo) -> None:
        text = Text("▶ ", end="")
        text.append(drawn(str(info.value)), style=f"bold {space_style(info.color, plain(self))}")
        text.append(f" {human_bytes(info.logical_bytes)}")
        if info.live is not None:
            text.append(f" live {info.live.start}-{info.live.end}", style="dim")
        self.selection = text
        self.refresh()

    def set_allocation(self, alloc: BufferAllocation, values_loading: bool = False) -> None:
        """Name allocation ``alloc``; ``values_loading``: its values are not read yet."""
        text = Text("▶ ", end="")
        text.append(
            f"allocation {alloc.index}", style=f"bold {space_style(alloc.color, plain(self))}"
        )
        values = (
            "values: loading…" if values_loading else f"{with_commas(len(alloc.values))} values"
        )
        text.append(f" {human_bytes(alloc.size)}, {values}")
        self.selection = text
        self.refresh()

    def set_progress(self, done: int | None, total: int = 0, rate: float | None = None) -> None:
        """Show the background pass at ``done`` of ``total`` records; None: it is over."""
        self.progress = None if done is None else (done, total, rate)
        self.refresh()

    def set_note(self, note: str | None) -> None:
        """Say what is still loading, on the right (None: nothing is)."""
        self.note = None if note is None else Text(note, style="bold yellow")
        self.refresh()

    def render(self) -> Text:
        width = self.size.width
        if self.progress is not None:
            right = progress_text(*self.progress, width)
        elif self.note is not None:
            right = self.note
        else:
            return fitted(self._left(None), width)
        room = width - right.cell_len - 3
        if room < 10:  # a very narrow terminal: only the progress
            return fitted(right, width)
        text = self._left(room)
        text.append(" │ ")
        text.append_text(right)
        return text

    def _left(self, room: int | None) -> Text:
        """The selection and the step, cut to ``room`` cells (padded to it) if given:
        the step first, and the selection only once no step is left to show (cut in
        the middle of both, the selection's own "loading…" got a second ellipsis)."""
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.selection:
            text.append_text(self.selection)
            if room is not None and room - text.cell_len - 3 < _STEP_MIN:
                text.truncate(room, overflow="ellipsis", pad=True)  # no room for a step
                return text
            text.append(" │ ")
        step = self.step_text.copy()
        if room is not None:
            step.truncate(room - text.cell_len, overflow="ellipsis", pad=True)
        text.append_text(step)
        return text
