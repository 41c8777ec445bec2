"""What to copy of the selected value (``y``): its name, op_name, shape or source
``file:line``, each with its key; the choice goes to the clipboard."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from hlotop.model import ValueInfo
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings

# Each field with the key that copies it (see the "copy" scope of bindings.py).
FIELD_KEYS = (("name", "n"), ("op_name", "o"), ("shape", "s"), ("source", "l"))


def copy_fields(info: ValueInfo) -> dict[str, str]:
    """``info``'s fields that can be copied, those it has: name (``fusion.12{0}``),
    op_name, shape (with layout) and source (``file:line``)."""
    fields = {
        "name": info.value.label,
        "op_name": info.op_name or "",
        "shape": info.shape or "",
        "source": info.source or "",
    }
    return {k: v for k, v in fields.items() if v}


class CopyScreen(ModalScreen["tuple[str, str] | None"]):
    """Dismissed with (field, text) chosen, or None."""

    BINDINGS = bindings("copy")

    def __init__(self, title: str, fields: dict[str, str]):
        super().__init__()
        self.title_text = title
        self.fields = fields

    def compose(self) -> ComposeResult:
        with Vertical(id="copy-body", classes="modal-body") as body:
            body.border_title = f"Copy · {printable(self.title_text)} · esc cancels"
            options = []
            for field, key in FIELD_KEYS:
                if field in self.fields:
                    prompt = Text(no_wrap=True, overflow="ellipsis")
                    prompt.append(f"{key} ", style="bold")
                    prompt.append(f"{field:<8} ", style="dim")
                    prompt.append(printable(self.fields[field]))
                    options.append(Option(prompt, id=field))
            yield OptionList(*options, id="copy-options")

    def action_copy_field(self, field: str) -> None:
        if field in self.fields:
            self.dismiss((field, self.fields[field]))
        else:
            self.notify(f"This value has no {field}.")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.action_copy_field(event.option.id)

    def action_copy_highlighted(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            option = options.get_option_at_index(options.highlighted)
            if option.id is not None:
                self.action_copy_field(option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
