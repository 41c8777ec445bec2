"""A memory-usage report on its own (``ModuleDump.layout == "report-only"``) in text:
its total, labelled as the report's, its memory spaces and the allocations it lists
(:mod:`hlotop.analysis.report_listing`), for ``--summary`` and the browser's figures
screen. Dump text goes into ``rich.text.Text`` after
:func:`hlotop.safe_text.printable`."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from hlotop.analysis.report_listing import (
    MORE_THAN_K,
    PERCENTILE,
    ReportListing,
    cut_off,
    report_listings,
)
from hlotop.model import ModuleDump
from hlotop.model.memory_space import space_style
from hlotop.safe_text import printable
from hlotop.units import human_bytes, with_commas

LISTED = 15  # allocations shown (era B: of each memory space)


def _heading(title: str, note: str) -> Text:
    return Text.assemble((title, "bold"), (f"  {note}", "dim"))


def total_note(module: ModuleDump) -> str:
    """What the report's total is, said beside it: ``"the memory-usage report's Total
    bytes used"`` (era A), or the sum of its memory spaces' (era B); ``""`` without a
    report."""
    report = module.memory_usage_report
    if report is None:
        return ""
    if report.era == "B" and report.memory_spaces:
        return (
            "the memory-usage report's: its memory spaces' 'Total bytes' added up, "
            "which is XLA's Total bytes used"
        )
    return "the memory-usage report's Total bytes used"


def overview_rows(module: ModuleDump) -> list[tuple[str, Text]]:
    """The overview's rows for a report alone: its total (labelled as the report's),
    how many allocations it lists, and why there are no values and no peak. Empty
    without a report."""
    report = module.memory_usage_report
    if report is None:
        return []
    total = report.total
    if total is None:
        total_text = Text.assemble(("unknown", "bold"), ("  the report prints none", "dim"))
    else:
        total_text = Text.assemble(
            f"{human_bytes(total)}  ({with_commas(total)} B)", (f"  {total_note(module)}", "dim")
        )
    listed = Text.assemble(
        f"{with_commas(report.listed())}",
        ("  listed by the memory-usage report (no buffer assignment read)", "dim"),
    )
    return [
        ("Total bytes used", total_text),
        ("Allocations", listed),
        ("Values", Text.assemble("none read", ("  the report gives shapes, not values", "dim"))),
        (
            "Peak",
            Text.assemble(
                ("unknown", "bold"), ("  no live ranges or schedule, so no XLA peak step", "dim")
            ),
        ),
    ]


def spaces_table(module: ModuleDump) -> Group | None:
    """An era-B report's memory spaces: each one's ``Total bytes`` and how many
    allocation tables it lists (and whether XLA may have cut the list short); None for
    other reports."""
    report = module.memory_usage_report
    if report is None or report.era != "B" or not report.memory_spaces:
        return None
    table = Table(box=None, pad_edge=False)
    table.add_column("memory space", no_wrap=True)
    table.add_column("Total bytes", justify="right")
    table.add_column("tables", justify="right")
    for space in report.memory_spaces:
        table.add_row(
            Text(f"{printable(space.name)} (color {space.color})", style=space_style(space.color)),
            human_bytes(space.total_bytes),
            f"{with_commas(len(space.allocations))}",
        )
    parts: list[RenderableType] = [
        _heading("By memory space", "the memory-usage report's: a table per allocation listed"),
        table,
    ]
    cut = cut_off(report)
    if cut:
        names = ", ".join(f"{printable(name)} ({n})" for name, n in cut)
        parts.append(
            Text(
                f"past {MORE_THAN_K} allocations XLA stops listing once the rest are under "
                f"{PERCENTILE:.0%} of the space's total, and does not say how many: {names} "
                "may not list them all",
                style="dim",
            )
        )
    return Group(*parts)


def _shapes(listing: ReportListing) -> str:
    """The shapes at the allocation's largest offset; an era-A allocation with one value
    (no table) has its parameter's or output's shape from its line, if it prints one."""
    text = listing.shapes_text()
    head = listing.head
    if not text and head is not None:
        text = head.parameter_shape or head.output_shape or ""
    return printable(text)


def allocations_table(module: ModuleDump, listed: int = LISTED) -> Group | None:
    """The allocations the report lists, largest first (era B: of each memory space),
    at most ``listed`` of each list, with the shapes at each one's largest offset.
    None without a report or with no allocation in it."""
    report = module.memory_usage_report
    if report is None:
        return None
    listings = report_listings(report, module.analysis.platform)
    if not listings:
        return None
    table = Table(box=None, pad_edge=False)
    era_a = report.era != "B"
    spaces = len({x.color for x in listings})
    if era_a:
        table.add_column("allocation", justify="right", no_wrap=True)
        table.add_column("size", justify="right", no_wrap=True)
        if spaces > 1:
            table.add_column("space", no_wrap=True)
        table.add_column("kinds", overflow="fold")
    else:
        table.add_column("space", no_wrap=True)
        table.add_column("table", justify="right", no_wrap=True)
        table.add_column("cumulative", justify="right", no_wrap=True)
    table.add_column("offsets", justify="right", no_wrap=True)
    table.add_column("shapes at its largest offset", overflow="fold")
    shown: dict[int, int] = {}
    left: dict[str, int] = {}
    for x in listings:
        key = x.color if not era_a else 0
        if shown.get(key, 0) >= listed:
            name = x.space if not era_a else ""
            left[name] = left.get(name, 0) + 1
            continue
        shown[key] = shown.get(key, 0) + 1
        space = Text(printable(x.space), style=space_style(x.color))
        offsets = f"{with_commas(len(x.rows))}" + (
            f" +{x.table.hidden_rows}" if x.table.hidden_rows else ""
        )
        cells: list[Text | str]
        if era_a:
            cells = [
                str(x.index) if x.index is not None else "?",
                human_bytes(x.size) if x.size is not None else "?",
            ]
            if spaces > 1:
                cells.append(space)
            cells.append(Text(printable(x.kinds)))
        else:
            cells = [space, str(x.number), x.cumulative]
        cells += [offsets if x.rows else "-", Text(_shapes(x))]
        table.add_row(*cells)
    if era_a:
        note = (
            "XLA's allocation lines, largest first; size: its rounded text read back; "
            "offsets: the rows of its table (+ those XLA leaves out)"
        )
    else:
        note = (
            "largest first in each memory space; XLA names no allocation (no index, size "
            "or kind); cumulative: the sizes at its offsets added up, as printed"
        )
    parts: list[RenderableType] = [_heading("Allocations in the memory-usage report", note), table]
    for name, n in left.items():
        where = f" in {printable(name)}" if name else ""
        parts.append(Text(f"... and {with_commas(n)} more{where} (see --json)", style="dim"))
    return Group(*parts)


def report_parts(module: ModuleDump) -> list[RenderableType]:
    """The report's tables (its memory spaces, its allocations), each after an empty
    line; empty without a report."""
    parts: list[RenderableType] = []
    for table in (spaces_table(module), allocations_table(module)):
        if table is not None:
            parts += [Text(""), table]
    return parts
