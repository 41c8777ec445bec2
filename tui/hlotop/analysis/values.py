"""Everything the dump says about each value, joined across its sections (allocation
value lines, ``Used values`` records, live ranges), and each value's sizes in bytes:
logical (``ShapeUtil::ByteSizeOf`` of its shape, padding ignored), allocated (its
slot, padding included) and the size XLA's peak sweep gives it (its defining
instruction's shape)."""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, islice, repeat
from operator import is_, is_not, itemgetter, lt, or_
from typing import Any

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
    coloured, as columns: the values of value lines by id, then those of records
    without one. A loader that reads the live ranges on another core makes it while it
    waits for them, then calls :meth:`join` once.

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
        # The rows, in the order the values are found: those of the value lines (each
        # its last value line, for an id listed twice), then those with no value line
        # (heads: their value). Sorted by id once joined (_table).
        slot_ids = slots.ids
        n = len(slot_ids)
        known = set(slot_ids)
        if len(known) == n:  # each id once: the rows are the value lines
            self.ids = array("q", slot_ids)
            self.slot_rows = array("q", range(n))
            self._lines_are_rows = True
        else:
            last = dict(zip(slot_ids, range(n), strict=True))  # id -> its last value line
            self.ids = array("q", last)
            self.slot_rows = array("q", last.values())
            self._lines_are_rows = False
        self.heads: dict[int, HloValue] = {}
        if isinstance(records, UsedValues):
            record_ids = records.ids
            if record_ids != slot_ids and not known.issuperset(record_ids):
                for number, vid in enumerate(record_ids):
                    if vid not in known:  # a record but no allocation line
                        known.add(vid)
                        self._add_head(vid, records.head(number))
        else:
            for vid, record in records.items():
                if vid not in known:
                    known.add(vid)
                    self._add_head(vid, record.value)
        del known
        self._size_all(allocations)
        self._joined = False

    def _in_found_order(self) -> Sequence[int]:
        """The rows in the order their values were found: all of them (so made)."""
        return range(len(self.ids))

    def _add_head(self, value_id: int, value: HloValue) -> int:
        """A row for a value with no value line: ``value``."""
        r = len(self.ids)
        self.ids.append(value_id)
        self.slot_rows.append(-1)
        self.heads[r] = value
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

    def _of_rows(self, column: list) -> list:
        """``column`` (a column of the value lines) for each row, None for a head (a
        new list)."""
        if self._lines_are_rows:
            return column + [None] * (len(self.ids) - len(column))
        return [column[k] if k >= 0 else None for k in self.slot_rows]

    def _names_and_indexes(self) -> tuple[list[str], list[ShapeIndex | None]]:
        """Each row's value's name and ShapeIndex (made once, for the sizes and the
        join; let go once joined)."""
        made = self._made_names
        if made is not None and len(made[0]) == len(self.ids):
            return made
        names = self._of_rows(self.slots.names)
        indexes = self._of_rows(self.slots.shape_indexes)
        for r, v in self.heads.items():
            names[r], indexes[r] = v.name, v.shape_index
        self._made_names = (names, indexes)
        return names, indexes

    _made_names: tuple[list[str], list[ShapeIndex | None]] | None = None

    def _size_all(self, allocations: AllocationTable) -> None:
        """Each row's shape, logical and sweep bytes and colour."""
        slots, slot_rows = self.slots, self.slot_rows
        rows = len(self.ids)
        # The shape a value line gives each row (its own, with layout), else None.
        shapes: list[str | None] = self._of_rows(slots.shapes)
        names, indexes = self._names_and_indexes()
        # The sweep needs the whole shape of tuple-shaped instructions: the value at {}
        # prints it; otherwise read it from the from-instruction text. Values with no
        # allocation line need their own shape from there too.
        shapes_of: dict[str, str] = {}
        in_order = self._in_found_order() if () in indexes or None in shapes else None
        if () in indexes:
            assert in_order is not None
            for r in in_order:
                index, shape = indexes[r], shapes[r]
                if index is not None and not index and shape:
                    shapes_of.setdefault(names[r], shape)
        if None in shapes or indexes.count(None) != rows:
            wanted = {
                name
                for name, index, shape in zip(names, indexes, shapes, strict=True)
                if (index is not None or shape is None) and name not in shapes_of
            }
            if wanted:
                records, ids = self.records, self.ids
                wanted_records = (
                    records.get(ids[r])
                    for r in (in_order if in_order is not None else self._in_found_order())
                    if names[r] in wanted
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
            slot_colors = array("q", allocations.per_slot(colors_of_allocation))
        logical_of = _LogicalBytes()
        # The common case of _size_value, for every row at once: a value line gives the
        # shape of a value that is its instruction's whole output (its logical bytes
        # are its sweep bytes), and its colour is the value's, else its allocation's.
        logical = array("q", [b or 0 for b in map(logical_of.__getitem__, shapes)])
        sweep = array("q", logical)
        value_colors = slots.value_colors
        if value_colors and min(value_colors) >= 0 and not self.heads:
            colors = array("q", map(value_colors.__getitem__, slot_rows))
        else:
            colors = array("q", bytes(8 * rows))
            for r, k in enumerate(slot_rows):
                if k >= 0:
                    color = value_colors[k]
                    colors[r] = (
                        color
                        if color >= 0
                        else (one_color if one_color is not None else slot_colors[k])
                    )
        # The others, one by one.
        for r in compress(
            range(rows),
            map(or_, map(is_, shapes, repeat(None)), map(is_not, indexes, repeat(None))),
        ):
            name, index, value_color, k = self._value_of(r)
            shape, logical[r], sweep[r], color = _size_value(
                name, index, value_color, shapes[r], shapes_of, logical_of
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
        rows = len(self.ids)
        live_rows = array("q", repeat(-1, rows))
        buffers = live.buffers if live else None
        if buffers is not None and len(buffers):
            self._join(buffers, live_rows)
        self._missing_sizes(live_rows, diagnostics, path)
        return self._table(live_rows, buffers)

    def _join(self, buffers: LiveRanges, live_rows: array[int]) -> None:
        """Each live range's value's row set in ``live_rows`` (a value only the live
        ranges name made, with a negative id)."""
        names, indexes = self._names_and_indexes()
        self._made_names = None
        # Values are joined with live ranges by (name, ShapeIndex), and a value that is
        # its instruction's whole output (most) by its name alone, with no key to build.
        # (the last found of a name, or of a key)
        whole: dict[str, int]  # name -> the row of the value at ShapeIndex {} (or none)
        by_key: dict[tuple[str, ShapeIndex], int] = {}  # the others
        in_order = self._in_found_order()
        if not any(indexes):
            whole = dict(zip(map(names.__getitem__, in_order), in_order, strict=True))
        else:
            whole = {}
            for r in in_order:
                name, index = names[r], indexes[r]
                if not index:
                    whole[name] = r
                else:
                    by_key[name, index] = r
        del names, indexes
        range_names, range_indexes = buffers.names, buffers.shape_indexes
        if not any(range_indexes):
            found: Iterable[int | None] = map(whole.get, range_names)
        else:
            found = (
                by_key.get((name, index)) if index else whole.get(name)
                for name, index in zip(range_names, range_indexes, strict=True)
            )
        next_synthetic = -1
        for k, joined in enumerate(found):
            if joined is None:
                name, index = range_names[k], range_indexes[k]
                joined = self._add_synthetic(next_synthetic, name, index or None)
                live_rows.append(-1)
                if index:
                    by_key[name, index] = joined
                else:
                    whole[name] = joined
                next_synthetic -= 1
            live_rows[joined] = k

    def _missing_sizes(
        self, live_rows: array[int], diagnostics: list[Diagnostic] | None, path: str
    ) -> None:
        """Say which live values have no shape known (they count 0 bytes), in the order
        the values were found (the value lines', then the records', then the live
        ranges')."""
        shapes, sweep = self.shapes, self.sweep
        if diagnostics is None or 0 not in sweep or None not in shapes:
            return
        missing = [
            r
            for r in range(len(self.ids))
            if live_rows[r] >= 0 and sweep[r] == 0 and shapes[r] is None
        ]
        if not missing:
            return
        labels = [self._label(r) for r in missing[:5]]
        shown = ", ".join(labels) + (" ..." if len(missing) > 5 else "")
        diagnostics.append(
            Diagnostic(
                path,
                0,
                f"no shape known for {len(missing)} live value(s) ({shown}); they count 0 bytes",
                "warning",
            )
        )

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
        if _increasing(ids):  # as found (the value lines of one value an allocation)
            return ValueTable(
                ids, self.slot_rows, live_rows, self.shapes, self.logical, self.sweep,
                self.colors, heads, self.slots, ranges, self.records, frames,
            )  # fmt: skip
        order = sorted(range(len(ids)), key=ids.__getitem__)
        at = {r: n for n, r in enumerate(order) if r in heads} if heads else {}
        # each column's items at order, by one call into C
        gathered: Callable[[Sequence[Any]], Sequence[Any]] = (
            itemgetter(*order) if len(order) > 1 else (lambda c: [c[k] for k in order])
        )
        return ValueTable(
            array("q", gathered(ids)),
            array("q", gathered(self.slot_rows)),
            array("q", gathered(live_rows)),
            list(gathered(self.shapes)),
            array("q", gathered(self.logical)),
            array("q", gathered(self.sweep)),
            array("q", gathered(self.colors)),
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
