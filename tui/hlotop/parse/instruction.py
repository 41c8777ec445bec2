"""Grammar of the HLO instruction text after ``from instruction:`` (``HloInstruction::
ToString`` with default print options; FORMATS.md section 3.6).

The text is opaque except for what hlotop shows: the name, the instruction's shape
(with layout), the opcode and the metadata fields ``op_type``, ``op_name``,
``source_file`` and ``source_line``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from parsy import ParseError, regex, string

from hlotop.model import InstructionText
from hlotop.parse.tokens import LineGrammar
from hlotop.shapes.grammar import parse_shape_prefix

_HEAD = re.compile(r"%?([^\s=]+) = ")
_ARRAY = r"[a-z][a-z0-9]*\[[0-9,<=?]*\](?:\{[^{}]*\})?"
_ARRAY_SHAPE = re.compile(_ARRAY + "(?= )")
# A tuple of arrays (a while loop's state, a fusion's outputs: thousands of elements in
# a big model) in one match; nested tuples go to the shape grammar.
_FLAT_TUPLE_SHAPE = re.compile(rf"\((?:{_ARRAY}(?:, (?:/\*index=\d+\*/)?{_ARRAY})*)?\)(?= )")
_OPCODE = re.compile(r" ([a-z][a-z0-9\-_]*)\(")
# The three above in one match, as most instructions print (an array or a flat tuple).
_HEAD_SHAPE_OPCODE = re.compile(
    rf"{_HEAD.pattern}({_ARRAY_SHAPE.pattern}|{_FLAT_TUPLE_SHAPE.pattern})(?:{_OPCODE.pattern})?"
)

_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _unescape_one(m: re.Match) -> str:
    e = m.group(1)
    if e[0] == "x" and len(e) == 3:
        return chr(int(e[1:], 16))
    if e[0].isdigit():
        return chr(int(e, 8))
    return _SIMPLE_ESCAPES.get(e, e)


def unescape(text: str) -> str:
    """Undo absl::CEscape (``\\"``, ``\\\\``, ``\\n``, ``\\x1b``, ``\\033``)."""
    if "\\" not in text:
        return text
    if text.count("\\") == text.count("\\'") + text.count('\\"'):
        # Every backslash escapes a quote: a pytree path's op_name, params['h_0']['w'],
        # the commonest escaped text (one call, not a callback per quote).
        return text.replace("\\'", "'").replace('\\"', '"')
    return _ESCAPE.sub(_unescape_one, text)


_QUOTED_BODY = r'[^"\\]*(?:\\.[^"\\]*)*'  # unrolled: no alternation per character
_FIELD_RE = re.compile(rf'([a-z_]+)=(?:"({_QUOTED_BODY})"|([^\s}}"]+))')
# One token per field: key="CEscaped string" or key=bare-value.
_field = (
    regex(_FIELD_RE, group=(1, 2, 3))
    .combine(lambda key, quoted, bare: (key, unescape(quoted) if quoted is not None else bare))
    .desc('key="value" or key=value')
)
# The whole metadata block as one token; its fields split by the same field pattern.
_METADATA_BLOCK = re.compile(rf'metadata=\{{((?:[a-z_]+=(?:"{_QUOTED_BODY}"|[^\s}}"]+) ?)*)\}}')


def _metadata_fields(body: str) -> dict[str, str]:
    return {k: unescape(q) if q else b for k, q, b in _FIELD_RE.findall(body)}


# metadata={op_type="..." op_name="..." source_file="..." source_line=71 ...}
METADATA = LineGrammar(
    string("metadata={") >> _field.sep_by(string(" ")).map(dict) << string("}"),
    _METADATA_BLOCK.pattern,
    _metadata_fields,
)


def read_metadata(text: str, at: int) -> dict:
    """The fields of the ``metadata={...}`` block that starts at ``text[at]``
    (``{"op_name": ..., "stack_frame_id": "7"}``, strings unescaped); {} if it does
    not read. Raises nothing."""
    fast = _METADATA_BLOCK.match(text, at)
    if fast is not None:
        return _metadata_fields(fast.group(1))
    try:
        return METADATA.fine.parse_partial(text[at:])[0]
    except ParseError:
        return {}


# The metadata most instructions print, in one match: the fields hlotop reads, each at
# most once and in OpMetadata's order, no other field and no escape. Anything else goes
# to _METADATA_BLOCK and its fields, which read what this matches alike (a bare value
# runs to a space, a quote or the brace in both).
_COMMON_METADATA = re.compile(
    r'metadata=\{(?:op_type="([^"\\]*)" ?)?(?:op_name="([^"\\]*)" ?)?'
    r'(?:source_file="([^"\\]*)" ?)?(?:source_line=([^\s}"]+) ?)?'
    r'(?:stack_frame_id=([^\s}"]+))?\}'
)
_READ_FIELDS = ("op_type", "op_name", "source_file", "source_line", "stack_frame_id")


def read_metadata_fields(text: str, at: int) -> tuple[str | None, ...]:
    """``op_type``, ``op_name``, ``source_file``, ``source_line`` and
    ``stack_frame_id`` (each as printed, strings unescaped; None where the block has no
    such field or does not read) of the ``metadata={...}`` block at ``text[at]``: what
    :func:`read_metadata` gives for them. Raises nothing."""
    common = _COMMON_METADATA.match(text, at)
    if common is not None:
        return common.groups()
    meta = read_metadata(text, at)
    return tuple(map(meta.get, _READ_FIELDS))


def instruction_op_name(text: str) -> str | None:
    """``parse_instruction_text(text).op_name``: the op_name (unescaped; None if it
    has none) of the instruction whose ``HloInstruction::ToString`` text, as a
    ``from instruction:`` line prints it, is ``text``, read without the rest (the head
    matched and the metadata block read, no :class:`InstructionText` made: a column of
    every value's op_name, for the browser's filter). Raises nothing."""
    text = text.lstrip(" ")
    whole = _HEAD_SHAPE_OPCODE.match(text)
    if whole is None:
        return parse_instruction_text(text).op_name
    at = text.find("metadata={", whole.end(2))
    return None if at < 0 else read_metadata_fields(text, at)[1]


@lru_cache(maxsize=16384)
def parse_instruction_text(text: str) -> InstructionText:
    """Read the name, shape, opcode and metadata out of one instruction's text.

    ``text`` is everything after ``from instruction:`` (leading space optional).
    Parts that cannot be read are left None; raises nothing.
    """
    text = text.lstrip(" ")
    whole = _HEAD_SHAPE_OPCODE.match(text)
    if whole is not None:
        name, shape_text, opcode = whole.groups()
        after = whole.end(2)
    else:
        head = _HEAD.match(text)
        if head is None:
            return InstructionText(text)
        name = head.group(1)
        rest_at = head.end()
        try:
            _, remainder = parse_shape_prefix(text[rest_at:])
        except ParseError:
            return InstructionText(text, name)
        after = len(text) - len(remainder)
        shape_text = text[rest_at:after]
        op = _OPCODE.match(text, after)
        opcode = op.group(1) if op else None
    at = text.find("metadata={", after)
    if at < 0:
        return InstructionText(text, name, shape_text, opcode)
    op_type, op_name, source_file, line, frame = read_metadata_fields(text, at)
    return InstructionText(  # positional, in field order: one per record of --json
        text,
        name,
        shape_text,
        opcode,
        op_type,
        op_name,
        source_file,
        int(line) if line and line.isdigit() else None,
        int(frame) if frame and frame.isdigit() else None,
    )
