"""Rows of one kind of dump line kept as columns, read as objects on first use.

A big dump has 10^4-10^5 live-range lines and peak-list lines. The parser (and the
worker process that reads a split module's live ranges, :mod:`hlotop.loading.ahead`)
fills one column a field and makes no object; the columns cross between processes as
they are; the figures are worked out over them. An object is made for a row when
something reads it by its index (the browser), once: the same row is the same object,
from any thread. A pass over all of them (``--json``) makes each anew as it comes,
unless all were made already, and keeps none.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar, Generic, TypeVar, overload

T = TypeVar("T")
R = TypeVar("R", bound="ColumnRows[Any]")


# Rows read one by one before all of them are made at once: a report reads a few
# (the largest values at the peak), the browser and --json read them all, and making
# them all in one pass costs half as much a row.
ONE_BY_ONE = 256


class MadeOnce(Generic[T]):
    """Objects made from rows on first use, once each, from any thread: the first
    :data:`ONE_BY_ONE` asked for one by one (:meth:`_make_one`), then all of them in
    one pass (:meth:`_make_all`, which keeps those already made). Subclasses say how
    many rows there are (``__len__``) and how a row is made."""

    __slots__ = ("_objects", "_some", "_lock")
    _objects: list[T] | None
    _some: dict[int, T]
    _lock: threading.Lock

    def _start_made(self) -> None:
        self._objects = None  # all of them, once made
        self._some = {}  # the few made one by one before
        self._lock = threading.Lock()

    def __len__(self) -> int:
        raise NotImplementedError

    def _make_one(self, k: int) -> T:
        raise NotImplementedError

    def _make_all(self) -> list[T]:
        raise NotImplementedError

    def _every(self) -> list[T]:
        """Every row's object, made now if not yet."""
        objects = self._objects
        if objects is None:
            with self._lock:
                objects = self._objects
                if objects is None:
                    objects = self._make_all()
                    for k, one in self._some.items():  # the same objects as before
                        objects[k] = one
                    self._objects = objects
        return objects

    def _made(self, k: int) -> T:
        """Row ``k``'s object (``0 <= k < len(self)``; negative from the end). Raises
        IndexError for a row there is not."""
        objects = self._objects
        if objects is not None:
            return objects[k]
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("row index out of range")
        with self._lock:
            if self._objects is not None:
                return self._objects[k]
            one = self._some.get(k)
            if one is None and len(self._some) < ONE_BY_ONE:
                one = self._some[k] = self._make_one(k)
        return one if one is not None else self._every()[k]


class ColumnRows(MadeOnce[T], Sequence[T]):
    """A sequence of ``MAKE`` objects held as one column a field (``FIELDS``, in the
    order ``MAKE`` takes them; the fields in ``NUMBERS`` as ``array("q")``, the others
    as lists), each made on first use (:class:`MadeOnce`). Subclasses name the class,
    the fields and the numeric ones."""

    MAKE: ClassVar[type[Any]]  # a dataclass
    FIELDS: ClassVar[tuple[str, ...]]
    NUMBERS: ClassVar[frozenset[str]]
    # Text fields interned again when unpickled, as the parser interns them: shared
    # with the values' names.
    INTERNED: ClassVar[frozenset[str]] = frozenset()

    __slots__ = ()

    def __init__(self, *columns: Iterable[Any]):
        """``columns``: one iterable a field of ``FIELDS`` (none: no rows). Raises
        ValueError if their lengths differ."""
        if not columns:
            columns = tuple(() for _ in self.FIELDS)
        numbers = self.NUMBERS
        made = [
            (_numbers(column) if name in numbers else list(column))
            for name, column in zip(self.FIELDS, columns, strict=True)
        ]
        if len({len(column) for column in made}) > 1:
            raise ValueError("every column needs one item a row")
        for name, column in zip(self.FIELDS, made, strict=True):
            object.__setattr__(self, name, column)
        self._start_made()

    @classmethod
    def of(cls: type[R], rows: Iterable[Any]) -> R:
        """The columns of ``rows`` (``MAKE`` objects, a dataclass whose first fields
        the columns are, in order; kept)."""
        rows = tuple(rows)
        names = [f.name for f in dataclasses.fields(cls.MAKE)][: len(cls.FIELDS)]
        made = cls(*([getattr(r, name) for r in rows] for name in names))
        made._objects = list(rows)
        return made

    def columns(self) -> tuple[Sequence[Any], ...]:
        """The columns, in ``FIELDS`` order."""
        return tuple(getattr(self, name) for name in self.FIELDS)

    def _make_one(self, k: int) -> T:
        return self.MAKE(*(column[k] for column in self.columns()))

    def _make_all(self) -> list[T]:
        return list(map(self.MAKE, *self.columns()))

    def __len__(self) -> int:
        return len(getattr(self, self.FIELDS[0]))

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index):
        if isinstance(index, int):
            return self._made(index)
        return tuple(self._every()[index])

    def __iter__(self) -> Iterator[T]:
        # Each row made anew as it comes, unless all were made already: --json writes
        # every live range of a dump once, and 10^6 of them kept took 170 MB.
        objects = self._objects
        if objects is not None:
            return iter(objects)
        return map(self.MAKE, *self.columns())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ColumnRows) and type(other) is type(self):
            return self.columns() == other.columns()
        if isinstance(other, tuple):
            return tuple(self._every()) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self._every()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._every()!r})"

    def __reduce__(self):
        return _rows, (type(self), self.columns())


def _numbers(column: Iterable[Any]) -> array[int]:
    """``column`` as an ``array("q")``: itself if it is one (a parser's, handed over)."""
    if isinstance(column, array) and column.typecode == "q":
        return column
    return array("q", column)


def _rows(kind: type[ColumnRows[T]], columns: tuple[Sequence[Any], ...]) -> ColumnRows[T]:
    interned = kind.INTERNED
    return kind(
        *(
            map(sys.intern, column) if name in interned else column
            for name, column in zip(kind.FIELDS, columns, strict=True)
        )
    )
