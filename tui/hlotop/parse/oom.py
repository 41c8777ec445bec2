"""Grammar of XLA's out-of-memory texts (FEATURES.md, "OOM texts"; the model is
:mod:`hlotop.model.oom`, whose ``OOM_FORMATS`` names each format and its printer).

Real OOM texts come wrapped (glog and timestamp prefixes, re-indented, hard-wrapped,
ANSI-coloured, HTML- or markdown-mangled, inside a Python traceback), so the text is
first made into logical lines (:mod:`hlotop.parse.oom_text`, which also reads the
sizes). A headline (``Out of memory while trying to allocate``, ``Ran out of memory in
memory space``...) is then searched anywhere in a logical line and read with its line
form from there; the lines after it are read while they are keys of the report's body
(``Size:``, ``Operator:``, ``Total hbm usage >=``...), each kind with its own line form,
dispatched on its prefix. A body line that is no key continues the free text before it
(``Operator:``, ``XLA label:``, ``Shape:``) after a space: what a word wrap leaves,
where the line before was short.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hlotop.model import oom as model
from hlotop.model.oom import OomEntry, OomReport
from hlotop.parse.line_form import Field, LineForm, Opt, Skip
from hlotop.parse.oom_text import (
    SIZE_RE,
    Line,
    identity,
    logical_lines,
    size_bytes,
    size_or_none,
    undecorated,
)
from hlotop.parse.tokens import Sink

# ---- line forms, written as templates ------------------------------------------------
# In a template, ``{name}`` is a size field, ``{name=regex}`` a field read by
# _CONVERT[name] (text if none), ``<regex>`` text matched and dropped, ``[...]`` an
# optional run, and other text literal words between which any whitespace (or none:
# a hard wrap may eat it) may stand.
_CONVERT: dict[str, Callable[[str], Any]] = dict(rank=int, expansion=float, bytes=size_or_none)
_CONVERT.update(dict.fromkeys(("requested", "free", "allocatable"), size_bytes))
_TOKEN = re.compile(r"\{(\w+)(?:=((?:[^{}]|\{[^{}]*\})+))?\}|<([^<>]+)>|\[|\]|[^{}<>\[\]]+")


def _words(text: str) -> Skip:
    words = text.split()
    pattern = r"\s*" + r"\s*".join(re.escape(w) for w in words) + (r"\s*" if words else "")
    return Skip(pattern, repr(text.strip()))


def _form(what: str, template: str) -> LineForm:
    """The line form a template (see above) describes."""
    stack: list[list[Any]] = [[]]
    for m in _TOKEN.finditer(template):
        if m[1] is not None and m[2] is None:
            part: Any = Field(
                m[1], SIZE_RE, "a size like 4.50GiB, 30.21G or 1234 bytes", size_bytes
            )
        elif m[1] is not None:
            part = Field(m[1], m[2], f"a {m[1]}", _CONVERT.get(m[1], identity))
        elif m[3] is not None:
            part = Skip(m[3], repr(m[3]))
        elif m[0] == "[":
            stack.append([])
            continue
        elif m[0] == "]":
            part = Opt(*stack.pop())
        else:
            part = _words(m[0])
        stack[-1].append(part)
    return LineForm(what, *stack[0])


def _headline_form(fmt: str, template: str) -> tuple[str, LineForm, re.Pattern[str]]:
    form = _form(f"{fmt} headline", template + "{rest=.*}")
    return fmt, form, re.compile(form.body)


_NOT_POSSIBLE = ". That was not possible. There <(?:are|is)> {free} free"
# Headlines, found by searching for their forms; of two found at one place, the first.
_HEADLINES = [
    _headline_form(model.FORMAT_GPU_RUNTIME, "Out of memory while trying to allocate {requested}"),
    _headline_form(
        model.FORMAT_GPU_RUNTIME,
        r"Failed to allocate request for {requested} on device ordinal {ordinal=\d+}",
    ),
    _headline_form(
        model.FORMAT_GPU_BFC,
        "Allocator ({device=[^)]+}) ran out of memory trying to allocate {requested}",
    ),
    _headline_form(
        model.FORMAT_REMAT,
        r"<Can\S{1,6}t> reduce memory use below {capacity} by rematerialization; only reduced"
        " to {used}, down from {original} originally",
    ),
    _headline_form(
        model.FORMAT_TPU_SCOPED,
        r"Ran out of memory in memory space {space=\w+} while allocating on stack for"
        r" {label=[^.]*(?:\.(?!\s*Scoped)[^.]*)*}<\.?> Scoped allocation with size {used} and"
        r" limit {capacity} exceeded scoped <\w+> limit by {over}",
    ),
    _headline_form(
        model.FORMAT_TPU_COMPILE,
        r"Ran out of memory in memory space {space=\w+}[. Used {used} of {capacity} <\w+>."
        r" Exceeded <\w+> capacity by {over}]",
    ),
    _headline_form(
        model.FORMAT_TPU_TC_SC,
        "TPU TensorCore Hbm usage: {tensorcore}, SparseCore Hbm usage<:?> {sparsecore},"
        " exceeding available bytes: {capacity}",
    ),
    _headline_form(
        model.FORMAT_TPU_EARLY_ABORT,
        r"Aborting compilation early because it's unlikely to have enough"
        r" <(?:device\s*)?>memory. Requires {used}, has {capacity} available",
    ),
    _headline_form(
        model.FORMAT_TPU_PROGRAM_LOAD,
        "Error loading program['{program=[^']*}']: Attempting to <(?:reserve|allocate)>"
        " {requested}[ at the bottom of memory]" + _NOT_POSSIBLE + "[, {reserved} reserved,"
        " and {reservable} reservable]",
    ),
    _headline_form(
        model.FORMAT_TPU_BUFFER,
        "[Error allocating device buffer:] Attempting to allocate {requested}" + _NOT_POSSIBLE,
    ),
    _headline_form(
        model.FORMAT_TPU_BUFFER,
        r"Could not allocate {requested=\d+} bytes in memory {device=[^\s;]+};"
        r" {allocatable=\d+} bytes allocatable, {free=\d+} bytes available",
    ),
]
# The first words of each headline, any whitespace (a hard wrap too) between them.
_PHRASES = (
    "Out of memory while trying|Failed to allocate request for|ran out of memory trying to|Can"
    r"\S{1,6}t reduce memory use below|Ran out of memory in memory space|TensorCore Hbm usage"
    "|Aborting compilation early|Error loading program|Attempting to allocate|Could not allocate"
)
_SNIFF = re.compile(r"\s*".join(_PHRASES.split(" ")))

# Body lines, read stripped and dispatched on their prefix (_BODY_KEY's group names).
_ENTRY_FORMS = {
    "Buffer": _form("peak buffer header", r"Buffer {rank=\d+}:"),
    "Size": _form("allocation size", r"[{rank=\d+}.] Size: {size_bytes}"),
    "Operator": _form("operator metadata", "Operator: {operator=.*}"),
    "Label": _form("XLA label", "XLA <[Ll]>abel: {label=.*}"),
    "Shape": _form("shape", r"Shape: {shape=\S.*}"),
    "Subshape": _form("entry parameter subshape", r"Entry Parameter Subshape: {shape=\S.*}"),
    "Unpadded": _form("unpadded size", "Unpadded size: {unpadded_bytes}"),
    "Padding": _form(
        "padding",
        r"Extra memory due to padding: {padding_bytes} ({expansion=\d+(?:\.\d+)?}<\s*[x×]\s*>expansion)",
    ),
    "Type": _form("allocation type", "Allocation type: {allocation_type=.+}"),
}
_STAT_FORMS = {
    "gpu": _form(
        "BufferAssignment stats line",
        r"{name=[a-z_ ]+ (?:allocation|fragmentation)}: {bytes}<(?:\s*\(\d+(?:\.\d+)?%\))?>",
    ),
    "bfc": _form("allocator stats line", r"{name=[A-Za-z]+}: {bytes=\d+}"),
    "head": _form(
        "usage or requirement header",
        r"{section=Total|Program} <\w+> {kind=usage\s*>=|requirement} {bytes}:",
    ),
    "item": _form(
        "usage item",
        f"{{name=reserved|program|arguments|global|scoped}} {{bytes={SIZE_RE}|unknown size}}",
    ),
    "temp": _form(
        "HLO temp line",
        r"HLO temp {bytes} <\(\d+(?:\.\d+)?%\s*utilization>[: Unpadded ({unpadded}) Padded ({padded})]"
        r"<,\s*\d+(?:\.\d+)?%\s*fragmentation\s*\(>{fragmentation}))",
    ),
    "output": _form(
        "output size line",
        f"Output size {{bytes={SIZE_RE}|unknown}}[; shares {{shared}} with arguments]<\\.?>",
    ),
}
_BODY_KEY = re.compile(
    r"(?P<Buffer>Buffer \d+:)|(?P<Size>(?:\d+\.\s*)?Size:)|(?P<Operator>Operator:)"
    r"|(?P<Label>XLA [Ll]abel:)|(?P<Shape>Shape:)|(?P<Subshape>Entry Parameter Subshape:)"
    r"|(?P<Unpadded>Unpadded size:)|(?P<Padding>Extra memory due to padding:)"
    r"|(?P<Type>Allocation type:)|(?P<end>={5})"
    r"|(?P<mark>BufferAssignment |Peak buffers:|Largest program allocations|Stats:)"
    r"|(?P<gpu>[a-z_ ]+ (?:allocation|fragmentation):)|(?P<head>(?:Total|Program) \w+ (?:usage|req))"
    r"|(?P<item>(?:reserved|program|arguments|global|scoped)\s+(?:\d|unknown))|(?P<temp>HLO temp\s)"
    r"|(?P<output>Output size )"
    r"|(?P<bfc>(?:Limit|InUse|MaxInUse|NumAllocs|MaxAllocSize|Reserved|PeakReserved|LargestFreeBlock):)"
)
# Lines that start a logical line (never the rest of a hard-wrapped one).
_STARTS = re.compile(
    _BODY_KEY.pattern + r"|-{5}|Traceback|File \"|The above |During handling|The stack"
)


def _starts_line(line: str) -> bool:
    """Whether a decorated-less physical line starts a logical line of its own: a key
    of a report's body, or a whole headline."""
    body = line.strip()
    return bool(_STARTS.match(body)) or bool(_SNIFF.search(line) and _headline(line))


# ---- reading -----------------------------------------------------------------------
_METADATA = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"?|\S+)')  # OpMetadataToString
_INSTRUCTION = re.compile(r"%?([^\s=%]+)\s*=\s*")
_OPCODE = re.compile(r"\b([a-z][a-z0-9-]*)\(")


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
    return OomEntry(
        **fields,
        op_name=meta.get("op_name"),
        op_type=meta.get("op_type"),
        source=(f"{src}:{src_line}" if src_line else src) if src else None,
        instruction=instruction,
        opcode=opcode,
        line=line,
    )


def _stat(kind: str, fields: dict[str, Any], section: str, stats: dict[str, int]) -> str:
    """Put a stats line's figures in ``stats``; returns the section it opens."""
    if kind == "head":
        section = "total usage" if fields["section"] == "Total" else "program requirement"
        fields["name"] = section
    elif kind == "temp":
        fields["name"] = f"{section}: HLO temp"
        for part in ("unpadded", "padded", "fragmentation"):
            if fields.get(part) is not None:
                stats[f"HLO temp {part}"] = fields[part]
    elif kind == "output":
        fields["name"] = "output"
        if fields["shared"] is not None:
            stats["output shared with arguments"] = fields["shared"]
    elif kind == "item":
        fields["name"] = f"{section}: {fields['name']}"
    if fields["bytes"] is not None:
        stats[fields["name"]] = fields["bytes"]
    return section


_FREE_TEXT = ("Operator", "Label", "Shape", "Subshape")  # always followed by a key


def _continues(text: str) -> bool:
    body = text.strip()
    return bool(body) and _BODY_KEY.match(body) is None and not _SNIFF.search(text)


def _read_body(
    lines: list[Line], i: int, sink: Sink, stats: dict[str, int]
) -> tuple[list[OomEntry], int]:
    """Read a report's body from ``lines[i]`` while its lines are known keys (or blank):
    figures into ``stats``; returns the entries and the index of the first line left."""
    entries: list[OomEntry] = []
    current: dict[str, Any] = {}
    start, section = 0, ""
    while i < len(lines):
        text, number = lines[i].text, lines[i].line
        body = text.strip()
        m = _BODY_KEY.match(body)
        if body and (m is None or _SNIFF.search(text)):
            break
        i += 1
        kind = m.lastgroup or "" if m is not None else ""
        while kind in _FREE_TEXT and i < len(lines) and _continues(lines[i].text):
            body, i = body + " " + lines[i].text.strip(), i + 1  # a word wrap ate the space
        form = _ENTRY_FORMS.get(kind) or _STAT_FORMS.get(kind)
        fields = form.read(sink, body, number) if form is not None else None
        if kind == "end" or (fields is not None and (kind == "Buffer" or fields.get("rank"))):
            if "size_bytes" in current:
                entries.append(_entry(current, start))
            current, start = {}, (0 if kind == "end" else number)
        if fields is None:
            continue
        if kind in _STAT_FORMS:
            section = _stat(kind, fields, section, stats)
            continue
        if kind == "Subshape":
            fields["subshape"] = True
        current.update((k, v) for k, v in fields.items() if v is not None)
        start = start or number
    if "size_bytes" in current:
        entries.append(_entry(current, start))
    return entries, i


def _find_stats(lines: list[Line], i: int, sink: Sink, stats: dict[str, int]) -> int:
    """The BFC allocator's ``Stats:`` block, after its chunk dump and before the next
    headline; returns where reading stopped."""
    for j in range(i, min(len(lines), i + 20000)):
        if _SNIFF.search(lines[j].text):
            return j
        if lines[j].text.strip() == "Stats:":
            return _read_body(lines, j + 1, sink, stats)[1]
    return i


_EXTRA = re.compile(r"largest contiguous region of free memory is\s*(" + SIZE_RE + ")")
_DEVICE = re.compile(r";\s*\((\w+)\)")


def _over(big: int | None, small: int | None) -> int | None:
    return big - small if big is not None and small is not None and big > small else None


def _report(
    lines: list[Line], i: int, fmt: str, form: LineForm, m: re.Match[str], sink: Sink
) -> tuple[OomReport, int]:
    """The report whose headline ``form`` found (``m``) in ``lines[i]``, and the index
    of the first line after it."""
    fields: dict[str, Any] = form.build(m)
    rest = fields.pop("rest") or ""
    if (extra := _EXTRA.search(rest)) is not None:
        fields["allocatable"] = size_bytes(extra[1])
    device = fields.pop("device", None)
    if "ordinal" in fields:
        device = f"device ordinal {fields.pop('ordinal')}"
    elif device is None and (d := _DEVICE.search(rest)) is not None:
        device = d[1]
    used, capacity, over = (fields.pop(k, None) for k in ("used", "capacity", "over"))
    requested, space = fields.pop("requested", None), fields.pop("space", None)
    program, label = fields.pop("program", None), fields.pop("label", None)
    stats: dict[str, int] = {}
    entries: list[OomEntry] = []
    end = i + 1
    if fmt in (model.FORMAT_GPU_RUNTIME, model.FORMAT_TPU_COMPILE):
        entries, end = _read_body(lines, end, sink, stats)
    if fmt == model.FORMAT_GPU_RUNTIME:
        space, used = "device", stats.get("total allocation")
    elif fmt == model.FORMAT_GPU_BFC:
        space, end = "device", _find_stats(lines, end, sink, stats)
        capacity, used = stats.get("Limit"), stats.get("InUse")
        over = _over(requested, capacity - used) if capacity and used is not None else None
    elif fmt == model.FORMAT_TPU_SCOPED:
        scoped = {"size_bytes": used, "label": label.strip(), "allocation_type": "scoped"}
        entries = [_entry(scoped, lines[i].line)]
    elif fmt in (model.FORMAT_TPU_PROGRAM_LOAD, model.FORMAT_TPU_BUFFER):
        space, over = "hbm", _over(requested, fields.get("free"))
    elif fmt != model.FORMAT_TPU_COMPILE:  # remat, early abort, TensorCore + SparseCore
        if fmt == model.FORMAT_TPU_TC_SC:
            used = fields["tensorcore"] + fields["sparsecore"]
            fields["TensorCore hbm usage"] = fields.pop("tensorcore")
            fields["SparseCore hbm usage"] = fields.pop("sparsecore")
        space = None if fmt == model.FORMAT_REMAT else "hbm"
        over = _over(used, capacity)
    stats.update((k, v) for k, v in fields.items() if isinstance(v, int))
    text = lines[i].text[m.start() :].strip()
    report = OomReport(
        *(fmt, space, capacity, used, over, tuple(entries), stats, lines[i].line),
        requested_bytes=requested,
        device=device,
        program=program,
        message=text,
        path=sink.path,
        diagnostics=tuple(sink.diagnostics),
    )
    return report, end


def _headline(text: str) -> tuple[str, LineForm, re.Match[str]] | None:
    """The earliest headline in ``text``, or None."""
    found = None
    for fmt, form, pattern in _HEADLINES:
        m = pattern.search(text)
        if m is not None and (found is None or m.start() < found[2].start()):
            found = (fmt, form, m)
    return found


def find_ooms(text: str, path: str = "") -> list[OomReport]:
    """Every OOM message in ``text`` (the formats of
    :data:`hlotop.model.oom.OOM_FORMATS`, however wrapped), in the text's order; a
    message printed twice (a log line and the traceback repeating it) once. Sizes are
    bytes; ``path`` names the text in the reports and their diagnostics. Raises
    nothing."""
    lines = logical_lines(text, _starts_line)
    reports: list[OomReport] = []
    seen: set[tuple[Any, ...]] = set()
    i = 0
    while i < len(lines):
        found = _headline(lines[i].text) if _SNIFF.search(lines[i].text) else None
        if found is None:
            i += 1
            continue
        report, i = _report(lines, i, *found, Sink(path))
        if report.figures() not in seen:
            seen.add(report.figures())
            reports.append(report)
    return reports


_ORDER = list(model.OOM_FORMATS)


def parse_oom(text: str, path: str) -> OomReport | None:
    """The OOM that ``text`` (a log, an issue comment, a traceback...) reports: of the
    messages :func:`find_ooms` finds, the most telling: a TPU compile report first,
    then the GPU runtime's BufferAssignment report... in the order of
    :data:`~hlotop.model.oom.OOM_FORMATS`, the remat pass's warning last, a BFC
    allocator's retry that "is not a failure" after all; among equals the one with most
    entries, then the first. None when ``text`` is not an OOM text (the
    caller refuses it) or no headline's figures read. Sizes are bytes; ``path`` names
    the text in the report. Raises nothing."""

    def rank(r: OomReport) -> tuple[bool, int, int]:
        return "not a failure" in r.message, _ORDER.index(r.format), -len(r.entries)

    reports = find_ooms(text, path)
    return min(reports, key=rank) if reports else None


def looks_like_oom(text: str) -> bool:
    """Whether ``text`` holds the first words of an OOM headline (of any format of
    :data:`hlotop.model.oom.OOM_FORMATS`), also where ANSI codes, HTML escapes or a
    hard wrap cut them: a quick test (two regular-expression scans) for a file of any
    size. True does not promise that :func:`parse_oom` reads figures. Raises
    nothing."""
    if _SNIFF.search(text):
        return True
    return _SNIFF.search(undecorated(text)) is not None
