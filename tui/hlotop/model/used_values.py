"""The ``Used values:`` section as a lazy, thread-safe collection of records
(``HloValue::ToString`` records; FORMATS.md 3.5-3.6).

Records are most of a dump (six lines or more per value, one of them the long
from-instruction text) and most of them are never looked at. So the section is only
indexed when first needed (where each record starts and whose value it is) and a record
is read when it is asked for. The text is shared with the loader, not copied: a big
dump's text may be the file's bytes when they are all ASCII, each record decoded when
read. Once indexed, such a text can be handed back to its file (:meth:`UsedValues.release_text`
with a :class:`ByteSource`, the loader's): records are then read from the file when
asked for, and the text, most of a dump, is not held at all.
How a record's text is read is the parser's business (:class:`RecordGrammar`,
given by :mod:`hlotop.parse.records`); this collection holds the text, the index, the
line numbers and a small cache of parsed records, each guarded by its own lock, so the
browser's UI thread and its background pass can read records at the same time.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from itertools import islice
from operator import le
from typing import AnyStr, Generic, Protocol, cast

from hlotop.model.dump_file import Diagnostic
from hlotop.model.values import HloValue, UsedValue

_CACHE = 4096  # parsed records kept
_STRIDE = 256  # records between line-number checkpoints
SCAN = 1 << 23  # characters one call into C scans at most (a browser's keys wait for it)
_WINDOW = 1 << 20  # characters of records read at once when all are read in order


class ByteSource(Protocol):
    """Where a released text is read back from: the bytes of the dump file it was,
    at the same offsets (the loader's :class:`~hlotop.loading.file_bytes.FileBytes`).
    Both methods raise ``OSError`` (with a one-line reason) when the file cannot be read
    or is no longer the one that was indexed."""

    def read(self, start: int, end: int) -> bytes:
        """The bytes ``[start, end)`` of the file."""
        ...

    def count(self, sub: bytes, start: int, end: int) -> int:
        """How often ``sub`` occurs in the bytes ``[start, end)``."""
        ...


class RecordGrammar(Protocol):
    """How the records' text is read: the parser's (:mod:`hlotop.parse.records`)."""

    def index(self, text: AnyStr, begin: int, end: int) -> tuple[array, array]:
        """The offset of each record's head in ``text[begin:end]``, and its value id."""
        ...

    def head(self, span: str) -> HloValue:
        """The value a record is about, from its head alone."""
        ...

    def read(
        self, span: str, line: int, path: str, diagnostics: list[Diagnostic] | None
    ) -> UsedValue | None:
        """The record whose text is ``span`` (its head on 1-based ``line``); what cannot
        be read is appended to ``diagnostics`` (dropped if None)."""
        ...

    def read_leading(self, span: str, line: int, path: str, diagnostics: list[Diagnostic]) -> None:
        """Report what stands before the first record (``span``, from ``line`` on)."""
        ...

    def instruction_lines(self, text: AnyStr) -> Iterator[tuple[int, int]]:
        """Where the text of each ``from instruction:`` line in ``text`` (whole
        records) starts and ends (what a record read keeps as its instruction text,
        up to the next record's head where one is glued on the line)."""
        ...


class UsedValues(Generic[AnyStr]):
    """The records of one ``Used values`` section, by value id, read on demand.

    The section's body is ``text[begin:end]``, ``text`` a ``str`` or (an all-ASCII
    dump's) ``bytes``; ``first_line`` is the 1-based line of
    ``text[begin]`` in ``path`` and ``end_line`` (if known) that of ``text[end]``.
    Behaves as a read-only sequence of :class:`UsedValue` in dump order; every method
    may be called from any thread.
    """

    def __init__(
        self,
        path: str,
        text: AnyStr,
        grammar: RecordGrammar,
        first_line: int,
        begin: int = 0,
        end: int | None = None,
        end_line: int | None = None,
    ):
        self.path = path
        self.text: AnyStr = text
        self.grammar = grammar
        self.first_line = first_line
        self.begin = begin
        self.end = len(text) if end is None else end
        self.end_line = end_line
        self._nl: AnyStr = b"\n" if isinstance(text, bytes) else "\n"
        self._lock = threading.RLock()
        self._starts: array | None = None
        self._ids: array | None = None
        # The ids sorted, and (unless they are in order already) the record number of each
        self._heads: tuple[array, array | None] | None = None
        self._checkpoints: array | None = None
        self._block_lines: dict[int, array] = {}  # block -> each of its records' line
        self._cache: dict[int, UsedValue | None] = {}
        self._source: ByteSource | None = None  # where the text is read from, once released
        self._shift = 0  # a file offset less the text's
        self.problem: str | None = None  # why records could not be read again, if so

    def __getstate__(self) -> dict:
        """What goes to another process (a worker's indexed records, see
        :mod:`hlotop.loading.ahead`): all but the lock and the parsed records."""
        with self._lock:
            state = dict(self.__dict__)
        del state["_lock"]
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()

    # -- the text ----------------------------------------------------------------------
    def release_text(self, source: ByteSource) -> bool:
        """Index the records and count their lines now, then drop the text: from here
        on it is read from ``source``, the file the text was decoded from with nothing
        changed but the decoding (no line ends rewritten, no bytes replaced). Records
        are then read at their offset in the file: the text's, plus the bytes that the
        non-ASCII characters before the section take beyond one (a V4 stack-trace tree
        before it). True if the text was dropped; False, and it is kept, if the section
        itself is not all ASCII. A record that cannot be read back later is None and
        :attr:`problem` says why."""
        with self._lock:
            text, begin, end = self.text, self.begin, self.end
            if isinstance(text, str):
                if not all(text[i : min(i + SCAN, end)].isascii() for i in range(begin, end, SCAN)):
                    return False
                self._shift = len(text[:begin].encode("utf-8")) - begin
            self._index()
            self._line_checkpoints()
            self._source = source
            self.text = text[:0]
            return True

    def _read(self, start: int, end: int) -> AnyStr:
        source = self._source
        if source is None:
            return self.text[start:end]
        data = source.read(start + self._shift, end + self._shift)
        if isinstance(self.text, str):
            return data.decode("ascii")
        return data

    def _count(self, start: int, end: int) -> int:
        """Line ends in ``[start, end)``."""
        source = self._source
        if source is None:
            return self.text.count(self._nl, start, end)
        return source.count(b"\n", start + self._shift, end + self._shift)

    # -- the index ---------------------------------------------------------------------
    def _index(self) -> tuple[array, array]:
        with self._lock:
            if self._starts is None or self._ids is None:
                self._starts, self._ids = self.grammar.index(self.text, self.begin, self.end)
            return self._starts, self._ids

    @property
    def starts(self) -> array:
        """The offset in :attr:`text` of each record's head, in dump order."""
        return self._starts if self._starts is not None else self._index()[0]

    @property
    def ids(self) -> array:
        """The value id of each record, in dump order."""
        return self._ids if self._ids is not None else self._index()[1]

    @property
    def leading(self) -> int:
        """Where record 0 starts: ``text[begin:leading]`` comes before it."""
        return self.starts[0] if self.starts else self.end

    def _sorted_ids(self) -> tuple[array, array | None]:
        """The ids in ascending order, and the record number of each (None when the
        records are in id order already, as XLA prints them): a bisection finds a
        record by id in a tenth of a dict's memory."""
        heads = self._heads
        if heads is None:
            ids = self.ids
            with self._lock:
                if self._heads is None:
                    if all(map(le, ids, islice(ids, 1, None))):  # in C: 5 ms, not 38
                        self._heads = (ids, None)
                    else:  # a stable sort: of a repeated id, the first record comes first
                        order = sorted(range(len(ids)), key=ids.__getitem__)
                        self._heads = (array("q", map(ids.__getitem__, order)), array("q", order))
                heads = self._heads
        return heads

    def number_of(self, value_id: int) -> int | None:
        """The record number of ``value_id`` (the first, if it has several), or None."""
        ids, order = self._sorted_ids()
        k = bisect_left(ids, value_id)
        if k == len(ids) or ids[k] != value_id:
            return None
        return k if order is None else order[k]

    def __len__(self) -> int:
        return len(self.starts)

    def __bool__(self) -> bool:
        if len(self.starts) > 0:
            return True
        try:
            return bool(self._read(self.begin, self.end).strip())
        except OSError:
            return False

    def __iter__(self) -> Iterator[UsedValue]:
        for number in range(len(self.starts)):
            record = self.record(number)
            if record is not None:
                yield record

    def __getitem__(self, number: int) -> UsedValue:
        if number < 0:
            number += len(self.starts)
        if not 0 <= number < len(self.starts):
            raise IndexError(number)
        record = self.record(number)
        if record is None:
            raise IndexError(f"record {number} could not be read")
        return record

    # -- lines -------------------------------------------------------------------------
    def line_at_end(self) -> int:
        """The 1-based line of ``text[end]``, the first after the records: ``end_line``
        if it was given, else counted on from the last line-number checkpoint (which
        indexes the records: the count through them is then not made twice, 13 ms at
        46 MB). Raises ``OSError`` as :meth:`line_of`."""
        with self._lock:
            if self.end_line is None:
                starts, count = self.starts, self._count
                if len(starts):
                    last = (len(starts) - 1) // _STRIDE
                    line = self._line_checkpoints()[last] + count(starts[last * _STRIDE], self.end)
                else:
                    line = self.first_line + count(self.begin, self.end)
                self.end_line = line
            return self.end_line

    def line_of(self, number: int) -> int:
        """The 1-based line of record ``number``'s head (counted on first need).
        Raises ``OSError`` if the text was released and cannot be read back."""
        starts, count = self.starts, self._count
        if self._checkpoints is None and number == 0:
            return self.first_line + count(self.begin, starts[0])
        if self._checkpoints is None and number == len(starts) - 1 and self.end_line is not None:
            return self.end_line - count(starts[number], self.end)  # counted back
        block = number // _STRIDE
        lines = self._block_lines.get(block)
        if lines is None:
            lines = self._count_block(block, self._line_checkpoints()[block])
        return lines[number - block * _STRIDE]

    def _count_block(self, block: int, line: int) -> array:
        """The line of each record's head in checkpoint block ``block`` (its first at
        ``line``), counted in one read of the block and kept: records read one at a
        time, in order or not, each counted from its block's start took a tenth of a
        millisecond (21 800 of them: a second)."""
        starts = self.starts
        base = block * _STRIDE
        stop = min(base + _STRIDE, len(starts))
        span = self._read(starts[base], starts[stop - 1])
        lines = array("q", [line])
        for k in range(base + 1, stop):
            line += span.count(self._nl, starts[k - 1] - starts[base], starts[k] - starts[base])
            lines.append(line)
        with self._lock:
            self._block_lines[block] = lines
        return lines

    def _line_checkpoints(self) -> array:
        """The line of every :data:`_STRIDE`-th record's head."""
        checkpoints = self._checkpoints
        if checkpoints is None:
            starts, count = self.starts, self._count
            with self._lock:
                if self._checkpoints is None:
                    made, line, pos = array("q"), self.first_line, self.begin
                    for k in range(0, len(starts), _STRIDE):
                        line += count(pos, starts[k])
                        pos = starts[k]
                        made.append(line)
                    self._checkpoints = made
                checkpoints = self._checkpoints
        return checkpoints

    # -- records -----------------------------------------------------------------------
    def text_of(self, number: int) -> str:
        """Record ``number``'s text as printed, up to the next record's head."""
        starts = self.starts
        start = starts[number]
        end = starts[number + 1] if number + 1 < len(starts) else self.end
        return self._str(start, end)

    def _str(self, start: int, end: int) -> str:
        span = self._read(start, end)
        return span.decode("ascii") if isinstance(span, bytes) else span

    def head(self, number: int) -> HloValue:
        """The value record ``number`` is about, from its head alone (cheap)."""
        return self.grammar.head(self.text_of(number))

    def get(self, value_id: int) -> UsedValue | None:
        """The record of ``value_id``, parsed now (cached), or None if it has none."""
        number = self.number_of(value_id)
        return None if number is None else self.record(number)

    def record(self, number: int) -> UsedValue | None:
        """Record ``number`` (0-based, dump order), parsed on first use and cached;
        None if it cannot be read (or, its text released, read back: :attr:`problem`
        says why). Its diagnostics come with :meth:`checked`."""
        with self._lock:
            if number in self._cache:
                return self._cache[number]
        try:
            text, line = self.text_of(number), self.line_of(number)
        except OSError as err:
            self.problem = str(err)
            return None
        record = self.grammar.read(text, line, self.path, None)
        with self._lock:
            if len(self._cache) >= _CACHE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[number] = record
        return record

    def checked(
        self, diagnostics: list[Diagnostic], first: int = 0, stop: int | None = None
    ) -> Iterator[UsedValue]:
        """Every record in dump order (or records ``first`` to ``stop - 1``), each read
        once and not cached, with what cannot be read appended to ``diagnostics`` (the
        text before the first record included, with record 0)."""
        starts = self.starts
        stop = len(starts) if stop is None else min(stop, len(starts))
        try:
            if first == 0 and self.leading > self.begin:
                leading = self._str(self.begin, self.leading)
                if leading.strip():
                    self.grammar.read_leading(leading, self.first_line, self.path, diagnostics)
            if first >= stop:
                return
            line = self.line_of(first)
        except OSError as err:
            self._lost(err, diagnostics)
            return
        read, path, nl, total = self.grammar.read, self.path, self._nl, len(starts)
        try:  # only reading the text back raises OSError
            for number, last, window in self._windows(first, stop):
                begin, pos = starts[number], 0
                for n in range(number, last):
                    at = starts[n] - begin
                    line += window.count(nl, pos, at)  # counted as we go: no look-ups
                    pos = at
                    span = window[at : starts[n + 1] - begin if n + 1 < total else len(window)]
                    text = span.decode("ascii") if isinstance(span, bytes) else span
                    record = read(text, line, path, diagnostics)
                    if record is not None:
                        yield record
                line += window.count(nl, pos, len(window))
        except OSError as err:
            self._lost(err, diagnostics)

    def _windows(self, first: int, stop: int) -> Iterator[tuple[int, int, AnyStr]]:
        """Records ``first`` to ``stop - 1`` a window of whole records (about
        :data:`_WINDOW` characters) at a time, each read at once: ``(number, last,
        text)``, the text of records ``number`` to ``last - 1``. Raises ``OSError``
        if the text was released and cannot be read back."""
        starts, total = self.starts, len(self.starts)
        number = first
        while number < stop:
            begin = starts[number]
            last = bisect_right(starts, begin + _WINDOW, number + 1, stop)
            yield number, last, self._read(begin, starts[last] if last < total else self.end)
            number = last

    def instruction_texts(
        self, cancelled: Callable[[], bool] | None = None
    ) -> list[str | None] | None:
        """The instruction text of each record, by record number, as reading the
        record gives it (None: it has no ``from instruction:`` line), found by one
        scan of the section's text a window of whole records at a time: no record
        parsed (a column of op_names for 71 000 records in a tenth of a second, 4 s
        parsed). A line that runs into the next record's head (2024-era dumps glue
        it on) ends there, as the record's reader ends it. None if ``cancelled()``
        turns true between two windows, or if the text was released and cannot be
        read back (:attr:`problem` says why)."""
        starts = self.starts
        total = len(starts)
        out: list[str | None] = [None] * total
        try:
            for number, last, window in self._windows(0, total):
                if cancelled is not None and cancelled():
                    return None
                begin = starts[number]
                for at, text_end in self.grammar.instruction_lines(window):
                    n = bisect_right(starts, begin + at, number, last) - 1
                    record_end = starts[n + 1] - begin if n + 1 < total else len(window)
                    text = window[at : min(text_end, record_end)]
                    out[n] = text.decode("ascii") if isinstance(text, bytes) else text
        except OSError as err:
            self.problem = str(err)
            return None
        return out

    def _lost(self, err: OSError, diagnostics: list[Diagnostic]) -> None:
        self.problem = str(err)
        diagnostics.append(Diagnostic(self.path, 0, f"value records not read: {err}", "error"))

    def parse_all(
        self,
        diagnostics: list[Diagnostic],
        progress: Callable[[int, int], bool | None] | None = None,
    ) -> int:
        """Read every record, appending what cannot be read to ``diagnostics``.

        ``progress(records done, records in all)`` is called every 1024 records and at
        the end; if it returns True, reading stops there. Returns the number of records
        read. Raises nothing.
        """
        total = len(self.starts)
        done = 0
        for done, _ in enumerate(self.checked(diagnostics), 1):
            if progress is not None and done % 1024 == 0 and progress(done, total):
                return done
        if progress is not None:
            progress(total, total)
        return total

    def count_text(self, sub: str) -> int:
        """How often ``sub`` (ASCII) occurs in the section's text, read :data:`SCAN`
        characters at a time (a whole pass: for a check on a damaged dump, not for
        every dump). Raises ``OSError`` if the text was released and cannot be read
        back."""
        raw = sub.encode("ascii")
        extra = max(len(sub) - 1, 0)  # an occurrence that starts in a piece ends past it
        found = 0
        for start in range(self.begin, self.end, SCAN):
            piece = self._read(start, min(start + SCAN + extra, self.end))
            found += piece.count(raw) if isinstance(piece, bytes) else piece.count(sub)
        return found

    def find_text(self, query: str, cancelled: Callable[[], bool] | None = None) -> list[int]:
        """The value ids, in dump order, of the records whose text holds ``query``
        (case-insensitive), scanned :data:`SCAN` characters at a time; [] if
        ``cancelled()`` turns true between two pieces, or if the text was released and
        cannot be read back (:attr:`problem` then says why)."""
        starts, ids = self.starts, self.ids
        # An ASCII dump's records are kept as bytes: a query that is not ASCII cannot be
        # in them, as in the same text decoded.
        as_bytes = isinstance(self.text, bytes)
        if as_bytes and not query.isascii():
            return []
        needle = cast("AnyStr", query.lower().encode("ascii") if as_bytes else query.lower())
        numbers: list[int] = []
        overlap = max(len(needle) - 1, 0)
        for piece_start in range(self.begin, self.end, SCAN):
            if cancelled is not None and cancelled():
                return []
            try:
                piece = self._read(piece_start, min(piece_start + SCAN + overlap, self.end))
            except OSError as err:
                self.problem = str(err)
                return []
            piece = piece.lower()
            at = piece.find(needle)
            while at >= 0:
                number = bisect_right(starts, piece_start + at) - 1
                if number >= 0 and (not numbers or numbers[-1] != number):
                    numbers.append(number)
                # Skip to the next record: one hit per record is enough.
                nxt = starts[number + 1] - piece_start if number + 1 < len(starts) else len(piece)
                at = piece.find(needle, max(at + 1, nxt))
        return [ids[n] for n in sorted(set(numbers))]
