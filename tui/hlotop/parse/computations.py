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
    Computations without any are left out. Raises nothing.

    A computation's lines with metadata are kept until its ``}``; then only the
    ``ROOT``'s is read, or the others' from the last back until one has an op_name (a
    256-layer model's 57 MB text: each of its instructions' metadata read took 1 s)."""
    out: dict[str, tuple[str, int | None]] = {}
    current: str | None = None
    with_metadata: list[str] = []
    for line in lines:
        if current is None:
            header = _HEADER.match(line)
            if header is not None:
                current, with_metadata = header.group(1), []
            continue
        if line.startswith("}"):
            found = _root_or_last(with_metadata)
            if found is not None:
                out[current] = found
            current = None
        elif "metadata={" in line:
            with_metadata.append(line)
    return out


def _op_name_of(line: str) -> tuple[str, int | None] | None:
    meta = read_metadata(line, line.find("metadata={"))
    op_name = meta.get("op_name")
    if not op_name:
        return None
    frame = meta.get("stack_frame_id")
    return op_name, int(frame) if frame and frame.isdigit() else None


def _root_or_last(lines: list[str]) -> tuple[str, int | None] | None:
    """The metadata of the ``ROOT`` among a computation's ``lines`` (those with
    metadata, in order) if it has an op_name, else of the last that has one."""
    root = next((line for line in reversed(lines) if line.lstrip().startswith("ROOT ")), None)
    if root is not None and (found := _op_name_of(root)) is not None:
        return found
    for line in reversed(lines):
        if line is not root and (found := _op_name_of(line)) is not None:
            return found
    return None


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
