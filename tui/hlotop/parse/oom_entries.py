"""The buffers an out-of-memory text lists, read: GPU ``Peak buffers`` (``Buffer i:``,
``Size:``, ``Operator:``, ``XLA Label:``, ``Shape:`` or ``Entry Parameter Subshape:``,
printed by ``BufferAssignment::ToVerboseString``, xla/service/buffer_assignment.cc) and
TPU ``Largest program allocations`` (``N. Size:``, ``Operator:``, ``Shape:``,
``Unpadded size:``, ``Extra memory due to padding:``, ``XLA label:``, ``Allocation
type:``), with or without their heading, into :class:`~hlotop.model.oom.OomEntry`.

A buffer's size stays as printed; its shape's bytes (``ShapeUtil::ByteSizeOf``, no
tiling padding) fix the unpadded size, and the size of an untiled shape (a GPU
buffer's), where they print as the text does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hlotop.model.oom import OomEntry
from hlotop.parse import oom_forms as forms
from hlotop.parse.line_form import LineForm
from hlotop.parse.oom_size import fixed_by_shape, is_tiled, shape_bytes
from hlotop.parse.oom_text import Line
from hlotop.parse.tokens import Sink

_METADATA = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"?|\S+)')  # OpMetadataToString
_INSTRUCTION = re.compile(r"%?([^\s=%]+)\s*=\s*")
_OPCODE = re.compile(r"\b([a-z][a-z0-9-]*)\(")
_LIST_HEAD = re.compile(r"(?:Peak buffers:|Largest program allocations in (\w+):?)\s*$")


def _entry(fields: dict[str, Any], line: int) -> OomEntry:
    meta = {k: v.strip('"') for k, v in _METADATA.findall(fields.pop("operator", ""))}
    label, instruction, opcode = fields.get("label"), None, None
    if label is not None and (m := _INSTRUCTION.match(label)) is not None:  # TPU's text
        instruction = m[1]
        opcode = op[1] if (op := _OPCODE.search(label, m.end())) else None
    elif label is not None:  # GPU prints the opcode
        opcode = label.strip() or None
    if fields.pop("subshape", False):  # printed for entry parameters only
        fields.setdefault("allocation_type", "parameter")
        opcode = "parameter"
    src, src_line = meta.get("source_file"), meta.get("source_line")
    shape = fields.get("shape")
    n = shape_bytes(shape)
    fields["unpadded"] = fixed_by_shape(fields.get("unpadded"), n)
    if not is_tiled(shape):  # a buffer of an untiled shape is its elements' bytes
        fields["size"] = fixed_by_shape(fields["size"], n)
    return OomEntry(
        **fields,
        op_name=meta.get("op_name"),
        op_type=meta.get("op_type"),
        source=(f"{src}:{src_line}" if src_line else src) if src else None,
        instruction=instruction,
        opcode=opcode,
        line=line,
        shape_bytes=n,
    )


def _run_on(text: str, more: str) -> str:
    """Free text (an ``Operator:`` line) and the line it runs on to: inside an open
    quote (an op_name) a cut between two letters of a name was a wrap of its own, the
    pieces join as they are; elsewhere a word wrap ate a space."""
    inside = text.count('"') % 2 == 1
    if inside and _NAME_CHAR.match(text[-1:]) and _NAME_CHAR.match(more[:1]):
        return text + more
    return text + " " + more


_NAME_CHAR = re.compile(r"[\w/.\-\[\]()=>]")


def _continues(text: str, more: str, after: str | None) -> bool:
    """Whether the line ``more`` continues free text ``text`` a wrap cut: no key and
    no headline, and ``text`` left open (a quote, a bracket, a trailing ``=``), or
    ``more`` goes on with a ``key=`` of the metadata or the label, or ``after`` (the
    next line with a key, no blank line between) is the entry's next key. (A paste cut
    short inside an entry, then other text, is not read into the entry.)"""
    body = more.strip()
    if not body or forms.BODY_LINE.match(body) is not None or forms.SNIFF.search(more):
        return False
    opened = sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
    if text.count('"') % 2 == 1 or opened > 0 or _LEFT_OPEN.search(text):
        return True
    if _GOES_ON.match(body) is not None:
        return True
    key = forms.ENTRY_KEY.match(after.strip()) if after is not None else None
    return key is not None and key.lastgroup not in ("Buffer", "Size")


def _next_key(lines: list[Line], j: int) -> str | None:
    """The next of a few lines from ``lines[j]`` that starts with a key, if no blank
    line comes first."""
    for line in lines[j : j + 4]:
        text = line.text.strip()
        if not text:
            return None
        if forms.BODY_LINE.match(text) is not None:
            return text
    return None


_GOES_ON = re.compile(r"\w+=|[,)\]}]")
_LEFT_OPEN = re.compile(r"[=,:(\[{]\s*$")


@dataclass
class BufferList:
    """A buffer list as read: ``kind`` ``peak-buffers`` (GPU) or ``tpu-allocations``
    (TPU), the memory space its heading names, its entries."""

    kind: str
    space: str | None = None
    entries: list[OomEntry] = field(default_factory=list)


def read_buffers(lines: list[Line], i: int, sink: Sink) -> tuple[BufferList, int]:
    """The buffer list from ``lines[i]`` (its heading, ``Peak buffers:`` or ``Largest
    program allocations in hbm:``, or its first entry) while its lines are entry keys
    (or blank, or free text a wrap cut), and the index of the line after it. Lines
    that do not fit their form are reported to ``sink``."""
    first = lines[i].text.strip()
    tpu = not first.startswith(("Peak", "Buffer"))
    found = BufferList("tpu-allocations" if tpu else "peak-buffers")
    current: dict[str, Any] = {}
    start, j = 0, i
    while j < len(lines):
        text, number = lines[j].text.strip(), lines[j].line
        if (head := _LIST_HEAD.match(text)) is not None:
            if j > i and (found.entries or current):
                break  # a second list: a block of its own
            found.space = head[1] or found.space
            j += 1
            continue
        m = forms.ENTRY_KEY.match(text)
        if text and m is None:
            break
        j += 1
        kind = m.lastgroup or "" if m is not None else ""
        while kind in forms.FREE_TEXT and j < len(lines):
            if not _continues(text, lines[j].text, _next_key(lines, j + 1)):
                break
            text, j = _run_on(text, lines[j].text.strip()), j + 1
        form: LineForm | None = forms.ENTRY_FORMS.get(kind)
        fields = forms.read_line(form, sink, text, number) if form is not None else None
        if kind == "end" or (fields is not None and (kind == "Buffer" or fields.get("rank"))):
            if "size" in current:
                found.entries.append(_entry(current, start))
            current, start = {}, (0 if kind == "end" else number)
        if fields is None:
            continue
        if kind == "Subshape":
            fields["subshape"] = True
        current.update((k, v) for k, v in fields.items() if v is not None)
        start = start or number
    if "size" in current:
        found.entries.append(_entry(current, start))
    return found, max(j, i + 1)
