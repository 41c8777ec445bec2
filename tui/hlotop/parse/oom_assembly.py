"""Blocks of an out-of-memory text put together into reports, one a message (see
:mod:`hlotop.parse.oom`): which blocks belong to which kind of message, and each
format's figures (capacity, target, used, over, requested) from its blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hlotop.model import oom as model
from hlotop.model.oom import Figure, OomBlock, OomReport, Size
from hlotop.parse import oom_forms as forms
from hlotop.parse.oom_blocks import Block
from hlotop.parse.oom_size import derived, read_size

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
# A headline's other figures, kept as stats under these names: the remat pass's
# "down from Z originally", a TPU runtime error's free, reserved, reservable and
# allocatable bytes.
_MORE = ("original", "free", "reserved", "reservable", "allocatable")
_EXECUTABLE = re.compile(r"\[executable_name='([^']*)'\]")
_EXTRA = re.compile(r"largest contiguous region of free memory is\s*(" + forms.SIZE_RE + ")")
_DEVICE = re.compile(r";\s*\((\w+)\)")


@dataclass
class Draft:
    """A report being put together: its format and blocks."""

    format: str
    blocks: list[Block] = field(default_factory=list)

    def takes(self, block: Block) -> bool:
        joins = _JOINS.get(self.format, {})
        return block.kind in joins and all(b.kind != block.kind for b in self.blocks)

    def add(self, block: Block) -> None:
        self.format = _JOINS.get(self.format, {}).get(block.kind) or self.format
        self.blocks.append(block)


def _same_allocation(draft: Draft, block: Block) -> bool:
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


def drafts_of(blocks: list[Block]) -> list[Draft]:
    """The reports ``blocks`` (in the text's order) make, each its format and blocks
    (see :mod:`hlotop.parse.oom`)."""
    drafts: list[Draft] = []
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
            drafts.append(Draft(fmt, [block]))
        elif current is not None and current.takes(block):
            current.add(block)
        else:
            drafts.append(Draft(_HEADLESS[block.kind], [block]))
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


def report_of(draft: Draft, path: str, diagnostics: tuple) -> OomReport:
    """The report a draft's blocks make: its figures by format (see
    :class:`hlotop.model.oom.OomReport` for which text gives which)."""
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
    stats += [Figure(k, v, line=line) for k, v in fields.items() if k in _MORE and v is not None]
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
