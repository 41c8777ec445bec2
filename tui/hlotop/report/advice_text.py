"""``--advise``: the advice list of ``--summary``, ranked by bytes saved."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hlotop.model import Advice
from hlotop.safe_text import printable
from hlotop.units import human_bytes

LISTED = 12  # advice items the summary lists; --json has them all
FIXES = 3  # the first items get their fix and first evidence line under them


def saving_text(advice: Advice) -> str:
    """The saving as the views print it: ``≤ 4.26MiB`` for an upper bound, ``~1.50MiB``
    for an estimate."""
    mark = "≤" if advice.bound == "upper_bound" else "~"
    return f"{mark} {human_bytes(advice.saving_bytes)}"


def advice_block(advice: Sequence[Advice]) -> Group:
    """The ``Advice`` section: a heading, then the first :data:`LISTED` items (kind,
    saving, what to change); the first :data:`FIXES` with how and the evidence's first
    line. Dump text is printed, never read as markup."""
    heading = Text.assemble(
        ("Advice", "bold"),
        (
            "  what to change, largest saving first; bytes per device; ≤: an upper "
            "bound, ~: an estimate",
            "dim",
        ),
    )
    if not advice:
        return Group(
            heading,
            Text(
                "  nothing to advise: no donation, remat, replication or padding saving found",
                style="dim",
            ),
        )
    table = Table(box=None, pad_edge=False, show_header=True)
    table.add_column("#", justify="right")
    table.add_column("kind")
    table.add_column("saves", justify="right", no_wrap=True)
    table.add_column("what to change")
    for rank, item in enumerate(advice[:LISTED], 1):
        what = Text(printable(item.title))
        if rank <= FIXES:
            what.append("\n  fix: " + printable(item.fix), style="dim")
            if item.evidence:
                what.append("\n  seen: " + printable(item.evidence[0]), style="dim")
        table.add_row(str(rank), item.kind, saving_text(item), what)
    parts: list[Text | Table] = [heading, table]
    if len(advice) > LISTED:
        rest = sum(a.saving_bytes for a in advice[LISTED:])
        parts.append(
            Text(
                f"  … {len(advice) - LISTED} more, {human_bytes(rest)} in all (--json lists "
                "every item)",
                style="dim",
            )
        )
    return Group(*parts)
