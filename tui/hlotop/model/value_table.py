"""Every value of a module joined across its sections, as columns
(:class:`ValueTable`), and one value of it (:class:`ValueInfo`), made when read.

A dump of 10^6 small allocations has a value an allocation: a joined value object,
and the live-range object made for it, took 280 bytes a value for the whole run. Here
a value is a row of numbers: the row of its value line (:class:`~hlotop.model.
allocation_table.ValueSlots`), the row of its live range (:class:`~hlotop.model.
LiveRanges`), its shape and its sizes. A :class:`ValueInfo` is a row's view, made
anew at each read and equal to the last; its value, slot and live range are made from
the columns when it is asked for them.
"""

from __future__ import annotations

from array import array
from collections.abc import Container, Iterable, Iterator, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any, overload

from hlotop.model.live_range import BufferLiveRange, LiveRanges
from hlotop.model.source import SourceFrame, StackFrameTable
from hlotop.model.values import HloValue, InstructionText, UsedValue, ValueSlot

if TYPE_CHECKING:
    from hlotop.model.allocation_table import ValueSlots


class _Values:
    """What a :class:`ValueInfo` reads its fields from, by row: ``value(r)``,
    ``slot(r)``, ``live(r)``, the columns ``shapes``, ``logical``, ``sweep`` and
    ``colors``, and ``records`` and ``frames``, the module's."""

    __slots__ = ()
    records: Any
    frames: StackFrameTable | None
    shapes: Sequence[str | None]
    logical: Sequence[int]
    sweep: Sequence[int]
    colors: Sequence[int]

    def value(self, r: int) -> HloValue:
        raise NotImplementedError

    def value_id(self, r: int) -> int:
        raise NotImplementedError

    def slot(self, r: int) -> ValueSlot | None:
        raise NotImplementedError

    def slot_size(self, r: int) -> int | None:
        raise NotImplementedError

    def live(self, r: int) -> BufferLiveRange | None:
        raise NotImplementedError

    def live_steps(self, r: int) -> tuple[int, int] | None:
        raise NotImplementedError


class _OneValue(_Values):
    """The fields of a value made on its own (``ValueInfo(value, slot, ...)``)."""

    __slots__ = (
        "_value",
        "_slot",
        "records",
        "_live",
        "shapes",
        "logical",
        "sweep",
        "colors",
        "frames",
    )

    shapes: list[str | None]
    logical: list[int]
    sweep: list[int]
    colors: list[int]

    def __init__(self, value, slot, records, live, shape, logical, sweep, color, frames):
        self._value, self._slot, self.records, self._live = value, slot, records, live
        self.shapes, self.logical, self.sweep, self.colors = [shape], [logical], [sweep], [color]
        self.frames = frames

    def value(self, r: int) -> HloValue:
        return self._value

    def value_id(self, r: int) -> int:
        return self._value.id

    def slot(self, r: int) -> ValueSlot | None:
        return self._slot

    def slot_size(self, r: int) -> int | None:
        return None if self._slot is None else self._slot.size

    def live(self, r: int) -> BufferLiveRange | None:
        return self._live

    def live_steps(self, r: int) -> tuple[int, int] | None:
        live = self._live
        return None if live is None else (live.start, live.end)


class ValueInfo:
    """Everything the dump says about one value, joined across its sections: its
    ``value`` (:class:`HloValue`), ``slot`` (its value line; None if no allocation line
    names it), ``records`` (the module's ``Used values``, looked up by value id),
    ``live`` (its live range, or None), ``shape`` (its own, with layout),
    ``logical_bytes`` (``ByteSizeOf`` its shape: tiling padding ignored),
    ``sweep_bytes`` (``ByteSizeOf`` its defining instruction's shape: XLA's peak sweep
    size), ``color`` (memory space) and ``frames`` (the module's stack frames, jax >=
    0.9). Made on its own from those fields, or as row ``r`` of a
    :class:`ValueTable` (:meth:`at`); read-only. Equal when the fields are."""

    __slots__ = ("_t", "_r")
    _t: _Values
    _r: int

    def __init__(
        self,
        value: HloValue,
        slot: ValueSlot | None = None,
        records: Any = None,
        live: BufferLiveRange | None = None,
        shape: str | None = None,
        logical_bytes: int = 0,
        sweep_bytes: int = 0,
        color: int = 0,
        frames: StackFrameTable | None = None,
    ):
        self._t = _OneValue(
            value, slot, records, live, shape, logical_bytes, sweep_bytes, color, frames
        )
        self._r = 0

    @classmethod
    def at(cls, table: _Values, r: int) -> ValueInfo:
        """Row ``r`` of ``table``."""
        info = object.__new__(cls)
        info._t, info._r = table, r
        return info

    # Each field read from the table's row. A value made on its own can have its
    # fields set (a test builds one so); a table's row is read-only.

    @property
    def value(self) -> HloValue:
        return self._t.value(self._r)

    @value.setter
    def value(self, value: HloValue) -> None:
        self._own()._value = value

    @property
    def value_id(self) -> int:
        """``value.id``, read from its column: no :class:`HloValue` made (a sort of
        70 000 values by id takes 10 ms this way, 150 ms through ``value``)."""
        return self._t.value_id(self._r)

    @property
    def slot(self) -> ValueSlot | None:
        """Where it lives; None if no allocation line names it."""
        return self._t.slot(self._r)

    @slot.setter
    def slot(self, slot: ValueSlot | None) -> None:
        self._own()._slot = slot

    @property
    def records(self) -> Any:
        return self._t.records

    @records.setter
    def records(self, records: Any) -> None:
        self._own().records = records

    @property
    def live(self) -> BufferLiveRange | None:
        return self._t.live(self._r)

    @live.setter
    def live(self, live: BufferLiveRange | None) -> None:
        self._own()._live = live

    @property
    def shape(self) -> str | None:
        return self._t.shapes[self._r]

    @shape.setter
    def shape(self, shape: str | None) -> None:
        self._own().shapes[0] = shape

    @property
    def logical_bytes(self) -> int:
        return self._t.logical[self._r]

    @logical_bytes.setter
    def logical_bytes(self, logical: int) -> None:
        self._own().logical[0] = logical

    @property
    def sweep_bytes(self) -> int:
        return self._t.sweep[self._r]

    @sweep_bytes.setter
    def sweep_bytes(self, sweep: int) -> None:
        self._own().sweep[0] = sweep

    @property
    def color(self) -> int:
        return self._t.colors[self._r]

    @color.setter
    def color(self, color: int) -> None:
        self._own().colors[0] = color

    @property
    def frames(self) -> StackFrameTable | None:
        return self._t.frames

    @frames.setter
    def frames(self, frames: StackFrameTable | None) -> None:
        self._own().frames = frames

    def _own(self) -> _OneValue:
        """The fields of a value made on its own. Raises AttributeError for a table's
        row."""
        own = self._t
        if not isinstance(own, _OneValue):
            raise AttributeError("a value of a ValueTable is read-only")
        return own

    @property
    def used(self) -> UsedValue | None:
        """The value's ``Used values`` record, parsed on first use; None if it has none."""
        records = self._t.records
        return records.get(self.value.id) if records is not None else None

    @property
    def allocated_bytes(self) -> int:
        """Bytes the value takes in its allocation (with padding); logical if unknown."""
        size = self._t.slot_size(self._r)
        return size if size is not None else self._t.logical[self._r]

    @property
    def padding_bytes(self) -> int:
        return max(0, self.allocated_bytes - self.logical_bytes)

    @property
    def op_name(self) -> str | None:
        used = self.used
        instr = used.instruction if used else None
        return instr.op_name if instr else None

    @property
    def source(self) -> str | None:
        """``file:line`` of the Python source that made the value (:func:`source_of`
        its defining instruction). None if it is not known."""
        used = self.used
        return source_of(used.instruction if used else None, self._t.frames)

    @property
    def stack(self) -> tuple[SourceFrame, ...]:
        """The Python stack that made the value, innermost first (:func:`stack_of` its
        defining instruction); () when unknown."""
        used = self.used
        return stack_of(used.instruction if used else None, self._t.frames)

    def is_live_at(self, step: int) -> bool:
        steps = self._t.live_steps(self._r)
        return steps is not None and steps[0] <= step <= steps[1]

    def _fields(self) -> tuple:
        return (
            self.value,
            self.slot,
            self.records,
            self.live,
            self.shape,
            self.logical_bytes,
            self.sweep_bytes,
            self.color,
            self.frames,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ValueInfo):
            return NotImplemented
        if self._t is other._t and self._r == other._r:
            return True
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # as a mutable dataclass: unhashable

    def __repr__(self) -> str:
        names = "value slot records live shape logical_bytes sweep_bytes color frames".split()
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(names, self._fields(), strict=True))
        return f"ValueInfo({inner})"


def stack_of(
    instr: InstructionText | None, frames: StackFrameTable | None
) -> tuple[SourceFrame, ...]:
    """The Python stack that made ``instr``, innermost first: its ``stack_frame_id``
    resolved through the module's stack ``frames`` (jax >= 0.9 dumps whose module text
    is beside them); () when either is missing."""
    if instr is None or instr.stack_frame_id is None or frames is None:
        return ()
    return frames.stack(instr.stack_frame_id)


def source_of(instr: InstructionText | None, frames: StackFrameTable | None) -> str | None:
    """``file:line`` of the Python source that made ``instr``: its metadata's
    ``source_file``/``source_line``, or (jax >= 0.9) the innermost frame of
    :func:`stack_of`. None if neither is known."""
    if instr is None:
        return None
    if instr.source_file:
        if instr.source_line:
            return f"{instr.source_file}:{instr.source_line}"
        return instr.source_file
    stack = stack_of(instr, frames)
    return f"{stack[0].file}:{stack[0].line}" if stack else None


class ValueTable(_Values, Sequence[ValueInfo]):
    """A module's values sorted by id, as columns, one row a value: ``ids``;
    ``slot_rows`` (its row of ``slots``, the module's value lines; -1: none) and
    ``live_rows`` (its row of ``ranges``, the live ranges; -1: none); ``shapes`` (its
    own shape, with layout, or None), ``logical`` and ``sweep`` (bytes) and ``colors``;
    ``heads``: the value of each row that has no value line (row -> :class:`HloValue`:
    a record's head, or a value only the live ranges name, of a negative id).
    ``records`` and ``frames`` are the module's. Item ``r`` is a new
    :class:`ValueInfo` each time it is read."""

    __slots__ = (
        "ids",
        "slot_rows",
        "live_rows",
        "shapes",
        "logical",
        "sweep",
        "colors",
        "heads",
        "slots",
        "ranges",
        "records",
        "frames",
    )

    def __init__(
        self,
        ids: array[int],
        slot_rows: array[int],
        live_rows: array[int],
        shapes: list[str | None],
        logical: array[int],
        sweep: array[int],
        colors: array[int],
        heads: dict[int, HloValue],
        slots: ValueSlots | None,
        ranges: LiveRanges | None,
        records: Any,
        frames: StackFrameTable | None,
    ):
        self.ids, self.slot_rows, self.live_rows, self.shapes = ids, slot_rows, live_rows, shapes
        self.logical, self.sweep, self.colors, self.heads = logical, sweep, colors, heads
        self.slots, self.ranges, self.records, self.frames = slots, ranges, records, frames

    @classmethod
    def empty(cls) -> ValueTable:
        """A table of no value."""
        return cls(
            array("q"), array("q"), array("q"), [], array("q"), array("q"), array("q"), {},
            None, None, None, None,
        )  # fmt: skip

    def value_id(self, r: int) -> int:
        return self.ids[r]

    def value(self, r: int) -> HloValue:
        head = self.heads.get(r)
        if head is not None:
            return head
        assert self.slots is not None
        return self.slots.value(self.slot_rows[r])

    def name(self, r: int) -> str:
        """Row ``r``'s value's instruction name (no object made)."""
        k = self.slot_rows[r]
        if k < 0 or self.slots is None:
            return self.heads[r].name
        return self.slots.names[k]

    def shape_index(self, r: int) -> tuple[int, ...] | None:
        """Row ``r``'s value's ShapeIndex (no object made)."""
        k = self.slot_rows[r]
        if k < 0 or self.slots is None:
            return self.heads[r].shape_index
        return self.slots.shape_indexes[k]

    def names(self) -> list[str]:
        """Each row's instruction name (no object made)."""
        if self.heads or self.slots is None:
            return [self.name(r) for r in range(len(self.ids))]
        return list(map(self.slots.names.__getitem__, self.slot_rows))

    def shape_indexes(self) -> list[tuple[int, ...] | None]:
        """Each row's ShapeIndex (no object made)."""
        if self.heads or self.slots is None:
            return [self.shape_index(r) for r in range(len(self.ids))]
        return list(map(self.slots.shape_indexes.__getitem__, self.slot_rows))

    def slot_allocations(self) -> list[int | None]:
        """Each row's allocation index (None: no allocation line names the value), as
        ``slot.allocation`` gives it (no object made)."""
        if self.slots is None:
            return [None] * len(self.ids)
        allocations = self.slots.allocations
        return [None if k < 0 else allocations[k] for k in self.slot_rows]

    def slot(self, r: int) -> ValueSlot | None:
        k = self.slot_rows[r]
        if k < 0 or self.slots is None:
            return None
        return self.slots[k]

    def slot_size(self, r: int) -> int | None:
        k = self.slot_rows[r]
        if k < 0 or self.slots is None:
            return None
        return self.slots.sizes[k]

    def live(self, r: int) -> BufferLiveRange | None:
        k = self.live_rows[r]
        if k < 0 or self.ranges is None:
            return None
        return self.ranges.row(k)

    def live_steps(self, r: int) -> tuple[int, int] | None:
        k = self.live_rows[r]
        if k < 0 or self.ranges is None:
            return None
        return self.ranges.starts[k], self.ranges.ends[k]

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, r: int) -> ValueInfo: ...
    @overload
    def __getitem__(self, r: slice) -> list[ValueInfo]: ...
    def __getitem__(self, r: int | slice) -> ValueInfo | list[ValueInfo]:
        if isinstance(r, slice):
            return [ValueInfo.at(self, i) for i in range(*r.indices(len(self.ids)))]
        if r < 0:
            r += len(self.ids)
        if not 0 <= r < len(self.ids):
            raise IndexError("value row out of range")
        return ValueInfo.at(self, r)

    def __iter__(self) -> Iterator[ValueInfo]:
        at = ValueInfo.at
        return (at(self, r) for r in range(len(self.ids)))

    def rows(self, rows: Iterable[int]) -> list[ValueInfo]:
        """The values of ``rows``, in that order."""
        at = ValueInfo.at
        return [at(self, r) for r in rows]

    def __eq__(self, other: object) -> bool:
        return _same_values(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ValueTable({list(self)!r})"


class ValueRows(Sequence[ValueInfo]):
    """The values of ``table`` at ``rows`` (an ``array("q")`` of its rows), in that
    order, each made when read: a list of 10^6 of them would hold an object each."""

    __slots__ = ("table", "rows")

    def __init__(self, table: ValueTable, rows: array[int]):
        self.table, self.rows = table, rows

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, k: int) -> ValueInfo: ...
    @overload
    def __getitem__(self, k: slice) -> list[ValueInfo]: ...
    def __getitem__(self, k: int | slice) -> ValueInfo | list[ValueInfo]:
        if isinstance(k, slice):
            return self.table.rows(self.rows[k])
        return ValueInfo.at(self.table, self.rows[k])

    def __iter__(self) -> Iterator[ValueInfo]:
        at, table = ValueInfo.at, self.table
        return (at(table, r) for r in self.rows)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ValueRows) and other.table is self.table:
            return self.rows == other.rows
        return _same_values(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ValueRows({list(self)!r})"


def _same_values(values: Sequence[ValueInfo], other: object) -> bool:
    """``==`` of a table or its rows with another sequence of values: the same values
    in the same order (NotImplemented for anything else)."""
    if isinstance(other, (ValueTable, ValueRows, list, tuple)):
        return len(values) == len(other) and all(a == b for a, b in zip(values, other, strict=True))
    return NotImplemented


def rows_of(infos: Sequence[ValueInfo]) -> tuple[ValueTable, Sequence[int]] | None:
    """``(table, rows)`` when every value of ``infos`` is a row of one
    :class:`ValueTable` (the table itself: every row), for a pass over its columns;
    None otherwise (values made on their own, or of several tables)."""
    if isinstance(infos, ValueTable):
        return infos, range(len(infos))
    if isinstance(infos, ValueRows):
        return infos.table, infos.rows
    table: ValueTable | None = None
    rows = array("q")
    for info in infos:
        t = info._t
        if table is None:
            if not isinstance(t, ValueTable):
                return None
            table = t
        elif t is not table:
            return None
        rows.append(info._r)
    if table is None:
        return None
    return table, rows


def _columns(values: Sequence[ValueInfo]) -> tuple[ValueTable, Sequence[int]] | None:
    """``(table, rows)`` of a table or a table's rows, without a pass over them; None
    for any other sequence."""
    if isinstance(values, (ValueTable, ValueRows)):
        return rows_of(values)
    return None


def value_ids(values: Sequence[ValueInfo]) -> array[int]:
    """The value id of each of ``values``, in their order: from the id column for a
    table or its rows (no value made), else read from each."""
    found = _columns(values)
    if found is not None:
        table, rows = found
        return array("q", map(table.ids.__getitem__, rows))
    return array("q", [v.value_id for v in values])


def keeping(values: Sequence[ValueInfo], ids: Container[int]) -> Sequence[ValueInfo]:
    """Those of ``values`` whose id is in ``ids``, in their order: a table's rows
    (:class:`ValueRows`) from the id column for a table or its rows (no value made:
    a filtered timeline of 50 000 values made each to read its id, 35 ms a key), else a
    list."""
    found = _columns(values)
    if found is not None:
        table, rows = found
        kept = map(ids.__contains__, map(table.ids.__getitem__, rows))
        return ValueRows(table, array("q", compress(rows, kept)))
    return [v for v in values if v.value_id in ids]


def sorted_by_id_rank(
    values: Iterable[ValueInfo], rank: Sequence[int], low: int
) -> Sequence[ValueInfo]:
    """``values`` ordered by ``rank[value_id - low]``: for a table or its rows a sort
    of row numbers by the id column (:class:`ValueRows`, no value made), else a list."""
    found = _columns(values) if isinstance(values, Sequence) else None
    if found is not None:
        table, rows = found
        ids = table.ids
        return ValueRows(table, array("q", sorted(rows, key=lambda r: rank[ids[r] - low])))
    return sorted(values, key=lambda v: rank[v.value_id - low])
