"""Which value of a loaded module an OOM text's entry names.

An OOM text (:mod:`hlotop.model.oom`) lists buffers by their ``XLA label`` (on TPU the
instruction's text, so its name; on GPU only the opcode), shape and ``op_name``; a
buffer-assignment dump of the same compile has the values. The rules, tried in order:

1. ``label+shape``: the instruction name (TPU) or opcode (GPU; ``parameter`` for an
   ``Entry Parameter Subshape``) and the shape without layout;
2. ``op_name+shape``: the ``op_name`` metadata and the shape without layout.

Among the values a rule finds, the best has the entry's ``op_name`` too (for rule 1),
then allocated bytes nearest the entry's size, then the lowest value id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hlotop.model import InstructionText, ModuleDump, ValueInfo
from hlotop.model.oom import OomEntry
from hlotop.shapes import plain_shape_text

RULES = ("label+shape", "op_name+shape")


@dataclass(frozen=True, slots=True)
class OomLink:
    """An entry's value, the rule (one of :data:`RULES`) that found it, and how many
    values that rule found (1: unambiguous)."""

    value: ValueInfo
    rule: str
    candidates: int


def shape_without_layout(shape: str | None) -> str | None:
    """``shape`` as printed without its layouts and spaces: ``bf16[8,128]{1,0:T(8,128)}``
    -> ``bf16[8,128]``, ``(f32[2]{0}, s32[])`` -> ``(f32[2],s32[])``. None stays None."""
    return "".join(plain_shape_text(shape).split()) if shape else None


def _opcode(info: ValueInfo, instr: InstructionText | None) -> str | None:
    if instr is not None and instr.opcode:
        return instr.opcode
    return info.value.name.split(".")[0] or None  # NameUniquer: "<opcode>.<n>"


class OomLinker:
    """The values of ``module`` (:func:`hlotop.load`'s result), indexed once for
    linking many entries."""

    def __init__(self, module: ModuleDump):
        self.by_name: dict[str, list[ValueInfo]] = defaultdict(list)
        self.by_opcode: dict[tuple[str | None, str | None], list[ValueInfo]] = defaultdict(list)
        self.by_op_name: dict[tuple[str, str | None], list[ValueInfo]] = defaultdict(list)
        # every value's instruction, read in one pass in dump order
        instructions = module.defining_instructions()
        self.op_name: dict[int, str | None] = {}
        for info in module.analysis.values:
            shape = shape_without_layout(info.shape)
            instr = instructions.get(info.value.id)
            self.by_name[info.value.name].append(info)
            self.by_opcode[(_opcode(info, instr), shape)].append(info)
            op_name = self.op_name[info.value.id] = instr.op_name if instr else None
            if op_name:
                self.by_op_name[(op_name, shape)].append(info)
                self.by_op_name[(op_name, None)].append(info)

    def find(self, entry: OomEntry) -> OomLink | None:
        """The value ``entry`` names by the first rule of :data:`RULES` that finds any,
        or None. Raises nothing."""
        shape = shape_without_layout(entry.shape)
        if entry.instruction:
            named = self.by_name.get(entry.instruction, [])
            found = [v for v in named if shape is None or shape_without_layout(v.shape) == shape]
        elif entry.opcode and shape is not None:
            found = self.by_opcode.get((entry.opcode, shape), [])
        else:
            found = []
        if found:
            return self._best(entry, found, RULES[0])
        if entry.op_name:
            found = self.by_op_name.get((entry.op_name, shape), [])
            if found:
                return self._best(entry, found, RULES[1])
        return None

    def _best(self, entry: OomEntry, found: Sequence[ValueInfo], rule: str) -> OomLink:
        def key(v: ValueInfo) -> tuple[bool, int, int]:
            same_op = bool(entry.op_name) and self.op_name.get(v.value.id) == entry.op_name
            return not same_op, abs(v.allocated_bytes - entry.size_bytes), v.value.id

        return OomLink(min(found, key=key), rule, len(found))


def find_value(module: ModuleDump, entry: OomEntry) -> OomLink | None:
    """The value of ``module`` that OOM ``entry`` names (see the module's docstring for
    the rules), with the rule that matched; None when no rule finds one. For many
    entries, make one :class:`OomLinker`. Raises nothing."""
    return OomLinker(module).find(entry)


def link_entries(module: ModuleDump, entries: Iterable[OomEntry]) -> list[OomLink | None]:
    """:func:`find_value` for each of ``entries``, in order, indexing ``module`` once."""
    linker = OomLinker(module)
    return [linker.find(e) for e in entries]
