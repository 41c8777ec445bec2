"""Grammar of the ``BufferAssignment:`` section (``BufferAllocation::ToShortString`` and
``BufferAllocation::ToString``; FORMATS.md sections 3.2-3.3) and of the ``Total bytes
used`` line ``BufferAssignment::ToString`` prints after it."""

from __future__ import annotations

import sys
from typing import Any

from hlotop.model import AllocationTable, BufferAllocation, ValueSlot
from hlotop.parse.line_form import Field, LineForm, Lit, Opt, Part, Skip, flag
from hlotop.parse.tokens import VALUE_REF, Sink, byte_count_field, index_field, int_field
from hlotop.units import HUMAN_BYTES_RE, parse_human_bytes


def allocation_parts(size: Field) -> tuple[Part, ...]:
    """``allocation N: [0xPTR, ]size S[, attributes]:`` with the size read by ``size``
    (plain bytes in the dump, human-readable in the memory-usage report). The
    attributes come in the fixed order XLA prints them; each field is the
    :class:`~hlotop.model.BufferAllocation` field of the same name."""
    shape = r"[^|]*"
    return (
        Lit("allocation "),
        int_field("index", "an allocation index"),
        Lit(": "),
        Opt(
            Field("pointer", r"0x[0-9a-fA-F]+|\(nil\)|[0-9a-fA-F]+(?=, size)", "an address"),
            Lit(", "),
        ),
        Lit("size "),
        size,
        Opt(Lit(", page "), Field("page", r"\d+", "a page number", int)),
        Opt(Lit(", color "), Field("color", r"\d+", "a memory space (color)", int, 0)),
        Opt(
            Lit(", parameter "),
            int_field("parameter", "a parameter number"),
            Opt(Lit(", shape |"), Field("parameter_shape", shape, "a shape"), Lit("|")),
            Lit(" at ShapeIndex "),
            index_field("parameter_shape_index"),
        ),
        Opt(Lit(", output shape is |"), Field("output_shape", shape, "a shape"), Lit("|")),
        flag("is_constant", ", constant"),
        flag("is_thread_local", ", thread-local"),
        flag("maybe_live_out", ", maybe-live-out"),
        flag("is_preallocated_temp", ", preallocated-temp"),
        Lit(":"),
    )


# An allocation line, read as the BufferAllocation it heads (with its line number; its
# value slots are set when its block ends, or never: the first look at a big dump).
ALLOCATION_HEAD = LineForm(
    "allocation line",
    *allocation_parts(byte_count_field("size")),
    make=BufferAllocation,
    context=("line",),
)
REPORT_ALLOCATION_LINE = LineForm(
    "allocation line",
    *allocation_parts(
        Field(
            "size",
            HUMAN_BYTES_RE,
            "a size like 36.0KiB",
            parse_human_bytes,
        )
    ),
)

# " value: <id name @c> (size=S,offset=O): shape"
VALUE_LINE = LineForm(
    "value line",
    Lit(" value: "),
    VALUE_REF,
    Lit(" (size="),
    byte_count_field("size"),
    Lit(",offset="),
    byte_count_field("offset", "a byte offset"),
    Lit("): "),
    # Interned: a big dump repeats a few hundred shapes over 10^5 value lines.
    Field("shape", r".*", "a shape", sys.intern),
    make=ValueSlot,
    context=("allocation", "line"),
)

# Before 2019-09: "  <value text> [offset,size]: shape"
LEGACY_VALUE_LINE = LineForm(
    "value line (pre-2019)",
    Skip(r"\s+", "indentation"),
    VALUE_REF,
    Skip(r".*? \[", "' [' before the offset"),
    byte_count_field("offset", "a byte offset"),
    Lit(","),
    byte_count_field("size"),
    Lit("]: "),
    Field("shape", r".*", "a shape"),
    make=ValueSlot,
    context=("allocation", "line"),
)

REUSED_HEADER = " reused by buffers of a different color:"
# "  value: <id name @c> (color=N)", since 2026-06
REUSED_LINE = LineForm(
    "cross-color reuse line",
    Lit("  value: "),
    VALUE_REF,
    Lit(" (color="),
    int_field("color", "a memory space (color)"),
    Lit(")"),
    make=lambda value, color: (value, color),
)

TOTAL_PREFIX = "Total bytes used:"
# "Total bytes used: 917336 (895.8KiB)": BufferAssignment::ToString's line after the
# allocations, and the first line of an era-A memory-usage report; the size in
# parentheses since 2021-08-09 (FORMATS.md 11). The one definition of the line: the
# first look (hlotop.loading.preview) searches for its body.
TOTAL_LINE = LineForm(
    "'Total bytes used' line",
    Lit(TOTAL_PREFIX + " "),
    int_field("bytes", "a byte count"),
    Opt(
        Lit(" ("),
        Field("size", r"-?\d+(?:\.\d+)?[KMGTPE]?i?B", "'(size)' after the total"),
        Lit(")"),
    ),
)

_match_value = VALUE_LINE.pattern.match
# In the order ValueSlots.add_row takes them.
_add_value = VALUE_LINE.flat_builder(
    "id", "name", "shape_index", "is_phi", "color", "size", "offset", "shape", "allocation", "line"
)
_match_allocation = ALLOCATION_HEAD.pattern.match
# In the order AllocationTable.add_fields takes them.
_add_allocation = ALLOCATION_HEAD.flat_builder(
    "index", "size", "line", "page", "color", "parameter", "parameter_shape",
    "parameter_shape_index", "output_shape", "is_constant", "is_thread_local",
    "maybe_live_out", "is_preallocated_temp", "pointer",
)  # fmt: skip


class AllocationSection:
    """Reads allocation blocks line by line (a :class:`~hlotop.parse.section.Section`)
    into an :class:`~hlotop.model.AllocationTable`: each line's fields go into its
    columns, and no object is kept."""

    stage = "allocations"
    expects = "an allocation line 'allocation N: size S, ...:' or ' value: <...>'"

    def __init__(self, sink: Sink):
        self.sink = sink
        self.table = AllocationTable()
        # The index of the open allocation (its value lines follow it; its cross-colour
        # reuses are set when it closes), None if none is.
        self._head: int | None = None
        self._reused: list = []
        self._broken = False  # the current allocation line was reported as unreadable

    def _close(self) -> None:
        if self._head is not None:
            self.table.close(tuple(self._reused))
        self._head, self._reused = None, []

    def _opened(self, index: int) -> None:
        """The allocation just added to the table (of ``index``) is open now."""
        self._head, self._broken = index, False

    def take_run(self, lines: list[str], i: int, stop: int, first_line: int) -> int:
        """Read the ordinary allocation and value lines from ``lines[i]`` on (at most up
        to ``lines[stop]``), each by its one-match path; ``first_line`` is the 1-based
        line number of ``lines[0]``. Returns the index of the first line not taken
        (``i`` if none was), which goes through :meth:`feed` and the section reader's
        dispatch. Most lines of a big dump come here: one loop, no dispatch."""
        table = self.table
        add_row, add_fields, indexes = table.slots.adder(), table.add_fields, table.indexes
        current = self._head
        j = i
        while j < stop:
            line = lines[j]
            m = _match_value(line)
            if m is not None:
                if current is None:
                    break
                _add_value(m, add_row, current, first_line + j)
            else:
                m = _match_allocation(line)
                if m is None:
                    break
                self._close()
                _add_allocation(m, add_fields, first_line + j)
                current = indexes[-1]
                self._opened(current)
            j += 1
        return j

    def feed(self, line: str, lineno: int, next_line: str | None = None) -> bool:
        """Read one line (1-based ``lineno``) of ``BufferAssignment:``; True if it was an
        allocation-section line (read, or reported as unreadable), False if not ours."""
        sink = self.sink
        if line.startswith("allocation "):
            self._close()
            self._broken = True  # until it is read
            head = ALLOCATION_HEAD.read(sink, line, lineno, lineno)
            if head is not None:
                self.table.add(head)
                self._opened(head.index)
            return True
        if line.startswith(" value: "):
            self._add_slot(VALUE_LINE, line, lineno)
            return True
        if line == REUSED_HEADER:
            return True
        if line.startswith("  value: "):
            reused = REUSED_LINE.read(sink, line, lineno)
            if reused is not None and self._head is not None:
                self._reused.append(reused)
            return True
        if line.startswith("  <") and "]: " in line:
            self._add_slot(LEGACY_VALUE_LINE, line, lineno)
            return True
        return False

    def _add_slot(self, form: LineForm, line: str, lineno: int) -> None:
        current = self._head if self._head is not None else -1
        slot = form.read(self.sink, line, lineno, current, lineno)
        if slot is None:
            return
        if self._head is None:
            if not self._broken:  # else its allocation line was already reported
                self.sink.error(
                    lineno,
                    "value line outside an allocation: expected 'allocation N: size S:' before it",
                )
            return
        self.table.slots.add(slot)

    def finish(self) -> dict[str, Any]:
        """The allocations read, in dump order, and that the section was seen."""
        self._close()
        return {"allocations": self.table, "saw_buffer_assignment": True}
