"""Schedule steps: what runs at a step, what is live there, and the one-line summary
of a step that the timeline and the status bar share. No Textual here."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterator, Sequence
from heapq import merge
from itertools import accumulate, compress, islice, repeat
from operator import le

from rich.text import Text

from hlotop.model import BufferLiveRange, ModuleDump, ValueInfo, ValueRows, ValueTable
from hlotop.model.memory_space import space_name, space_names
from hlotop.safe_text import printable
from hlotop.units import human_bytes, with_commas


def instruction_at(dump: ModuleDump, step: int) -> str:
    """The instruction scheduled at ``step``, or ``"(end of program)"`` past the
    sequence (live-out values and parameters run to ``max``)."""
    seq = dump.live_range.instruction_sequence if dump.live_range else ()
    return seq[step] if 0 <= step < len(seq) else "(end of program)"


def live_counts(values: list[ValueInfo], max_time: int) -> list[int]:
    """How many values are live at each step 0..max_time."""
    diff = [0] * (max_time + 2)
    stop = max_time + 1
    for info in values:
        live = info.live
        if live is not None:
            start = live.start
            start = 0 if start < 0 else stop if start > stop else start
            end = live.end if live.end < max_time else max_time
            if end >= start:
                diff[start] += 1
                diff[end + 1] -= 1
    return list(accumulate(diff[:stop]))


def no_live_ranges(dump: ModuleDump) -> str:
    """Why a dump shows no live ranges: it has none, or (the first look at a big dump)
    they are still loading."""
    if dump.preview is not None:
        return "live ranges: loading…"
    return "no live ranges in this dump"


def step_summary(
    dump: ModuleDump,
    step: int,
    counts: Sequence[int],
    plain: bool = False,
    space: int | None = None,
) -> Text:
    """``step 11/15 fusion ◆ XLA peak · 9 values · 284.00MiB logical · HBM 200.00MiB
    occupied``: the values live at ``step``, their logical bytes (all memory spaces)
    and the bytes occupied in memory space ``space`` (default: the first the dump has).
    ``plain``: under ``NO_COLOR`` (the peak in bold, not red)."""
    a = dump.analysis
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    if not a.live_bytes:
        text.append(no_live_ranges(dump), style="dim")
        return text
    text.append(f"step {step}/{a.max_time} ", style="bold")
    text.append(printable(instruction_at(dump, step)))
    if step == a.peak_step:
        text.append(" ◆ XLA peak", style="bold" if plain else "bold red")
    text.append(
        f" · {with_commas(counts[step])} values · {human_bytes(a.live_bytes[step])} logical"
    )
    if space is None:
        space = 0 if 0 in a.occupied_bytes else min(a.occupied_bytes, default=0)
    curve = a.occupied_bytes.get(space)
    if curve:
        name = space_name(space, space_names(dump))
        text.append(f" · {name} {human_bytes(curve[step])} occupied")
    return text


def _xla_order(info: ValueInfo):
    """XLA's peak-list order (as :func:`hlotop.analysis.analyze.live_set`), then value id."""
    return (-info.logical_bytes, info.value.name, info.value.shape_index or (), info.value.id)


def live_range_of(info: ValueInfo) -> BufferLiveRange:
    """The live range of a value known to have one (a timeline row)."""
    live = info.live
    assert live is not None
    return live


def _start(info: ValueInfo) -> int:
    return live_range_of(info).start


def _end(info: ValueInfo) -> int:
    return live_range_of(info).end


class IdIndex:
    """Value id -> its position in a sequence of values, as a dict's ``get`` and
    ``keys`` give it, held in an array indexed by id, 4 bytes a position (value ids
    are dense, from 0; a synthetic value's negative id goes to a small dict): a
    twentieth of a dict's memory over 10^5 values."""

    __slots__ = ("_at", "_negative", "_ids")

    def __init__(self, ids: Sequence[int]):
        self._ids = ids
        top = max(ids, default=-1)
        at = self._at = array("i", [-1]) * (top + 1)
        self._negative: dict[int, int] = {}
        for position, vid in enumerate(ids):
            if vid >= 0:
                at[vid] = position
            else:
                self._negative[vid] = position

    def get(self, value_id: int, default: int | None = None) -> int | None:
        """The position of ``value_id``, or ``default`` if it is not in the sequence."""
        if value_id < 0:
            return self._negative.get(value_id, default)
        if value_id >= len(self._at):
            return default
        position = self._at[value_id]
        return default if position < 0 else position

    def __getitem__(self, value_id: int) -> int:
        position = self.get(value_id)
        if position is None:
            raise KeyError(value_id)
        return position

    def __contains__(self, value_id: object) -> bool:
        return isinstance(value_id, int) and self.get(value_id) is not None

    def __len__(self) -> int:
        return len(self._ids)

    def keys(self) -> Sequence[int]:
        """The ids, in sequence order."""
        return self._ids


class StepIndex:
    """The values that have a live range, ordered for the timeline (by start step,
    then id), with the live count at every step: built once per dump (a few passes
    over the values, most at C speed) and shared by the timeline and the live set."""

    def __init__(self, values: Sequence[ValueInfo], max_time: int):
        self.max_time = max_time
        if isinstance(values, ValueTable) and values.ranges is not None:
            self._of_columns(values, max_time)
            return
        rows = [v for v in values if v.live is not None]
        ids = [v.value.id for v in rows]
        if any(a > b for a, b in zip(ids, ids[1:], strict=False)):
            rows.sort(key=lambda v: v.value.id)
        rows.sort(key=_start)  # stable: by start, then id
        self.rows: Sequence[ValueInfo] = rows
        self.row_of = IdIndex(array("q", [v.value.id for v in rows]))
        self.counts = array("q", live_counts(rows, max_time))

    def _of_columns(self, table: ValueTable, max_time: int) -> None:
        """As ``__init__`` over ``table``'s columns: the rows a view of its rows
        (:class:`~hlotop.model.ValueRows`), none made (10^6 values: 56 bytes each)."""
        ranges = table.ranges
        assert ranges is not None
        live_rows, starts = table.live_rows, ranges.starts
        live = array("q", compress(range(len(table)), map(le, repeat(0), live_rows)))
        start_of = array("q", [starts[live_rows[r]] for r in live])
        # by start, then id: the table is by id, and the sort is stable
        order = array("q", sorted(range(len(live)), key=start_of.__getitem__))
        rows = array("q", map(live.__getitem__, order))
        self.rows = ValueRows(table, rows)
        self.row_of = IdIndex(array("q", map(table.ids.__getitem__, rows)))
        ends = ranges.ends
        diff = [0] * (max_time + 2)
        stop = max_time + 1
        for r in rows:
            k = live_rows[r]
            start = starts[k]
            start = 0 if start < 0 else stop if start > stop else start
            end = ends[k] if ends[k] < max_time else max_time
            if end >= start:
                diff[start] += 1
                diff[end + 1] -= 1
        self.counts = array("q", accumulate(diff[:stop]))


class LiveRows(Sequence[ValueInfo]):
    """The values live at one step in XLA's peak-list order, without a list of them:
    row ``i`` is the value of the ``i``-th smallest rank in ``ranks`` (ranks number the
    values in that order). Finding a value's row, and the logical bytes of the rows
    above one, cost a bisection and the rows asked for, not a pass over the live set
    (tens of thousands of values at a step of a big training step)."""

    __slots__ = (
        "_by_rank",
        "_ranks",
        "_rank_of",
        "_logical",
        "_prefix",
        "logical_bytes",
        "allocated_bytes",
    )

    def __init__(
        self,
        by_rank: Sequence[ValueInfo],
        ranks: Sequence[int],
        rank_of: IdIndex,
        logical: Sequence[int],
        logical_bytes: int,
        allocated_bytes: int,
    ):
        self._by_rank, self._ranks, self._rank_of = by_rank, ranks, rank_of
        self._logical = logical  # logical bytes by rank
        self._prefix: list[int] = []  # logical bytes of rows 0..i, as far as asked
        self.logical_bytes = logical_bytes  # of every row
        self.allocated_bytes = allocated_bytes

    @classmethod
    def of(cls, values: Sequence[ValueInfo]) -> LiveRows:
        """Rows of ``values``, already in order (XLA's peak list)."""
        rank_of = IdIndex([v.value.id for v in values])
        logical = array("q", [v.logical_bytes for v in values])
        allocated = sum(v.allocated_bytes for v in values)
        return cls(values, range(len(values)), rank_of, logical, sum(logical), allocated)

    def __len__(self) -> int:
        return len(self._ranks)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._by_rank[r] for r in self._ranks[i]]
        return self._by_rank[self._ranks[i]]

    def __iter__(self) -> Iterator[ValueInfo]:
        return map(self._by_rank.__getitem__, self._ranks)

    def index_of(self, value_id: int | None) -> int | None:
        """The row of value ``value_id``, or None if it is not live here."""
        rank = self._rank_of.get(value_id) if value_id is not None else None
        if rank is None:
            return None
        at = bisect_left(self._ranks, rank)
        return at if at < len(self._ranks) and self._ranks[at] == rank else None

    def cumulative(self, i: int) -> int:
        """Logical bytes of rows 0..``i`` (inclusive)."""
        prefix = self._prefix
        if i >= len(prefix):
            start = len(prefix)
            more = map(self._logical.__getitem__, self._ranks[start : i + 1])
            prefix.extend(islice(accumulate(more, initial=prefix[-1] if prefix else 0), 1, None))
        return prefix[i]


class LiveIndex:
    """The live set at any step, fast: the values are ranked once in XLA's order and
    kept by start and by end step; the set at a step is a sorted list of ranks,
    updated by the few values that start or end between two steps (a jump past many
    of them scans the start order once instead)."""

    _RESCAN = 2048  # values starting or ending on the way: beyond, a scan is cheaper
    _MERGE = 64  # changes at once: beyond, the rank list is merged, not edited in place

    def __init__(self, steps: StepIndex):
        """Index ``steps.rows`` (by start step); O(values log values), in the load
        thread (:class:`hlotop.ui.screens.main.PaneIndexes`)."""
        self.step: int | None = None
        self._ranks: list[int] = []  # live at self.step, ascending
        self._logical_total = 0
        self._allocated_total = 0
        if isinstance(steps.rows, ValueRows):
            self._of_columns(steps.rows)
            return
        rows = [v for v in steps.rows if _start(v) <= _end(v)]  # by start
        order = sorted(rows, key=_xla_order)
        self.by_rank: Sequence[ValueInfo] = order
        self.rank_of = rank_of = IdIndex(array("q", [v.value.id for v in order]))
        self.logical = array("q", [v.logical_bytes for v in order])
        self.allocated = array("q", [v.allocated_bytes for v in order])
        self.starts = array("q", map(_start, rows))  # ascending
        self.start_ranks = array("q", [rank_of[v.value.id] for v in rows])
        self.ends_by_start = array("q", map(_end, rows))
        by_end = sorted(rows, key=_end)
        self.ends = array("q", map(_end, by_end))  # ascending
        self.end_ranks = array("q", [rank_of[v.value.id] for v in by_end])
        self.starts_by_end = array("q", map(_start, by_end))

    def _of_columns(self, values: ValueRows) -> None:
        """As ``__init__`` over the columns of the table ``values`` are rows of (by
        start step): the values by rank a view (:class:`~hlotop.model.ValueRows`), no
        value made; the ranks sorted key by key, least significant first (the sorts
        are stable), not on a tuple made for each of 10^6 values."""
        table = values.table
        ranges = table.ranges
        assert ranges is not None
        live_rows, starts, ends = table.live_rows, ranges.starts, ranges.ends
        rows = array(
            "q", (r for r in values.rows if starts[live_rows[r]] <= ends[live_rows[r]])
        )  # by start
        row_start = array("q", (starts[live_rows[r]] for r in rows))
        row_end = array("q", (ends[live_rows[r]] for r in rows))
        # XLA's peak-list order (as live_set), then value id: by id (the table's
        # order), ShapeIndex, name, then bytes descending, each sort stable.
        by_id = sorted(rows)
        indexes = [index or () for index in table.shape_indexes()]
        by_id.sort(key=indexes.__getitem__)
        del indexes
        names = table.names()
        by_id.sort(key=names.__getitem__)
        del names
        logical_of = table.logical
        by_id.sort(key=logical_of.__getitem__, reverse=True)  # stable too
        by_rank = array("q", by_id)  # the table's rows, by rank
        del by_id
        self.by_rank = ValueRows(table, by_rank)
        self.rank_of = IdIndex(array("q", map(table.ids.__getitem__, by_rank)))
        self.logical = array("q", map(logical_of.__getitem__, by_rank))
        slot_rows, sizes = table.slot_rows, table.slots.sizes if table.slots else None
        self.allocated = array(
            "q",
            (
                sizes[slot_rows[r]] if sizes is not None and slot_rows[r] >= 0 else logical_of[r]
                for r in by_rank
            ),
        )
        place = array("q", bytes(8 * len(table)))  # the table's row -> its place in rows
        for i, r in enumerate(rows):
            place[r] = i
        rank_at = array("q", bytes(8 * len(rows)))  # rank of each of rows
        for rank, r in enumerate(by_rank):
            rank_at[place[r]] = rank
        del place
        self.starts = row_start  # ascending
        self.start_ranks = rank_at
        self.ends_by_start = row_end
        by_end = array("q", sorted(range(len(rows)), key=row_end.__getitem__))
        self.ends = array("q", map(row_end.__getitem__, by_end))  # ascending
        self.end_ranks = array("q", map(rank_at.__getitem__, by_end))
        self.starts_by_end = array("q", map(row_start.__getitem__, by_end))

    def at(self, step: int) -> LiveRows:
        """The values live at ``step`` (start <= step <= end), largest first."""
        if self.step is None or self._changes(self.step, step) > self._RESCAN:
            self._scan(step)
        elif step != self.step:
            self._move(self.step, step)
        self.step = step
        return LiveRows(
            self.by_rank,
            self._ranks.copy(),
            self.rank_of,
            self.logical,
            self._logical_total,
            self._allocated_total,
        )

    def _changes(self, a: int, b: int) -> int:
        """How many values start or end between steps ``a`` and ``b`` (at most)."""
        lo, hi = min(a, b), max(a, b)
        return (bisect_right(self.starts, hi) - bisect_right(self.starts, lo)) + (
            bisect_right(self.ends, hi) - bisect_left(self.ends, lo)
        )

    def _scan(self, step: int) -> None:
        k = bisect_right(self.starts, step)  # started at or before the step
        live = list(compress(self.start_ranks[:k], map(step.__le__, self.ends_by_start[:k])))
        live.sort()
        self._ranks = live
        self._logical_total = sum(map(self.logical.__getitem__, live))
        self._allocated_total = sum(map(self.allocated.__getitem__, live))

    def _move(self, a: int, b: int) -> None:
        """From the live set at ``a`` to the one at ``b``: only the values that start or
        end in between are looked at."""
        starts, ends = self.starts, self.ends
        if b > a:
            # Ended in [a, b-1] having been live at a; started in (a, b], live at b.
            i, j = bisect_left(ends, a), bisect_right(ends, b - 1)
            gone = [
                r
                for r, s in zip(self.end_ranks[i:j], self.starts_by_end[i:j], strict=True)
                if s <= a
            ]
            i, j = bisect_right(starts, a), bisect_right(starts, b)
            new = [
                r
                for r, e in zip(self.start_ranks[i:j], self.ends_by_start[i:j], strict=True)
                if e >= b
            ]
        else:
            # Started in (b, a] and live at a; ended in [b, a-1] having been live at b.
            i, j = bisect_right(starts, b), bisect_right(starts, a)
            gone = [
                r
                for r, e in zip(self.start_ranks[i:j], self.ends_by_start[i:j], strict=True)
                if e >= a
            ]
            i, j = bisect_left(ends, b), bisect_right(ends, a - 1)
            new = [
                r
                for r, s in zip(self.end_ranks[i:j], self.starts_by_end[i:j], strict=True)
                if s <= b
            ]
        ranks = self._ranks
        if len(gone) + len(new) > self._MERGE:
            dropped = set(gone)
            kept = [r for r in ranks if r not in dropped] if dropped else ranks
            ranks = self._ranks = list(merge(kept, sorted(new)))
        else:
            for r in gone:
                at = bisect_left(ranks, r)
                if at < len(ranks) and ranks[at] == r:
                    del ranks[at]
            for r in new:
                insort(ranks, r)
        logical, allocated = self.logical, self.allocated
        self._logical_total += sum(map(logical.__getitem__, new)) - sum(
            map(logical.__getitem__, gone)
        )
        self._allocated_total += sum(map(allocated.__getitem__, new)) - sum(
            map(allocated.__getitem__, gone)
        )
