"""Filtering values by their fields: the filter of the browser's lists (``f``).

A filter is words separated by spaces; every word must match (case-insensitive
substring). A word matches a value when any of its fields holds it, or, written
``field:text``, when that field does: ``name`` (``fusion.12{0}``), ``op_name``
(``jit(step)/attn/dot_general``), ``shape`` (with its layout, ``bf16[8,128]{1,0}``),
``space`` (``S(1) VMEM``, ``HBM``) and ``kind`` (the kinds of the value's allocation
as XLA prints them: ``parameter 3, maybe-live-out``, ``preallocated-temp``;
``(no allocation)`` when no allocation line names the value). A word whose ``field:``
is not one of those is plain text (a layout holds ``:``: ``0:T(8,128)``).

The op_name is in each value's ``Used values`` record. On a big dump (records kept as
text) only the records whose text holds a word are parsed, as the search does
(:mod:`hlotop.analysis.search`); every other field is read once per dump into
lowercased columns, so a filter costs a few substring tests per value.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import add

from hlotop.model import BufferAllocation, UsedValues, ValueInfo
from hlotop.model.allocation import kinds_text
from hlotop.model.allocation_table import AllocationTable, TableByIndex
from hlotop.model.memory_space import space_name, space_tag
from hlotop.model.value_table import ValueTable
from hlotop.model.values import format_shape_index
from hlotop.parse.instruction import instruction_op_name

FIELDS = ("name", "op_name", "shape", "space", "kind")
NO_ALLOCATION = "(no allocation)"
_KEEP = 32  # filters whose matches are kept
# Values whose op_names are read one by one at most; beyond, a big dump's records' text
# is scanned for the word first.
_PARSE_AT_ONCE = 2000


@dataclass(frozen=True, slots=True)
class Term:
    """One word of a filter: ``needle`` (lowercased) in ``field`` (None: any field)."""

    field: str | None
    needle: str


@dataclass(frozen=True, slots=True)
class ValueFilter:
    """A filter as typed (``text``) and its words (:class:`Term`), all to match."""

    text: str
    terms: tuple[Term, ...]

    @classmethod
    def parse(cls, text: str) -> ValueFilter | None:
        """The filter ``text`` says; None when it has no word (no filter). Raises
        nothing: any text is a filter."""
        terms = []
        for word in text.split():
            field, colon, rest = word.partition(":")
            if colon and field.lower() in FIELDS:
                if rest:
                    terms.append(Term(field.lower(), rest.lower()))
                continue  # "shape:" alone, while typing: no word yet
            terms.append(Term(None, word.lower()))
        return cls(text.strip(), tuple(terms)) if terms else None

    def matches(self, fields: Mapping[str, str]) -> bool:
        """Whether ``fields`` (field -> lowercased text, every one of :data:`FIELDS`)
        match every word."""
        for term in self.terms:
            if term.field is not None:
                if term.needle not in fields[term.field]:
                    return False
            elif not any(term.needle in text for text in fields.values()):
                return False
        return True


def space_text(color: int, names: Mapping[int, str]) -> str:
    """The ``space`` field of memory space ``color``: its tag and name as the panes
    show them (``S(1) VMEM``, ``HBM``)."""
    tag, name = space_tag(color), space_name(color, names)
    return name if not tag or tag == name else f"{tag} {name}"


@dataclass(frozen=True, slots=True, eq=False)
class Matches:
    """What a :class:`ValueFilter` keeps of a dump: the ids of its values that match
    (``value_id in matches``), and the allocations holding one of them."""

    filter: ValueFilter
    ids: frozenset[int]
    index: FilterIndex

    def __contains__(self, value_id: object) -> bool:
        return value_id in self.ids

    def __len__(self) -> int:
        return len(self.ids)

    def keeps_allocation(self, alloc: BufferAllocation) -> bool:
        """Whether the allocation ``alloc`` holds a matching value; one that holds no
        value is kept by its own fields (:meth:`FilterIndex.allocation_matches`)."""
        if alloc.values:
            ids = self.ids
            return any(slot.value.id in ids for slot in alloc.values)
        return self.index.allocation_matches(alloc, self.filter)

    def kept_rows(self, table: AllocationTable) -> set[int]:
        """The rows of ``table`` (places in dump order, not allocation indexes) whose
        allocation :meth:`keeps_allocation` keeps, from the table's columns: one pass
        over its value lines' ids; only the allocations that hold no value are read
        (to match their own fields). A filtered tree is sorted again at each ``s``,
        and reading its 30 000 allocations took 500 ms at 46 MB."""
        n = len(table)
        holds_match = map(self.ids.__contains__, table.slots.ids)
        kept = set(compress(table.per_slot(range(n)), holds_match))
        firsts = table.firsts
        matches = self.index.allocation_matches
        for k in range(n):
            if firsts[k] == firsts[k + 1] and matches(table[k], self.filter):
                kept.add(k)
        return kept


class FilterIndex:
    """The values of one dump, ready to be filtered: :meth:`matching` gives the ids of
    the values a :class:`ValueFilter` keeps. The fields are read once, on first use;
    the matches of the last few filters are kept. Safe to call from a thread worker
    and the UI thread (one at a time: a lock)."""

    def __init__(
        self,
        values: Sequence[ValueInfo],
        allocation_of: Mapping[int, BufferAllocation],
        names: Mapping[int, str],
        records: object = None,
    ):
        """``values``: every value of the dump; ``allocation_of``: allocation index ->
        allocation; ``names``: memory space names (:func:`hlotop.model.memory_space.
        space_names`); ``records``: the dump's ``Used values`` records
        (:class:`~hlotop.model.UsedValues` on a big dump: op_names found through
        their text)."""
        self.values = values
        self.allocation_of = allocation_of
        self.names = names
        self.records = records
        self._lock = threading.Lock()
        self._columns: dict[str, list[str]] | None = None
        self._op_names: dict[int, str] = {}  # value id -> op_name lowercased ("": none)
        self._op_names_read = False  # every record's op_name read at once (big dumps)
        # Values whose op_names are read one by one at most; beyond, from one scan of
        # the records' text (every value's, once), or the records holding the word.
        self.parse_at_once = _PARSE_AT_ONCE
        self._made: OrderedDict[str, frozenset[int]] = OrderedDict()
        self._filters: dict[str, ValueFilter] = {}  # the filters of _made
        self._ids = [info.value_id for info in values]
        self._position = {vid: p for p, vid in enumerate(self._ids)}

    def matching(
        self, flt: ValueFilter, cancelled: Callable[[], bool] | None = None
    ) -> Matches | None:
        """What ``flt`` keeps of the dump; None if ``cancelled()`` turned true on the
        way (a newer filter was typed)."""
        ids = self._matching_ids(flt, cancelled)
        return Matches(flt, ids, self) if ids is not None else None

    def _matching_ids(
        self, flt: ValueFilter, cancelled: Callable[[], bool] | None
    ) -> frozenset[int] | None:
        with self._lock:
            found = self._made.get(flt.text)
            if found is not None:
                self._made.move_to_end(flt.text)
                return found
            columns = self._fields()
            # Typing on narrows: a kept filter this one refines (every word of it is in
            # a word of this one, on the same field) already holds every match.
            broader = self._broader(flt)
            ids = self._ids
            if broader is None:
                positions = list(range(len(ids)))
            else:
                at = self._position
                positions = sorted(at[i] for i in broader)
            for term in flt.terms:
                if cancelled is not None and cancelled():
                    return None
                positions = self._term_hits(term, columns, positions, cancelled)
            if cancelled is not None and cancelled():
                return None
            found = frozenset(ids[p] for p in positions)
            self._made[flt.text] = found
            self._filters[flt.text] = flt
            while len(self._made) > _KEEP:
                gone, _ = self._made.popitem(last=False)
                self._filters.pop(gone, None)
            return found

    def _broader(self, flt: ValueFilter) -> frozenset[int] | None:
        """The matches of the kept filter with the fewest that ``flt`` refines."""
        best: frozenset[int] | None = None
        for text, kept in self._made.items():
            old = self._filters[text]
            if all(
                any(t.field == o.field and o.needle in t.needle for t in flt.terms)
                for o in old.terms
            ) and (best is None or len(kept) < len(best)):
                best = kept
        return best

    def allocation_matches(self, alloc: BufferAllocation, flt: ValueFilter) -> bool:
        """Whether ``flt`` keeps an allocation that holds no value, by its own
        fields: its space and kinds, its parameter or output shape as its shape."""
        shape = alloc.parameter_shape or alloc.output_shape or ""
        fields = {
            "name": "",
            "op_name": "",
            "shape": shape.lower(),
            "space": space_text(alloc.color, self.names).lower(),
            "kind": kinds_text(alloc).lower(),
        }
        return flt.matches(fields)

    # -- the fields -------------------------------------------------------------------
    def _fields(self) -> dict[str, list[str]]:
        """Every field but op_name, one lowercased column each, made once."""
        if self._columns is None and isinstance(self.values, ValueTable):
            if isinstance(self.allocation_of, TableByIndex):
                self._columns = self._table_fields(self.values, self.allocation_of)
        if self._columns is None:
            spaces: dict[int, str] = {}
            kinds: dict[int, str] = {}
            name, shape, space, kind = [], [], [], []
            for info in self.values:
                name.append(info.value.label.lower())
                shape.append((info.shape or "").lower())
                color = info.color
                if color not in spaces:
                    spaces[color] = space_text(color, self.names).lower()
                space.append(spaces[color])
                slot = info.slot
                if slot is None:
                    kind.append(NO_ALLOCATION)
                    continue
                text = kinds.get(slot.allocation)
                if text is None:
                    alloc = self.allocation_of.get(slot.allocation)
                    text = kinds[slot.allocation] = kinds_text(alloc).lower() if alloc else ""
                kind.append(text)
            self._columns = {"name": name, "shape": shape, "space": space, "kind": kind}
        return self._columns

    def _table_fields(self, table: ValueTable, by_index: TableByIndex) -> dict[str, list[str]]:
        """:meth:`_fields` read from the columns of a dump's tables: no value or
        allocation made per row (2.6 s at 71 000 values, 30 000 allocations)."""
        indexes = table.shape_indexes()
        texts = {index: format_shape_index(index) for index in set(indexes)}
        labels = map(add, table.names(), map(texts.__getitem__, indexes))
        spaces = {color: space_text(color, self.names).lower() for color in set(table.colors)}
        kinds = [text.lower() for text in by_index.table.kinds_texts()]
        position = by_index.position
        kind = []
        for alloc_index in table.slot_allocations():
            if alloc_index is None:
                kind.append(NO_ALLOCATION)
            else:
                k = position.get(alloc_index)
                kind.append("" if k is None else kinds[k])
        return {
            "name": [label.lower() for label in labels],
            "shape": [(shape or "").lower() for shape in table.shapes],
            "space": list(map(spaces.__getitem__, table.colors)),
            "kind": kind,
        }

    def _term_hits(
        self,
        term: Term,
        columns: dict[str, list[str]],
        positions: list[int],
        cancelled: Callable[[], bool] | None,
    ) -> list[int]:
        """Those of ``positions`` (places in :attr:`values`) whose value ``term``
        matches: the cheap fields first, the op_name of the rest only."""
        needle = term.needle
        fields = FIELDS if term.field is None else (term.field,)
        hit: set[int] = set()
        rest = positions
        for field in fields:
            if field != "op_name":
                column = columns[field]
                found = [p for p in rest if needle in column[p]]
                hit.update(found)
                rest = [p for p in rest if p not in hit] if found else rest
        if "op_name" in fields and rest:
            hit.update(self._op_name_hits(needle, rest, cancelled))
        return [p for p in positions if p in hit]

    def _read_op_names(self, records: UsedValues, cancelled: Callable[[], bool] | None) -> None:
        """Every value's op_name (lowercased) into :attr:`_op_names`, from one scan
        of the records' text (:meth:`UsedValues.instruction_texts`), once a dump; a
        value whose record that scan cannot vouch for is left out (its record is read
        when asked). A value with several records has the first's, as
        :meth:`UsedValues.get` gives."""
        texts = records.instruction_texts(cancelled)
        if texts is None:
            return  # cancelled, or the text is gone: read one by one
        op_names, seen = self._op_names, set()
        for vid, text in zip(records.ids, texts, strict=True):
            if vid in seen:
                continue
            seen.add(vid)
            if text is not None and vid not in op_names:
                op_names[vid] = (instruction_op_name(text) or "").lower()
        self._op_names_read = True

    def _op_name_hits(
        self, needle: str, positions: list[int], cancelled: Callable[[], bool] | None
    ) -> list[int]:
        """Those of ``positions`` whose value's op_name holds ``needle`` (lowercased)."""
        values, ids = self.values, self._ids
        records = self.records
        op_names = self._op_names
        at_once = self.parse_at_once
        if isinstance(records, UsedValues) and len(positions) > at_once:
            unread = sum(1 for p in positions if ids[p] not in op_names)
            if unread > at_once and not self._op_names_read:
                self._read_op_names(records, cancelled)
                unread = sum(1 for p in positions if ids[p] not in op_names)
            if unread > at_once:
                # Only the records whose text holds the word can have it in their
                # op_name: a scan of the text at C speed, then those few parsed.
                wanted = set(records.find_text(needle, cancelled))
                positions = [p for p in positions if ids[p] in wanted]
        out: list[int] = []
        for n, p in enumerate(positions):
            if n % 512 == 511 and cancelled is not None and cancelled():
                return out  # the caller sees cancelled() and drops the result
            vid = ids[p]
            op_name = op_names.get(vid)
            if op_name is None:
                op_name = op_names[vid] = (values[p].op_name or "").lower()
            if needle in op_name:
                out.append(p)
        return out
