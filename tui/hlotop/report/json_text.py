"""The parts of the ``--json`` document a big dump has most of (an allocation with its
value lines, a value record) written as compact JSON text directly, without building
dicts for the encoder: the encoder's cost per object was most of ``--json``'s time on
a 100 MB dump. The values are those of :mod:`hlotop.report.json_doc`'s dicts, key for key and
in the same order (a test compares the two documents)."""

from __future__ import annotations

from json.encoder import encode_basestring_ascii

from hlotop.model.memory_space import space_name

_string = encode_basestring_ascii  # a JSON string, as json.dumps writes it (C)


def _strings(items) -> str:
    return "[" + ",".join(map(_string, items)) + "]"


def used_value_json(r, frames) -> str:
    """One ``Used values`` record (a :class:`~hlotop.model.UsedValue`; ``frames`` the
    module's :class:`~hlotop.model.StackFrameTable` or None) as JSON text."""
    instr = r.instruction
    stack = (
        frames.stack(instr.stack_frame_id)
        if (frames is not None and instr is not None and instr.stack_frame_id is not None)
        else ()
    )
    value = r.value
    uses = r.use_texts()
    if instr is None:
        described = '"instruction":null,"opcode":null,"instruction_shape":null,"op_name":null'
        source = "null"
    else:
        described = (
            f'"instruction":{_optional(instr.name)},"opcode":{_optional(instr.opcode)},'
            f'"instruction_shape":{_optional(instr.shape)},'
            f'"op_name":{_optional(instr.op_name)}'
        )
        source = "null"
        if instr.source_file:
            source = _source(instr.source_file, instr.source_line)
        elif stack:
            source = _source(stack[0].file, stack[0].line)
    frames_json = ",".join(
        f'{{"file":{_string(f.file)},"line":{number_json(f.line)},'
        f'"function":{_string(f.function)}}}'
        for f in stack
    )
    return (
        f'{{"id":{value.id},"name":{_string(value.name)},'
        f'"shape_index":{_optional_numbers(value.shape_index)},'
        f'"positions":{_strings(r.position_texts())},'
        f'"uses":{"null" if uses is None else _strings(uses)},'
        f'{described},"source":{source},"stack":[{frames_json}]}}'
    )


def _optional(text: str | None) -> str:
    return "null" if text is None else _string(text)


def number_json(n: int | None) -> str:
    """An int, or null."""
    return "null" if n is None else str(n)


def _optional_numbers(ns) -> str:
    return "null" if ns is None else "[" + ",".join(map(str, ns)) + "]"


def _source(file: str, line: int | None) -> str:
    return f'{{"file":{_string(file)},"line":{number_json(line)}}}'


def allocation_json(x, names) -> str:
    """One :class:`~hlotop.model.BufferAllocation` with its value lines as JSON text;
    ``names``: the memory spaces' names (:func:`hlotop.model.memory_space.space_names`)."""
    parameter = (
        "null"
        if x.parameter is None
        else (
            f'{{"number":{x.parameter},"shape":{_optional(x.parameter_shape)},'
            f'"shape_index":{_optional_numbers(x.parameter_shape_index)}}}'
        )
    )
    values = ",".join(
        f'{{"id":{s.value.id},"name":{_string(s.value.name)},'
        f'"shape_index":{_optional_numbers(s.value.shape_index)},'
        f'"phi":{"true" if s.value.is_phi else "false"},"color":{number_json(s.value.color)},'
        f'"offset":{s.offset},"size":{s.size},"shape":{_string(s.shape)}}}'
        for s in x.values
    )
    return (
        f'{{"index":{x.index},"size":{x.size},"color":{x.color},'
        f'"memory_space":{_string(space_name(x.color, names))},'
        f'"kinds":{_strings(x.kinds)},"parameter":{parameter},'
        f'"output_shape":{_optional(x.output_shape)},"values":[{values}]}}'
    )
