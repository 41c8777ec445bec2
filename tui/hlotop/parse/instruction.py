"""Grammar of the HLO instruction text after ``from instruction:`` (``HloInstruction::
ToString`` with default print options; FORMATS.md section 3.6).

The text is opaque except for what hlotop shows: the name, the instruction's shape
(with layout), the opcode and the metadata fields ``op_type``, ``op_name``,
``source_file`` and ``source_line``.
"""

from __future__ import annotations

import re
from functools import lru_cache

from parsy import ParseError, alt, regex, seq, string

from hlotop.model import InstructionText
from hlotop.parse.shapes import parse_shape_prefix

_HEAD = re.compile(r"%?([^\s=]+) = ")
_ARRAY_SHAPE = re.compile(r"[a-z][a-z0-9]*\[[0-9,<=?]*\](?:\{[^{}]*\})?(?= )")
_OPCODE = re.compile(r" ([a-z][a-z0-9\-_]*)\(")

_escape = regex(r'\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)', group=1).map(
    lambda e: {"n": "\n", "t": "\t", "r": "\r"}.get(e, chr(int(e[1:], 16)) if e[0] == "x"
                                                  else chr(int(e, 8)) if e[0].isdigit() else e))
_quoted = (string('"') >> alt(regex(r'[^"\\]+'), _escape).many().concat() << string('"')).desc(
    "a quoted string")
_bare = regex(r"[^\s}\"]+")
_field = seq(regex(r"[a-z_]+") << string("="), alt(_quoted, _bare))
# metadata={op_type="..." op_name="..." source_file="..." source_line=71 ...}
_metadata = string("metadata={") >> _field.sep_by(string(" ")).map(dict) << string("}")


@lru_cache(maxsize=16384)
def parse_instruction_text(text: str) -> InstructionText:
    """Read the name, shape, opcode and metadata out of one instruction's text.

    ``text`` is everything after ``from instruction:`` (leading space optional).
    Parts that cannot be read are left None; raises nothing.
    """
    text = text.lstrip(" ")
    head = _HEAD.match(text)
    if head is None:
        return InstructionText(text)
    name = head.group(1)
    rest_at = head.end()
    m = _ARRAY_SHAPE.match(text, rest_at)
    if m:
        shape_text = m.group(0)
        after = m.end()
    else:
        try:
            _, remainder = parse_shape_prefix(text[rest_at:])
        except ParseError:
            return InstructionText(text, name)
        after = len(text) - len(remainder)
        shape_text = text[rest_at:after]
    op = _OPCODE.match(text, after)
    opcode = op.group(1) if op else None
    meta: dict = {}
    at = text.find("metadata={", after)
    if at >= 0:
        try:
            meta, _ = _metadata.parse_partial(text[at:])
        except ParseError:
            meta = {}
    line = meta.get("source_line")
    frame = meta.get("stack_frame_id")
    return InstructionText(
        text, name, shape_text, opcode,
        op_type=meta.get("op_type"), op_name=meta.get("op_name"),
        source_file=meta.get("source_file"),
        source_line=int(line) if line and line.isdigit() else None,
        stack_frame_id=int(frame) if frame and frame.isdigit() else None,
    )
