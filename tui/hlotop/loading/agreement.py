"""Diagnostics for the parts of a dump that must agree with each other, so that a file
cut exactly at a line end, or a damaged number that still reads, is not shown as a
smaller program with no word said (a jax dump cut in its peak list showed XLA's peak as
3.55 MiB instead of 6.73 MiB, even under ``--strict``).

What XLA's printers promise, and so what is checked:

* ``BufferAllocation::ToString`` numbers the allocations 0..N-1, once each, and every
  value's slot (``offset``, ``size``) lies inside its allocation
  (``xla/service/buffer_assignment.cc``).
* ``BufferAssignment::ToString`` then lists a ``Used values`` record for every value
  an allocation holds (each of the sample dumps, every era).
* ``HloLiveRange::ToString`` (``xla/hlo/utils/hlo_live_range.cc``) prints each live
  range as ``start-end`` with ``start <= end``, then under ``Live ranges at P (peak)``
  every value whose range holds ``P`` (``start <= P <= end``), and only those.
* The stack-trace breakdown (``xla/hlo/utils/hlo_stack_trace.cc``) is built from the
  same values as the peak list: its total is the list's sum, and each node's
  ``remaining`` is the total less the ``current`` bytes printed so far, so the last
  node's is 0 (FORMATS.md 6).

Each check is one pass over what the parser and the analysis already hold (no record is
read, unless an allocated value has none: then its section is counted through once):
all of them together 13 ms of a 46 MB dump's load, 30 ms at 108 MB, most of it the
pass over the allocations' value lines.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import compress, islice
from operator import add, gt

from hlotop.model import (
    AllocationTable,
    Analysis,
    BufferAllocation,
    Diagnostic,
    DumpFile,
    HloLiveRange,
    ParsedSections,
    UsedValues,
    ValueInfo,
    ValueTable,
)
from hlotop.units import human_bytes

_LISTED = 20  # diagnostics of one kind, at most; then one line says how many more


def file_of(files: Sequence[DumpFile], kind: str, default: str) -> str:
    """The path of the file of ``kind`` (``values``, ``live-range`` ...) among a
    module's ``files``, else of its combined dump, else ``default``."""
    for f in files:
        if f.kind == kind:
            return f.path
    for f in files:
        if f.kind == "combined":
            return f.path
    return default


def check_agreement(
    files: Sequence[DumpFile],
    sections: ParsedSections,
    analysis: Analysis,
    diagnostics: list[Diagnostic],
    default: str,
) -> None:
    """Append a diagnostic (at the file and line where it shows) for each part of the
    dump that disagrees with another: an allocation listed twice, a value's slot past
    its allocation's end, values the allocations hold that have no ``Used values``
    record, a live range that ends before it starts, and XLA's peak list naming other
    values than the live ranges have live at its step. ``files``: the module's files
    with their kinds; ``default``: the path to report at when none is known. Call it
    once the figures are worked out; the stack-trace tree is checked by
    :func:`check_stack_trace`. Raises nothing."""
    allocations_path = file_of(files, "buffer-assignment", default)
    _allocations(allocations_path, sections.allocations, analysis, diagnostics)
    # The records end their file: a split module's values file, or a combined dump
    # without live ranges.
    records_last = any(f.kind == "values" for f in files) or (
        sections.live_range is None and not sections.live_range_unavailable
    )
    records_path = file_of(files, "values", default)
    if not _said(diagnostics, records_path):
        _records(records_path, sections, analysis, diagnostics, records_last)
    live = sections.live_range
    if live is not None:
        live_path = file_of(files, "live-range", default)
        _backwards(live_path, live, diagnostics)
        if not _said(diagnostics, live_path):
            _peak_list(live_path, live, analysis, diagnostics)


def check_stack_trace(
    files: Sequence[DumpFile], live: HloLiveRange | None, diagnostics: list[Diagnostic]
) -> None:
    """Diagnostics for a stack-trace breakdown that disagrees with the peak list it was
    built from: a total other than the list's sum, or a last node with bytes still
    ``remaining`` (its lines stop early: ``truncated``); or, in a split module's
    live-range file, none at all after the peak list (``truncated``). Raises nothing."""
    if live is None or live.peak is None:
        return
    path = file_of(files, "live-range", files[0].path if files else "")
    tree = live.stack_trace
    if tree is None:
        # A split module's live ranges (jax >= 0.10, XLA 2026-04) are of an XLA that
        # prints the breakdown after the peak list of any schedule (since 2025-07); a
        # combined dump's list of the same form may be of one from before (V3).
        split = any(f.kind == "live-range" for f in files)
        if (
            split
            and live.instruction_sequence
            and live.peak.variant in ("V3", "V4")
            and not _said(diagnostics, path)  # cut before: said there
        ):
            entries = live.peak.entries
            diagnostics.append(
                Diagnostic(
                    path,
                    entries.lines[-1] if len(entries) else live.peak.line,
                    "truncated: no 'Stack trace breakdown for peak usage' after XLA's "
                    "peak list (XLA prints one in every -live-range.txt), so the "
                    "breakdown is not shown",
                    "warning",
                )
            )
        return
    listed = sum(live.peak.entries.bytes)
    last = tree.last_node()
    if last is None and tree.total > 0:
        entries = live.peak.entries  # its header (after the list) and no node
        last = (tree.total, entries.lines[-1] + 1 if len(entries) else live.peak.line)
    if last is not None and last[0] != 0:
        remaining, line = last
        diagnostics.append(
            Diagnostic(
                path,
                line,
                f"truncated: the stack-trace breakdown stops with {human_bytes(remaining)} "
                f"({remaining} bytes) of its {tree.total} bytes not yet listed (a whole "
                "breakdown's last node has 0 remaining)",
                "warning",
            )
        )
    elif tree.total != listed:
        diagnostics.append(
            Diagnostic(
                path,
                live.peak.line,
                f"the stack-trace breakdown's total is {tree.total} bytes but XLA's peak "
                f"list adds up to {listed}: both are printed from the same values",
                "warning",
            )
        )


def _allocations(
    path: str,
    allocations: Sequence[BufferAllocation],
    analysis: Analysis,
    diagnostics: list[Diagnostic],
) -> None:
    """An allocation index listed twice; a slot that ends past its allocation."""
    table = AllocationTable.of(allocations)
    if len(analysis.allocation_of) != len(table):  # an index listed twice
        first: dict[int, int] = {}
        twice = []
        for index, line in zip(table.indexes, table.lines, strict=True):
            if index in first:
                twice.append(
                    Diagnostic(
                        path,
                        line,
                        f"allocation {index} is listed again (first at line "
                        f"{first[index]}): XLA lists each allocation once; the "
                        "totals count both, the views show this one",
                        "error",
                    )
                )
            else:
                first[index] = line
        _add(diagnostics, twice, path, "allocations listed again")
    past: list[Diagnostic] = []
    slots = table.slots
    offsets, sizes, firsts = slots.offsets, slots.sizes, table.firsts
    # Against each value line's allocation's size, in one pass of C: does any value end
    # past its allocation (none does in a dump XLA wrote whole)?
    if not any(map(gt, map(add, offsets, sizes), table.per_slot(table.sizes))):
        return
    for a, size in enumerate(table.sizes):
        for k in range(firsts[a], firsts[a + 1]):
            if offsets[k] + sizes[k] > size:
                slot = slots[k]
                past.append(
                    Diagnostic(
                        path,
                        slot.line,
                        f"value {slot.value} (size={slot.size},offset={slot.offset}) ends at "
                        f"byte {slot.offset + slot.size}, past the end of allocation "
                        f"{table.indexes[a]} ({size} bytes)",
                        "error",
                    )
                )
    _add(diagnostics, past, path, "values past their allocation's end")


def _records(
    path: str,
    sections: ParsedSections,
    analysis: Analysis,
    diagnostics: list[Diagnostic],
    last: bool,
) -> None:
    """Values the allocations hold that have no ``Used values`` record: the records
    were cut short (``last``: they end their file), or lost."""
    table = sections.used_values
    if not sections.saw_used_values:
        return
    recorded = set(table.ids) if isinstance(table, UsedValues) else {r.value.id for r in table}
    # The values (sorted by id; a live range with no value has a negative one) are those
    # of the allocations and of the records: as many as the records unless an allocated
    # value has none. Counted so, not looked up one by one (130 000 values at 108 MB).
    values = analysis.values
    if len(values) - bisect_left(values, 0, key=_value_id) <= len(recorded):
        return
    if isinstance(values, ValueTable):
        # Counted over the columns; only the first few are made (10^6 values of a
        # dump with no records: an object each for three of them).
        rows = (
            r
            for r, (vid, k) in enumerate(zip(values.ids, values.slot_rows, strict=True))
            if k >= 0 and vid not in recorded
        )
        first = list(islice(rows, 4))
        missing_count = len(first) + sum(1 for _ in rows)
        missing = [values.value(r) for r in first]
        held = sum(1 for k in values.slot_rows if k >= 0)
    else:
        missing = [i.value for i in values if i.slot is not None and i.value.id not in recorded]
        missing_count = len(missing)
        held = sum(1 for i in values if i.slot is not None)
    if not missing:
        return
    if isinstance(table, UsedValues):
        try:
            # A record whose head is damaged is not indexed, but its lines are there
            # (each record has one ' positions:' line): it is reported when read.
            if table.count_text("\n positions:") > len(table):
                return
        except OSError:
            return
    shown = ", ".join(str(v) for v in missing[:3]) + (" ..." if missing_count > 3 else "")
    message = (
        f"the 'Used values' records cover {held - missing_count} of the {held} values the "
        f"allocations hold; {missing_count} have none ({shown}), so their instruction, "
        "op_name and uses are not shown"
    )
    line = 0
    if isinstance(table, UsedValues) and last:
        try:
            line = table.line_at_end()
        except OSError:  # the file changed since: said where its records are read
            line = 0
    diagnostics.append(Diagnostic(path, line, ("truncated: " if last else "") + message, "warning"))


def _backwards(path: str, live: HloLiveRange, diagnostics: list[Diagnostic]) -> None:
    """A live range whose end is before its start."""
    buffers = live.buffers
    if not any(map(gt, buffers.starts, buffers.ends)):
        return
    found = [
        Diagnostic(
            path,
            buffers.lines[k],
            f"the live range of {buffers.names[k]}{_index(buffers.shape_indexes[k])} ends "
            f"(step {buffers.ends[k]}) before it starts (step {buffers.starts[k]}): it "
            "counts at no step",
            "error",
        )
        for k in compress(range(len(buffers)), map(gt, buffers.starts, buffers.ends))
    ]
    _add(diagnostics, found, path, "live ranges that end before they start")


def _peak_list(
    path: str, live: HloLiveRange, analysis: Analysis, diagnostics: list[Diagnostic]
) -> None:
    """XLA's peak list against the live ranges at its step: an entry for a value with
    no live range; fewer (or more) entries than values live there."""
    peak = live.peak
    if peak is None:
        return
    entries = peak.entries
    listed_names = set(entries.names)
    known = listed_names.intersection(live.buffers.names)  # one pass, in C
    unknown = [
        Diagnostic(
            path,
            entries.lines[k],
            f"XLA's peak list names {entries.names[k]}, which has no live range "
            "('BufferLiveRange:')",
            "error",
        )
        for k in range(len(entries))
        if entries.names[k] not in known
    ]
    _add(diagnostics, unknown, path, "peak-list entries with no live range")
    if peak.time != analysis.peak_step or unknown:
        return  # said already: a peak at another step, or entries of no value
    listed, live_there = len(entries), len(analysis.peak_values)
    if listed == live_there:
        return
    cut = listed < live_there and live.stack_trace is None
    total = f"{human_bytes(analysis.peak_bytes)} ({analysis.peak_bytes} bytes)"
    message = (
        f"XLA's peak list at step {peak.time} names {listed} values, but the live ranges "
        f"have {live_there} live there (XLA lists every one), so its sum, {total}, is "
        "not XLA's peak"
    )
    line = entries.lines[-1] if listed else peak.line
    diagnostics.append(Diagnostic(path, line, ("truncated: " if cut else "") + message, "warning"))


def _said(diagnostics: list[Diagnostic], path: str) -> bool:
    """Whether ``path`` has a line reported already (an error), or was found cut short:
    what disagrees then follows from it, and is not said again."""
    return any(
        d.path == path and (d.severity == "error" or d.message.startswith("truncated:"))
        for d in diagnostics
    )


def _value_id(info: ValueInfo) -> int:
    return info.value.id


def _index(index: tuple[int, ...]) -> str:
    return "{" + ",".join(map(str, index)) + "}"


def _add(diagnostics: list[Diagnostic], found: list[Diagnostic], path: str, what: str) -> None:
    """``found``, the first :data:`_LISTED` of them, and a line for the rest."""
    diagnostics.extend(found[:_LISTED])
    if len(found) > _LISTED:
        diagnostics.append(
            Diagnostic(path, 0, f"{len(found) - _LISTED} more {what} (not listed)", "error")
        )
