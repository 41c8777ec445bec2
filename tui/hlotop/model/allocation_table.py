"""A dump's allocations and their value lines as columns (``BufferAllocation::ToString``,
FORMATS.md 3.2-3.3), each a :class:`BufferAllocation` or :class:`ValueSlot` made when
it is read.

A dump of 10^6 small allocations has a value line an allocation: one allocation
object, its tuple of slots, a slot and its value, each with their ints, took 550 bytes
an allocation for the whole run, the most of ``--summary``'s memory. Here an
allocation is 7 numbers and a value line 8 numbers and two shared strings; the
figures are worked out over the columns (:mod:`hlotop.analysis`), and the objects are
made for whoever reads them (the browser's rows, ``--json``): a new one at each read,
equal to the last, never kept. The parser (:mod:`hlotop.parse.allocations`) fills the
columns; :meth:`AllocationTable.of` takes them from objects.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice, repeat
from operator import and_, itemgetter, sub, truth
from typing import Any, TypeVar, overload

from hlotop.model.allocation import BufferAllocation, kinds_text
from hlotop.model.values import HloValue, ShapeIndex, ValueSlot

# The flags of an allocation, one bit each in AllocationTable.flags.
CONSTANT, THREAD_LOCAL, MAYBE_LIVE_OUT, PREALLOCATED_TEMP = 1, 2, 4, 8
_NO_EXTRA = (None, None, None, None, None)
T = TypeVar("T")
_BATCH = 4096  # allocations made at once by a pass over every one (their columns' parts)


class _TableRows(Sequence[T]):
    """Row access shared by the column tables: a subclass says how many rows there are
    (``__len__``), how one row is read (``_row``) and how a run of rows is made at once
    (``iterate``); indexing, slicing and a pass over every row (a batch at a time) come
    from those."""

    __slots__ = ()
    _WHAT = "row"  # what a row is, in the IndexError

    def __len__(self) -> int:
        raise NotImplementedError

    def _row(self, k: int) -> T:
        raise NotImplementedError

    def iterate(self, start: int, stop: int) -> Iterator[T]:
        raise NotImplementedError

    @overload
    def __getitem__(self, k: int) -> T: ...
    @overload
    def __getitem__(self, k: slice) -> list[T]: ...
    def __getitem__(self, k: int | slice) -> T | list[T]:
        if isinstance(k, slice):
            return [self._row(i) for i in range(*k.indices(len(self)))]
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(f"{self._WHAT} index out of range")
        return self._row(k)

    def __iter__(self) -> Iterator[T]:
        n = len(self)
        return chain.from_iterable(
            self.iterate(at, min(at + _BATCH, n)) for at in range(0, n, _BATCH)
        )


class ValueSlots(_TableRows[ValueSlot]):
    """Every value line of a dump's allocations, in dump order, as columns: the value's
    ``ids``, ``names`` (interned), ``shape_indexes`` (a tuple or None each; equal ones
    shared), ``phis`` (1: ``(phi)``) and ``value_colors`` (-1: none printed); the slot's
    ``allocations`` (the allocation's index), ``offsets`` and ``sizes`` (bytes),
    ``shapes`` (interned) and ``lines`` (1-based). Row ``k`` is a new
    :class:`ValueSlot` each time it is read."""

    _WHAT = "value line"
    __slots__ = (
        "ids",
        "names",
        "shape_indexes",
        "phis",
        "value_colors",
        "allocations",
        "offsets",
        "sizes",
        "shapes",
        "lines",
        "_indexes",
    )

    def __init__(self) -> None:
        self.ids = array("q")
        self.names: list[str] = []
        self.shape_indexes: list[ShapeIndex | None] = []
        self.phis = bytearray()
        self.value_colors = array("q")
        self.allocations = array("q")
        self.offsets = array("q")
        self.sizes = array("q")
        self.shapes: list[str] = []
        self.lines = array("q")
        self._indexes: dict[ShapeIndex, ShapeIndex] = {}  # one tuple for equal indexes

    def add(self, slot: ValueSlot) -> None:
        """Append ``slot`` (as its columns: the object is not kept)."""
        v = slot.value
        self.add_row(
            v.id, v.name, v.shape_index, v.is_phi, v.color, slot.size, slot.offset,
            slot.shape, slot.allocation, slot.line,
        )  # fmt: skip

    def add_row(
        self,
        id: int,
        name: str,
        shape_index: ShapeIndex | None,
        is_phi: bool,
        color: int | None,
        size: int,
        offset: int,
        shape: str,
        allocation: int,
        line: int,
    ) -> None:
        """Append one value line's fields (:class:`HloValue`'s, then
        :class:`ValueSlot`'s in the order the line prints them, then the allocation's
        index and the line's number)."""
        self.ids.append(id)
        self.names.append(name)
        if shape_index is not None:
            shape_index = self._indexes.setdefault(shape_index, shape_index)
        self.shape_indexes.append(shape_index)
        self.phis.append(is_phi)
        self.value_colors.append(-1 if color is None else color)
        self.allocations.append(allocation)
        self.offsets.append(offset)
        self.sizes.append(size)
        self.shapes.append(shape)
        self.lines.append(line)

    def adder(self) -> Callable[..., None]:
        """:meth:`add_row` as a function of its own, bound to the columns as they are
        now (the parser's, a call a value line: no attribute looked up in it)."""
        ids, names, indexes, phis = (
            self.ids.append,
            self.names.append,
            self.shape_indexes.append,
            self.phis.append,
        )
        value_colors, sizes, offsets = (
            self.value_colors.append,
            self.sizes.append,
            self.offsets.append,
        )
        shapes, allocations, lines = self.shapes.append, self.allocations.append, self.lines.append
        same = self._indexes.setdefault

        def add_row(id, name, shape_index, is_phi, color, size, offset, shape, allocation, line):
            ids(id)
            names(name)
            indexes(shape_index if shape_index is None else same(shape_index, shape_index))
            phis(is_phi)
            value_colors(-1 if color is None else color)
            sizes(size)
            offsets(offset)
            shapes(shape)
            allocations(allocation)
            lines(line)

        return add_row

    def value(self, k: int) -> HloValue:
        """Row ``k``'s value, a new :class:`HloValue`."""
        color = self.value_colors[k]
        return HloValue(
            self.ids[k],
            self.names[k],
            self.shape_indexes[k],
            bool(self.phis[k]),
            None if color < 0 else color,
        )

    def __len__(self) -> int:
        return len(self.ids)

    def _row(self, k: int) -> ValueSlot:
        return ValueSlot(
            self.value(k),
            self.allocations[k],
            self.offsets[k],
            self.sizes[k],
            self.shapes[k],
            self.lines[k],
        )

    def iterate(self, start: int, stop: int) -> Iterator[ValueSlot]:
        """Rows ``start`` to ``stop``, each a new :class:`ValueSlot`: made column by
        column (``--json`` writes every one)."""
        part = slice(start, stop)
        colors = self.value_colors[part]
        if not colors or min(colors) >= 0:
            color_of: Iterable[int | None] = colors
        elif max(colors) < 0:
            color_of = repeat(None, len(colors))
        else:
            color_of = [None if c < 0 else c for c in colors]
        values = map(
            HloValue,
            self.ids[part],
            self.names[part],
            self.shape_indexes[part],
            map(bool, self.phis[part]),
            color_of,
        )
        return map(
            ValueSlot,
            values,
            self.allocations[part],
            self.offsets[part],
            self.sizes[part],
            self.shapes[part],
            self.lines[part],
        )

    def __reduce__(self):
        return _slots, (self.columns(),)

    def columns(self) -> tuple[Any, ...]:
        """The columns, in the order :meth:`add_row` takes the fields."""
        return (
            self.ids, self.names, self.shape_indexes, self.phis, self.value_colors,
            self.sizes, self.offsets, self.shapes, self.allocations, self.lines,
        )  # fmt: skip


def _slots(columns: tuple[Any, ...]) -> ValueSlots:
    made = ValueSlots()
    (
        made.ids, names, made.shape_indexes, made.phis, made.value_colors,
        made.sizes, made.offsets, shapes, made.allocations, made.lines,
    ) = columns  # fmt: skip
    # Interned again, as the parser interns them (shared with the live ranges' names).
    made.names = list(map(sys.intern, names))
    made.shapes = list(map(sys.intern, shapes))
    return made


_RECENT = 256  # allocations kept once read (AllocationTable._row)


class AllocationTable(_TableRows[BufferAllocation]):
    """A dump's allocations, in dump order, as columns: ``indexes``, ``sizes`` (bytes),
    ``pages`` (-1: none printed), ``colors``, ``flags`` (:data:`CONSTANT`,
    :data:`THREAD_LOCAL`, :data:`MAYBE_LIVE_OUT`, :data:`PREALLOCATED_TEMP`), ``lines``
    (1-based); the rare attributes by row in ``extras`` (parameter, parameter shape,
    its ShapeIndex, output shape, pointer) and ``reused`` (``reused_by``); and their
    value lines, ``slots`` (:class:`ValueSlots`), allocation ``k``'s being rows
    ``firsts[k]`` to ``firsts[k + 1]``. Item ``k`` is a :class:`BufferAllocation` made
    when read (with its slots); the last :data:`_RECENT` read are kept, since the
    browser reads the selected value's allocation again at each key (a temp allocation
    of 10^4 slots takes milliseconds to make)."""

    _WHAT = "allocation"
    __slots__ = (
        "_recent",
        "indexes",
        "sizes",
        "pages",
        "colors",
        "flags",
        "lines",
        "firsts",
        "extras",
        "reused",
        "slots",
    )

    def __init__(self) -> None:
        self.indexes = array("q")
        self.sizes = array("q")
        self.pages = array("q")
        self.colors = array("q")
        self.flags = bytearray()
        self.lines = array("q")
        self.firsts = array("q", [0])
        self.extras: dict[int, tuple] = {}
        self.reused: dict[int, tuple[tuple[HloValue, int], ...]] = {}
        self.slots = ValueSlots()
        self._recent: dict[int, BufferAllocation] = {}

    def __getstate__(self) -> tuple[None, dict]:
        # The columns, not the allocations read lately (a worker sends the table back).
        return None, {name: getattr(self, name) for name in self.__slots__ if name != "_recent"}

    def __setstate__(self, state: tuple[None, dict]) -> None:
        for name, value in state[1].items():
            setattr(self, name, value)
        self._recent = {}

    @classmethod
    def of(cls, allocations: Iterable[BufferAllocation]) -> AllocationTable:
        """The columns of ``allocations`` (in that order, with their slots)."""
        if isinstance(allocations, AllocationTable):
            return allocations
        table = cls()
        for alloc in allocations:
            table.add(alloc)
            table.close(alloc.reused_by)
        return table

    def add(self, alloc: BufferAllocation) -> None:
        """Append ``alloc`` (its own fields, and the slots it holds: then :meth:`close`
        it; or its slots added after it with :meth:`ValueSlots.add`)."""
        self.add_fields(
            alloc.index, alloc.size, alloc.line, alloc.page, alloc.color, alloc.parameter,
            alloc.parameter_shape, alloc.parameter_shape_index, alloc.output_shape,
            alloc.is_constant, alloc.is_thread_local, alloc.maybe_live_out,
            alloc.is_preallocated_temp, alloc.pointer,
        )  # fmt: skip
        add_slot = self.slots.add
        for slot in alloc.values:
            add_slot(slot)

    def add_fields(
        self,
        index: int,
        size: int,
        line: int,
        page: int | None = None,
        color: int = 0,
        parameter: int | None = None,
        parameter_shape: str | None = None,
        parameter_shape_index: ShapeIndex | None = None,
        output_shape: str | None = None,
        is_constant: bool = False,
        is_thread_local: bool = False,
        maybe_live_out: bool = False,
        is_preallocated_temp: bool = False,
        pointer: str | None = None,
    ) -> None:
        """Append an allocation of these fields (:class:`BufferAllocation`'s), as
        :meth:`add` does."""
        if (
            parameter is not None
            or parameter_shape is not None
            or parameter_shape_index is not None
            or output_shape is not None
            or pointer is not None
        ):
            self.extras[len(self.indexes)] = (
                parameter,
                parameter_shape,
                parameter_shape_index,
                output_shape,
                pointer,
            )
        self.indexes.append(index)
        self.sizes.append(size)
        self.pages.append(-1 if page is None else page)
        self.colors.append(color)
        self.flags.append(
            (CONSTANT if is_constant else 0)
            | (THREAD_LOCAL if is_thread_local else 0)
            | (MAYBE_LIVE_OUT if maybe_live_out else 0)
            | (PREALLOCATED_TEMP if is_preallocated_temp else 0)
        )
        self.lines.append(line)

    def close(self, reused_by: tuple[tuple[HloValue, int], ...] = ()) -> None:
        """End the last allocation added: the value lines added since are its slots;
        ``reused_by`` its cross-colour reuses."""
        if reused_by:
            self.reused[len(self.firsts) - 1] = reused_by
        self.firsts.append(len(self.slots))

    def __len__(self) -> int:
        return len(self.indexes)

    def per_slot(self, column: Sequence[int]) -> Iterator[int]:
        """``column`` (one item an allocation) repeated for each of its value lines:
        an item a row of :attr:`slots`, in one pass of C."""
        counts = map(sub, islice(self.firsts, 1, None), self.firsts)
        return chain.from_iterable(map(repeat, column, counts))

    def slot_rows(self, k: int) -> range:
        """The rows of :attr:`slots` that are allocation ``k``'s value lines."""
        return range(self.firsts[k], self.firsts[k + 1])

    def parameter(self, k: int) -> int | None:
        """Allocation ``k``'s parameter number (None: not an entry parameter)."""
        extra = self.extras.get(k)
        return None if extra is None else extra[0]

    def kinds_texts(self) -> list[str]:
        """:func:`~hlotop.model.allocation.kinds_text` of each allocation, by row
        (``"parameter 4, maybe-live-out"``): it reads only the flags and the rare
        attributes, so one allocation is made per combination of them, not one per
        row (30 000 allocations made took 1.1 s at 46 MB)."""
        extras, flags = self.extras, self.flags
        texts: dict[tuple, str] = {}
        out = []
        for k in range(len(self)):
            flag, extra = flags[k], extras.get(k, _NO_EXTRA)
            key = (flag, extra)
            text = texts.get(key)
            if text is None:
                # What kinds_text reads, as iterate() makes it (no slot read).
                kinds_only = BufferAllocation(
                    0,
                    0,
                    parameter=extra[0],
                    parameter_shape_index=extra[2],
                    output_shape=extra[3],
                    is_constant=bool(flag & CONSTANT),
                    is_thread_local=bool(flag & THREAD_LOCAL),
                    maybe_live_out=bool(flag & MAYBE_LIVE_OUT),
                    is_preallocated_temp=bool(flag & PREALLOCATED_TEMP),
                )
                text = texts[key] = kinds_text(kinds_only)
            out.append(text)
        return out

    def _row(self, k: int) -> BufferAllocation:
        recent = self._recent
        found = recent.get(k)
        if found is None:
            found = next(self.iterate(k, k + 1))
            if k + 1 >= len(self.firsts):
                return found  # not closed yet: its slots may still come
            recent[k] = found
            if len(recent) > _RECENT:
                try:  # the oldest read (another thread may be at it too)
                    del recent[next(iter(recent))]
                except (KeyError, RuntimeError):
                    pass
        return found

    def iterate(self, start: int, stop: int) -> Iterator[BufferAllocation]:
        """Allocations ``start`` to ``stop``, each a new :class:`BufferAllocation` with
        its slots (``--json`` writes every one): made field by field from the columns
        by ``map``, each field an iterator of C where it can be."""
        part = slice(start, stop)
        firsts = self.firsts
        rows = range(start, stop)
        if stop <= start:
            return iter(())
        pages = self.pages[part]
        page: Iterable[int | None]
        if min(pages) >= 0:
            page = pages
        elif max(pages) < 0:
            page = repeat(None)
        else:
            page = [None if p < 0 else p for p in pages]
        extras = self.extras
        fields: list[Iterable[Any]]
        if not extras:
            fields = [repeat(None)] * 5
        else:
            got = [extras.get(k, _NO_EXTRA) for k in rows]
            fields = [list(map(itemgetter(i), got)) for i in range(5)]
        flags = self.flags[part]
        constant, thread_local, live_out, temp = (
            map(truth, map(and_, flags, repeat(bit)))
            for bit in (CONSTANT, THREAD_LOCAL, MAYBE_LIVE_OUT, PREALLOCATED_TEMP)
        )
        slots = self.slots.iterate(firsts[start], firsts[stop])
        values: Iterable[tuple[ValueSlot, ...]]
        # slices, not islice: islice walks the array from its start (0.4 ms an
        # allocation read at 30 000 allocations)
        counts = list(map(sub, firsts[start + 1 : stop + 1], firsts[start:stop]))
        if counts.count(1) == len(counts):  # a value each
            values = zip(slots)
        else:
            values = (tuple(islice(slots, count)) for count in counts)
        reused = self.reused
        return map(
            BufferAllocation,
            self.indexes[part],
            self.sizes[part],
            page,
            self.colors[part],
            fields[0],
            fields[1],
            fields[2],
            fields[3],
            constant,
            thread_local,
            live_out,
            temp,
            fields[4],
            values,
            map(reused.get, rows, repeat(())) if reused else repeat(()),
            self.lines[part],
        )

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (AllocationTable, tuple, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"AllocationTable({list(self)!r})"

    def in_order(self, by_size: bool) -> AllocationsInOrder:
        """The allocations by index, or largest first (equal sizes by index), as a
        lazy sequence: sorting reads the columns only."""
        n = len(self)
        indexes = self.indexes
        if indexes == array("q", range(n)):  # as XLA prints them: no sort by index
            order = array("q", range(n))
        else:
            order = array("q", sorted(range(n), key=indexes.__getitem__))
        if by_size:
            order = array("q", sorted(order, key=self.sizes.__getitem__, reverse=True))
        return AllocationsInOrder(self, order)

    def by_index(self) -> Mapping[int, BufferAllocation]:
        """Allocation index -> allocation (the last one, if a damaged dump repeats an
        index), each made when looked up."""
        return TableByIndex(self)

    def positions(self) -> Mapping[int, int]:
        """Allocation index -> its row (the last, for an index listed twice)."""
        indexes = self.indexes
        if indexes == array("q", range(len(indexes))):
            return Positions(len(indexes))
        return {index: k for k, index in enumerate(indexes)}


class LazyAllocations(Sequence[BufferAllocation]):
    """A sequence of allocations, each read on first use (:meth:`_item`)."""

    def _item(self, k: int) -> BufferAllocation:
        raise NotImplementedError

    @overload
    def __getitem__(self, k: int) -> BufferAllocation: ...
    @overload
    def __getitem__(self, k: slice) -> list[BufferAllocation]: ...
    def __getitem__(self, k: int | slice) -> BufferAllocation | list[BufferAllocation]:
        if isinstance(k, slice):
            return [self._item(i) for i in range(*k.indices(len(self)))]
        return self._item(k)


class AllocationsInOrder(LazyAllocations):
    """``lines`` (a first look's :class:`~hlotop.model.AllocationLines`, or an
    :class:`AllocationTable`) in the order of their positions ``order``, each read on
    first use."""

    def __init__(self, lines: Any, order: array):
        self.lines, self.order = lines, order

    def __len__(self) -> int:
        return len(self.order)

    def _item(self, k: int) -> BufferAllocation:
        return self.lines[self.order[k]]

    @property
    def indexes(self) -> list[int]:
        """The allocation index of each item, in this order (no allocation read)."""
        return list(map(self.lines.indexes.__getitem__, self.order))

    def places(self) -> Mapping[int, int]:
        """Allocation index -> its place in this order (the last, for an index listed
        twice), as ``{index: i for i, index in enumerate(self.indexes)}`` but, where
        the indexes are the positions (as XLA prints them), an array of the places."""
        indexes, order = self.lines.indexes, self.order
        n = len(indexes)
        if len(order) != n or indexes != array("q", range(n)):
            return {index: i for i, index in enumerate(self.indexes)}
        places = array("q", bytes(8 * n))
        for place, k in enumerate(order):
            places[k] = place
        return _Places(places)


class _Places(Mapping[int, int]):
    """Allocation index -> its place, where the indexes are 0..n-1: ``places[index]``."""

    __slots__ = ("places",)

    def __init__(self, places: array):
        self.places = places

    def __getitem__(self, index: int) -> int:
        if index in range(len(self.places)):
            return self.places[index]
        raise KeyError(index)

    def __contains__(self, index: object) -> bool:
        return index in range(len(self.places))

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.places)))

    def __len__(self) -> int:
        return len(self.places)


class TableByIndex(Mapping[int, BufferAllocation]):
    """Allocation index -> allocation of an :class:`AllocationTable`, each made when
    looked up."""

    __slots__ = ("table", "_made")

    def __init__(self, table: AllocationTable):
        self.table = table
        self._made: Mapping[int, int] | None = None

    @property
    def position(self) -> Mapping[int, int]:
        """Allocation index -> its row (made on first use)."""
        if self._made is None:
            self._made = self.table.positions()
        return self._made

    def __getitem__(self, index: int) -> BufferAllocation:
        return self.table._row(self.position[index])

    def get(self, index: int, default: Any = None) -> Any:
        k = self.position.get(index)
        return default if k is None else self.table._row(k)

    def __contains__(self, index: object) -> bool:
        return index in self.position

    def __iter__(self) -> Iterator[int]:
        return iter(self.position)

    def __len__(self) -> int:
        return len(self.position)


class Positions(Mapping[int, int]):
    """The map ``{k: k for k in range(n)}`` (the positions of lines in index order),
    made of nothing; it finds what that dict finds."""

    def __init__(self, n: int):
        self.n = n

    def __getitem__(self, index: int) -> int:
        if index in range(self.n):
            return int(index)
        raise KeyError(index)

    def __contains__(self, index: object) -> bool:
        return index in range(self.n)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.n))

    def __len__(self) -> int:
        return self.n
