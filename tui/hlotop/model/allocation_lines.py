"""A big dump's allocations as their allocation lines (``BufferAllocation::ToString``
heads, FORMATS.md 3.2), each read into a :class:`BufferAllocation` when first asked for.

The first look at a big dump (:func:`hlotop.loading.preview.glance`) shows every
allocation, largest first, in the time one regular-expression pass over the lines
takes: the index, size and colour of each come as columns from that pass, and the
screen reads only the rows it shows. Thread-safe: the browser's UI thread and its load
thread may read allocations at the same time, and each is made once.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping

from hlotop.model.allocation import BufferAllocation
from hlotop.model.allocation_table import (
    AllocationsInOrder,
    AllocationTable,
    LazyAllocations,
    Positions,
)

# Reads an allocation line (its bytes, its 1-based line number) into its allocation:
# the parser's (the model never imports it).
ReadAllocation = Callable[[bytes, int], BufferAllocation]
PAUSE_EVERY = 4096  # allocations read by read_all between two calls of its pause


class AllocationLines(LazyAllocations):
    """The allocations of ``texts`` (one allocation line each, in dump order), with
    their ``indexes``, ``sizes`` (bytes) and ``colors`` as columns (``array("q")``,
    one item per line), each read by ``read`` on first use with its 1-based line
    number, which ``line_numbers()`` gives for every line, called once, when
    :attr:`lines` is first read (by iterating them all, say). An allocation read
    before is read with line 0 and given its line then: the first screen's rows need
    none, and counting a 100 MB dump's lines took 40 ms of it. Raises ValueError if
    the columns' lengths differ."""

    def __init__(
        self,
        texts: list[bytes],
        indexes: array,
        sizes: array,
        colors: array,
        read: ReadAllocation,
        line_numbers: Callable[[], array],
    ):
        n = len(texts)
        if not len(indexes) == len(sizes) == len(colors) == n:
            raise ValueError("every column needs one item per allocation line")
        self.texts = texts
        self.indexes, self.sizes, self.colors = indexes, sizes, colors
        self._read = read
        self._line_numbers: Callable[[], array] | None = line_numbers
        self._lines = array("q")
        self._made: dict[int, BufferAllocation] = {}  # the allocations read, by position
        self._unnumbered: list[int] = []  # positions read before the lines were counted
        self._n = n
        self._table: AllocationTable | None = None  # every allocation, once read_all
        self._lock = threading.RLock()  # lines is counted while an allocation is read

    def __len__(self) -> int:
        return self._n

    def _item(self, k: int) -> BufferAllocation:
        made = self._made.get(k)
        if made is None:
            with self._lock:
                made = self._made.get(k)
                if made is None:
                    table = self._table
                    if table is not None:  # read whole (read_all): made from its row
                        return table[k]
                    line = self._lines[k] if self._line_numbers is None else 0
                    made = self._made[k] = self._read(self.texts[k], line)
                    if not line:
                        self._unnumbered.append(k)
        return made

    def read_all(self, pause: Callable[[], object] | None = None) -> AllocationTable:
        """Every allocation read, in order, into an :class:`AllocationTable` (each
        with its line: they are counted first), ``pause()`` called after every
        :data:`PAUSE_EVERY` allocations (and the last few) if given. From then on an allocation not read
        before is made from the table's row when asked for, and the lines' text is let
        go (the allocations read before are kept: a screen may show them). Not
        thread-safe against another ``read_all``; raises ValueError as
        :meth:`count_lines`."""
        if self._table is not None:
            return self._table
        self.count_lines()
        table = AllocationTable()
        add, close = table.add, table.close
        texts, lines, read = self.texts, self._lines, self._read
        for at in range(0, len(texts), PAUSE_EVERY):
            for k in range(at, min(at + PAUSE_EVERY, len(texts))):
                made = self._made.get(k)
                add(made if made is not None else read(texts[k], lines[k]))
                close()
            if pause is not None:
                pause()
        with self._lock:
            self._table = table
            # The table's columns are these ones too: kept once.
            self.indexes, self.sizes, self.colors = table.indexes, table.sizes, table.colors
            self._lines = table.lines
            self.texts = []
        return table

    @property
    def lines(self) -> array:
        """The 1-based line number of each allocation line (counted on first use)."""
        self.count_lines()
        return self._lines

    def count_lines(self) -> None:
        """Count the allocation lines' line numbers now, if not counted yet, and give
        each allocation already read its own. Raises ValueError if ``line_numbers()``
        gives a number too many or too few."""
        if self._line_numbers is not None:
            with self._lock:
                if self._line_numbers is not None:
                    lines = self._line_numbers()
                    if len(lines) != self._n:
                        raise ValueError("a line number is needed for every allocation line")
                    for k in self._unnumbered:  # read before: each given its line now
                        made = self._made[k]
                        assert made is not None
                        made.line = lines[k]
                    self._lines, self._unnumbered = lines, []
                    self._line_numbers = None  # and what it held

    def __iter__(self) -> Iterator[BufferAllocation]:
        self.count_lines()  # first: each then read with its line
        for k in range(self._n):
            yield self[k]

    def in_order(self, by_size: bool) -> AllocationsInOrder:
        """The allocations by index, or largest first (equal sizes by index), as a
        lazy sequence: sorting reads the columns only."""
        n = len(self)
        if self.indexes == array("q", range(n)):  # as XLA prints them: no sort by index
            order = list(range(n))
        else:
            order = sorted(range(n), key=self.indexes.__getitem__)
        if by_size:
            order.sort(key=self.sizes.__getitem__, reverse=True)  # stable
        return AllocationsInOrder(self, array("q", order))

    def by_index(self) -> AllocationsByIndex:
        """Allocation index -> allocation, read on first use."""
        return AllocationsByIndex(self)


class AllocationsByIndex(Mapping[int, BufferAllocation]):
    """Allocation index -> allocation of an :class:`AllocationLines`, each read on
    first use (the last of them, if a damaged dump repeats an index, as a dict made
    from them would hold)."""

    def __init__(self, lines: AllocationLines):
        self.lines = lines
        self._made: Mapping[int, int] | None = None

    @property
    def _position(self) -> Mapping[int, int]:
        """Allocation index -> its line's position (made on first use; the positions
        themselves when the lines are in index order from 0, as XLA prints them: no
        map of 58 000 items made on the screen's thread)."""
        if self._made is None:
            indexes = self.lines.indexes
            if indexes == array("q", range(len(indexes))):
                self._made = Positions(len(indexes))
            else:
                self._made = {index: k for k, index in enumerate(indexes)}
        return self._made

    def __getitem__(self, index: int) -> BufferAllocation:
        return self.lines[self._position[index]]

    def __contains__(self, index: object) -> bool:
        return index in self._position

    def __iter__(self) -> Iterator[int]:
        return iter(self._position)

    def __len__(self) -> int:
        return len(self._position)


def allocated_bytes(allocations: Iterable[BufferAllocation]) -> int:
    """The sum of ``allocations``' sizes, in bytes: from the size column of a dump's
    :class:`~hlotop.model.AllocationTable` or a first look's :class:`AllocationLines`
    (no allocation made: 30 000 made took 0.15 s), else read from each."""
    if isinstance(allocations, (AllocationTable, AllocationLines)):
        return sum(allocations.sizes)
    return sum(a.size for a in allocations)
