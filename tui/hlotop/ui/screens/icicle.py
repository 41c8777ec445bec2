"""The icicle screen (``i`` on the grouped view): the grouped live set at the view's
step, keys and accounting drawn as an icicle (:mod:`hlotop.ui.widgets.icicle_view`),
the whole terminal wide; esc, q or ``i`` closes it."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import Screen

from hlotop.analysis.grouping import Grouping
from hlotop.ui.base.bindings import keys
from hlotop.ui.widgets.icicle_view import IcicleView


class IcicleScreen(Screen[None]):
    BINDINGS = [k.binding() for k in keys("icicle") if k.action == "close"]
    AUTO_FOCUS = "#icicle"
    DEFAULT_CSS = """
    IcicleScreen { align: center middle; }
    #icicle-body {
        width: 100%;
        height: 100%;
        border: round $accent;
        background: $surface;
    }
    #icicle { height: 1fr; }
    """

    def __init__(self, grouping: Grouping):
        super().__init__()
        self.grouping = grouping

    def compose(self) -> ComposeResult:
        with Vertical(id="icicle-body") as body:
            body.border_title = "Icicle of the grouped live set"
            body.border_subtitle = "a bar a group, within its parent's · esc close"
            yield IcicleView(self.grouping)

    def action_close(self) -> None:
        self.dismiss(None)
