"""From a line of a dump to the allocation or value printed nearest it.

A diagnostic says ``path:line``; the browser's diagnostics screen takes the user to the
allocation or value that line belongs to. The lines come from the model: an
allocation's ``allocation N: ...`` line and each of its `` value: <...>`` lines
(``BufferAllocation::ToString``), the head ``<id name @color>`` of each ``Used values``
record (``HloValue::ToString``; counted on demand in a lazily read dump), and each
``BufferLiveRange`` line (``HloLiveRange::ToString``). Which of them are in which file
follows the file's kind (FORMATS.md 1): all in a combined dump; the allocations in a
split module's ``-buffer-assignment.txt``, the records in ``-buffer-assignment-values.txt``,
the live ranges in ``-live-range.txt``. The model keeps no line for the
memory-usage report's rows, the peak list or the stack-trace tree, so a line there
leads to the last value or allocation before it in the same file, if any.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

ALLOCATION = "allocation"
VALUE = "value"

_HOLDS_ALLOCATIONS = ("combined", "buffer-assignment")
_HOLDS_RECORDS = ("combined", "values")
_HOLDS_LIVE_RANGES = ("combined", "live-range")


@dataclass(frozen=True, slots=True)
class Place:
    """An allocation (``kind == "allocation"``, ``id`` its index) or a value (``kind ==
    "value"``, ``id`` its value id), printed at ``line`` (1-based) of ``path``."""

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
    :class:`~hlotop.parse.records.RecordTable`): found by bisection over their line
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


class Places:
    """Every allocation and value of a dump with the line it is printed at, to find the
    one nearest a line. Built from a :class:`~hlotop.loader.ModuleDump` in one pass
    over its allocations, value slots and live ranges (records are looked up lazily);
    raises nothing."""

    def __init__(self, dump):
        known = dump.analysis.by_id
        kinds: dict[str, set[str]] = {}
        for f in dump.files:
            kinds.setdefault(f.path, set()).add(f.kind)
        self._files: dict[str, list] = {}
        for path, file_kinds in kinds.items():
            places: list[tuple[int, str, int]] = []
            if file_kinds.intersection(_HOLDS_ALLOCATIONS):
                for alloc in dump.allocations:
                    if alloc.line > 0:
                        places.append((alloc.line, ALLOCATION, alloc.index))
                    places.extend((slot.line, VALUE, slot.value.id) for slot in alloc.values
                                  if slot.line > 0 and slot.value.id in known)
            records = dump.used_values
            if hasattr(records, "line_of") and hasattr(records, "ids"):
                if getattr(records, "path", None) == path:
                    self._files.setdefault(path, []).append(_Records(records, known))
            elif file_kinds.intersection(_HOLDS_RECORDS):
                places.extend((r.line, VALUE, r.value.id) for r in records
                              if r.line > 0 and r.value.id in known)
            if file_kinds.intersection(_HOLDS_LIVE_RANGES):
                places.extend((info.live.line, VALUE, info.value.id) for info in dump.analysis.values
                              if info.live is not None and info.live.line > 0)
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
