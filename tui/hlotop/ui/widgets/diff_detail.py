"""Pane 5 of the diff browser: the selected value change, OLD and NEW side by side:
name, shape, layout, memory space, allocation, allocated and logical bytes, live range,
whether it is live at its side's XLA peak, op_name and source. A scrolling card, as
the main screen's value detail (whose keys it shares)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.model import ModuleDump, ValueInfo
from hlotop.model.memory_space import space_names
from hlotop.report.diff_report import change_text, matched_text
from hlotop.safe_text import printable
from hlotop.ui.view_models.diff_data import DiffData
from hlotop.ui.view_models.spaces import space_label
from hlotop.ui.view_models.tree_layout import kinds_text
from hlotop.ui.widgets.legend import plain
from hlotop.ui.widgets.value_detail import ValueDetail, split_shape
from hlotop.units import human_bytes

_FIELDS = (
    "value",
    "shape",
    "layout",
    "memory space",
    "allocation",
    "offset",
    "allocated",
    "logical",
    "live range",
    "at XLA's peak",
    "op_name",
    "source",
)


def side_fields(module: ModuleDump, info: ValueInfo) -> dict[str, str]:
    """One side of the card: :data:`_FIELDS` of ``info`` in ``module``, as text."""
    a = module.analysis
    shape, layout, _ = split_shape(info.shape)
    out = {
        "value": str(info.value),
        "shape": shape,
        "layout": layout or "(none printed)",
        "memory space": space_label(info.color, space_names(module)),
    }
    slot = info.slot
    if slot is not None:
        alloc = a.allocation_of.get(slot.allocation)
        where = str(slot.allocation)
        if alloc is not None:
            where += f" · {kinds_text(alloc)} · {human_bytes(alloc.size)}"
        out["allocation"] = where
        out["offset"] = str(slot.offset)
    else:
        out["allocation"] = "none"
        out["offset"] = "-"
    out["allocated"] = f"{info.allocated_bytes} ({human_bytes(info.allocated_bytes)})"
    out["logical"] = f"{info.logical_bytes} ({human_bytes(info.logical_bytes)})"
    live = info.live
    out["live range"] = f"steps {live.start}-{live.end} of {a.max_time}" if live else "none"
    peak = a.peak_step
    out["at XLA's peak"] = (
        "no live ranges" if peak is None else ("live" if info.is_live_at(peak) else "not live")
    ) + (f" (step {peak})" if peak is not None else "")
    out["op_name"] = info.op_name or "(no metadata)"
    out["source"] = info.source or "(none)"
    return {k: printable(v) for k, v in out.items()}


class DiffDetail(ValueDetail):
    """The card of one value change (:meth:`show_change`)."""

    def __init__(self, data: DiffData, *, id: str | None = "detail"):
        super().__init__(data.diff.new.module, id=id)
        self.data = data
        self.change: int | None = None
        self.border_title = "5 Detail"

    def show_change(self, index: int) -> None:
        c = self.data.changes[index]
        self.change = index
        self.border_title = f"5 Detail · {c.change}" + (
            f" · matched by {matched_text(c)}" if c.matched_by else ""
        )
        self._set_card(("change", index), lambda: self.change_card(index))

    def change_card(self, index: int) -> Group:
        c = self.data.changes[index]
        d = self.data.diff
        sides = [
            side_fields(module, info) if info is not None else None
            for module, info in ((d.old.module, c.old), (d.new.module, c.new))
        ]
        title = Text(no_wrap=False)
        title.append(c.change, style="bold")
        title.append(f" · matched by {matched_text(c)}" if c.matched_by else " · no match")
        title.append(" · allocated ")
        old = c.old.allocated_bytes if c.old is not None else 0
        new = c.new.allocated_bytes if c.new is not None else 0
        title.append_text(change_text(old, new, plain(self)))
        table = Table(box=None, pad_edge=False, show_edge=False, expand=True, padding=(0, 1))
        table.add_column("", style="dim", no_wrap=True)
        table.add_column("OLD", ratio=1, overflow="fold")
        table.add_column("NEW", ratio=1, overflow="fold")
        for field in _FIELDS:
            cells = [
                Text(s[field]) if s is not None else Text("(only in NEW)", style="dim")
                for s in sides[:1]
            ] + [
                Text(s[field]) if s is not None else Text("(only in OLD)", style="dim")
                for s in sides[1:]
            ]
            if sides[0] and sides[1] and sides[0][field] != sides[1][field]:
                cells[1].stylize("bold")
            table.add_row(field, *cells)
        return Group(title, table)
