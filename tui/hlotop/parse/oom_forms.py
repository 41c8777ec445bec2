"""The line forms of XLA's out-of-memory texts (FEATURES.md, "OOM texts"): each
headline, and each line of the blocks that may follow one (usage tables, statistics,
buffer lists), written once as a template and made into a
:class:`~hlotop.parse.line_form.LineForm` (a regular expression for the fast path, a
parsy grammar that says at which column a line does not fit).

A template reads as the line prints: ``{name}`` is a size field (read into a
:class:`~hlotop.model.oom.Size`), ``{name=regex}`` a field read by ``_CONVERT[name]``
(text if none), ``<regex>`` text matched and dropped, ``[...]`` an optional run, and
other text literal words between which any whitespace (or none: a hard wrap may eat
it) may stand.

The printers: ``BufferAssignment::ToVerboseString`` and ``StatsString``
(xla/service/buffer_assignment.cc), ``tsl::BFCAllocator`` and
``AllocatorStats::DebugString`` (xla/tsl/framework/), ``MemoryAllocationError``
(xla/stream_executor/integrations/tf_allocator_adapter.cc),
``HloRematerialization`` (xla/hlo/transforms/simplifiers/hlo_rematerialization.cc),
``GetSchedulerMemoryLimit`` (xla/service/gpu/gpu_hlo_schedule.cc), and libtpu's
messages as XLA's docs quote them (docs/errors/error_0100.md ... error_1002.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from hlotop.model import oom as model
from hlotop.parse.line_form import Field, LineForm, Opt, Skip
from hlotop.parse.oom_size import SIZE_RE, read_size, size_or_none
from hlotop.parse.tokens import Sink

_CONVERT: dict[str, Callable[[str], Any]] = dict(rank=int, expansion=float, value=size_or_none)
_CONVERT.update(dict.fromkeys(("requested", "free", "allocatable"), read_size))
_TOKEN = re.compile(r"\{(\w+)(?:=((?:[^{}]|\{[^{}]*\})+))?\}|<([^<>]+)>|\[|\]|[^{}<>\[\]]+")
VOCABULARY: set[str] = set()  # the templates' words: a word cut by a wrap is one of these


def _words(text: str) -> Skip:
    words = text.split()
    VOCABULARY.update(w.lower() for w in re.findall(r"[A-Za-z_]{4,}", text))
    pattern = r"\s*" + r"\s*".join(re.escape(w) for w in words) + (r"\s*" if words else "")
    return Skip(pattern, repr(text.strip()))


def form(what: str, template: str) -> LineForm:
    """The line form a template (see the module's docstring) describes; it reads into
    a dict of its fields."""
    stack: list[list[Any]] = [[]]
    for m in _TOKEN.finditer(template):
        if m[1] is not None and m[2] is None:
            part: Any = Field(m[1], SIZE_RE, "a size like 4.50GiB, 30.21G or 1234 bytes", read_size)
        elif m[1] is not None:
            part = Field(m[1], m[2], f"a {m[1]}", _CONVERT.get(m[1], _text))
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


def _text(text: str) -> str:
    return text


# ---- headlines ---------------------------------------------------------------------
Headline = tuple[str, LineForm, re.Pattern[str]]


def _headline(fmt: str, template: str) -> Headline:
    found = form(f"{fmt} headline", template)
    return fmt, found, re.compile(found.body)


_NOT_POSSIBLE = "That was not possible. There <(?:are|is)> {free} free"
_RESERVE = (
    "Attempting to <(?:reserve|allocate)> {requested}[ at the bottom of memory][<\\.?> "
    + _NOT_POSSIBLE
    + "[, {reserved} reserved, and {reservable} reservable]]"
)
# Searched for anywhere in a line (and the lines after it: a message broken one
# sentence a line); of two found at one place, the first.
HEADLINES: list[Headline] = [
    _headline(
        model.FORMAT_GPU_RUNTIME,
        r"Out of [{host=host}] memory while trying to allocate {requested}"
        r"[ with allocator {device=[\w.-]+?} on device {ordinal=\d+}]",
    ),
    _headline(
        model.FORMAT_GPU_RUNTIME,
        r"Failed to allocate request for {requested} on device ordinal {ordinal=\d+}",
    ),
    # XLA:CPU's (xla/pjrt/cpu/tracked_tfrt_cpu_device_buffer.h): host memory, said by
    # the field that holds the phrase.
    _headline(
        model.FORMAT_ALLOCATION,
        r"{host=Out of memory allocating} {requested=\d+\s*bytes}",
    ),
    _headline(
        model.FORMAT_BFC,
        "Allocator ({device=[^)]+}) ran out of memory trying to allocate {requested}",
    ),
    _headline(
        model.FORMAT_REMAT,
        r"<Can\S{1,6}t> reduce memory use below {target} by rematerialization; only reduced"
        " to {used}[, down from {original} originally]",
    ),
    _headline(
        model.FORMAT_GPU_SCHEDULE,
        "The byte size of input/output arguments ({used}) exceeds the base limit ({target})",
    ),
    _headline(
        model.FORMAT_TPU_SCOPED,
        r"Ran out of memory in memory space {space=\w+} while allocating on stack for"
        r" {label=[^.]*(?:\.(?!\s*Scoped)[^.]*)*}<\.?> Scoped allocation with size {used} and"
        r" limit {capacity} exceeded scoped <\w+> limit by {over}",
    ),
    _headline(
        model.FORMAT_TPU_COMPILE,
        r"Ran out of memory in memory space {space=\w+}<(?=\s*(?:\.|$))>[. Used {used} of"
        r" {capacity} <\w+>. Exceeded <\w+> capacity by {over}]",
    ),
    _headline(
        model.FORMAT_TPU_TC_SC,
        "TPU TensorCore Hbm usage: {tensorcore}, SparseCore Hbm usage<:?> {sparsecore},"
        " exceeding available bytes: {capacity}",
    ),
    _headline(
        model.FORMAT_TPU_EARLY_ABORT,
        r"Aborting compilation early because it's unlikely to have enough"
        r" <(?:device\s*)?>memory. Requires {used}, has {capacity} available",
    ),
    _headline(
        model.FORMAT_TPU_PROGRAM_LOAD,
        "Error loading program['{program=[^']*}']: " + _RESERVE,
    ),
    _headline(
        model.FORMAT_TPU_PROGRAM_LOAD,
        "Attempting to reserve {requested} at the bottom of memory[<\\.?> "
        + _NOT_POSSIBLE
        + "[, {reserved} reserved, and {reservable} reservable]]",
    ),
    _headline(
        model.FORMAT_TPU_BUFFER,
        "[Error allocating device buffer:] Attempting to allocate {requested}. " + _NOT_POSSIBLE,
    ),
    _headline(
        model.FORMAT_TPU_BUFFER,
        r"Could not allocate {requested=\d+} bytes in memory {device=[^\s;]+};"
        r" {allocatable=\d+} bytes allocatable, {free=\d+} bytes available",
    ),
]

# The first words of each headline, any whitespace (a hard wrap too) between them.
_PHRASES = (
    "Out of memory while trying|Out of host memory while|Out of memory allocating"
    "|Failed to allocate request for"
    "|ran out of memory trying to|Can\\S{1,6}t reduce memory use below|Ran out of memory in"
    " memory space|TensorCore Hbm usage|Aborting compilation early|Error loading program"
    "|Attempting to allocate|Attempting to reserve|Could not allocate|The byte size of"
    " input/output arguments"
)
SNIFF = re.compile(r"\s*".join(_PHRASES.split(" ")))
# Where a headline starts a new line when newlines were lost (not "Attempting to":
# the program load's headline holds it after its first words).
HEADLINE_START = (
    r"Out of (?:host )?memory (?:while|allocating)|Failed to allocate request|Allocator \(|Can\S{1,6}t"
    r" reduce memory|Ran out of memory in|TPU TensorCore Hbm|Aborting compilation"
    r"|Error loading program|Error allocating device buffer|Could not allocate"
    r"|The byte size of input/output"
)

# ---- body lines ---------------------------------------------------------------------
# Entries of a buffer list, dispatched on their key (ENTRY_KEY's group names).
ENTRY_FORMS = {
    "Buffer": form("peak buffer header", r"Buffer {rank=\d+}:"),
    "Size": form("allocation size", r"[{rank=\d+}.] Size: {size}"),
    "Operator": form("operator metadata", "Operator: {operator=.*}"),
    "Label": form("XLA label", "XLA <[Ll]>abel: {label=.*}"),
    "Shape": form("shape", r"Shape: {shape=\S.*}"),
    "Subshape": form("entry parameter subshape", r"Entry Parameter Subshape: {shape=\S.*}"),
    "Unpadded": form("unpadded size", "Unpadded size: {unpadded}"),
    "Padding": form(
        "padding",
        r"Extra memory due to padding: {padding} ({expansion=\d+(?:\.\d+)?}<\s*[x×]\s*>"
        r"expansion)",
    ),
    "Type": form("allocation type", "Allocation type: {allocation_type=.+}"),
}
ENTRY_KEY = re.compile(
    r"(?P<Buffer>Buffer \d+:)|(?P<Size>(?:\d+\.\s*)?Size:)|(?P<Operator>Operator:)"
    r"|(?P<Label>XLA [Ll]abel:)|(?P<Shape>Shape:)|(?P<Subshape>Entry Parameter Subshape:)"
    r"|(?P<Unpadded>Unpadded size:)|(?P<Padding>Extra memory due to padding:)"
    r"|(?P<Type>Allocation type:)|(?P<end>={5})"
)
FREE_TEXT = ("Operator", "Label", "Shape", "Subshape")  # their text may run on a line

# BufferAssignment stats (StatsString): "parameter allocation:   10.91GiB",
# "preallocated temp fragmentation:   24.75MiB (0.02%)".
BA_STAT = form(
    "BufferAssignment stats line",
    r"{name=[a-z_]+(?: [a-z_]+)* (?:allocation|fragmentation)}: {value}"
    r"[ <\(>{note=\d+(?:\.\d+)?%}<\)>]",
)
# AllocatorStats::DebugString: "Limit:  10562958132" (or "89.77GiB" in newer ones);
# NumAllocs is a count.
BFC_STAT = form("allocator stats line", r"{name=[A-Z][A-Za-z]+}: {value}")
BFC_POOL = form(
    "BFC pool line",
    "Total size in pool: {pool} memory_limit_: {limit} available size: {available}"
    "[ curr_region_allocation_bytes_: {region}]",
)
# libtpu's usage table: "Total hbm usage >= 30.73G:", its items, "Output size ...",
# "Program hbm requirement 14.31G:", its items and the HLO temp line.
USAGE_HEAD = form(
    "usage or requirement header",
    r"{section=Total|Program} {space=\w+} {kind=usage\s*>=|requirement} {value}:",
)
USAGE_ITEM = form(
    "usage item",
    rf"{{name=[a-z][a-z_]*(?: [a-z_]+)*?}} {{value={SIZE_RE}|unknown size}}"
    r"[<\s*\(>{note=[^()]*(?:\([^()]*\)[^()]*)*}<\)>]<\s*>",
)
HLO_TEMP = form(
    "HLO temp line",
    r"HLO temp {value} <\(>{note=\d+(?:\.\d+)?%\s*utilization}[: Unpadded ({unpadded})"
    r" Padded ({padded})]<,\s*>{frag=\d+(?:\.\d+)?%} fragmentation ({fragmentation})<\)>",
)
HLO_TEMP_ANY = form("HLO temp line", r"HLO temp {value}[<\s*\(>{note=.*}<\)>]<\s*>")
OUTPUT = form(
    "output size line",
    f"Output size {{value={SIZE_RE}|unknown}}[; shares {{shared}} with arguments]<\\.?>",
)

# What starts each block: the key of its first line (matched at the start of the
# stripped line).
BLOCK_KEY = re.compile(
    r"(?P<ba>BufferAssignment OOM Debugging|BufferAssignment stats:)"
    r"|(?P<peak>Peak buffers:|Buffer \d+:)"
    r"|(?P<list>Largest program allocations|\d+\.\s*Size:)"
    r"|(?P<usage>(?:Total|Program) \w+ (?:usage|requirement)|Output size )"
    r"|(?P<stats>Stats:)"
    r"|(?P<pool>Total size in pool:)"
    r"|(?P<bfcline>(?:Limit|InUse|MaxInUse|NumAllocs|MaxAllocSize|PeakReserved"
    r"|LargestFreeBlock):\s*\d)"
)
_BODY_LINE = (
    BLOCK_KEY.pattern
    + "|"
    + ENTRY_KEY.pattern.replace("?P<", "?P<e_")
    + r"|[a-z_]+(?: [a-z_]+)* (?:allocation|fragmentation):"
    + r"|(?:reserved|program|arguments|global|scoped|HLO temp)\s+(?:\d|unknown)"
)
BODY_LINE = re.compile(_BODY_LINE)
# Lines that start a logical line (never the rest of a hard-wrapped one).
STARTS = re.compile(_BODY_LINE + r"|-{5}|Traceback|File \"|The above |During handling|The stack")

# Where a line whose newlines were lost (all on one line, or spaces for newlines) is cut
# back into lines: before a block's key, an entry's key, a stats line's name, a usage
# item that follows a figure, or a headline.
SPLIT_AT = re.compile(
    r"(?<!\d\.\s)(?<!\d\.)(?:(?<=[\s.;:])|^)(?="
    r"BufferAssignment OOM Debugging|BufferAssignment stats:|Peak buffers:|Buffer \d+:"
    r"|(?:\d+\.\s*)?Size:|Operator:|XLA [Ll]abel:|Shape:|Entry Parameter Subshape:"
    r"|Unpadded size:|Extra memory due to padding:|Allocation type:|={5,}"
    r"|Largest program allocations|(?:Total|Program) \w+ (?:usage|requirement)|Output size "
    r"|Stats:|Total size in pool:"
    r"|(?:Limit|InUse|MaxInUse|NumAllocs|MaxAllocSize|Reserved|PeakReserved|LargestFreeBlock):"
    r"|(?:parameter|constant|maybe_live_out|preallocated temp|total) (?:allocation|fragmentation):"
    rf"|{HEADLINE_START})"
    r"|(?<=[\dKMGTPEB:)] )(?=(?:reserved|program|arguments|global|scoped|HLO temp)"
    r" (?:\d|unknown))"
)
VOCABULARY.update(
    w.lower() for w in re.findall(r"[A-Za-z_]{4,}", _PHRASES + HEADLINE_START + SPLIT_AT.pattern)
)


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
