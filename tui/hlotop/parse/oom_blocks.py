"""The blocks of an out-of-memory text, each read on its own: a headline (of any
format), the GPU runtime's ``BufferAssignment stats``, a buffer list (GPU ``Peak
buffers``, TPU ``Largest program allocations``, with or without its heading), libtpu's
usage table (``Total hbm usage``, ``Output size``, ``Program hbm requirement``), the
BFC allocator's ``Stats:`` and pool line. :mod:`hlotop.parse.oom` puts them together
into reports; the lines are those of :func:`hlotop.parse.oom_text.logical_lines`, the
line forms those of :mod:`hlotop.parse.oom_forms`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hlotop.model.oom import Figure, OomEntry, Size
from hlotop.parse import oom_forms as forms
from hlotop.parse.line_form import LineForm
from hlotop.parse.oom_size import fixed_by_shape, is_tiled, shape_bytes
from hlotop.parse.oom_text import Line
from hlotop.parse.tokens import Sink

WINDOW = 6  # lines after a headline's first that may hold the rest of its sentences


@dataclass
class Block:
    """One block of an OOM text: ``kind`` (a key of
    :data:`hlotop.model.oom.BLOCK_NAMES`), its first line in the file, and what it
    holds. A headline's ``format`` is its format and ``fields`` what it prints
    (:class:`Size` or text); a body block's ``space`` is the memory space it names."""

    kind: str
    line: int
    format: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    stats: list[Figure] = field(default_factory=list)
    entries: list[OomEntry] = field(default_factory=list)
    space: str | None = None
    message: str = ""
    rest: str = ""

    def read_anything(self) -> bool:
        """Whether the block holds a figure (or, for a headline, that it is one)."""
        return self.kind == "headline" or bool(self.stats or self.entries)


# ---- headlines ----------------------------------------------------------------------
def read_headline(lines: list[Line], i: int) -> tuple[Block, int] | None:
    """The earliest headline that starts in ``lines[i]``, read with the lines after it
    that continue its sentences (a message broken one sentence a line), and the index
    of the line after it; None when ``lines[i]`` starts none."""
    window, starts = "", []
    for j in range(i, min(len(lines), i + WINDOW + 1)):
        text = lines[j].text.strip()
        if j > i and (not text or forms.STARTS.match(text)):
            break
        starts.append(len(window) + (1 if window else 0))
        window = f"{window} {text}" if window else text
    first_end = len(lines[i].text.strip())
    found = None
    for fmt, form, pattern in forms.HEADLINES:
        m = pattern.search(window)
        if m is None or m.start() >= first_end:
            continue
        if found is None or m.start() < found[2].start():
            found = (fmt, form, m)
    if found is None:
        return None
    fmt, form, m = found
    last = max(k for k, s in enumerate(starts) if s < max(m.end(), m.start() + 1))
    line_end = starts[last + 1] - 1 if last + 1 < len(starts) else len(window)
    lead = len(lines[i].text) - len(lines[i].text.lstrip())
    block = Block(
        "headline",
        lines[i].line_at(m.start() + lead),
        format=fmt,
        fields=form.build(m),
        message=window[m.start() : line_end].strip(),
        rest=window[m.end() : line_end],
    )
    return block, i + last + 1


# ---- body blocks -------------------------------------------------------------------------
def read_body(lines: list[Line], i: int, sink: Sink) -> tuple[Block, int] | None:
    """The body block whose key starts ``lines[i]`` and the index of the line after
    it; None when ``lines[i]`` starts none. Lines of the block that do not fit their
    form are reported to ``sink``."""
    m = forms.BLOCK_KEY.match(lines[i].text.strip())
    if m is None:
        return None
    key = m.lastgroup
    if key == "ba":
        return _ba_stats(lines, i, sink)
    if key in ("peak", "list"):
        return _buffers(lines, i, sink)
    if key == "usage":
        return _usage(lines, i, sink)
    if key == "pool":
        return _pool(lines, i, sink)
    return _bfc_stats(lines, i, sink)


_PREFIXES_OF: dict[int, re.Pattern[str]] = {}


def read_line(form: LineForm, sink: Sink, text: str, number: int) -> dict[str, Any] | None:
    """``text`` read by ``form``: the whole line, else its beginning up to a space
    (a line whose newlines were lost runs on into the next one's words: ``arguments
    0B How to fix this?``), else None after ``sink`` is told which column did not
    fit."""
    m = form.pattern.match(text)
    if m is None:
        start = _PREFIXES_OF.get(id(form))
        if start is None:
            start = _PREFIXES_OF[id(form)] = re.compile(form.body + r"(?=\s)")
        m = start.match(text)
    if m is not None:
        return form.build(m)
    return form.read(sink, text, number)


def _figure(name: str, value: Size | None, line: int, note: str = "") -> Figure:
    return Figure(name, value, None, note.strip(), line)


_BA_KEY = re.compile(r"[a-z_]+(?: [a-z_]+)* (?:allocation|fragmentation):")
_BFC_KEY = re.compile(r"[A-Z][A-Za-z]+:\s*\d")


def _ba_stats(lines: list[Line], i: int, sink: Sink) -> tuple[Block, int]:
    """``BufferAssignment OOM Debugging.``, ``BufferAssignment stats:`` and its lines
    (``parameter allocation: 10.91GiB``, ``total fragmentation: 9.71GiB (5.03%)``)."""
    block = Block("ba-stats", lines[i].line)
    j = i
    while j < len(lines):
        text, number = lines[j].text.strip(), lines[j].line
        if text and not text.startswith("BufferAssignment"):
            if _BA_KEY.match(text) is None:
                break
            fields = read_line(forms.BA_STAT, sink, text, number)
            if fields is not None:
                note = fields["note"] or ""
                block.stats.append(_figure(fields["name"], fields["value"], number, note))
        j += 1
    return block, j


def _bfc_stats(lines: list[Line], i: int, sink: Sink) -> tuple[Block, int]:
    """The allocator's ``Stats:`` (``Limit:``, ``InUse:``... in bytes or human units;
    ``NumAllocs`` a count), up to its first blank line after a figure."""
    block = Block("bfc-stats", lines[i].line)
    first = lines[i].text.strip()
    candidates: list[tuple[str, int]] = []
    if first.startswith("Stats:"):
        if first[len("Stats:") :].strip():
            candidates.append((first[len("Stats:") :].strip(), lines[i].line))
        j = i + 1
    else:
        j = i
    while True:
        if candidates:
            text, number = candidates.pop()
        elif j < len(lines):
            text, number = lines[j].text.strip(), lines[j].line
            j += 1
        else:
            break
        if not text:
            if block.stats:
                break
            continue
        if _BFC_KEY.match(text) is None:
            j -= 1
            break
        fields = read_line(forms.BFC_STAT, sink, text, number)
        if fields is not None:
            name, value = fields["name"], fields["value"]
            if name.startswith("Num") and value.exact:  # NumAllocs: a count, not bytes
                block.stats.append(Figure(name, None, value.bytes, "", number))
            else:
                block.stats.append(_figure(name, value, number))
    return block, max(j, i + 1)


def _pool(lines: list[Line], i: int, sink: Sink) -> tuple[Block, int]:
    block = Block("bfc-pool", lines[i].line)
    fields = read_line(forms.BFC_POOL, sink, lines[i].text.strip(), lines[i].line)
    if fields is not None:
        names = {
            "pool": "Total size in pool",
            "limit": "memory_limit_",
            "available": "available size",
            "region": "curr_region_allocation_bytes_",
        }
        for key, name in names.items():
            if fields.get(key) is not None:
                block.stats.append(_figure(name, fields[key], lines[i].line))
    return block, i + 1


_USAGE_LINE = re.compile(
    r"(?:Total|Program) \w+ (?:usage|requirement)|Output size |HLO temp\s"
    r"|[a-z][a-z_]*(?: [a-z_]+)*\s+(?:\d[\d,.]*\s?[KMGTPE]?i?B?\b|unknown size)"
)


def _usage(lines: list[Line], i: int, sink: Sink) -> tuple[Block, int]:
    """libtpu's usage table: figures named ``total usage``, ``total usage: reserved``,
    ``output``, ``program requirement: HLO temp``, ``HLO temp unpadded``..."""
    block = Block("tpu-usage", lines[i].line)
    section = ""
    j = i
    while j < len(lines):
        text, number = lines[j].text.strip(), lines[j].line
        j += 1
        if not text:
            continue
        if _USAGE_LINE.match(text) is None:
            j -= 1
            break
        stats = block.stats
        if text.startswith(("Total", "Program")):
            fields = read_line(forms.USAGE_HEAD, sink, text, number)
            if fields is not None:
                section = "total usage" if fields["section"] == "Total" else "program requirement"
                block.space = block.space or fields["space"]
                stats.append(_figure(section, fields["value"], number))
        elif text.startswith("Output size"):
            fields = read_line(forms.OUTPUT, sink, text, number)
            if fields is not None:
                stats.append(_figure("output", fields["value"], number, _unknown(fields["value"])))
                if fields["shared"] is not None:
                    stats.append(_figure("output shared with arguments", fields["shared"], number))
        elif text.startswith("HLO temp"):
            _hlo_temp(text, number, section, stats, sink)
        else:
            fields = read_line(forms.USAGE_ITEM, sink, text, number)
            if fields is not None:
                note = fields["note"] or _unknown(fields["value"])
                stats.append(
                    _figure(
                        f"{section}: {fields['name']}".lstrip(": "), fields["value"], number, note
                    )
                )
    return block, j


def _unknown(value: Size | None) -> str:
    return "unknown size" if value is None else ""


def _hlo_temp(text: str, number: int, section: str, stats: list[Figure], sink: Sink) -> None:
    name = f"{section}: HLO temp".lstrip(": ")
    m = forms.HLO_TEMP.match(text)
    if m is None:  # another wording: the size and the rest as a note
        fields = forms.HLO_TEMP_ANY.read(sink, text, number)
        if fields is not None:
            stats.append(_figure(name, fields["value"], number, fields["note"] or ""))
        return
    fields = forms.HLO_TEMP.build(m)
    stats.append(_figure(name, fields["value"], number, fields["note"]))
    for part in ("unpadded", "padded"):
        if fields.get(part) is not None:
            stats.append(_figure(f"HLO temp {part}", fields[part], number))
    stats.append(_figure("HLO temp fragmentation", fields["fragmentation"], number, fields["frag"]))


# ---- buffer lists ----------------------------------------------------------------------
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


def _continues(text: str) -> bool:
    body = text.strip()
    return bool(body) and forms.BODY_LINE.match(body) is None and not forms.SNIFF.search(text)


def _buffers(lines: list[Line], i: int, sink: Sink) -> tuple[Block, int]:
    """A buffer list from ``lines[i]`` (its heading, or its first entry) while its
    lines are entry keys (or blank)."""
    first = lines[i].text.strip()
    tpu = not first.startswith(("Peak", "Buffer"))
    block = Block("tpu-allocations" if tpu else "peak-buffers", lines[i].line)
    current: dict[str, Any] = {}
    start, j = 0, i
    while j < len(lines):
        text, number = lines[j].text.strip(), lines[j].line
        if (head := _LIST_HEAD.match(text)) is not None:
            if j > i and (block.entries or current):
                break  # a second list: a block of its own
            block.space = head[1] or block.space
            j += 1
            continue
        m = forms.ENTRY_KEY.match(text)
        if text and m is None:
            break
        j += 1
        kind = m.lastgroup or "" if m is not None else ""
        while kind in forms.FREE_TEXT and j < len(lines) and _continues(lines[j].text):
            text, j = _run_on(text, lines[j].text.strip()), j + 1
        form: LineForm | None = forms.ENTRY_FORMS.get(kind)
        fields = read_line(form, sink, text, number) if form is not None else None
        if kind == "end" or (fields is not None and (kind == "Buffer" or fields.get("rank"))):
            if "size" in current:
                block.entries.append(_entry(current, start))
            current, start = {}, (0 if kind == "end" else number)
        if fields is None:
            continue
        if kind == "Subshape":
            fields["subshape"] = True
        current.update((k, v) for k, v in fields.items() if v is not None)
        start = start or number
    if "size" in current:
        block.entries.append(_entry(current, start))
    return block, max(j, i + 1)
