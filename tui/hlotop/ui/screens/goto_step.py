"""The go-to-step prompt (``:``): type a schedule step, Enter moves the timeline there."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from hlotop.ui.base.bindings import bindings


def parse_step(text: str) -> int | None:
    """The step typed in ``text`` (digits; spaces, commas and underscores ignored);
    None if it is not a number."""
    digits = text.strip().replace(",", "").replace("_", "")
    if not digits.isdigit():
        return None
    return int(digits)


class GotoStepScreen(ModalScreen[int | None]):
    """Modal: an input for a step number; dismissed with the step, or None."""

    BINDINGS = bindings("goto")

    def __init__(self, max_time: int, current: int):
        super().__init__()
        self.max_time, self.current = max_time, current

    def compose(self) -> ComposeResult:
        with Vertical(id="goto-body", classes="modal-body") as body:
            body.border_title = "Go to step · enter goes · esc cancels"
            yield Input(
                placeholder=f"a step from 0 to {self.max_time} (now {self.current})",
                id="goto-input",
                type="integer",
            )
            yield Static("", id="goto-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        step = parse_step(event.value)
        error = self.query_one("#goto-error", Static)
        if step is None:
            error.update("Type a step number.")
            return
        if step > self.max_time:
            # Said, not clamped: at the last step already, a clamp changed nothing.
            error.update(f"No step {step}: the schedule's steps are 0 to {self.max_time}.")
            return
        self.dismiss(step)

    def action_cancel(self) -> None:
        self.dismiss(None)
