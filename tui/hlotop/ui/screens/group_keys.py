"""The grouping-keys prompt (``B`` in the grouped view): type keys such as
``scope,opcode``; Enter regroups by them."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from hlotop.analysis.grouping import GROUP_KEYS, parse_keys
from hlotop.ui.base.bindings import bindings


class GroupKeysScreen(ModalScreen["tuple[str, ...] | None"]):
    """Modal: an input for grouping keys; dismissed with them, or None."""

    BINDINGS = bindings("group_keys")

    def __init__(self, current: tuple[str, ...]):
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical(id="group-keys-body", classes="modal-body") as body:
            body.border_title = "Group by · enter groups · esc cancels"
            yield Static(f"keys, outermost first: {', '.join(GROUP_KEYS)}", id="group-keys-help")
            yield Input(value=",".join(self.current), id="group-keys-input")
            yield Static("", id="group-keys-error", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            keys = parse_keys(event.value)
        except ValueError as err:
            self.query_one("#group-keys-error", Static).update(Text(f"{err}."))
            return
        self.dismiss(keys)

    def action_cancel(self) -> None:
        self.dismiss(None)
