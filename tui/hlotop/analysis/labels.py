"""A value's label under each grouping key (scope, phase, source, opcode, shape,
dtype, kind, memory space, parameter path), from its defining instruction's metadata,
the computation it calls (the HLO text beside the dump) or its first operand's, read
once per value (:class:`Labeller`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hlotop.analysis.scope import (
    ScopeRule,
    argument_scope,
    phase_of,
    pytree_path,
    scope_of,
    user_frame,
)
from hlotop.analysis.totals import first_kind
from hlotop.model import (
    InstructionText,
    ModuleDump,
    SourceFrame,
    UsedValues,
    ValueInfo,
    format_shape_index,
    shape_of,
    source_of,
    stack_of,
)
from hlotop.model.memory_space import space_name, space_names
from hlotop.parse.computations import called_computation, first_operand
from hlotop.shapes import ArrayShape, without_layouts

GROUP_KEYS = ("scope", "phase", "source", "opcode", "shape", "dtype", "kind", "space", "param")
ACCOUNTINGS = ("logical", "occupied")
NO_OP_NAME = "(no op_name)"
TOP_SCOPE = "(top level)"
UNKNOWN = "(unknown)"
NOT_A_PARAMETER = "(not a parameter)"
# Instructions that carry their operand's data on (XLA adds them with no metadata): a
# value of one takes its first operand's origin, through at most _OPERAND_DEPTH.
_PASS_THROUGH = {
    "fusion",
    "copy",
    "convert",
    "bitcast",
    "transpose",
    "reshape",
    "copy-start",
    "copy-done",
}
_OPERAND_DEPTH = 4


@dataclass
class Labeller:
    """Each grouping key's label of a value (see :func:`group_live_set`)."""

    module: ModuleDump
    fold: bool = True
    rules: Sequence[ScopeRule] = ()
    update_from: int | None = None  # the first step of the backward pass, if any

    def __post_init__(self) -> None:
        self.names = space_names(self.module)
        # The metadata of the computations in the HLO text beside the dump: the whole
        # text is read, so only once an instruction without metadata asks for it.
        self._read_called = self.module.sections.called_metadata
        self._called: Mapping[str, tuple[str, int | None]] | None = None
        self._origins: dict[int, tuple[str | None, tuple[SourceFrame, ...]]] = {}
        # value id -> its defining instruction: a record is read once per labeller, not
        # once per key (each read of a released record goes back to the file)
        self._instructions: dict[int, InstructionText | None] = {}
        self._steps: dict[str, int] | None = None
        self._by_name = {
            i.value.name: i for i in self.module.analysis.values if not i.value.shape_index
        }
        # The backward pass begins at the first value under transpose(: only the
        # records whose text says transpose( are read (a 100 MB dump's 10^5 records
        # parsed one by one took seconds).
        a = self.module.analysis
        records = self.module.sections.used_values
        candidates: Sequence[ValueInfo]
        if isinstance(records, UsedValues):
            candidates = [a.by_id[i] for i in records.find_text("transpose(") if i in a.by_id]
        else:
            candidates = a.values
        self.update_from = None
        starts = sorted(
            ((i.live.start, i.value.id, i) for i in candidates if i.live is not None),
            key=lambda t: (t[0], t[1]),
        )
        for start, _, info in starts:
            op_name = self.origin(info)[0]
            if op_name and "transpose(" in op_name:  # the earliest: the first that is
                self.update_from = start
                break

    @property
    def called(self) -> Mapping[str, tuple[str, int | None]]:
        """Each computation's metadata (name -> (op_name, stack frame id)) from the HLO
        text beside the dump, read on first need; {} without one."""
        called = self._called
        if called is None:
            reader = self._read_called
            called = self._called = reader() if reader is not None else {}
        return called

    def steps(self) -> Mapping[str, int]:
        """Each scheduled instruction's step (its name -> its index in the live ranges'
        ``InstructionSequence``), made on first need; {} without live ranges."""
        if self._steps is None:
            live = self.module.live_range
            sequence = live.instruction_sequence if live is not None else ()
            self._steps = {name: step for step, name in enumerate(sequence) if name}
        return self._steps

    def value_named(self, name: str) -> ValueInfo | None:
        """The value (ShapeIndex ``{}``) the instruction ``name`` defines, or None."""
        return self._by_name.get(name)

    def instruction(self, info: ValueInfo) -> InstructionText | None:
        """``info``'s defining instruction (its ``Used values`` record's), read on first
        need and kept; None if it has no record."""
        vid = info.value.id
        try:
            return self._instructions[vid]
        except KeyError:
            used = info.used
            instr = self._instructions[vid] = used.instruction if used is not None else None
            return instr

    def read_records(self, values: Iterable[ValueInfo] | None = None) -> None:
        """Read the defining instruction of ``values`` (default: every value with a
        record) now, in dump order, for a caller that labels many values (``hlotop
        diff``, a live set grouped): at random, each read went back to the file for a
        piece of it, and a 100 MB dump's records took a minute. Every record: one pass
        (:meth:`ModuleDump.defining_instructions`, which also takes their
        diagnostics); some: each at its place in the file, in order."""
        table = self.module.sections.used_values
        known = self.module.analysis.by_id
        if values is None:
            for vid, instr in self.module.defining_instructions().items():
                if vid in known:
                    self._instructions.setdefault(vid, instr)
            return
        wanted = [i for i in values if i.value.id not in self._instructions]
        if not isinstance(table, UsedValues):
            for info in wanted:
                self.instruction(info)
            return
        numbered = []
        for info in wanted:
            number = table.number_of(info.value.id)
            if number is None:
                self._instructions[info.value.id] = None
            else:
                numbered.append((number, info.value.id))
        for number, vid in sorted(numbered):
            read = table.record(number)
            self._instructions[vid] = read.instruction if read is not None else None

    def opcode(self, info: ValueInfo) -> str | None:
        """The opcode of ``info``'s defining instruction, or None."""
        instr = self.instruction(info)
        return instr.opcode if instr is not None else None

    def source(self, info: ValueInfo) -> str | None:
        """``file:line`` that made ``info`` (:func:`~hlotop.model.source_of`), or None."""
        return source_of(self.instruction(info), self.module.sections.stack_frames)

    def origin(self, info: ValueInfo, depth: int = 0) -> tuple[str | None, tuple[SourceFrame, ...]]:
        """The value's ``op_name`` and Python stack: its instruction's metadata; for
        an instruction with none (XLA drops it from many fusions) the metadata of the
        computation it calls (its root's, else its last instruction's) from the
        module's HLO text beside the dump; for a copy, convert, bitcast or a fusion of
        those that XLA made with no metadata at all, its first operand's origin.
        ``(None, ())`` when nothing says."""
        known = self._origins.get(info.value.id)
        if known is not None:
            return known
        instr = self.instruction(info)
        found: tuple[str | None, tuple[SourceFrame, ...]] = (None, ())
        if instr is not None and instr.op_name:
            found = (instr.op_name, stack_of(instr, self.module.sections.stack_frames))
        elif instr is not None:
            called = self.called
            callee = called_computation(instr.text) if called else None
            meta = called.get(callee) if callee else None
            if meta is not None:
                frames = self.module.sections.stack_frames
                frame_id = meta[1]
                stack = frames.stack(frame_id) if frames and frame_id is not None else ()
                found = (meta[0], stack)
            elif depth < _OPERAND_DEPTH and instr.opcode in _PASS_THROUGH:
                operand = self._by_name.get(first_operand(instr.text) or "")
                if operand is not None and operand is not info:
                    found = self.origin(operand, depth + 1)
        self._origins[info.value.id] = found
        return found

    def is_argument(self, info: ValueInfo) -> bool:
        """Whether ``info`` is an entry parameter's value (its instruction is a
        ``parameter`` and its allocation holds an entry parameter)."""
        if self.opcode(info) != "parameter" or info.slot is None:
            return False
        alloc = self.module.analysis.allocation_of.get(info.slot.allocation)
        return alloc is not None and alloc.parameter is not None

    def label(self, info: ValueInfo, key: str) -> str:
        """``info``'s label for grouping key ``key`` (one of :data:`GROUP_KEYS`); a
        named group (``(no op_name)``, ``(unknown)`` ...) where the dump does not say.
        Raises ValueError for an unknown key."""
        if key == "phase":
            return self.phase(info)
        if key in ("scope", "param"):
            op_name = self.origin(info)[0]
            argument = self.is_argument(info)
            if argument and op_name:
                path = pytree_path(op_name, self.fold)
                return path if key == "param" else argument_scope(path)
            if key == "param":
                # An entry parameter with no op_name (XLA's own, a plain jit) is named
                # as its allocation line names it, "parameter 3": the phase key calls
                # it an argument, and "(not a parameter)" said the opposite.
                return self._parameter_number(info) if argument else NOT_A_PARAMETER
            scope = scope_of(op_name, self.fold, self.rules)
            return NO_OP_NAME if scope is None else scope or TOP_SCOPE
        if key == "source":
            frame = user_frame(self.origin(info)[1])
            if frame is not None:
                return f"{frame.file}:{frame.line}"
            return self.source(info) or UNKNOWN
        if key == "opcode":
            return self.opcode(info) or UNKNOWN
        if key == "shape":
            return without_layouts(info.shape) if info.shape else UNKNOWN
        if key == "dtype":
            shape = shape_of(info.shape) if info.shape else None
            if shape is None:
                return UNKNOWN
            return shape.element_type if isinstance(shape, ArrayShape) else "tuple"
        if key == "kind":
            if info.slot is None:
                return "(no allocation)"
            alloc = self.module.analysis.allocation_of.get(info.slot.allocation)
            return first_kind(alloc) if alloc is not None else UNKNOWN
        if key == "space":
            return space_name(info.color, self.names)
        raise ValueError(f"unknown group key {key!r}")

    def _parameter_number(self, info: ValueInfo) -> str:
        """``"parameter 3"`` (``"parameter 3 {1}"`` for a tuple's element): the entry
        parameter whose allocation holds ``info``, as XLA's allocation line says it."""
        assert info.slot is not None  # an argument's value has its allocation
        alloc = self.module.analysis.allocation_of[info.slot.allocation]
        idx = format_shape_index(alloc.parameter_shape_index)
        return f"parameter {alloc.parameter}" + (f" {idx}" if idx not in ("", "{}") else "")

    def phase(self, info: ValueInfo) -> str:
        """:func:`hlotop.analysis.scope.phase_of`, and ``update`` for a value outside
        the forward and backward passes made after the backward pass began."""
        op_name, stack = self.origin(info)
        phase = phase_of(op_name, self.is_argument(info), stack)
        if (
            phase == "other"
            and self.update_from is not None
            and info.live is not None
            and info.live.start >= self.update_from
            and op_name
        ):
            return "update"
        return phase
