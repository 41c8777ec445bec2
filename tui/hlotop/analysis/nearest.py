"""From a line of a dump to the allocation or value printed nearest it.

A diagnostic says ``path:line``; the browser's diagnostics screen takes the user to the
allocation or value that line belongs to. The lines come from the model: an
allocation's ``allocation N: ...`` line and each of its `` value: <...>`` lines
(``BufferAllocation::ToString``), the head ``<id name @color>`` of each ``Used values``
record (``HloValue::ToString``; counted on demand in a lazily read dump), each
``BufferLiveRange`` line and each line of the peak list (``HloLiveRange::ToString``),
and the memory-usage report's allocation rows, headers and table rows
(``BufferAssignment::MemoryUsageReport``). Which of them are in which file follows the
file's kind (FORMATS.md 1): all in a combined dump (the report too when it comes on
standard input); the allocations in a split module's ``-buffer-assignment.txt``, the
records in ``-buffer-assignment-values.txt``, the live ranges and the peak list in
``-live-range.txt``, the report in ``-memory-usage-report.txt``. The model keeps no
place for the stack-trace tree's lines, so a line there (or on any other line that
names nothing, such as a header) leads to the last value or allocation before it in
the same file, if any.

Report lines lead to the dump's allocations: an era A report names each allocation by
index; era B tables name none, so each memory space's tables are paired in order with
that space's allocations sorted as XLA sorts them (size descending, then index),
checked against the table's first row (FORMATS.md 7), so a damaged table costs only
its own pairing. A table row leads to the value at its offset when exactly one value
is there, else to its allocation. Of a report read alone (no buffer assignment), each
line leads to the allocation the report lists there (:data:`LISTING`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass

from hlotop.analysis.report_listing import report_listings
from hlotop.units import human_bytes, parse_human_bytes

ALLOCATION = "allocation"
VALUE = "value"
# A memory-usage report alone (``layout == "report-only"``): an allocation as the report
# lists it, by its place in report_listings' order (it may name no index: era B).
LISTING = "listing"

_HOLDS_ALLOCATIONS = ("combined", "buffer-assignment")
_HOLDS_RECORDS = ("combined", "values")
_HOLDS_LIVE_RANGES = ("combined", "live-range")
_REPORT = "memory-usage-report"
_LOOKAHEAD = 64  # era B: allocations tried for a table before it is left unpaired


@dataclass(frozen=True, slots=True)
class Place:
    """An allocation (``kind == "allocation"``, ``id`` its index), a value (``kind ==
    "value"``, ``id`` its value id) or an allocation of a report read alone (``kind ==
    "listing"``, ``id`` its place in the report's list), printed at ``line`` (1-based)
    of ``path``."""

    kind: str
    id: int
    path: str
    line: int


class _Lines:
    """The places printed in one file, sorted by line."""

    def __init__(self, places: list[tuple[int, str, int]]):
        places.sort()
        self.lines = [line for line, _, _ in places]
        self.targets = [(kind, ident) for _, kind, ident in places]

    def at_or_before(self, line: int) -> tuple[int, str, int] | None:
        i = bisect_right(self.lines, line) - 1
        return (self.lines[i], *self.targets[i]) if i >= 0 else None

    def after(self, line: int) -> tuple[int, str, int] | None:
        i = bisect_right(self.lines, line)
        return (self.lines[i], *self.targets[i]) if i < len(self.lines) else None


class _Records:
    """The heads of a lazily read ``Used values`` section (a
    :class:`~hlotop.model.UsedValues`): found by bisection over their line
    numbers, which only grow in dump order, so no record is parsed."""

    def __init__(self, table, known: dict):
        self.table = table
        self.known = known

    def _line(self, number: int) -> int:
        return self.table.line_of(number)

    def _first_after(self, line: int) -> int:
        """The number of the first record whose head is below ``line``."""
        lo, hi = 0, len(self.table)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._line(mid) <= line:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _place(self, number: int) -> tuple[int, str, int] | None:
        ident = self.table.ids[number]
        return (self._line(number), VALUE, ident) if ident in self.known else None

    def at_or_before(self, line: int) -> tuple[int, str, int] | None:
        number = self._first_after(line) - 1
        while number >= 0:
            found = self._place(number)
            if found is not None:
                return found
            number -= 1
        return None

    def after(self, line: int) -> tuple[int, str, int] | None:
        for number in range(self._first_after(line), len(self.table)):
            found = self._place(number)
            if found is not None:
                return found
        return None


def _peak_places(dump, known) -> list[tuple[int, str, int]]:
    """(line, VALUE, id) for each line of XLA's peak list whose value the dump has. A
    V1 line names no index, and an instruction with several values live at the peak is
    listed once per value in id order: its k-th line is its k-th such value."""
    live = dump.live_range
    peak = live.peak if live is not None else None
    if peak is None:
        return []
    infos = dump.analysis.values
    by_key = {info.value.key: info.value.id for info in infos}
    live_by_name: dict[str, list[int]] = {}
    if any(e.shape_index is None for e in peak.entries):
        for info in infos:  # sorted by id
            if info.is_live_at(peak.time):
                live_by_name.setdefault(info.value.name, []).append(info.value.id)
    seen: Counter[str] = Counter()
    out = []
    for entry in peak.entries:
        if entry.line <= 0:
            continue
        if entry.shape_index is not None:
            ident = by_key.get((entry.name, entry.shape_index))
        else:
            ids = live_by_name.get(entry.name)
            nth = seen[entry.name]
            seen[entry.name] += 1
            ident = ids[min(nth, len(ids) - 1)] if ids else by_key.get((entry.name, ()))
        if ident is not None and ident in known:
            out.append((entry.line, VALUE, ident))
    return out


def _fits(rows, alloc) -> bool:
    """Whether an era B table of ``rows`` can be ``alloc``'s: its first row (the offset
    holding the most bytes) is an offset of ``alloc`` with as many values and the same
    size. A table whose rows were all lost fits any."""
    if not rows:
        return True
    row = rows[0]
    sizes = [slot.size for slot in alloc.values if slot.offset == row.offset]
    return len(sizes) == row.used_by_n_values and human_bytes(max(sizes, default=0)) == row.size


def _printed_tables(tables):
    """(line, rows) of each era B table as printed. A table whose column line was lost
    is read as more rows of the one above it; its rows start again from a smaller
    cumulative size, so they are split off there (with no line of their own)."""
    for table in tables:
        first, before = 0, None
        for i, row in enumerate(table.rows):
            cumulative = parse_human_bytes(row.cumulative_size)
            if before is not None and cumulative < before:
                yield (table.line if first == 0 else 0), table.rows[first:i]
                first = i
            before = cumulative
        yield (table.line if first == 0 else 0), table.rows[first:]


def _pair_tables(tables, allocations) -> list[tuple[int, int, tuple, object]]:
    """Era B: (line, 0, rows, allocation) for each table of one memory space, paired
    in XLA's order (size descending, then index); a table that fits none of the next
    allocations (a damaged report) is left out and the next one tried from the same
    place."""
    order = sorted(allocations, key=lambda a: (-a.size, a.index))
    pairs = []
    start = 0
    for line, rows in _printed_tables(tables):
        for k in range(start, min(start + _LOOKAHEAD, len(order))):
            if _fits(rows, order[k]):
                pairs.append((line, 0, rows, order[k]))
                start = k + 1
                break
    return pairs


def _report_places(dump, known) -> list[tuple[int, str, int]]:
    """(line, kind, id) for the memory-usage report's allocation rows and headers (the
    allocation) and table rows (the value at the row's offset if it is the only one
    there, else the allocation)."""
    report = dump.memory_usage_report
    if report is None:
        return []
    allocation_of = dump.analysis.allocation_of
    pairs = [(t.line, t.list_line, t.rows, allocation_of.get(t.index)) for t in report.allocations]
    for space in report.memory_spaces:
        pairs.extend(
            _pair_tables(space.allocations, [a for a in dump.allocations if a.color == space.color])
        )
    out: list[tuple[int, str, int]] = []
    for line, list_line, rows, alloc in pairs:
        if alloc is None:
            continue
        out.extend((at, ALLOCATION, alloc.index) for at in (line, list_line) if at > 0)
        if not rows:
            continue
        at_offset: dict[int, list[int]] = {}
        for slot in alloc.values:
            at_offset.setdefault(slot.offset, []).append(slot.value.id)
        for row in rows:
            if row.line <= 0:
                continue
            ids = at_offset.get(row.offset, ())
            if len(ids) == 1 and ids[0] in known:
                out.append((row.line, VALUE, ids[0]))
            else:
                out.append((row.line, ALLOCATION, alloc.index))
    return out


def _listing_places(dump) -> list[tuple[int, str, int]]:
    """(line, LISTING, i) for the header, list row and table rows of each allocation
    of a memory-usage report read alone, ``i`` its place in
    :func:`~hlotop.analysis.report_listing.report_listings`' order (pane 1's)."""
    report = dump.memory_usage_report
    if report is None:
        return []
    out: list[tuple[int, str, int]] = []
    for i, listing in enumerate(report_listings(report, dump.analysis.platform)):
        table = listing.table
        lines = [table.line, table.list_line, *(row.line for row in table.rows)]
        out.extend((at, LISTING, i) for at in lines if at > 0)
    return out


class Places:
    """Every allocation and value of a dump with the line it is printed at, to find the
    one nearest a line. Built from a :class:`~hlotop.model.ModuleDump` in one pass
    over its allocations, value slots, live ranges, peak list and memory-usage report
    (records are looked up lazily); raises nothing."""

    def __init__(self, dump):
        known = dump.analysis.by_id
        kinds: dict[str, set[str]] = {}
        for f in dump.files:
            kinds.setdefault(f.path, set()).add(f.kind)
        self._files: dict[str, list] = {}
        has_report_file = any(_REPORT in k for k in kinds.values())
        for path, file_kinds in kinds.items():
            places: list[tuple[int, str, int]] = []
            if file_kinds.intersection(_HOLDS_ALLOCATIONS):
                for alloc in dump.allocations:
                    if alloc.line > 0:
                        places.append((alloc.line, ALLOCATION, alloc.index))
                    places.extend(
                        (slot.line, VALUE, slot.value.id)
                        for slot in alloc.values
                        if slot.line > 0 and slot.value.id in known
                    )
            records = dump.used_values
            if hasattr(records, "line_of") and hasattr(records, "ids"):
                if getattr(records, "path", None) == path:
                    self._files.setdefault(path, []).append(_Records(records, known))
            elif file_kinds.intersection(_HOLDS_RECORDS):
                places.extend(
                    (r.line, VALUE, r.value.id)
                    for r in records
                    if r.line > 0 and r.value.id in known
                )
            if file_kinds.intersection(_HOLDS_LIVE_RANGES):
                places.extend(
                    (info.live.line, VALUE, info.value.id)
                    for info in dump.analysis.values
                    if info.live is not None and info.live.line > 0
                )
                places.extend(_peak_places(dump, known))
            if dump.report_only and _REPORT in file_kinds:
                places.extend(_listing_places(dump))
            elif _REPORT in file_kinds or ("combined" in file_kinds and not has_report_file):
                places.extend(_report_places(dump, known))
            if places:
                self._files.setdefault(path, []).append(_Lines(places))

    def nearest(self, path: str, line: int) -> Place | None:
        """The allocation or value printed at ``line`` of ``path``, else the nearest one
        above it in that file, else the first one below it; None when ``line`` is 0
        (the diagnostic concerns the whole file) or the file holds none."""
        sections = self._files.get(path)
        if line <= 0 or not sections:
            return None
        before = [p for p in (s.at_or_before(line) for s in sections) if p is not None]
        if before:
            found = max(before, key=lambda p: p[0])
        else:
            after = [p for p in (s.after(line) for s in sections) if p is not None]
            if not after:
                return None
            found = min(after, key=lambda p: p[0])
        at, kind, ident = found
        return Place(kind, ident, path, at)
