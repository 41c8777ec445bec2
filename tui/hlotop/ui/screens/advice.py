"""The advice screen (``a``): what to change and the bytes it saves, ranked
(:func:`hlotop.analysis.advice.advise`). The list takes the keys; below it, the
highlighted item in full (its evidence and fix). Enter closes the screen and selects
the item's largest value in every pane, with the timeline cursor on the item's step."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from hlotop.model import Advice, ModuleDump
from hlotop.report.advice_text import saving_text
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings
from hlotop.ui.base.selection import SelectionOwner
from hlotop.ui.widgets.advice_list import AdviceList

NO_ADVICE = (
    "Nothing to advise: no undonated parameter matches an output, nothing live at the "
    "peak is saved for backward, no weight is replicated beside sharded siblings, and "
    "no value at the peak is padded."
)
EVIDENCE_SHOWN = 3


class AdviceScreen(ModalScreen[None]):
    """Lists ``advice`` for ``dump``; Enter on one selects its largest value in the
    screen below (the browser) and closes this one."""

    BINDINGS = bindings("modal")
    AUTO_FOCUS = "#advice-list"

    def __init__(self, dump: ModuleDump, advice: Sequence[Advice]):
        super().__init__()
        self.dump = dump
        self.advice = list(advice)

    def compose(self) -> ComposeResult:
        with Vertical(id="advice-body", classes="modal-body") as body:
            body.border_title = f"Advice ({len(self.advice)}) · ⏎ select its values · esc close"
            if not self.advice:
                yield Static(Text(NO_ADVICE, style="dim"), id="advice-none")
                return
            yield AdviceList(self.advice)
            yield Static(id="advice-detail")

    def on_mount(self) -> None:
        if self.advice:
            self._show_detail(0)

    def detail_text(self, index: int) -> Text:
        """Item ``index`` in full: title, saving and bound, where, evidence, fix."""
        a = self.advice[index]
        text = Text(no_wrap=False)
        text.append(printable(a.title), style="bold")
        bound = "an upper bound" if a.bound == "upper_bound" else "an estimate"
        where = f"at step {a.step} (XLA's peak)" if a.step is not None else "at every step"
        text.append(f"\nsaves {saving_text(a)} per device, {bound}, {where}", style="dim")
        if a.groups:
            text.append("\n" + printable(", ".join(a.groups[:8])))
        for line in a.evidence[:EVIDENCE_SHOWN]:
            text.append("\n· " + printable(line), style="dim")
        if len(a.evidence) > EVIDENCE_SHOWN:
            text.append(f"\n· … {len(a.evidence) - EVIDENCE_SHOWN} more", style="dim")
        text.append("\nfix: ", style="bold")
        text.append(printable(a.fix))
        if a.values:
            text.append(f"\n⏎ selects the largest of its {len(a.values)} value(s)", style="dim")
        return text

    def _show_detail(self, index: int) -> None:
        self.query_one("#advice-detail", Static).update(self.detail_text(index))

    def on_advice_list_highlighted(self, message: AdviceList.Highlighted) -> None:
        message.stop()
        self._show_detail(message.index)

    def on_advice_list_chosen(self, message: AdviceList.Chosen) -> None:
        message.stop()
        item = self.advice[message.index]
        known = [v for v in item.values if v in self.dump.analysis.by_id]
        if not known:
            self.notify("This advice names no value of the dump to select.", severity="warning")
            return
        stack = self.app.screen_stack
        browser = stack[-2] if len(stack) >= 2 and stack[-1] is self else None
        self.dismiss(None)
        if isinstance(browser, Screen) and isinstance(browser, SelectionOwner):
            from hlotop.ui.screens.main import MainScreen  # it opens this screen

            if item.step is not None and isinstance(browser, MainScreen):
                browser.timeline.set_step(item.step)
            browser.select_value(known[0], None, open_detail=True)

    def action_close(self) -> None:
        self.dismiss(None)
