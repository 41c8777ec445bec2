"""What the question "why is this value live?" looks up in one module: each
instruction's schedule step, the instruction behind a name, the entry parameters an
output aliases, and the values that share a value's slice of its allocation. Made once
per module (:class:`WhyIndex`), each part on first need, so that asking about one value
(the browser's detail card, ``hlotop why``) costs a few look-ups and record reads."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from hlotop.analysis.memory_stats import ALIAS_FROM_ALLOCATIONS, ALIAS_FROM_HLO
from hlotop.model import InstructionText, ModuleDump, ShapeIndex, ValueInfo, ValueTable


@dataclass(frozen=True, slots=True)
class Parameter:
    """An entry parameter a value is (``BufferAllocation``'s ``parameter P ... at
    ShapeIndex {i}``), and whether the caller donated it.

    ``donated``: whether ``(number, index)`` aliases an output. Exact where the
    module's HLO text beside the dump was read (``donation_source`` is then
    ``"input_output_alias"``, :data:`ALIAS_FROM_HLO`); inferred otherwise, from its
    allocation being maybe-live-out as well (``"parameter and maybe-live-out"``, the
    rule :func:`hlotop.analysis.memory_stats.memory_stats` falls back on)."""

    number: int
    index: ShapeIndex
    donated: bool
    donation_source: str


class WhyIndex:
    """Look-ups over one module (:class:`~hlotop.model.ModuleDump`) for
    :mod:`hlotop.analysis.why`. Read-only once made; each table is built on first use
    (the instruction names: one pass over the values, ~30 ms at 100 MB) and kept."""

    def __init__(self, module: ModuleDump):
        self.module = module
        live = module.live_range
        self.sequence: tuple[str, ...] = live.instruction_sequence if live is not None else ()
        self.max_time = module.analysis.max_time
        aliases = module.sections.input_output_alias
        self.aliased: frozenset[tuple[int, ShapeIndex]] | None = (
            None
            if aliases is None
            else frozenset((a.parameter, tuple(a.parameter_index)) for a in aliases)
        )
        self._steps: NameIndex | None = None
        self._by_name: NameIndex | None = None
        self._phis: frozenset[str] | None = None
        self._instructions: dict[str, InstructionText | None] = {}
        # allocation -> its non-empty slots by offset: (offsets, (offset, end, value id,
        # its ValueInfo) each, the largest size)
        self._slices: dict[
            int, tuple[array[int], list[tuple[int, int, int, ValueInfo | None]], int]
        ] = {}

    def warm(self) -> WhyIndex:
        """Build the tables of instruction names and value ids now (a loading thread
        can, so that the first card a browser shows does not wait ~30 ms at 100 MB);
        returns self."""
        self.step_of("")
        self.first_value("")
        self.module.analysis.by_id.get(-1)  # its ids laid out (40 ms at 45 MB)
        return self

    def step_of(self, name: str) -> int | None:
        """The step of instruction ``name`` in the dump's ``InstructionSequence``
        (XLA's flattened schedule), or None where it is not there (an instruction of
        a fusion or thread-local computation, which XLA does not flatten)."""
        return self.steps().get(name)

    def steps(self) -> NameIndex:
        """Instruction name -> its step (:meth:`step_of` of each; ``.get(name)``), to
        look up many names in a loop."""
        steps = self._steps
        if steps is None:  # each instruction is there once (XLA CHECKs it)
            steps = self._steps = NameIndex(self.sequence)
        return steps

    def first_value(self, name: str) -> ValueInfo | None:
        """The value with the lowest id that instruction ``name`` defines (its whole
        value ``{}`` where its shape is a tuple), or None where it defines none that
        the dump lists (a get-tuple-element or bitcast passes its operand's on)."""
        by_name = self._by_name
        values = self.module.analysis.values
        if by_name is None:  # one pass over the names (the values are by id)
            names = (
                values.names() if isinstance(values, ValueTable) else [i.value.name for i in values]
            )
            by_name = self._by_name = NameIndex(names)
        r = by_name.first(name)
        return None if r is None else values[r]

    def instruction(self, name: str) -> InstructionText | None:
        """Instruction ``name`` as a ``from instruction:`` line prints it: the record
        of :meth:`first_value`, read on first need and kept; None when it defines no
        value with a record."""
        if name in self._instructions:
            return self._instructions[name]
        info = self.first_value(name)
        used = info.used if info is not None else None
        found = used.instruction if used is not None else None
        self._instructions[name] = found
        return found

    def read_instructions(self, names: set[str]) -> None:
        """Read the records of :meth:`instruction` for each of ``names`` now, in dump
        order (their first values' ids), so that later look-ups find them kept: read
        in order, each comes from the window of the file read last."""
        firsts = [(f.value.id, n) for n in names if (f := self.first_value(n)) is not None]
        firsts.sort()
        for _, name in firsts:
            self.instruction(name)

    def opcode(self, name: str) -> str | None:
        """Instruction ``name``'s opcode (:meth:`instruction`'s), or None if unknown."""
        instr = self.instruction(name)
        return instr.opcode if instr is not None else None

    def phi_names(self) -> frozenset[str]:
        """The instructions whose :meth:`first_value` is a phi: the only ones
        :meth:`is_while` reads a record for (a set, to test many names in a loop)."""
        phis = self._phis
        if phis is None:
            values = self.module.analysis.values
            phis = self._phis = frozenset(i.value.name for i in values if i.value.is_phi)
        return phis

    def is_while(self, name: str) -> bool:
        """Whether instruction ``name`` is a ``while`` (its record's opcode). Only an
        instruction that defines a phi value is looked at: a while's values are phis
        (XLA's dataflow in SSA form, as buffer assignment runs it), and most names are
        not whiles, whose records need not be read."""
        first = self.first_value(name)
        return first is not None and first.value.is_phi and self.opcode(name) == "while"

    def parameter(
        self, info: ValueInfo, instr: InstructionText | None = None, read: bool = False
    ) -> Parameter | None:
        """The entry parameter ``info`` is, or None: its allocation holds an entry
        parameter (``parameter P ... at ShapeIndex {i}``) and its defining instruction
        is a ``parameter`` (where the record says no opcode, as before 2021-09: a value
        of that allocation live from step 0). ``instr``: its record's instruction where
        the caller has read the record (``read``), else it is read here."""
        slot = info.slot
        if slot is None:
            return None
        alloc = self.module.analysis.allocation_of.get(slot.allocation)
        if alloc is None or alloc.parameter is None:
            return None
        if not read:
            used = info.used
            instr = used.instruction if used is not None else None
        if instr is not None and instr.opcode is not None:
            if instr.opcode != "parameter":
                return None
        elif info.live is None or info.live.start != 0:
            return None
        index = tuple(alloc.parameter_shape_index or ())
        if self.aliased is not None:
            return Parameter(
                alloc.parameter, index, (alloc.parameter, index) in self.aliased, ALIAS_FROM_HLO
            )
        return Parameter(alloc.parameter, index, alloc.maybe_live_out, ALIAS_FROM_ALLOCATIONS)

    def is_output(self, info: ValueInfo) -> bool:
        """Whether ``info`` is live out of the program: its allocation is
        maybe-live-out and its live range runs to the schedule's end (``max``), where
        XLA ends the range of a value at the entry computation's root. A read-only
        entry parameter also runs to the end; :meth:`parameter` tells those apart."""
        slot, live = info.slot, info.live
        if slot is None or live is None or live.end < self.max_time:
            return False
        alloc = self.module.analysis.allocation_of.get(slot.allocation)
        return alloc is not None and alloc.maybe_live_out

    def sharers(self, info: ValueInfo) -> list[ValueInfo]:
        """The other values whose slot in ``info``'s allocation overlaps its slot's
        bytes ``[offset, offset + size)`` (the allocation's value lines), by id; none for
        an empty slot: a donated parameter and the output that reuses it, a loop's
        state and the values it takes in turn, values XLA packed into one slice at
        other times."""
        slot = info.slot
        if slot is None or not slot.size:
            return []
        slices = self._slices.get(slot.allocation)
        if slices is None:
            alloc = self.module.analysis.allocation_of.get(slot.allocation)
            if alloc is None:
                return []
            by_id = self.module.analysis.by_id
            slots = sorted(
                (s.offset, s.offset + s.size, s.value.id, by_id.get(s.value.id))
                for s in alloc.values
                if s.size
            )
            widest = max((end - offset for offset, end, _, _ in slots), default=0)
            slices = self._slices[slot.allocation] = (
                array("q", [offset for offset, _, _, _ in slots]),
                slots,
                widest,
            )
        offsets, slots, widest = slices
        start, stop = slot.offset, slot.offset + slot.size
        me = info.value.id
        # A slot that overlaps starts before stop and less than the widest slot before
        # start: only those are looked at (a big temporary allocation holds 10^4).
        first = bisect_left(offsets, start - widest + 1)
        last = bisect_left(offsets, stop)
        found = [
            (vid, other)
            for _, end, vid, other in slots[first:last]
            if start < end and vid != me and other is not None
        ]
        found.sort(key=lambda f: f[0])
        return [other for _, other in found]


class NameIndex:
    """The positions of ``names`` by name, as ``{name: i for i, name in ...}`` gives
    the last (and its reverse the first), in one sorted array: each name's hash, its
    low bits dropped, with its position in them (8 bytes a name, where a dict of 10^6
    names and their positions took 70, and the sort is of one list of ints). Read-only."""

    __slots__ = ("names", "shift", "keys")

    def __init__(self, names: Sequence[str]):
        self.names = names
        self.shift = shift = max(1, len(names).bit_length())
        # (hash, low bits dropped) << shift | position: sorted, the positions of a
        # name's equal keys come in order
        self.keys = array(
            "q", sorted(((hash(n) >> shift) << shift) | k for k, n in enumerate(names))
        )

    def _at(self, name: str) -> Iterator[int]:
        """The positions of ``name``, ascending."""
        shift, keys, names = self.shift, self.keys, self.names
        high = hash(name) >> shift
        i = bisect_left(keys, high << shift)
        stop = bisect_left(keys, (high + 1) << shift)
        mask = (1 << shift) - 1
        while i < stop:
            k = keys[i] & mask
            if names[k] == name:
                yield k
            i += 1

    def first(self, name: str) -> int | None:
        """The first position of ``name``, or None."""
        return next(self._at(name), None)

    def last(self, name: str) -> int | None:
        """The last position of ``name``, or None."""
        found = None
        for k in self._at(name):
            found = k
        return found

    def get(self, name: str, default: int | None = None) -> int | None:
        """:meth:`last`, or ``default`` where ``name`` is not there (as a dict of the
        names to their positions gives)."""
        found = self.last(name)
        return default if found is None else found
