"""The list of the advice screen: one row per piece of advice (kind, saving, what to
change), largest saving first, with a cursor. A Line API
:class:`~hlotop.ui.widgets.row_list.RowList`."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from hlotop.model import Advice
from hlotop.report.advice_text import saving_text
from hlotop.safe_text import printable
from hlotop.ui.base.bindings import bindings
from hlotop.ui.view_models.columns import longest
from hlotop.ui.widgets.pick_list import PickList
from hlotop.units import human_bytes

_KIND_W = max(len("replication"), len("kind"))


class AdviceList(PickList):
    """``advice`` ranked; posts :class:`Highlighted` when the cursor moves and
    :class:`Chosen` on Enter."""

    BINDINGS = bindings("advice")

    class Highlighted(PickList.Highlighted):
        """The cursor moved to advice ``index``."""

    class Chosen(PickList.Chosen):
        """Enter on advice ``index``: select its values in the browser."""

    def __init__(self, advice: Sequence[Advice], *, id: str | None = "advice-list"):
        super().__init__(id=id)
        self.advice = list(advice)
        self._saves = [saving_text(a) for a in self.advice]
        self._saves_w = longest(map(len, self._saves), 16, len("saves"))
        total = sum(a.saving_bytes for a in self.advice)
        self._pinned = [
            Text(
                f"{len(self.advice)} item(s), {human_bytes(total)} in all (they may overlap); "
                "≤ an upper bound, ~ an estimate",
                style="dim",
            )
        ]
        self._header = Text(f"{'kind':<{_KIND_W}}  {'saves':>{self._saves_w}}  what to change")
        self.rows_changed()

    # -- RowList ------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self.advice)

    def pinned_lines(self) -> list[Text]:
        return self._pinned

    def header_lines(self) -> list[Text]:
        return [self._header]

    def content_width(self) -> int:
        titles = longest((len(a.title) for a in self.advice), 400, 0)
        return _KIND_W + 2 + self._saves_w + 2 + titles

    def render_row(self, index: int) -> Text:
        a = self.advice[index]
        text = Text(no_wrap=True, end="")
        text.append(f"{a.kind:<{_KIND_W}}  ", style="bold")
        text.append(f"{self._saves[index]:>{self._saves_w}}  ")
        text.append(printable(a.title))
        return text
