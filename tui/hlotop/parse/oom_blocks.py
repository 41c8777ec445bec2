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
from hlotop.parse.oom_entries import read_buffers
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


def read_blocks(lines: list[Line], sink: Sink) -> list[Block]:
    """Every block of ``lines``, in order (those that read nothing too): a headline
    where one starts, else a body block where its key starts a line."""
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        text = lines[i].text
        found = read_headline(lines, i) if forms.SNIFF.search(text) else None
        if found is None and text.strip():
            found = read_body(lines, i, sink)
        if found is None:
            i += 1
            continue
        block, i = found
        blocks.append(block)
    return blocks


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
        found, end = read_buffers(lines, i, sink)
        block = Block(found.kind, lines[i].line, entries=found.entries, space=found.space)
        return block, end
    if key == "usage":
        return _usage(lines, i, sink)
    if key == "pool":
        return _pool(lines, i, sink)
    return _bfc_stats(lines, i, sink)


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
            fields = forms.read_line(forms.BA_STAT, sink, text, number)
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
        fields = forms.read_line(forms.BFC_STAT, sink, text, number)
        if fields is not None:
            name, value = fields["name"], fields["value"]
            if name.startswith("Num") and value.exact:  # NumAllocs: a count, not bytes
                block.stats.append(Figure(name, None, value.bytes, "", number))
            else:
                block.stats.append(_figure(name, value, number))
    return block, max(j, i + 1)


def _pool(lines: list[Line], i: int, sink: Sink) -> tuple[Block, int]:
    block = Block("bfc-pool", lines[i].line)
    fields = forms.read_line(forms.BFC_POOL, sink, lines[i].text.strip(), lines[i].line)
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
            fields = forms.read_line(forms.USAGE_HEAD, sink, text, number)
            if fields is not None:
                section = "total usage" if fields["section"] == "Total" else "program requirement"
                block.space = block.space or fields["space"]
                stats.append(_figure(section, fields["value"], number))
        elif text.startswith("Output size"):
            fields = forms.read_line(forms.OUTPUT, sink, text, number)
            if fields is not None:
                stats.append(_figure("output", fields["value"], number, _unknown(fields["value"])))
                if fields["shared"] is not None:
                    stats.append(_figure("output shared with arguments", fields["shared"], number))
        elif text.startswith("HLO temp"):
            _hlo_temp(text, number, section, stats, sink)
        else:
            fields = forms.read_line(forms.USAGE_ITEM, sink, text, number)
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
