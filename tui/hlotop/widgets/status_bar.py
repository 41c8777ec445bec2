"""The bottom status line: what is selected, and the timeline's step."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from hlotop.analysis import ValueInfo
from hlotop.memory_space import space_style
from hlotop.model import BufferAllocation
from hlotop.safe_text import printable
from hlotop.units import human_bytes


class StatusBar(Widget):
    """``▶ <36 fusion.12 @1> 14.00MiB live 7-11 │ step 11/15 fusion · live 284.00MiB``."""

    DEFAULT_CSS = """
    StatusBar { height: 1; }
    """

    def __init__(self, *, id: str | None = "status"):
        super().__init__(id=id)
        self.step_text = Text("")
        self.selection = Text("")

    def set_step_text(self, text: Text) -> None:
        self.step_text = text
        self.refresh()

    def set_value(self, info: ValueInfo) -> None:
        text = Text("▶ ", end="")
        text.append(printable(str(info.value)), style=f"bold {space_style(info.color)}")
        text.append(f" {human_bytes(info.logical_bytes)}")
        if info.live is not None:
            text.append(f" live {info.live.start}-{info.live.end}", style="dim")
        self.selection = text
        self.refresh()

    def set_allocation(self, alloc: BufferAllocation) -> None:
        text = Text("▶ ", end="")
        text.append(f"allocation {alloc.index}", style=f"bold {space_style(alloc.color)}")
        text.append(f" {human_bytes(alloc.size)}, {len(alloc.values)} values")
        self.selection = text
        self.refresh()

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", end="")
        if self.selection:
            text.append_text(self.selection)
            text.append(" │ ")
        text.append_text(self.step_text)
        return text
