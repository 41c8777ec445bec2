"""Search for a value by name or op_name (case-insensitive substring)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList
from textual.widgets.option_list import Option

from hlotop.analysis import ValueInfo
from hlotop.search import find_values
from hlotop.bindings import bindings
from hlotop.memory_space import space_style
from hlotop.safe_text import printable
from hlotop.units import human_bytes
from hlotop.widgets.legend import space_label

MAX_RESULTS = 200
_DEBOUNCE_ABOVE = 20000  # values


class _Results(OptionList, can_focus=False):
    """The matches; the input keeps the focus, ↑/↓ move the highlight."""


class SearchScreen(ModalScreen["int | None"]):
    """Dismisses with the chosen value's id, or None."""

    BINDINGS = bindings("search")

    def __init__(self, values: list[ValueInfo], names=None, query: str = ""):
        super().__init__()
        self.values = values
        self.names = names
        self.query_text = query
        self.matches: list[ValueInfo] = []
        self._timer = None

    def compose(self) -> ComposeResult:
        with Vertical(id="search-body", classes="modal-body") as body:
            body.border_title = "Search values · name or op_name · ⏎ select · esc close"
            yield Input(value=self.query_text, placeholder="/ e.g. fusion.12 or args[0]",
                        id="search-input", compact=True)
            yield _Results(id="search-results")
            yield Label("", id="search-count", markup=False)

    AUTO_FOCUS = "#search-input"

    def on_mount(self) -> None:
        self._update(self.query_text)

    def on_key(self, event: events.Key) -> None:
        """Keys typed right after ``/``, before the input has the focus, still count."""
        field = self.query_one(Input)
        if not field.has_focus and event.is_printable and event.character:
            event.stop()
            field.focus()
            field.insert_text_at_cursor(event.character)

    def on_input_changed(self, event: Input.Changed) -> None:
        if len(self.values) < _DEBOUNCE_ABOVE:
            self._update(event.value)
            return
        # A big dump: wait until typing pauses rather than scan on every key.
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(0.15, lambda: self._update(event.value))

    def _update(self, query: str) -> None:
        self.matches = find_values(self.values, query)
        results = self.query_one(_Results)
        results.clear_options()
        results.add_options(Option(self._prompt(info), id=str(info.value.id))
                            for info in self.matches[:MAX_RESULTS])
        if self.matches:
            results.highlighted = 0
        count = len(self.matches)
        more = f" (first {MAX_RESULTS} shown)" if count > MAX_RESULTS else ""
        self.query_one("#search-count", Label).update(
            f"{count} match{'es' if count != 1 else ''}{more}" if query.strip() else
            "type part of a value name (fusion.12) or of an op_name (args[0])")

    def _prompt(self, info: ValueInfo) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        text.append(f"{info.value.id:>6} ", style="dim")
        text.append(printable(info.value.label), style=f"bold {space_style(info.color)}")
        text.append(f"  {human_bytes(info.logical_bytes)}  ")
        text.append(space_label(info.color, self.names), style=space_style(info.color))
        op_name = info.op_name
        if op_name:
            text.append(f"  {printable(op_name)}", style="dim")
        return text

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_choose()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id))

    def action_choose(self) -> None:
        if self._timer is not None:  # Enter before the pause: search now
            self._timer.stop()
            self._timer = None
            self._update(self.query_one(Input).value)
        results = self.query_one(_Results)
        if results.highlighted is not None and self.matches:
            self.dismiss(int(results.get_option_at_index(results.highlighted).id))

    def action_results_down(self) -> None:
        self.query_one(_Results).action_cursor_down()

    def action_results_up(self) -> None:
        self.query_one(_Results).action_cursor_up()

    def action_close(self) -> None:
        self.dismiss(None)
