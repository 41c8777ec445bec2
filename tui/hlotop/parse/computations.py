"""The metadata of the computations in a module's HLO text (``HloModule::ToString``),
for instructions whose own line has none: XLA drops the metadata of many fusions
(``%convert_convert_fusion.12 = f32[...] fusion(...), kind=kLoop, calls=
%fused_computation.205``) but keeps it on the instructions inside the computation
they call."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hlotop.parse.instruction import read_metadata

_HEADER = re.compile(r"^(?:ENTRY )?%([^\s(]+) .*\{$")
_CALLS = re.compile(r"\bcalls=%([^\s,}]+)")


def computation_metadata(lines: Iterable[str]) -> dict[str, tuple[str, int | None]]:
    """``{computation name: (op_name, stack_frame_id or None)}`` from a module's HLO
    text, one line at a time: the metadata of the computation's ``ROOT`` instruction
    when it has some, else of its last instruction that has an ``op_name``.
    Computations without any are left out. Raises nothing."""
    out: dict[str, tuple[str, int | None]] = {}
    current: str | None = None
    last: tuple[str, int | None] | None = None
    root: tuple[str, int | None] | None = None
    for line in lines:
        if current is None:
            header = _HEADER.match(line)
            if header is not None:
                current, last, root = header.group(1), None, None
            continue
        if line.startswith("}"):
            found = root or last
            if found is not None:
                out[current] = found
            current = None
            continue
        at = line.find("metadata={")
        if at < 0:
            continue
        meta = read_metadata(line, at)
        op_name = meta.get("op_name")
        if not op_name:
            continue
        frame = meta.get("stack_frame_id")
        here = (op_name, int(frame) if frame and frame.isdigit() else None)
        last = here
        if line.lstrip().startswith("ROOT "):
            root = here
    return out


def called_computation(instruction_text: str) -> str | None:
    """The computation an instruction calls (``calls=%fused_computation.205``), or
    None."""
    m = _CALLS.search(instruction_text)
    return m.group(1) if m else None


_FIRST_OPERAND = re.compile(r" [a-z][a-z0-9\-_]*\(%([^\s,)]+)")


def first_operand(instruction_text: str) -> str | None:
    """The name of an instruction's first operand (``fusion(%ynn_fusion.86, ...)`` ->
    ``ynn_fusion.86``), or None when it has none."""
    m = _FIRST_OPERAND.search(instruction_text)
    return m.group(1) if m else None
