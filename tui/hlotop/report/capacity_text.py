"""``--capacity SIZE|DEVICE``: how far the program is from fitting, as text."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.analysis.capacity import Fit
from hlotop.safe_text import printable
from hlotop.units import human_bytes


def fit_line(fit: Fit) -> Text:
    """One line: the capacity, the need and the headroom or the excess."""
    text = Text.assemble(
        ("Capacity ", "bold"),
        f"{human_bytes(fit.capacity_bytes)}",
        (f" ({printable(fit.label.split(' (')[0])})" if fit.label else "", "dim"),
        " · needs at least ",
        (human_bytes(fit.required_bytes), "bold"),
        (f" (argument + output - alias + temp, {fit.memory})", "dim"),
        " · ",
    )
    if fit.fits:
        text.append(f"headroom {human_bytes(fit.headroom_bytes)}", style="bold green")
    else:
        text.append(f"over by {human_bytes(fit.over_bytes)}", style="bold red")
    return text


def capacity_block(fit: Fit) -> Group:
    """The fit line and, when over, the fewest values live at XLA's peak whose occupied
    bytes cover the excess."""
    parts: list[Text | Table] = [fit_line(fit)]
    if not fit.fits and fit.shed:
        if fit.shed_bytes >= fit.over_bytes:
            said = (
                f"The fewest values to shrink or remove: the {len(fit.shed)} largest live at "
                f"XLA's peak hold {human_bytes(fit.shed_bytes)} (occupied), more than the "
                "excess, if the allocations shrink with them."
            )
        else:
            said = (
                f"Even all {len(fit.shed)} values live at XLA's peak "
                f"({human_bytes(fit.shed_bytes)} occupied) do not cover the excess: the "
                "arguments and allocations are larger than what is live at once."
            )
        parts.append(Text(said, style="dim"))
        table = Table(box=None, pad_edge=False)
        for name in ("value", "allocated", "shape", "op_name"):
            table.add_column(name, justify="right" if name == "allocated" else "left")
        for info in fit.shed[:15]:
            table.add_row(
                Text(printable(info.value.label)),
                human_bytes(info.allocated_bytes),
                Text(printable(info.shape or "?")),
                Text(printable(info.op_name or "")),
            )
        parts.append(table)
    return Group(*parts)
