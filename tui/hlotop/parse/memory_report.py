"""Grammar of ``-memory-usage-report.txt`` (``BufferAssignment::MemoryUsageReport``;
FORMATS.md section 7): era A (2024-10..2026-03) lists allocations, era B (2026-03 on)
groups the per-allocation tables by memory space."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from hlotop.model import (
    BufferAllocation,
    MemorySpaceReport,
    MemoryUsageReport,
    ReportAllocation,
    ReportRow,
)
from hlotop.parse.allocations import REPORT_ALLOCATION_LINE
from hlotop.parse.line_form import Field, LineForm, Lit, Part, Skip
from hlotop.parse.tokens import Sink, byte_count_field, int_field, percent_field
from hlotop.units import HUMAN_BYTES_RE

SORTED_HEADER = "Allocations sorted by size:"
DETAIL_HEADER = "Allocations sorted by size with their values:"
LIST_COLUMNS = "cumulative_size; total_size - cumulative_size; allocation"
TABLE_COLUMNS = "cumulative_size;       size;       offset; used_by_n_values; shapes_list"

_SIZE = HUMAN_BYTES_RE  # as printed: 36.0KiB


# Where a tuple shape starts: the list's first item, or one after ", " or a count's "×".
# Without one, ", " is only ever between items (a shape's dims, layout and tiling have
# no space), so the list is split by str.split, not character by character.
_TUPLE_START = re.compile(r"(?:^|, |×)\(")


@lru_cache(maxsize=1 << 14)
def _split_shapes(text: str) -> tuple[tuple[int, str], ...]:
    """``"2×f32[4], bf16[2]"`` -> ((2, "f32[4]"), (1, "bf16[2]")), minding tuple commas.
    Each distinct list once (a report repeats a few hundred over 10^4 rows), and the
    rows that print it share the one tuple."""
    items = text.split(", ") if _TUPLE_START.search(text) is None else _items_at_depth_0(text)
    out = []
    for item in items:
        count, _, rest = item.partition("×")
        out.append((int(count), rest) if rest and count.isdigit() else (1, item))
    return tuple(out)


def _items_at_depth_0(text: str) -> list[str]:
    """``text`` split at each ", " outside brackets, braces and parentheses."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0 and text.startswith(", ", i):
            items.append(text[start:i])
            start = i + 2
    items.append(text[start:])
    return items


def _sizes_and_share() -> tuple[Part, ...]:
    """``"   22.5KiB( 62%);    13.5KiB; "``: a cumulative size, its share, a size (an
    empty module's share is ``-nan``: ``"0B(-nan%);         0B; "``)."""
    return (
        Skip(r"\s*", "spaces"),
        Field("cumulative_size", _SIZE, "a size like 36.0KiB"),
        Lit("("),
        Skip(r"\s*", "spaces"),
        percent_field(),
        Lit("%); "),
        Skip(r"\s*", "spaces"),
        Field("size", _SIZE, "a size like 36.0KiB"),
        Lit("; "),
    )


# "   22.5KiB( 62%);    13.5KiB; allocation 4: size 22.5KiB, preallocated-temp:"
LIST_ROW = LineForm(
    "memory report allocation row",
    *_sizes_and_share(),
    Field("allocation", r"allocation .*", "an allocation line"),
)
# "    36.0KiB( 100%);     36.0KiB;            0;                1; f32[3,3072]" (era B
# rows start with a tab)
TABLE_ROW = LineForm(
    "memory report table row",
    *_sizes_and_share(),
    Skip(r"\s*", "spaces"),
    byte_count_field("offset", "a byte offset"),
    Lit("; "),
    Skip(r"\s*", "spaces"),
    int_field("used_by_n_values", "a count of values"),
    Lit("; "),
    Field("shapes", r".*", "a list of shapes", _split_shapes),
    make=ReportRow,
    context=("line",),
)
# "Memory Space: HBM (color=0)" (era B)
SPACE_HEADER = LineForm(
    "memory space header",
    Lit("Memory Space: "),
    Field("name", r"\S+", "a memory space's name"),
    Lit(" (color="),
    int_field("color", "a memory space (color)"),
    Lit(")"),
)
# "Total bytes: 8245148 (7.86MiB)" (era B: a memory space's total)
SPACE_TOTAL_LINE = LineForm(
    "memory space total",
    Lit("Total bytes: "),
    int_field("bytes", "a byte count"),
    Lit(" ("),
    Skip(r".*(?=\)\Z)", "a size"),
    Lit(")"),
)
# "The rest 12 allocations are less than 1% ..." (stripped of its indentation)
REST_LINE = LineForm(
    "'The rest ...' line",
    Lit("The rest "),
    int_field("count", "a count"),
    Lit(" "),
    Field("what", "allocations|values", "'allocations' or 'values'"),
    Lit(" are less than"),
    Skip(".*", "the rest of the line"),
)


# The report keeps an allocation's index and size of a list row or a table's head: one
# match takes those two, and checks the rest of the line as LIST_ROW and
# REPORT_ALLOCATION_LINE read it (else the line goes to feed, which says what is wrong).
_KEPT = ("index", "size")
_match_list_row = re.compile(
    "".join(p.regex(frozenset()) for p in LIST_ROW.parts[:-1])
    + REPORT_ALLOCATION_LINE.body_keeping(*_KEPT)
    + r"\Z"
).match
_match_report_allocation = re.compile(REPORT_ALLOCATION_LINE.body_keeping(*_KEPT) + r"\Z").match
_index, _size = (f.convert for f in REPORT_ALLOCATION_LINE.fields(*_KEPT))
_match_table_row, _build_table_row = TABLE_ROW.pattern.match, TABLE_ROW.build


def allocation_line(text: str, line: int = 0) -> BufferAllocation | None:
    """The allocation an era-A report prints in ``text`` (``allocation 37: size
    432.0KiB, color 1, preallocated-temp:``, ``BufferAllocation::ToShortString(true)``;
    FORMATS.md 7): its index, colour, kinds and parameter, its size read back from
    XLA's rounded ``HumanReadableNumBytes`` text, and no values; ``line`` (1-based) is
    where it was printed. None if ``text`` is not such a line."""
    m = REPORT_ALLOCATION_LINE.pattern.match(text)
    if m is None:
        return None
    return BufferAllocation(**REPORT_ALLOCATION_LINE.build(m), line=line)


def _table_head(line: str) -> bool:
    """Whether ``line`` is blank, or a table's column names or rule (either era)."""
    body = line.strip()
    return body in ("", TABLE_COLUMNS) or set(body) == {"-"}


class MemoryReportSection:
    """Reads a whole memory-usage report, either era (a
    :class:`~hlotop.parse.section.Section`); ``total_bytes`` is its ``Total bytes
    used`` (era A), read by the line that opened it."""

    stage = "the memory-usage report"
    expects = "a memory-usage report line"

    def __init__(self, sink: Sink, total_bytes: int | None):
        self.sink = sink
        self.total = total_bytes
        self.era = "A"
        self.listed: list[ReportAllocation] = []
        self.hidden_allocations = 0
        self.spaces: list[dict] = []
        self._detail: dict[int, dict] = {}
        self._table: dict | None = None  # the allocation whose table rows come next
        self._state = ""

    def _new_table(self, index: int, size: int, summary: str, line: int) -> dict:
        return dict(index=index, size=size, summary=summary, rows=[], hidden_rows=0, line=line)

    def take_run(self, lines: list[str], i: int, stop: int, first_line: int) -> int:
        """Read the ordinary lines from ``lines[i]`` on (at most up to ``lines[stop]``),
        as :meth:`feed` would, by their one-match path: the allocation list's rows, the
        allocation lines that head the tables and the tables' rows (most of a report).
        ``first_line`` is the 1-based line number of ``lines[0]``. Returns the index of
        the first line not taken (``i`` if none was), which goes through :meth:`feed`."""
        j = i
        table = self._table
        listing = self._state == "list"
        while j < stop:
            line = lines[j]
            if line.startswith("allocation "):
                m = _match_report_allocation(line)
                if m is None:
                    break
                index, size = m.groups()
                table = self._open_table(_index(index), _size(size), line, first_line + j)
            elif not line:
                pass  # between tables, or after the list
            elif listing:
                m = _match_list_row(line)
                if m is None:
                    break
                index, size = m.groups()
                text = line[line.index("allocation ") :]
                self._list(_index(index), _size(size), text, first_line + j)
            elif table is not None:
                m = _match_table_row(line)  # its \s* takes era B's leading tab
                if m is None:
                    if not _table_head(line):
                        break
                    # A table's column names or rule, as feed reads them: era B's names
                    # open the next table of the memory space (3 400 tables at 46 MB,
                    # each a trip through feed before).
                    if self.era == "B" and line.strip() == TABLE_COLUMNS and self.spaces:
                        table = self._space_table(first_line + j)
                    j += 1
                    continue
                table["rows"].append(_build_table_row(m, first_line + j))
            else:
                break
            j += 1
        return j

    def feed(self, line: str, lineno: int, next_line: str | None = None) -> bool:
        """Read one report line of either era; False if it is not a report line."""
        body = line.strip()
        if _table_head(body):
            if body == TABLE_COLUMNS and self.era == "B" and self.spaces:
                self._space_table(lineno)
            return True
        if body == SORTED_HEADER:
            self._state = "list"
        elif body == DETAIL_HEADER:
            self._state = "detail"
        elif body == LIST_COLUMNS:
            pass
        elif line.startswith("Memory Space: "):
            self.era = "B"
            parsed = SPACE_HEADER.read(self.sink, line, lineno)
            if parsed is not None:
                self.spaces.append(dict(parsed, total=0, tables=[]))
        elif line.startswith("Total bytes: ") and self.spaces:
            total = SPACE_TOTAL_LINE.read(self.sink, line, lineno)
            self.spaces[-1]["total"] = total["bytes"] if total is not None else 0
        elif body.startswith("The rest "):
            rest = REST_LINE.read(self.sink, body, lineno)
            n = rest["count"] if rest is not None else 0
            if "allocations" in body:
                self.hidden_allocations = n
            elif self._table is not None:
                self._table["hidden_rows"] = n
        elif self._state == "list" and not line.startswith("allocation"):
            self._list_row(line, lineno)
        elif line.startswith("allocation "):
            self._detail_header(line, lineno)
        elif self._table is not None:
            self._table_row(self._table, line, lineno)
        else:
            return False
        return True

    def _list_row(self, line: str, lineno: int) -> None:
        row = LIST_ROW.read(self.sink, line, lineno)
        if row is None:
            return
        alloc = REPORT_ALLOCATION_LINE.read(self.sink, row["allocation"], lineno)
        if alloc is not None:
            self._list(alloc["index"], alloc["size"], row["allocation"], lineno)

    def _list(self, index: int, size: int, text: str, lineno: int) -> None:
        """Add allocation ``index`` of ``size`` bytes (read from ``text``) of a list row
        on ``lineno``."""
        self.listed.append(ReportAllocation(index, size, text, list_line=lineno))

    def _detail_header(self, line: str, lineno: int) -> None:
        alloc = REPORT_ALLOCATION_LINE.read(self.sink, line, lineno)
        if alloc is not None:
            self._open_table(alloc["index"], alloc["size"], line, lineno)

    def _open_table(self, index: int, size: int, line: str, lineno: int) -> dict:
        """The table of allocation ``index`` of ``size`` bytes (read from its head
        ``line`` on ``lineno``), whose rows come next."""
        self._table = self._detail[index] = self._new_table(index, size, line, lineno)
        return self._table

    def _space_table(self, lineno: int) -> dict:
        """The next table of the last memory space (era B), whose column names are on
        ``lineno``: its rows come next."""
        self._table = self._new_table(-1, 0, "", lineno)
        self.spaces[-1]["tables"].append(self._table)
        return self._table

    def _table_row(self, table: dict, line: str, lineno: int) -> None:
        row = TABLE_ROW.read(self.sink, line.lstrip("\t"), lineno, lineno)
        if row is not None:
            table["rows"].append(row)

    def finish(self) -> dict[str, Any]:
        """The report (``memory_usage_report``), as :meth:`report` says."""
        return {"memory_usage_report": self.report()}

    def report(self) -> MemoryUsageReport:
        """The report; era A tables are joined to their allocation rows by index (the
        allocation keeps both lines: ``list_line`` its row, ``line`` its table's header)."""

        def freeze(t: dict, list_line: int = 0) -> ReportAllocation:
            return ReportAllocation(
                t["index"],
                t["size"],
                t["summary"],
                tuple(t["rows"]),
                t["hidden_rows"],
                t["line"],
                list_line,
            )

        listed = tuple(
            freeze(self._detail[a.index], a.list_line) if a.index in self._detail else a
            for a in self.listed
        )
        known = {a.index for a in listed}
        listed += tuple(freeze(t) for i, t in self._detail.items() if i not in known)
        spaces = tuple(
            MemorySpaceReport(
                s["name"], s["color"], s["total"], tuple(freeze(t) for t in s["tables"])
            )
            for s in self.spaces
        )
        return MemoryUsageReport(self.era, self.total, listed, self.hidden_allocations, spaces)
