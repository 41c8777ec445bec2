"""XLA's out-of-memory texts read into reports (FEATURES.md, "OOM texts"; the model is
:mod:`hlotop.model.oom`, whose ``OOM_FORMATS`` names each format and its printer).

A text is first made into its messages' lines (:mod:`hlotop.parse.oom_text`: log
prefixes, colour codes, markup and wraps undone, each line keeping its number in the
file). Its blocks are then read each on its own (:mod:`hlotop.parse.oom_blocks`): a
headline of any format, the GPU runtime's stats and peak buffers, libtpu's usage table
and largest allocations, the BFC allocator's statistics. Last they are put together,
in the text's order, into one report per message: a headline starts a report, and
each block after it that belongs to that kind of message joins it (a second block of
a kind starts another); a block with no headline before it that it belongs to makes a
report of its own, read from what it holds (``headline`` False). A file may hold
several messages: every one is reported, a copy of one (a traceback repeating a log
line) once, with the lines it is repeated on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from hlotop.model import oom as model
from hlotop.model.oom import BLOCK_NAMES, Figure, OomBlock, OomReport, Size
from hlotop.parse import oom_forms as forms
from hlotop.parse.oom_blocks import Block, read_body, read_headline
from hlotop.parse.oom_size import derived, read_size
from hlotop.parse.oom_text import Line, logical_lines, undecorated
from hlotop.parse.tokens import Sink

# Which body blocks join a report of each format (the format it then has).
_JOINS: dict[str, dict[str, str]] = {
    model.FORMAT_ALLOCATION: {
        "ba-stats": model.FORMAT_GPU_RUNTIME,
        "peak-buffers": model.FORMAT_GPU_RUNTIME,
    },
    model.FORMAT_GPU_RUNTIME: {"ba-stats": "", "peak-buffers": ""},
    model.FORMAT_BFC: {"bfc-stats": "", "bfc-pool": ""},
    model.FORMAT_TPU_COMPILE: {"tpu-usage": "", "tpu-allocations": ""},
    model.FORMAT_TPU_SCOPED: {"tpu-usage": "", "tpu-allocations": ""},
}
# The format of a report a body block makes when no headline before it takes it.
_HEADLESS = {
    "ba-stats": model.FORMAT_GPU_RUNTIME,
    "peak-buffers": model.FORMAT_GPU_RUNTIME,
    "tpu-usage": model.FORMAT_TPU_COMPILE,
    "tpu-allocations": model.FORMAT_TPU_COMPILE,
    "bfc-stats": model.FORMAT_BFC,
    "bfc-pool": model.FORMAT_BFC,
}
_EXECUTABLE = re.compile(r"\[executable_name='([^']*)'\]")
_EXTRA = re.compile(r"largest contiguous region of free memory is\s*(" + forms.SIZE_RE + ")")
_DEVICE = re.compile(r";\s*\((\w+)\)")


@dataclass
class _Draft:
    """A report being put together: its format and blocks."""

    format: str
    blocks: list[Block] = field(default_factory=list)

    def takes(self, block: Block) -> bool:
        joins = _JOINS.get(self.format, {})
        return block.kind in joins and all(b.kind != block.kind for b in self.blocks)

    def add(self, block: Block) -> None:
        self.format = _JOINS.get(self.format, {}).get(block.kind) or self.format
        self.blocks.append(block)


def _blocks(lines: list[Line], sink: Sink) -> list[Block]:
    """Every block of ``lines``, in order (those that read nothing too)."""
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


def _same_allocation(draft: _Draft, block: Block) -> bool:
    """Whether a runtime error (``Out of memory while trying to allocate 149.01GiB with
    allocator GPU_0_bfc``) reports the allocation the BFC allocator's message before it
    failed (same allocator, same size as printed)."""
    if draft.format != model.FORMAT_BFC or not draft.blocks:
        return False
    head = draft.blocks[0]
    requested = block.fields.get("requested")
    return (
        head.kind == "headline"
        and block.format == model.FORMAT_GPU_RUNTIME
        and block.fields.get("device") == head.fields.get("device") is not None
        and requested is not None
        and head.fields["requested"].text.startswith(requested.text.split(" ")[0])
    )


def _drafts(blocks: list[Block]) -> list[_Draft]:
    drafts: list[_Draft] = []
    for block in blocks:
        if not block.read_anything():
            continue
        current = drafts[-1] if drafts else None
        if block.kind == "headline":
            if current is not None and _same_allocation(current, block):
                block.kind = "runtime-error"
                current.blocks.append(block)
                continue
            fmt = block.format
            if fmt == model.FORMAT_GPU_RUNTIME:  # until its stats or buffers follow
                fmt = model.FORMAT_ALLOCATION
            drafts.append(_Draft(fmt, [block]))
        elif current is not None and current.takes(block):
            current.add(block)
        else:
            drafts.append(_Draft(_HEADLESS[block.kind], [block]))
    return drafts


def _space_of(device: str | None) -> str | None:
    """The memory an allocator's name says: ``GPU_0_bfc`` device, ``cpu``/``..._host_bfc``
    host; None when the name says neither."""
    if not device:
        return None
    name = device.lower()
    if "host" in name or "cpu" in name:
        return "host"
    return "device" if name.startswith(("gpu", "cuda", "rocm")) else None


def _stat_size(stats: list[Figure], name: str) -> Size | None:
    return next((f.size for f in stats if f.name == name and f.size is not None), None)


def _report(draft: _Draft, path: str, diagnostics: tuple) -> OomReport:
    fmt = draft.format
    head = draft.blocks[0] if draft.blocks[0].kind == "headline" else None
    fields: dict[str, Any] = dict(head.fields) if head else {}
    rest = head.rest if head else ""
    stats: list[Figure] = []
    entries = []
    space = None
    for block in draft.blocks:
        stats += block.stats
        entries += block.entries
        space = space or block.space
        if block.kind == "runtime-error":
            rest += " " + block.rest
            fields.setdefault("ordinal", block.fields.get("ordinal"))
    line = draft.blocks[0].line
    if (extra := _EXTRA.search(rest)) is not None:
        fields["allocatable"] = read_size(extra[1])
    device = fields.pop("device", None)
    ordinal = fields.pop("ordinal", None)
    if device is None and ordinal is not None:
        device = f"device ordinal {ordinal}"
    elif device is None and (d := _DEVICE.search(rest)) is not None:
        device = d[1]
    program = fields.pop("program", None)
    if program is None and (e := _EXECUTABLE.search(rest)) is not None:
        program = e[1]
    capacity, used, over, target = (
        fields.pop(k, None) for k in ("capacity", "used", "over", "target")
    )
    requested = fields.pop("requested", None)
    space = fields.pop("space", None) or space
    label = fields.pop("label", None)
    host = fields.pop("host", None)
    if fmt in (model.FORMAT_GPU_RUNTIME, model.FORMAT_GPU_SCHEDULE):
        space = "device"
        used = used or _stat_size(stats, "total allocation")
    elif fmt == model.FORMAT_ALLOCATION:
        space = "host" if host else _space_of(device)
    elif fmt == model.FORMAT_BFC:
        space = _space_of(device)
        capacity, used = _stat_size(stats, "Limit"), _stat_size(stats, "InUse")
        if requested is not None and capacity is not None and used is not None:
            free = Size(
                "Limit - InUse",
                capacity.bytes - used.bytes,
                capacity.exact and used.exact,
                "derived",
            )
            over = derived("requested - (Limit - InUse)", requested, free)
    elif fmt == model.FORMAT_TPU_SCOPED:
        scoped = {"size": used, "label": label.strip(), "allocation_type": "scoped"}
        entries = [model.OomEntry(**scoped, line=line)]
    elif fmt in (model.FORMAT_TPU_PROGRAM_LOAD, model.FORMAT_TPU_BUFFER):
        space, over = "hbm", derived("requested - free", requested, fields.get("free"))
    elif fmt == model.FORMAT_REMAT:
        over = derived("used - target", used, target)
    elif fmt in (model.FORMAT_TPU_TC_SC, model.FORMAT_TPU_EARLY_ABORT):
        if fmt == model.FORMAT_TPU_TC_SC:
            tc, sc = fields.pop("tensorcore"), fields.pop("sparsecore")
            used = Size(
                f"{tc.text} + {sc.text}", tc.bytes + sc.bytes, tc.exact and sc.exact, "derived"
            )
            stats += [
                Figure("TensorCore hbm usage", tc, line=line),
                Figure("SparseCore hbm usage", sc, line=line),
            ]
        space = "hbm"
        over = derived("used - capacity", used, capacity)
    if fmt == model.FORMAT_GPU_SCHEDULE:
        over = None
    names = {"original": "original", "free": "free", "reserved": "reserved"}
    names.update(reservable="reservable", allocatable="allocatable")
    stats += [
        Figure(names[k], v, line=line)
        for k, v in fields.items()
        if k in names and isinstance(v, Size)
    ]
    return OomReport(
        fmt,
        space,
        capacity,
        used,
        over,
        tuple(entries),
        tuple(stats),
        line,
        requested=requested,
        target=target,
        device=device,
        program=program,
        message=head.message if head else "",
        path=path,
        headline=head is not None,
        blocks=tuple(OomBlock(b.kind, b.line) for b in draft.blocks),
        diagnostics=diagnostics,
    )


def find_ooms(text: str, path: str = "") -> list[OomReport]:
    """Every OOM message in ``text`` (the formats of
    :data:`hlotop.model.oom.OOM_FORMATS`, however wrapped), in the text's order; a
    message printed twice (a log line and the traceback repeating it) once, its
    ``repeats`` naming the lines of the copies. ``path`` names the text in the reports
    and their diagnostics. Raises nothing."""
    sink = Sink(path)
    blocks = _blocks(logical_lines(text), sink)
    drafts = _drafts(blocks)
    reports: list[OomReport] = []
    seen: dict[tuple[Any, ...], int] = {}
    for n, draft in enumerate(drafts):
        first = draft.blocks[0].line
        after = drafts[n + 1].blocks[0].line if n + 1 < len(drafts) else None
        diagnostics = tuple(
            d for d in sink.diagnostics if first <= d.line and (after is None or d.line < after)
        )
        report = _report(draft, path, diagnostics)
        key = report.figures()
        if key in seen:
            copied = reports[seen[key]]
            reports[seen[key]] = replace(copied, repeats=(*copied.repeats, report.line))
            continue
        seen[key] = len(reports)
        reports.append(report)
    return reports


_ORDER = list(model.OOM_FORMATS)


def parse_oom(text: str, path: str) -> OomReport | None:
    """The OOM that ``text`` (a log, an issue comment, a traceback...) reports: of the
    messages :func:`find_ooms` finds, the most telling: a TPU compile report first,
    then the GPU runtime's BufferAssignment report... in the order of
    :data:`~hlotop.model.oom.OOM_FORMATS`, the remat pass's warning and the GPU
    scheduler's last, a BFC allocator's retry that "is not a failure" after all; among
    equals the one with a headline, then most entries, then the first. None when
    ``text`` holds no OOM message. ``path`` names the text in the report. Raises
    nothing."""
    reports = find_ooms(text, path)
    return primary(reports)


def primary(reports: list[OomReport]) -> OomReport | None:
    """The most telling of ``reports`` (see :func:`parse_oom`), None if there are none."""

    def rank(r: OomReport) -> tuple[bool, int, bool, int]:
        retry = "not a failure" in r.message
        return retry, _ORDER.index(r.format), not r.headline, -len(r.entries)

    return min(reports, key=rank) if reports else None


def looks_like_oom(text: str) -> bool:
    """Whether ``text`` holds the first words of an OOM headline or the key of an OOM
    text's block (``Peak buffers:``, ``Stats:`` with ``Limit:``, ``Total hbm usage``...),
    also where ANSI codes, HTML escapes or a hard wrap cut them: a quick test (a few
    regular-expression scans) for a file of any size. True does not promise that
    :func:`find_ooms` reads a report. Raises nothing."""
    if forms.SNIFF.search(text) or _BLOCKS.search(text):
        return True
    plain = undecorated(text)
    return forms.SNIFF.search(plain) is not None or _BLOCKS.search(plain) is not None


_BLOCKS = re.compile(
    r"BufferAssignment OOM Debugging|BufferAssignment stats:|Peak buffers:|Buffer \d+:\s*$"
    r"|Largest program allocations in|Total \w+ usage >=|Program \w+ requirement"
    r"|Stats:\s*$|^\s*Limit:\s+\d|Total size in pool:",
    re.M,
)


def refusal(text: str, path: str) -> str | None:
    """Why ``text``, which :func:`looks_like_oom`, yields no report: the block nearest
    to one that it saw (``saw a BFC 'Stats:' block but no figure it could read at line
    12``), or the headline words it found with no figure after them. None when it holds
    neither. Raises nothing."""
    sink = Sink(path)
    lines = logical_lines(text)
    for block in _blocks(lines, sink):
        if not block.read_anything():
            name = BLOCK_NAMES.get(block.kind, block.kind)
            why = f"saw a {name} but no figure it could read at line {block.line}"
            if sink.diagnostics:
                why += f" ({sink.diagnostics[0].message}, line {sink.diagnostics[0].line})"
            return why
    for line in lines:
        m = forms.SNIFF.search(line.text)
        if m is not None:
            words = " ".join(m[0].split())
            return f"saw '{words}' at line {line.line} but no message of a known form after it"
    return None
