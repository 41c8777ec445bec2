"""Everything the dump says about each value, joined across its sections (allocation
value lines, ``Used values`` records, live ranges), and each value's sizes in bytes:
logical (``ShapeUtil::ByteSizeOf`` of its shape, padding ignored), allocated (its
slot, padding included) and the size XLA's peak sweep gives it (its defining
instruction's shape)."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable
from itertools import islice, repeat
from operator import lt

from hlotop.analysis.padding import padding_of_columns
from hlotop.model import (
    AllocationTable,
    Diagnostic,
    HloLiveRange,
    HloValue,
    LiveRanges,
    ParsedSections,
    ShapeIndex,
    UsedValue,
    UsedValues,
    ValueTable,
    format_shape_index,
    shape_of,
)
from hlotop.shapes import POINTER_BYTES, subshape


def instruction_shapes(
    used_values: Iterable[UsedValue], names: set[str] | None = None
) -> dict[str, str]:
    """Map instruction name -> its whole shape text, from the from-instruction lines
    (only for the instructions in ``names``, when given: each parse has a cost)."""
    out: dict[str, str] = {}
    for record in used_values:
        vname = record.value.name
        if (
            vname in out
            or record.instruction_text is None
            or (names is not None and vname not in names)
        ):
            continue
        instr = record.instruction
        if instr is not None and instr.shape:
            out[vname] = instr.shape
    return out


def _logical(shape_text: str | None, index: ShapeIndex = ()) -> int | None:
    if not shape_text:
        return None
    shape = shape_of(shape_text)
    if shape is None:
        return None
    sub = subshape(shape, index)
    return sub.logical_bytes() if sub is not None else None


def _memory_space(shape_text: str | None) -> int | None:
    shape = shape_of(shape_text) if shape_text else None
    return shape.memory_space if shape is not None else None


def join_values(
    sections: ParsedSections, diagnostics: list[Diagnostic] | None = None, path: str = ""
) -> ValueTable:
    """Join allocation value lines, Used-values records and live ranges by value.

    Values are matched by id across allocations and records, and by
    (instruction name, ShapeIndex) with the live ranges. A live range that matches no
    value becomes a synthetic value with a negative id. Returns the values sorted by
    id, a :class:`~hlotop.model.ValueTable` (a sequence of ValueInfo). Problems are
    appended to ``diagnostics`` (if given) as warnings.
    """
    return ValuesBeforeLiveRanges(sections).join(sections.live_range, diagnostics, path)


def _increasing(ids: array[int]) -> bool:
    """Whether ``ids`` are in strictly increasing order (each once)."""
    return all(map(lt, ids, islice(ids, 1, None)))


class ValuesBeforeLiveRanges:
    """The first half of :func:`join_values`, which needs no live ranges: every value
    of the allocation lines and the records, each sized (logical and sweep bytes) and
    coloured, as columns in the order they were found (a value line's, then a
    record's without one). A loader that reads the live ranges on another core makes
    it while it waits for them, then calls :meth:`join` once.

    ``sections``: the allocations, the ``Used values`` records and the stack frames
    (its live ranges are not read here). Raises nothing."""

    def __init__(self, sections: ParsedSections):
        self.stack_frames = sections.stack_frames
        table = sections.used_values
        records: UsedValues[str] | UsedValues[bytes] | dict[int, UsedValue]
        if isinstance(table, UsedValues):
            records = table
        else:
            records = {r.value.id: r for r in table}
        self.records = records
        allocations = AllocationTable.of(sections.allocations)
        self.allocations = allocations
        self.slots = slots = allocations.slots
        # The rows, in the order the values are found: each value's id, its value line
        # (-1: none; the last, for an id listed twice) or else its value (heads).
        self.ids = ids = array("q")
        self.slot_rows = slot_rows = array("q")
        self.heads: dict[int, HloValue] = {}
        n = len(slots)
        if _increasing(slots.ids):  # as a dump of one value an allocation prints them
            ids.extend(slots.ids)
            slot_rows.extend(range(n))
            self._row_of: dict[int, int] | None = None  # the id's row: bisect ids[:n]
        else:
            row_of: dict[int, int]
            self._row_of = row_of = {}  # value id -> its row
            for k, vid in enumerate(slots.ids):
                r = row_of.get(vid)
                if r is None:
                    row_of[vid] = len(ids)
                    ids.append(vid)
                    slot_rows.append(k)
                else:
                    slot_rows[r] = k
        self._found = len(ids)  # rows of value lines
        if isinstance(records, UsedValues):
            record_ids = records.ids
            if not (self._row_of is None and record_ids == slots.ids):
                for number, vid in enumerate(record_ids):
                    if self.row(vid) is None:  # a record but no allocation line
                        self._add_head(vid, records.head(number))
        else:
            for vid, record in records.items():
                if self.row(vid) is None:
                    self._add_head(vid, record.value)
        self._size_all(allocations)
        self._joined = False

    def row(self, value_id: int) -> int | None:
        """The row of the value of ``value_id``, None if there is none yet."""
        row_of = self._row_of
        if row_of is not None:
            return row_of.get(value_id)
        ids, found = self.ids, self._found
        r = bisect_left(ids, value_id, 0, found)
        if r < found and ids[r] == value_id:
            return r
        extra = self._extra_rows
        return extra.get(value_id) if extra else None

    _extra_rows: dict[int, int] | None = None

    def _add_head(self, value_id: int, value: HloValue) -> int:
        """A row for a value with no value line: ``value``."""
        r = len(self.ids)
        self.ids.append(value_id)
        self.slot_rows.append(-1)
        self.heads[r] = value
        if self._row_of is not None:
            self._row_of[value_id] = r
        else:
            if self._extra_rows is None:
                self._extra_rows = {}
            self._extra_rows[value_id] = r
        return r

    def _value_of(self, r: int) -> tuple[str, ShapeIndex | None, int | None, int]:
        """Row ``r``'s value's name, ShapeIndex and colour (None: unprinted), and its
        value line's row (-1: none)."""
        k = self.slot_rows[r]
        if k < 0:
            v = self.heads[r]
            return v.name, v.shape_index, v.color, -1
        slots = self.slots
        color = slots.value_colors[k]
        return slots.names[k], slots.shape_indexes[k], None if color < 0 else color, k

    def _size_all(self, allocations: AllocationTable) -> None:
        """Each row's shape, logical and sweep bytes and colour."""
        slots, slot_rows, heads = self.slots, self.slot_rows, self.heads
        names, indexes, shapes_of_slot = slots.names, slots.shape_indexes, slots.shapes
        rows = len(self.ids)
        # The shape a value line gives each row (its own, with layout), else None.
        shapes: list[str | None] = [None] * rows
        for r in range(rows):
            k = slot_rows[r]
            if k >= 0:
                shapes[r] = shapes_of_slot[k]
        # The sweep needs the whole shape of tuple-shaped instructions: the value at {}
        # prints it; otherwise read it from the from-instruction text. Values with no
        # allocation line need their own shape from there too.
        shapes_of: dict[str, str] = {}
        for r in range(rows):
            k = slot_rows[r]
            index = indexes[k] if k >= 0 else heads[r].shape_index
            if index is not None and not index and shapes[r]:
                name = names[k] if k >= 0 else heads[r].name
                shapes_of.setdefault(name, shapes[r])  # type: ignore[arg-type]
        wanted: set[str] = set()
        for r in range(rows):
            k = slot_rows[r]
            index = indexes[k] if k >= 0 else heads[r].shape_index
            if index is not None or shapes[r] is None:
                name = names[k] if k >= 0 else heads[r].name
                if name not in shapes_of:
                    wanted.add(name)
        if wanted:
            records = self.records
            wanted_records = (
                records.get(self.ids[r])
                for r in range(rows)
                if (names[slot_rows[r]] if slot_rows[r] >= 0 else heads[r].name) in wanted
            )
            shapes_of.update(
                instruction_shapes((rec for rec in wanted_records if rec is not None), wanted)
            )
        # The colour of each value line's allocation (the value's, unless it prints one).
        colors_of_allocation = allocations.colors
        one_color = (
            colors_of_allocation[0]
            if colors_of_allocation
            and colors_of_allocation.count(colors_of_allocation[0]) == len(colors_of_allocation)
            else None
        )
        if one_color is None:
            slot_colors = array("q")
            firsts = allocations.firsts
            for a, color in enumerate(colors_of_allocation):
                slot_colors.extend(repeat(color, firsts[a + 1] - firsts[a]))
        logical_of = _LogicalBytes()
        logical = array("q", bytes(8 * rows))
        sweep = array("q", bytes(8 * rows))
        colors = array("q", bytes(8 * rows))
        value_colors = slots.value_colors
        for r in range(rows):
            k = slot_rows[r]
            text = shapes[r]
            if k >= 0 and text is not None and indexes[k] is None:
                # The common case of _size_value, inlined: a value line gives the shape
                # of a value that is its instruction's whole output.
                logical[r] = sweep[r] = logical_of[text] or 0
                color = value_colors[k]
                colors[r] = (
                    color
                    if color >= 0
                    else (one_color if one_color is not None else slot_colors[k])
                )
            else:
                name, index, value_color, k = self._value_of(r)
                shape, logical[r], sweep[r], color = _size_value(
                    name, index, value_color, text, shapes_of, logical_of
                )
                shapes[r] = shape
                if value_color is None and k >= 0:
                    color = one_color if one_color is not None else slot_colors[k]
                colors[r] = color
        self.shapes, self.logical, self.sweep, self.colors = shapes, logical, sweep, colors
        self._shapes_of, self._logical_of = shapes_of, logical_of

    def padding(self) -> dict[int, int]:
        """:func:`~hlotop.analysis.padding.padding_by_color` of these values."""
        return padding_of_columns(self.slot_rows, self.logical, self.slots, self.allocations)

    def join(
        self, live: HloLiveRange | None, diagnostics: list[Diagnostic] | None = None, path: str = ""
    ) -> ValueTable:
        """Join the live ranges ``live`` to the values (once: this object is spent after
        it), as :func:`join_values` does. Returns the values sorted by id (a
        :class:`~hlotop.model.ValueTable`). Raises RuntimeError if called a second
        time."""
        if self._joined:
            raise RuntimeError("the values were joined to live ranges already")
        self._joined = True
        ids, slot_rows, heads = self.ids, self.slot_rows, self.heads
        slots = self.slots
        names, indexes = slots.names, slots.shape_indexes
        # Values are joined with live ranges by (name, ShapeIndex), and a value that is
        # its instruction's whole output (most) by its name alone, with no key to build.
        whole: dict[str, int] = {}  # name -> the row of the value at ShapeIndex {}
        by_key: dict[tuple[str, ShapeIndex], int] = {}  # the others
        for r in range(len(ids)):
            k = slot_rows[r]
            if k >= 0:
                name, index = names[k], indexes[k]
            else:
                head = heads[r]
                name, index = head.name, head.shape_index
            if not index:
                whole[name] = r
            else:
                by_key[name, index] = r
        live_rows = array("q", repeat(-1, len(ids)))
        next_synthetic = -1
        buffers = live.buffers if live else None
        if buffers is not None:
            range_names, range_indexes = buffers.names, buffers.shape_indexes
            for k in range(len(range_names)):
                name, index = range_names[k], range_indexes[k]
                r = by_key.get((name, index)) if index else whole.get(name)  # type: ignore[assignment]
                if r is None:
                    r = self._add_synthetic(next_synthetic, name, index or None)
                    live_rows.append(-1)
                    if index:
                        by_key[name, index] = r
                    else:
                        whole[name] = r
                    next_synthetic -= 1
                live_rows[r] = k
        del whole, by_key
        shapes, sweep = self.shapes, self.sweep
        missing_sizes = [
            r for r in range(len(ids)) if live_rows[r] >= 0 and sweep[r] == 0 and shapes[r] is None
        ]
        if missing_sizes and diagnostics is not None:
            labels = [self._label(r) for r in missing_sizes[:5]]
            shown = ", ".join(labels) + (" ..." if len(missing_sizes) > 5 else "")
            diagnostics.append(
                Diagnostic(
                    path,
                    0,
                    f"no shape known for {len(missing_sizes)} "
                    f"live value(s) ({shown}); they count 0 bytes",
                    "warning",
                )
            )
        return self._table(live_rows, buffers)

    def _label(self, r: int) -> str:
        name, index, _, _ = self._value_of(r)
        return name + format_shape_index(index)

    def _add_synthetic(self, value_id: int, name: str, index: ShapeIndex | None) -> int:
        """A row for a value only the live ranges name (of id ``value_id``), sized."""
        r = self._add_head(value_id, HloValue(value_id, name, index))
        shape, logical, sweep, color = _size_value(
            name, index, None, None, self._shapes_of, self._logical_of
        )
        self.shapes.append(shape)
        self.logical.append(logical)
        self.sweep.append(sweep)
        self.colors.append(color)
        return r

    def _table(self, live_rows: array[int], ranges: LiveRanges | None) -> ValueTable:
        """The rows sorted by value id, as a table."""
        ids = self.ids
        heads = self.heads
        frames = self.stack_frames
        if _increasing(ids):
            return ValueTable(
                ids, self.slot_rows, live_rows, self.shapes, self.logical, self.sweep,
                self.colors, heads, self.slots, ranges, self.records, frames,
            )  # fmt: skip
        order = sorted(range(len(ids)), key=ids.__getitem__)
        at = {r: n for n, r in enumerate(order) if r in heads} if heads else {}
        return ValueTable(
            array("q", map(ids.__getitem__, order)),
            array("q", map(self.slot_rows.__getitem__, order)),
            array("q", map(live_rows.__getitem__, order)),
            list(map(self.shapes.__getitem__, order)),
            array("q", map(self.logical.__getitem__, order)),
            array("q", map(self.sweep.__getitem__, order)),
            array("q", map(self.colors.__getitem__, order)),
            {at[r]: value for r, value in heads.items()},
            self.slots,
            ranges,
            self.records,
            frames,
        )


class _LogicalBytes(dict):
    """Shape text (or None) -> :func:`_logical` of it, each text worked out once: a big
    dump repeats a few hundred shapes over 10^5 values."""

    def __missing__(self, text: str | None) -> int | None:
        self[text] = logical = _logical(text)
        return logical


def _size_value(
    name: str,
    index: ShapeIndex | None,
    value_color: int | None,
    shape: str | None,
    shapes_of: dict[str, str],
    logical_of: _LogicalBytes,
) -> tuple[str | None, int, int, int]:
    """A value's shape (its own, with layout), logical and sweep bytes and colour:
    the value of instruction ``name`` at ``index`` whose value line gives ``shape``
    (None: none does), of colour ``value_color`` (None: unprinted; then the colour of
    its shape's memory space, or 0: a caller with the value's allocation at hand uses
    the allocation's)."""
    instr_shape = shapes_of.get(name)
    if shape is None and instr_shape is not None:
        parsed = shape_of(instr_shape)
        sub = subshape(parsed, index or ()) if parsed is not None else None
        if sub is not None:
            shape = str(sub)
        logical = sub.logical_bytes() if sub is not None else 0
    else:
        logical = logical_of[shape] or 0
    if index is None:  # the defining instruction is not a tuple
        sweep = logical
    else:
        whole = logical_of[instr_shape]
        sweep = whole if whole is not None else POINTER_BYTES * ((index[0] + 1) if index else 1)
    color = value_color if value_color is not None else (_memory_space(shape) or 0)
    return shape, logical, sweep, color
