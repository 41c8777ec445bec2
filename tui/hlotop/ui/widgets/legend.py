"""The memory-space legend, and how every pane draws a memory space.

A space is drawn the same way everywhere: its colour (:func:`space_style`), its fill
character in the timeline, and a text label (``S(1) VMEM``) so that it stays readable
with 16 colours or under ``NO_COLOR``.

Under ``NO_COLOR`` Textual draws every colour as a grey of its luminance, and some
are then near-invisible on the dark background (magenta and red at 1.6:1): nothing
may rely on a colour there (:func:`plain`). Spaces are drawn without colour (the
default one plain, the others bold; their tags and fill characters tell them
apart), XLA's peak in bold.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from hlotop.model import ModuleDump
from hlotop.model.memory_space import space_names
from hlotop.model.memory_space import space_style as space_colour
from hlotop.safe_text import printable
from hlotop.ui.base.host import host
from hlotop.ui.view_models.spaces import space_label
from hlotop.units import human_bytes

# A fill per memory space, told apart without colour: XLA's spaces 0-7 each have their
# own (S(5) host and S(6) shared one, ░, where a TPU program used both); a colour past
# them takes one of the rest in turn. All Unicode block elements, one cell wide.
_FILLS = {0: "█", 1: "▓", 2: "▒", 3: "▚", 4: "▞", 5: "▄", 6: "░", 7: "▀"}
_MORE_FILLS = ("▐", "▌", "▖", "▝", "▘", "▗")


def plain(widget: Widget) -> bool:
    """Whether ``widget``'s app runs under ``NO_COLOR`` (no meaning in colours); False
    for a widget made outside a running app."""
    try:
        return host(widget).no_color
    except RuntimeError:  # Textual's NoActiveAppError: no app is running
        return False


def space_style(color: int, plain: bool = False) -> str:
    """The Rich style of memory space ``color`` in every pane: its colour (stable per
    space); ``plain`` (``NO_COLOR``): none, bold for a space other than the default."""
    if plain:
        return "bold" if color else ""
    return space_colour(color)


def peak_style(plain: bool = False) -> str:
    """The style of XLA's peak (``◆ XLA peak``): red, or only bold under ``NO_COLOR``."""
    return "bold" if plain else "bold red"


def space_fill(color: int) -> str:
    """The timeline's bar character for memory space ``color`` (distinct without colour)."""
    return _FILLS.get(color) or _MORE_FILLS[color % len(_MORE_FILLS)]


def spaces_in(dump: ModuleDump) -> list[int]:
    """The memory spaces (colors) the dump uses, ascending."""
    colors = set(dump.analysis.totals_by_color) | {v.color for v in dump.analysis.values}
    return sorted(colors) or [0]


class Legend(Widget):
    """One line: each memory space with its fill, colour, label and allocated bytes,
    then JAX's ``memory_analysis()`` device sizes (``o`` shows them all)."""

    DEFAULT_CSS = """
    Legend { height: 1; }
    """

    def __init__(self, dump: ModuleDump, *, id: str | None = None):
        super().__init__(id=id)
        self.dump = dump

    def render(self) -> Text:
        flat = plain(self)
        names = space_names(self.dump)
        totals = self.dump.analysis.totals_by_color
        spaces = [(c, space_label(c, names), totals.get(c)) for c in spaces_in(self.dump)]
        report = self.dump.memory_usage_report
        if self.dump.report_only and report is not None and report.memory_spaces:
            # A memory-usage report alone (era B): its memory spaces, names and totals.
            spaces = [(s.color, printable(s.name), s.total_bytes) for s in report.memory_spaces]
        text = Text("spaces ", style="bold", no_wrap=True, overflow="ellipsis")
        for color, label, total in spaces:
            text.append(" ")
            text.append(space_fill(color) * 2, style=space_style(color, flat))
            text.append(" " + label, style=f"bold {space_style(color, flat)}")
            if total is not None:
                text.append(" " + human_bytes(total))
        stats = self.dump.analysis.memory_stats
        if stats is None and self.dump.reading_allocations:  # a first look, a moment
            text.append(" │ memory_analysis: loading…", style="italic")
        elif stats is not None:  # JAX's memory_analysis() device sizes, where they fit
            figures = Text(" │ ", style="dim")
            figures.append("memory_analysis ", style="bold")
            for label, size in (
                ("arg", stats.argument_size_in_bytes),
                ("out", stats.output_size_in_bytes),
                ("alias", stats.alias_size_in_bytes),
                ("temp", stats.temp_size_in_bytes),
            ):
                figures.append(f"{label} {human_bytes(size)} ")
            figures.append("(o)", style="dim")
            if text.cell_len + figures.cell_len <= self.size.width:
                text.append_text(figures)
            elif text.cell_len + 16 <= self.size.width:
                text.append(" │ o: figures", style="dim")
        return text
